"""Tests of tests/forkdist.py, ``make test``'s forked workers (no Go twin): what a worker runs
reaches the parent's terminal once, and a worker that dies fails its test and no other."""

from __future__ import annotations

import os
import pathlib
import re

FILES = {
    "test_one": """
        import os, warnings

        def test_passes():
            pass

        def test_warns():
            warnings.warn("said in a worker")

        def test_dies():
            os._exit(3)

        def test_after_the_death():
            print("ran in", os.getpid(), "forked by", os.getppid())
    """,
    "test_two": """
        import os

        def test_in_another_worker():
            assert False, "a plain failure"

        def test_pid():
            print("ran in", os.getpid(), "forked by", os.getppid())
    """,
}


def run(pytester, monkeypatch, *args):
    pytester.makepyfile(**FILES)
    monkeypatch.setenv("PYTHONPATH", os.path.dirname(__file__))
    return pytester.runpytest_subprocess("-p", "forkdist", "-p", "no:cacheprovider", "-rA", *args)


def test_the_files_run_in_forked_workers_and_each_report_reaches_the_terminal_once(pytester, monkeypatch):
    result = run(pytester, monkeypatch, "--forks", "2")
    result.assert_outcomes(passed=4, failed=2, warnings=1)
    out = result.stdout.str()
    assert "forkdist: 2 workers, 2 files" in out
    assert out.count("UserWarning: said in a worker") == 1
    # the worker that died fails the test it ran; another (a fresh one, or one done with its own
    # file) runs the rest of that file
    result.stdout.fnmatch_lines(["*_ test_dies _*", "forkdist: worker * (pid *) exited with status 3 while running this test"])
    dead = re.search(r"\(pid (\d+)\) exited with status 3", out).group(1)
    assert "AssertionError: a plain failure" in out
    ran = dict(re.findall(r"^ran in (\d+) forked by (\d+)$", out, re.M))  # pid -> its parent's
    assert len(set(ran.values())) == 1  # one parent forked them all: the run's own process
    assert not ran.keys() & set(ran.values()) and dead not in ran  # no test ran in it or in the dead one
    assert result.ret == 1


def test_without_forks_the_tests_run_in_pytest_s_own_loop(pytester, monkeypatch):
    result = run(pytester, monkeypatch)
    assert "forkdist:" not in result.stdout.str()
    assert result.ret == 3  # os._exit(3) ended the run itself: nothing forked to contain it


def test_the_suite_s_conftest_runs_with_forkdist_blocked(pytester, monkeypatch):
    # `pytest -p no:forkdist` is pytest's own loop; the suite's conftest asked the missing plugin
    # whether to start the run's zygote, and for its option, and the run ended in an INTERNALERROR
    pytester.makeconftest((pathlib.Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(test_plain="def test_passes():\n    pass\n")
    monkeypatch.setenv("PYTHONPATH", os.path.dirname(__file__))
    result = pytester.runpytest_subprocess("-p", "no:forkdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "forkdist: " not in result.stdout.str()  # no workers: pytest's own loop


def test_a_test_out_of_time_in_a_worker_fails_with_pytest_timeout_s_report(pytester, monkeypatch):
    # a module fixture of the generated corpus once ran past the 60 s limit beside a second suite:
    # pytest-timeout asked for the terminal reporter a worker does not have, and the failure said
    # only "AssertionError" from pytest's config
    pytester.makepyfile(test_slow="""
        import threading

        def test_waits_too_long():
            threading.Event().wait(5)  # never set: longer than the limit
    """)
    monkeypatch.setenv("PYTHONPATH", os.path.dirname(__file__))
    result = pytester.runpytest_subprocess("-p", "forkdist", "-p", "no:cacheprovider", "-o", "timeout=0.5", "--forks", "1")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "Failed: Timeout (>0.5s) from pytest-timeout" in out and "get_terminal_writer" not in out
    assert "test_waits_too_long" in out  # the stacks it dumped, with the test's frame

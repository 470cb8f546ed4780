"""Tests for genericserver.testing.hunt: ``genericserver fuzz`` writes the replay file of what it finds, ``genericserver replay`` plays it.

With a lab active, the replay file ``fuzz`` writes is an answer ``lab check`` accepts, for every
lab ``fuzz`` can hunt (tested here rather than in ``tests/test_labs.py``, one of the suite's
longest files), and
``replay --break`` says in its last line when the breakpoint cannot be set or was never reached.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import pathlib
import signal
import sys
import threading

import pytest
from hypothesis import given, strategies as st

from genericserver import cmd
from genericserver.labs import LABS, lab, state
from genericserver.labs.check import check as check_answer
from genericserver.testing import hunt, replay
from genericserver.testing.invariants import check
from genericserver.testing.scenario import RequestSpec, Scenario, run_scenario, scenarios
from genericserver.testing.variants import variant


@pytest.fixture(autouse=True)
def no_lab(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(state.LAB_ENV, "")
    monkeypatch.setenv(replay.REPLAY_DIR_ENV, str(tmp_path / "replays"))


def test_fuzz_finds_a_lifecycle_variants_counterexample_and_writes_its_replay_file(tmp_path, capsys):
    out = tmp_path / "found.json"
    assert cmd.main(["fuzz", "--variant", "no-shutdown-delay", "--no-shrink", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "delay_is_respected" in printed and f"replay:   genericserver replay {out}" in printed
    scenario, schedule, name = replay.load(out)
    assert name == "no-shutdown-delay"
    assert "delay_is_respected" in {v.invariant for v in check(run_scenario(scenario, schedule, variant(name)))}
    assert not check(run_scenario(scenario, schedule)), "the real server passes the same run"
    assert cmd.main(["replay", str(out), "--quiet"]) == 1
    assert "VIOLATED delay_is_respected" in capsys.readouterr().out


def test_fuzz_hunts_a_primitive_variant_with_lincheck(tmp_path, capsys):
    out = tmp_path / "lin.json"
    assert cmd.main(["fuzz", "--variant", "safe-wait-group-check-outside-lock", "--no-shrink", "--out", str(out)]) == 1
    assert "no order of these calls fits the SafeWaitGroup model" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["lincheck"] == "SafeWaitGroup" and doc["variant"] == "safe-wait-group-check-outside-lock"
    assert cmd.main(["replay", str(out)]) == 1
    assert "NOT LINEARIZABLE" in capsys.readouterr().out


def test_fuzz_hunts_the_active_labs_bug_by_default(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(state.LAB_ENV, "no-shutdown-delay")
    assert cmd.main(["fuzz", "--no-shrink", "--examples", "20"]) == 1
    assert "run of no-shutdown-delay" in capsys.readouterr().out


def test_fuzz_of_the_real_server_finds_nothing_in_a_few_examples(capsys):
    assert cmd.main(["fuzz", "--examples", "5", "--seed", "3"]) == 0
    assert capsys.readouterr().out == "no counterexample for real in 5 examples (seed 3)\n"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--variant", "nope"], "genericserver fuzz: error: --variant: unknown variant 'nope' (known: real, "),
        (["--variant", "kubelet-prestop-full-grace"], "genericserver fuzz: error: --variant: kubelet-prestop-full-grace is a bug of the cluster world"),
        (["--examples", "0"], "genericserver fuzz: error: --examples must be at least 1"),
    ],
    ids=["unknown", "cluster-world", "no-examples"],
)
def test_fuzz_refuses_what_it_cannot_hunt_in_one_line(argv, message, capsys):
    assert cmd.main(["fuzz", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_fuzz_refuses_a_folder_as_out_before_the_hunt(capsys, tmp_path):
    # the hunt ran, then its file went beside the folder and the write ended in a traceback
    assert cmd.main(["fuzz", "--variant", "once-runs-twice", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"genericserver fuzz: error: --out {tmp_path}: is a folder, not a file\n"
    assert list(tmp_path.parent.glob("lincheck-*.json")) == []


def test_replay_refuses_a_break_location_that_is_not_file_colon_line(capsys, tmp_path):
    # a line that is not a number ended in a ValueError's traceback
    where = "genericserver/runtime/__init__.py:abc"
    (tmp_path / "run.json").write_text("{}")
    with pytest.raises(SystemExit) as exit_:
        cmd.main(["replay", "--break", where, str(tmp_path / "run.json")])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"genericserver replay: error: argument --break: {where!r}: want FILE:LINE, such as genericserver/filters/waitgroup.py:51")


TREE = replay.PACKAGE_TREE  # the tests run in a fresh directory each: the package's files by full path


def _line_of(path: str, text: str) -> int:
    return next(n for n, line in enumerate((TREE / path).read_text().splitlines(), 1) if text in line)


NOT_ACCEPTING = _line_of("genericserver/genericapiserver.py", "signals.not_accepting_new_request.signal()")
DELAY_ANSWER = str(lab("no-shutdown-delay").answer_path)


@pytest.mark.parametrize("where, variant_name, said", [
    ("genericapiserver.py:9999", "real", "--break genericapiserver.py:9999: not set: genericserver/genericapiserver.py has {count} lines"),
    ("nofile.py:12", "real", "--break nofile.py:12: not set: no file nofile.py here or in genericserver/"),
    ("__init__.py:3", "real", "--break __init__.py:3: not set: __init__.py is {inits} files (genericserver/__init__.py, "
                              "genericserver/api/__init__.py, {third} and {more} more): name its folder too"),
    ("genericserver/genericapiserver.py:2", "real", "--break genericserver/genericapiserver.py:2: not set: line 2 has no code to stop "
                                                    "at (a blank line, a comment or a docstring); the next line with code is {first}"),
    (f"genericapiserver.py:{NOT_ACCEPTING}", "not-accepting-without-hooks",
     f"--break genericserver/genericapiserver.py:{NOT_ACCEPTING}: never reached in this run - the variant not-accepting-without-hooks "
     "replaces PreparedGenericAPIServer._not_accepting_new_requests, the function it is in"),
    ("testing/replay.py:{lincheck}", "real", "--break genericserver/testing/replay.py:{lincheck}: never reached in this run - "
                                         "no goroutine ran that line"),
], ids=["no-such-line", "no-such-file", "ambiguous", "no-code", "replaced-by-the-variant", "not-run"])
def test_replay_says_last_when_its_breakpoint_cannot_be_set_or_was_never_reached(where, variant_name, said, tmp_path, capsys, monkeypatch):
    # each of these replayed the whole run in silence, as pdb never does: it says "End of file",
    # "Blank or comment" or "not found" when a breakpoint cannot be set
    inits = sorted(TREE.glob("genericserver/**/__init__.py"))
    source = (TREE / "genericserver/genericapiserver.py").read_text()
    values = dict(count=len(source.splitlines()), inits=len(inits), more=len(inits) - 3, third=inits[2].relative_to(TREE),
                  first=min(n for _, _, n in compile(source, "x", "exec").co_lines() if n and n > 2),
                  lincheck=_line_of("genericserver/testing/replay.py", "= lincheck.load(doc)"))
    where, said = where.format(**values), said.format(**values)
    doc = json.loads(pathlib.Path(DELAY_ANSWER).read_text())
    doc["variant"] = variant_name
    (tmp_path / "run.json").write_text(json.dumps(doc))
    monkeypatch.setattr(replay, "prompt_at", lambda frame: pytest.fail(f"stopped at {frame.f_lineno}"))
    assert cmd.main(["replay", str(tmp_path / "run.json"), "--quiet", "--break", where]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == ["all invariants hold", said]


def test_a_breakpoint_in_a_function_the_active_labs_bug_replaces_says_so(capsys, monkeypatch):
    # the replay file is of the server as it is: the active lab's bug plays, and the last line says why it never stops
    monkeypatch.setenv(state.LAB_ENV, "not-accepting-without-hooks")
    assert cmd.main(["replay", DELAY_ANSWER, "--quiet", "--break", f"genericapiserver.py:{NOT_ACCEPTING}"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "variant:  not-accepting-without-hooks (the file's: real)" in out
    assert out[-1] == (
        f"--break genericserver/genericapiserver.py:{NOT_ACCEPTING}: never reached in this run - the variant "
        "not-accepting-without-hooks replaces PreparedGenericAPIServer._not_accepting_new_requests, the function it is in")


@pytest.mark.parametrize("lab_here, flag, said, verdict", [
    ("", [], "variant:  no-shutdown-delay - no lab is active here: --variant real plays the server as it is",
     "VIOLATED delay_is_respected"),
    ("", ["--variant", "real"], "variant:  real (the file's: no-shutdown-delay)", "all invariants hold"),
    ("no-shutdown-delay", [], "variant:  no-shutdown-delay", "VIOLATED delay_is_respected"),
    ("no-shutdown-delay", ["--variant", "real"],
     "variant:  real (the file's: no-shutdown-delay) - lab no-shutdown-delay is active here: --variant no-shutdown-delay plays its bug",
     "all invariants hold"),
    ("readyz-red-too-late", [],
     "variant:  no-shutdown-delay - lab readyz-red-too-late is active here: --variant readyz-red-too-late plays its bug",
     "VIOLATED delay_is_respected"),
], ids=["file-no-lab", "real-no-lab", "file-its-lab", "real-its-lab", "file-other-lab"])
def test_replay_plays_the_variant_it_names_and_says_when_it_is_not_the_active_labs(lab_here, flag, said, verdict, tmp_path, capsys, monkeypatch):
    # after 'lab stop' a fuzz file kept playing its bug: the variant is the file's, and no flag changed it
    doc = json.loads(pathlib.Path(DELAY_ANSWER).read_text())
    doc["variant"] = "no-shutdown-delay"
    (tmp_path / "run.json").write_text(json.dumps(doc))
    monkeypatch.setenv(state.LAB_ENV, lab_here)
    assert cmd.main(["replay", str(tmp_path / "run.json"), "--quiet", *flag]) == (0 if verdict.startswith("all") else 1)
    out = capsys.readouterr()
    assert said in out.out.splitlines() and out.out.splitlines()[-1].startswith(verdict)
    assert out.err == ""  # the variant line says what plays; the lab's banner would say its bug is in


def test_replay_says_its_requests_are_named_for_the_filters_on_a_server_with_no_pods(capsys):
    # the timeline showed 'GET /api/v1/namespaces/default/pods/p0' on a server that serves no pods
    assert cmd.main(["replay", DELAY_ANSWER]) == 0
    out = capsys.readouterr().out
    events = out[out.index("-- events\n") + len("-- events\n"):]
    assert events.startswith(replay.REQUESTS_LEGEND + "\n") and "serves no pods" in replay.REQUESTS_LEGEND
    assert "request=GET /api/v1/namespaces/default/pods/p0?d=0" in events


def test_replay_refuses_an_unknown_variant_in_one_line(capsys):
    assert cmd.main(["replay", DELAY_ANSWER, "--variant", "nope"]) == 2
    assert capsys.readouterr().err == (
        "genericserver replay: error: --variant: unknown variant 'nope' ('real', or a lab's name: 'genericserver lab list' shows them)\n")


def test_replay_plays_a_lincheck_file_without_its_bug_with_variant_real(tmp_path, capsys):
    out = tmp_path / "lin.json"
    assert cmd.main(["fuzz", "--variant", "safe-wait-group-check-outside-lock", "--no-shrink", "--out", str(out)]) == 1
    capsys.readouterr()
    assert cmd.main(["replay", str(out), "--variant", "real"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "variant:  real (the file's: safe-wait-group-check-outside-lock)" in printed
    assert printed[-1] == "linearizable: an order of these calls fits the model"


def test_a_break_file_named_without_its_folder_is_the_one_file_it_names_and_says_which(tmp_path, capsys, monkeypatch):
    stops = []
    monkeypatch.setattr(replay, "prompt_at", lambda frame: stops.append((frame.f_code.co_name, frame.f_lineno)))
    assert cmd.main(["replay", DELAY_ANSWER, "--quiet", "--break", f"genericapiserver.py:{NOT_ACCEPTING}"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"break:    genericserver/genericapiserver.py:{NOT_ACCEPTING} (for genericapiserver.py:{NOT_ACCEPTING})" in out
    assert stops == [("_not_accepting_new_requests", NOT_ACCEPTING)] and out[-1] == "all invariants hold"
    # a path from here works as it did, and a file of the same name elsewhere is not taken for it
    with replay.stop_at(f"genericserver/genericapiserver.py:{NOT_ACCEPTING}", lambda frame: None) as bp:
        replay.replay(DELAY_ANSWER)
    assert bp.hits == 1 and bp.path == TREE / "genericserver/genericapiserver.py"
    assert replay.find_breakpoint("apiserver.py:1").path == TREE / "genericserver/cluster/apiserver.py"
    assert replay.find_breakpoint("piserver.py:1").problem == "no file piserver.py here or in genericserver/"


def test_replay_of_a_missing_file_is_one_line(capsys):
    assert cmd.main(["replay", "missing.json"]) == 2
    assert capsys.readouterr().err == "genericserver replay: error: missing.json: no such file\n"


@pytest.mark.parametrize("text, why", [
    ("not json", "Expecting value: line 1 column 1 (char 0)"),
    ('{"a": 1}', "it has no scenario and schedule"),
    ('{"scenario": {"x": 1}, "schedule": []}', "its scenario or schedule does not read"),
], ids=["not-json", "no-scenario", "bad-scenario"])
def test_replay_of_a_file_that_is_not_a_replay_is_one_line(text, why, tmp_path, capsys):
    (tmp_path / "x.json").write_text(text)
    assert cmd.main(["replay", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"genericserver replay: error: {tmp_path / 'x.json'}: not a replay file: {why}")
    assert err.count("\n") == 1


def test_a_replay_does_not_print_the_servers_auth_warnings(tmp_path, caplog):
    """The scenario's server has no authentication or authorization by design: Go's warnings
    about it are noise in a tool (issue 27), though `serve` still prints them as Go does."""
    import logging

    from genericserver.testing.scenario import RequestSpec, Scenario, run_scenario

    caplog.set_level(logging.WARNING)
    run_scenario(Scenario(requests=(RequestSpec("ordinary", "start", 0.5, 1.0),)), [])
    assert "is disabled" not in caplog.text


@pytest.mark.parametrize("name", ["real", "rate-limited-count-outside-lock"], ids=["lifecycle", "lincheck"])
def test_ctrl_c_that_lands_in_a_gc_callback_still_ends_the_hunt(name, monkeypatch):
    # ^C while Hypothesis's gc callback ran was reported as ignored and lost: the hunt went on
    from genericserver.testing import hunt, lincheck, scenario

    started = []  # the hunt's first example is running
    for module, fn in ((scenario, "run_scenario"), (lincheck, "explore")):
        real = getattr(module, fn)
        monkeypatch.setattr(module, fn, lambda *a, real=real, **k: started.append(1) or real(*a, **k))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    dropped: list = []
    monkeypatch.setattr(sys, "unraisablehook", dropped.append)  # where the interpreter reports it
    sent = []

    def callback(phase: str, info: dict) -> None:
        # (in the main thread, where the handler runs: the simulations collect there after a run)
        if phase == "stop" and started and not sent and threading.current_thread() is threading.main_thread():
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(3):
                pass  # (the handler runs here, at this loop's jump back, inside the callback)

    gc.callbacks.append(callback)
    try:
        with pytest.raises(KeyboardInterrupt):
            if name == "real":
                hunt.hunt_lifecycle(variant(name), examples=50, shrink=False)
            else:
                hunt.hunt_lincheck(variant(name), examples=400, shrink=False)
    finally:
        gc.callbacks.remove(callback)
        signal.signal(signal.SIGINT, previous)
    assert [type(d.exc_value) for d in dropped] == [KeyboardInterrupt]  # the interpreter dropped it...
    assert len(started) <= 2  # ...and the next example raised it again



@given(drawn=scenarios(), delay=st.sampled_from((0.5, 70.0)), at=st.integers(0, 6),
       schedule=st.lists(st.integers(0, 3), max_size=12))
def test_simplify_keeps_what_the_failure_needs_and_nothing_else(drawn, delay, at, schedule):
    # a stand-in for "the run breaks the readyz invariant": a /readyz probe during a delay,
    # among whatever else was drawn
    def fails(example):
        return example[0].shutdown_delay > 0 and any(r.kind == "readyz" for r in example[0].requests)

    probe = RequestSpec("readyz", "ShutdownInitiated", 0.5, 0.2, "reused")
    scenario = dataclasses.replace(drawn, shutdown_delay=delay, requests=drawn.requests[:at] + (probe,) + drawn.requests[at:])
    simplest, simplest_schedule = hunt.simplify(scenario, schedule, fails)
    assert simplest.requests == (RequestSpec("readyz"),) and not any(simplest_schedule)  # no preemption left
    assert simplest == Scenario(shutdown_delay=delay, requests=simplest.requests)


def test_a_replay_that_cannot_single_out_the_labs_bug_is_explained_and_fuzz_says_so(tmp_path, capsys):
    # in retry-after mode the listener bug breaks the same invariant as the hooks bug: the run
    # cannot tell them apart, which is the run's nature, not the pair's mistake
    from genericserver.testing.scenario import HookSpec, Scenario

    (tmp_path / "both.json").write_text(replay.to_json(Scenario(retry_after=True, hooks=(HookSpec(0.0, True),)), []))
    verdict = check_answer(lab("not-accepting-without-hooks"), tmp_path / "both.json")
    assert not verdict.caught and not verdict.with_bug.passed and verdict.without_bug.passed
    assert verdict.message == (
        "not caught: in this run listener-stopped-at-not-accepting's bug (Retry-after mode refuses instead of "
        "answering 429) breaks signals_fire_once_after_prerequisites too, so the run cannot tell the two bugs "
        "apart - a run where only this lab's bug breaks it is the answer (another schedule or scenario; "
        "'genericserver fuzz' hunts one)")
    hunt._say_what_lab_check_says(lab("not-accepting-without-hooks"), tmp_path / "both.json")
    assert capsys.readouterr().out == f"lab check: not an answer to lab not-accepting-without-hooks: {verdict.message}\n"


def test_fuzz_says_when_no_invariant_watches_the_labs_bug(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(state.LAB_ENV, "http-shutdown-not-awaited")
    assert cmd.main(["fuzz", "--examples", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "no invariant watches lab http-shutdown-not-awaited's bug, so no replay file can catch it: its answer is "
        "a test that checks what the bug changes ('genericserver lab new-test FILE' starts one)")

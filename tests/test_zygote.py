"""Tests of tests/zygote.py (no Go twin): a command forked warm ends as ``python -m genericserver``
started cold does, with the caller's environment and working directory, and its signals."""

from __future__ import annotations

import select
import signal
import subprocess
import sys

import pytest

import zygote

WAIT = 30.0


def both(args: list[str], **env: str) -> tuple[tuple, tuple]:
    """(exit code, stdout, stderr) of the command started cold, then forked by the zygote."""
    import os

    environ = {**os.environ, **env}
    cold = subprocess.run([sys.executable, "-m", "genericserver", *args], capture_output=True, text=True,
                          env=environ, timeout=WAIT)
    warm = zygote.Process(args, env=environ)
    code = warm.wait(WAIT)
    out, err = warm.stdout.read(), warm.stderr.read()
    warm.stdout.close()
    warm.stderr.close()
    return (cold.returncode, cold.stdout, cold.stderr), (code, out, err)


@pytest.mark.parametrize("args", [
    ["serve", "--secure-port", "0", "--no-such-flag"],  # exit 2, the one-line message on stderr
    ["lab", "list"],  # exit 0, a table on stdout
    ["lab", "start", "no-such-lab"],  # exit 1
], ids=["bad-flag", "lab-list", "unknown-lab"])
def test_a_forked_command_ends_as_the_cold_one(args):
    cold, warm = both(args, COLUMNS="100")
    assert warm == cold


def test_the_environment_and_working_directory_are_the_callers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.json").write_text("not a replay")
    cold, warm = both(["replay", "x.json"], GENERICSERVER_REPLAYS=str(tmp_path))
    assert warm == cold and warm[0] != 0 and "x.json" in warm[2]


def test_a_signal_ends_it_and_returncode_is_minus_the_signal():
    proc = zygote.Process(["serve", "--secure-port", "0"])
    assert "Serving insecurely" in proc.stderr.readline()
    assert proc.poll() is None
    proc.kill()
    assert proc.wait(WAIT) == -signal.SIGKILL
    assert proc.poll() == -signal.SIGKILL
    proc.send_signal(signal.SIGTERM)  # once reaped: nothing is sent
    proc.stdout.close()
    proc.stderr.close()
    with pytest.raises(subprocess.TimeoutExpired):
        slow = zygote.Process(["serve", "--secure-port", "0"])
        try:
            slow.wait(0.05)
        finally:
            slow.kill()
            slow.wait(WAIT)
            slow.stdout.close()
            slow.stderr.close()


def test_a_signal_to_a_process_that_ended_before_its_status_came_is_not_an_error(monkeypatch):
    # the zygote reaps its child and then sends the status; a signal sent between the two found
    # no such process and raised ProcessLookupError (two suites at once did it), where
    # subprocess.Popen's send_signal lets it be
    proc = zygote.Process(["serve", "--secure-port", "0"])
    assert "Serving insecurely" in proc.stderr.readline()
    proc.kill()
    assert proc.wait(WAIT) == -signal.SIGKILL  # reaped, and the pid gone
    monkeypatch.setattr(proc, "poll", lambda: None)  # as if the status were still on its way
    proc.send_signal(signal.SIGTERM)
    proc.stdout.close()
    proc.stderr.close()


def test_communicate_gives_up_at_its_timeout_and_a_later_call_has_all_the_output():
    # as subprocess's: the timeout bounds the reading too (a server never closes its pipes),
    # and what was read before it is not lost
    proc = zygote.Process(["serve", "--secure-port", "0"])
    # its first line waits in the pipe (looked at, not read): the first call reads it
    assert select.select([proc.stderr.fileno()], [], [], WAIT)[0]
    with pytest.raises(subprocess.TimeoutExpired):
        proc.communicate(0.2)
    proc.kill()
    out, err = proc.communicate(WAIT)
    assert "Serving insecurely" in err and out == ""
    assert proc.returncode == -signal.SIGKILL


def test_one_zygote_serves_the_processes_forked_after_it_started(monkeypatch):
    # make test's parent starts the zygote before it forks its workers: a worker's command is
    # forked by that zygote, not by one of its own; and a command sent at once, while the zygote
    # still imports, waits in the socket's backlog
    import os

    monkeypatch.setattr(zygote, "_zygote", None)
    path = zygote.start()
    owner, proc, _ = zygote._zygote
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a worker
        code = 1
        try:
            os.close(r)
            server = zygote.Process(["serve", "--secure-port", "0"])
            server.stderr.readline()
            with open(f"/proc/{server.pid}/status") as f:
                ppid = next(line.split()[1] for line in f if line.startswith("PPid:"))
            server.kill()
            server.wait(WAIT)
            os.write(w, ppid.encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as answer:
        parent_of_the_command = answer.read()
    assert os.waitpid(pid, 0)[1] == 0
    assert parent_of_the_command == str(proc.pid) and owner == os.getpid()
    zygote._stop(owner, proc)  # what the owner's exit does: the zygote ends and takes its socket along
    assert proc.returncode == 0 and not os.path.exists(path)

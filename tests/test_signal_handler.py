"""Tests of genericserver.signal_handler (signal.go has no Go test): in this process and in a child process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from genericserver import runtime as rt
from genericserver import signal_handler
from genericserver.context import context as gocontext

WAIT = 10.0  # a safety net for waits on events that must come at once


@pytest.fixture
def handler():
    """Set the handler up; afterwards put the previous signal handlers back."""
    signals = signal_handler.SHUTDOWN_SIGNALS + (signal_handler.QUIT_SIGNAL,)
    before = {sig: signal.getsignal(sig) for sig in signals}
    ctx = signal_handler.setup_signal_context()
    yield ctx
    signal_handler._reset_for_tests()
    assert {sig: signal.getsignal(sig) for sig in signals} == before


@pytest.fixture
def exits(monkeypatch):
    """Record exit codes instead of ending the test process."""
    codes: list[int] = []
    called = rt.event("exit-called")

    def fake_exit(code: int) -> None:
        codes.append(code)
        called.set()

    monkeypatch.setattr(signal_handler, "_exit", fake_exit)
    return codes, called


def test_request_shutdown_without_a_handler_is_false():
    assert signal_handler.request_shutdown() is False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_first_signal_cancels_the_context(handler, exits, sig):
    codes, _ = exits
    assert handler.err() is None
    os.kill(os.getpid(), sig)
    assert handler.done().wait(WAIT)
    assert handler.err() is gocontext.CANCELED
    assert codes == []


def test_the_second_signal_exits_with_code_1(handler, exits):
    codes, called = exits
    os.kill(os.getpid(), signal.SIGTERM)
    assert handler.done().wait(WAIT)
    os.kill(os.getpid(), signal.SIGINT)
    assert called.wait(WAIT)
    assert codes == [1]


def test_sigquit_dumps_the_goroutines_and_does_not_start_a_shutdown(handler, exits, monkeypatch):
    """Go's runtime answers SIGQUIT (Ctrl-\\) with every goroutine's stack and exit 2; here the
    signal goroutine does (goroutines.die_of_sigquit, replaced by a recorder in this test)."""
    codes, _ = exits
    quit_called = rt.event("quit-called")
    monkeypatch.setattr(signal_handler, "_quit", quit_called.set)
    assert signal.getsignal(signal.SIGQUIT) not in (signal.SIG_DFL, signal.SIG_IGN)
    os.kill(os.getpid(), signal.SIGQUIT)
    assert quit_called.wait(WAIT)
    assert handler.err() is None and codes == []
    os.kill(os.getpid(), signal.SIGTERM)  # the shutdown signals work as before
    assert handler.done().wait(WAIT)


def test_request_shutdown_acts_as_a_signal(handler, exits):
    codes, called = exits
    assert signal_handler.request_shutdown() is True
    assert handler.done().wait(WAIT)
    assert signal_handler.request_shutdown() is True
    assert called.wait(WAIT)
    assert codes == [1]


def test_setup_signal_handler_returns_the_done_event(exits):
    done = signal_handler.setup_signal_handler()
    try:
        assert not done.is_set()
        signal_handler.request_shutdown()
        assert done.wait(WAIT)
    finally:
        signal_handler._reset_for_tests()


def test_only_one_setup_per_process(handler):
    with pytest.raises(RuntimeError, match="^close of closed channel$"):
        signal_handler.setup_signal_context()
    with pytest.raises(RuntimeError):
        signal_handler.setup_signal_handler()


def test_setup_again_after_a_reset():
    signal_handler.setup_signal_context()
    signal_handler._reset_for_tests()
    ctx = signal_handler.setup_signal_context()
    try:
        assert ctx.err() is None
    finally:
        signal_handler._reset_for_tests()
    assert signal_handler.request_shutdown() is False


def test_setup_off_the_main_thread_fails_cleanly():
    errs: list[BaseException] = []

    def off_main() -> None:
        try:
            signal_handler.setup_signal_context()
        except BaseException as err:
            errs.append(err)

    rt.go(off_main, name="setup-off-main").join(WAIT)
    assert len(errs) == 1 and isinstance(errs[0], ValueError)
    # nothing was left half set up: the main thread can still set it up
    signal_handler.setup_signal_context()
    signal_handler._reset_for_tests()


# -- a real process --------------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import sys
    from genericserver import runtime as rt
    from genericserver import signal_handler

    ctx = signal_handler.setup_signal_context()
    print("ready", flush=True)
    ctx.done().wait()
    print("cancelled:", ctx.err(), flush=True)
    if sys.argv[1] == "linger":
        rt.event("never").wait()  # only a second signal ends this
    sys.exit(0)
    """
)


def start_child(mode: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    return proc


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    out, err = proc.communicate(timeout=WAIT)
    return proc.returncode, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_process_shuts_down_on_the_first_signal(sig):
    proc = start_child("exit")
    try:
        proc.send_signal(sig)
        assert proc.stdout.readline() == "cancelled: context canceled\n"
        code, err = finish(proc)
        assert (code, err) == (0, "")
    finally:
        proc.kill()
        proc.wait()


def test_a_second_signal_ends_the_process_with_code_1():
    proc = start_child("linger")
    try:
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout.readline() == "cancelled: context canceled\n"
        proc.send_signal(signal.SIGTERM)
        code, err = finish(proc)
        assert (code, err) == (1, "")
    finally:
        proc.kill()
        proc.wait()


OFF_MAIN_CHILD = textwrap.dedent(
    """
    import os, signal, sys, threading
    from genericserver import signal_handler

    ctx = signal_handler.setup_signal_context()
    other_waits = threading.Event()
    never = threading.Event()

    def other():  # a thread of the program's own, blocked like any server thread
        other_waits.set()
        never.wait()

    def send_once_main_is_parked():
        done = ctx.done()
        for _ in range(1_000_000):  # until the main thread is parked on the event (white-box)
            if done._cond._waiters:  # a threading.Event: its condition lists the waiters
                break
            os.sched_yield()
        # the OS may hand a process's signal to any thread; here it goes to another one
        signal.pthread_kill(t.ident, signal.SIGTERM)

    t = threading.Thread(target=other, daemon=True)
    t.start()
    other_waits.wait()
    threading.Thread(target=send_once_main_is_parked, daemon=True).start()
    print("cancelled" if ctx.done().wait(float(sys.argv[1])) else "still waiting", flush=True)
    """
)


def test_a_signal_that_another_thread_receives_still_cancels_the_context():
    # Python runs signal handlers in the main thread only; when the OS gives the signal to
    # another thread, a main thread blocked on a lock never runs it. The C-level handler writes
    # the signal number to the handler's pipe (signal.set_wakeup_fd), which needs no main thread.
    proc = subprocess.run(
        [sys.executable, "-c", OFF_MAIN_CHILD, str(WAIT)], capture_output=True, text=True, timeout=3 * WAIT
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "cancelled\n", "")

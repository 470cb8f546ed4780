"""A process dies as a Go binary does: of a panic nobody recovered (exit 2 with the goroutine's
stack) and of SIGQUIT (exit 2 with every goroutine's stack). genericserver.runtime.goroutines and
genericserver.apimachinery.utilruntime in process, then ``genericserver serve`` in a subprocess."""

from __future__ import annotations

import ctypes
import logging
import os
import platform
import re
import signal
import socket

import pytest

from genericserver import runtime as rt
from genericserver.apimachinery import utilruntime
from genericserver.net.http.server import Server, listen
from genericserver.runtime import goroutines
from genericserver.secure_serving import StoppedListeningUnexpectedly, run_server

from test_cmd import server_process  # noqa: F401  (the fixture)
from test_connreader import _wait_until

WAIT = 30.0


# -- in process ------------------------------------------------------------------------------------


def test_the_dump_names_each_goroutine_and_what_it_waits_for():
    parked = rt.event("parked")

    def waits_for_the_test() -> None:
        parked.wait()

    g = rt.go(waits_for_the_test, name="waiting-goroutine")
    try:
        text = ""
        for _ in range(1000):  # until the goroutine is parked in its wait (it starts at once)
            text = goroutines.format_all_goroutines()
            if '"go:waiting-goroutine" [chan receive]' in text:
                break
        block = next(b for b in text.split("\n\n") if '"go:waiting-goroutine"' in b)
        lines = block.splitlines()
        assert re.fullmatch(r'goroutine \d+ "go:waiting-goroutine" \[chan receive\]:', lines[0])
        # innermost first: threading's wait, ..., the goroutine's function, ..., the pool
        names = lines[1::2]
        assert names[0].startswith("threading.") and names[0].endswith(".wait(...)")
        assert any(n.endswith("waits_for_the_test(...)") for n in names)
        assert all(loc.startswith("\t") and re.search(r"\.py:\d+$", loc) for loc in lines[2::2])
        # the calling thread comes first, running
        assert re.match(r'goroutine \d+ "MainThread" \[running\]:', text)
    finally:
        parked.set()
        g.join(WAIT)


def test_die_of_panic_prints_go_s_report_and_exits_2(monkeypatch):
    codes: list[int] = []
    monkeypatch.setattr(goroutines, "_exit", codes.append)
    out = __import__("io").StringIO()
    try:
        with utilruntime.handle_crash():
            raise utilruntime.Panic("Stopped listening on 127.0.0.1:1 due to error: boom")
    except utilruntime.Panic as exc:
        goroutines.die_of_panic("http-server-serve", exc, out)
    assert codes == [2]
    head, stack = out.getvalue().split("\n\n", 1)
    assert head == "panic: Stopped listening on 127.0.0.1:1 due to error: boom [recovered, repanicked]"
    assert re.match(r'goroutine \d+ "MainThread" \[running\]:\ntest_goroutines\.test_die_of_panic_prints', stack)


def test_handle_crash_logs_and_swallows_without_really_crash(monkeypatch, caplog):
    monkeypatch.setattr(utilruntime, "REALLY_CRASH", False)
    seen = []

    def crashes() -> None:
        with utilruntime.handle_crash(seen.append):
            raise KeyError("k")

    with caplog.at_level(logging.ERROR):
        crashes()  # returns: recovered
    assert [type(e) for e in seen] == [KeyError]
    (record,) = caplog.records
    assert record.getMessage().startswith('"Observed a panic" panic="\'k\'" panicGoValue="KeyError(\'k\')" stacktrace=<\n')
    assert (record.filename, record.funcName) == ("test_goroutines.py", "crashes")


@pytest.mark.expect_goroutine_panic
def test_serving_that_stops_unexpectedly_panics_in_its_goroutine(caplog):
    """In a test process (no on_panic) the panic is recorded; ``genericserver serve`` dies of it (below)."""
    ln = listen("127.0.0.1", 0)
    port = ln.getsockname()[1]
    stop = rt.event("stop")

    def app(environ, start_response):
        start_response("200 OK", [])
        return [b""]

    panics_before = len(rt.THREADS.panics)
    with caplog.at_level(logging.ERROR):
        stopped, listener_stopped = run_server(Server(app), ln, 1.0, stop)
        ln.shutdown(socket.SHUT_RDWR)  # the listener dies under the server
        assert listener_stopped.wait(WAIT)
        serve = [g for g in rt.THREADS.live() if g.name == "http-server-serve"]
        for g in serve:
            g.join(WAIT)
    (name, exc), = rt.THREADS.panics[panics_before:]
    assert name == "http-server-serve" and isinstance(exc, StoppedListeningUnexpectedly)
    assert str(exc) == f"Stopped listening on 127.0.0.1:{port} due to error: [Errno 22] Invalid argument"
    observed = [r for r in caplog.records if "Observed a panic" in r.getMessage()]
    assert observed and observed[0].filename == "secure_serving.py"
    assert f'panic="Stopped listening on 127.0.0.1:{port} due to error: [Errno 22] Invalid argument" stacktrace=<' in observed[0].getMessage()
    stop.set()
    assert stopped.wait(WAIT)


# -- genericserver serve ---------------------------------------------------------------------------


def steal_listener(pid: int, port: int) -> socket.socket:
    """A copy of process ``pid``'s listening socket on ``port`` (Linux's pidfd_getfd), to kill it from outside."""
    inode = None
    with open(f"/proc/{pid}/net/tcp") as f:
        for line in f.read().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port:  # 0A: LISTEN
                inode = fields[9]
    target = next(int(fd) for fd in os.listdir(f"/proc/{pid}/fd") if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    pidfd = os.pidfd_open(pid)
    try:
        fd = libc.syscall(438, pidfd, target, 0)  # SYS_pidfd_getfd, the same number on every architecture
        if fd < 0:
            raise OSError(ctypes.get_errno(), "pidfd_getfd")
    finally:
        os.close(pidfd)
    return socket.socket(fileno=fd)


def test_a_killed_listener_ends_serve_with_exit_2_and_the_goroutine_s_stack(server_process):  # noqa: F811
    sp = server_process()
    with steal_listener(sp.proc.pid, sp.port) as ln:
        ln.shutdown(socket.SHUT_RDWR)  # accept() fails in the server: serving stops unexpectedly
    assert sp.wait() == 2
    log = "\n".join(sp.seen)
    addr = f"127.0.0.1:{sp.port}"
    # logged as HandleCrash's logPanic does, from the serve goroutine in secure_serving
    assert re.search(rf'^E\d{{4}} [\d:.]+ +\d+ secure_serving\.py:\d+\] "Observed a panic" panic="Stopped listening on {addr} '
                     r'due to error: \[Errno 22\] Invalid argument" stacktrace=<$', log, re.M)
    # then the Go runtime's report of the re-panic, and the goroutine that raised it
    m = re.search(rf"^panic: Stopped listening on {addr} due to error: \[Errno 22\] Invalid argument \[recovered, repanicked\]\n\n"
                  r'goroutine \d+ "go:http-server-serve" \[running\]:\n(.*)', log, re.M | re.S)
    assert m, log
    assert m.group(1).startswith("genericserver.secure_serving.run_server.<locals>.serve_until_closed(...)\n\t")
    assert "secure_serving.py:" in m.group(1).splitlines()[1]


# clock_nanosleep, the system call of time.sleep (rt.sleep on threads); no other wait of the
# threads runtime uses it (locks and conditions wait in futex)
CLOCK_NANOSLEEP = {"x86_64": 230, "aarch64": 115}[platform.machine()]


def _syscall(pid: int, tid: str) -> str:
    try:
        with open(f"/proc/{pid}/task/{tid}/syscall") as f:
            return f.read().split()[0]
    except (OSError, IndexError):  # the thread ended meanwhile
        return ""


def wait_for_a_thread_in_time_sleep(pid: int) -> None:
    """Wait until one of process ``pid``'s threads is in ``time.sleep``."""
    _wait_until(lambda: any(_syscall(pid, tid) == str(CLOCK_NANOSLEEP) for tid in os.listdir(f"/proc/{pid}/task")),
                f"no thread of {pid} went to sleep")


def test_sigquit_prints_the_goroutines_of_a_running_shutdown_and_exits_2(server_process):  # noqa: F811
    sp = server_process("--v=1", "--shutdown-delay-duration", "60s")
    sp.expect(r"\] \[graceful-termination\] waiting for shutdown to be initiated$")  # every goroutine started
    sp.signal(signal.SIGTERM)
    # the delayed-stop goroutine now sleeps out the delay, the main one waits for the drain (in
    # either order: two goroutines)
    fired = set()
    while len(fired) < 2:
        fired.add(sp.expect(r'name="(ShutdownInitiated|PreShutdownHooksStopped)"').group(1))
    # the delayed-stop goroutine logs ShutdownInitiated and only then goes to sleep: on a loaded
    # machine it can still be on its way when the line arrives
    wait_for_a_thread_in_time_sleep(sp.proc.pid)
    sp.signal(signal.SIGQUIT)
    assert sp.wait() == 2
    log = "\n".join(sp.seen)
    dump = log[log.index("SIGQUIT: quit\n"):]
    headers = re.findall(r'^goroutine \d+ "([^"]+)" \[([^\]]+)\]:$', dump, re.M)
    states = dict(headers)
    # the signal goroutine writes the dump; the shutdown's goroutines wait where Go's would
    assert headers[0] == ("go:signal-handler", "running")
    assert states["go:delayed-stop"] == "sleep"
    # the main thread is in run_with_context (waiting for the drain, or on its way there)
    main = next(b for b in dump.split("\n\n") if b.startswith("goroutine ") and '"MainThread"' in b.splitlines()[0])
    assert "genericserver.genericapiserver.PreparedGenericAPIServer._run_with_context(...)" in main
    for name in ("go:not-accepting-new-requests", "go:drain-non-long-running", "go:drain-watches", "go:drained",
                 "go:stop-http-server", "go:listener-stopped", "go:http-server-serve", "go:http-server-shutdown"):
        assert name in states, f"{name} missing from:\n{dump}"
    assert "genericserver.genericapiserver.PreparedGenericAPIServer._delayed_stop(...)" in dump

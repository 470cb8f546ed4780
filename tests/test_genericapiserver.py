"""Tests of genericserver.genericapiserver: ports of k8s.io/apiserver/pkg/server/genericapiserver_test.go and
the rest of genericapiserver_graceful_termination_test.go (v1.36.0), plus the edge cases of RunWithContext.

Ported Go cases: TestPreShutdownHooks (both modes), TestMuxAndDiscoveryComplete, TestGracefulShutdown,
TestMuxAndDiscoveryCompleteSignals (the counts asserted for real: Go's checks always pass) and
TestPrepareRun (no OpenAPI here, so ``/openapi/v2`` is left out; ``/livez`` and ``/readyz`` are added).
The two graceful-termination walkthroughs are in test_graceful_termination.py.

Beyond Go's tests: ``destroy()`` on every return path, a pre-shutdown hook error returned without
waiting for the drain, the audit backend's run error, the default mode's 503 for a request that
reaches the chain after the wait group's Wait, the klog lines and the event stream, the shutdown
timeout handed to serving, the watch drain limiter, a run without serving info, and, under the
simulation runtime (virtual time, one goroutine at a time), the timeline of a run with a 70 s delay.

Real sockets are used where Go uses them (threads runtime); everything else runs on the in-memory
path (``secure_serving = None``), under the simulation where timing or ordering is the point.
"""

from __future__ import annotations

import logging
import socket
import time
from typing import Any, Callable, Optional
from urllib.parse import parse_qs

import pytest
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import Client as WSGIClient

from genericserver import klog
from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.audit.memory import MemoryBackend
from genericserver.config import Config, new_config
from genericserver.context import context as gocontext
from genericserver.endpoints.filters.requestinfo import with_request_info
from genericserver.filters.waitgroup import with_wait_group
from genericserver.genericapiserver import (
    MIN_WATCH_DRAIN_QPS,
    RETRY_AFTER_MODE_SHUTDOWN_TIMEOUT,
    PreparedGenericAPIServer,
    watch_drain_limiter,
)
from genericserver.apimachinery.waitgroup import SafeWaitGroup
from genericserver.lifecycle_signals import SignalRecorder
from genericserver.net.http.server import NEW, Server, listen
from genericserver.secure_serving import SecureServingInfo, run_server
from genericserver.testing.client import Client, Result
from genericserver.testing.sim import FirstRunnable, SeededRandom, Simulation
from genericserver.x.time.rate.rate import Limiter

WAIT = 30.0  # Go's wait.ForeverTestTimeout
WATCH_PATH = "/apis/watches.group/v1/namespaces/foo/bar"
SHUTDOWN_SIGNALS = [
    "ShutdownInitiated",
    "AfterShutdownDelayDuration",
    "PreShutdownHooksStopped",
    "NotAcceptingNewRequest",
    "InFlightRequestsDrained",
    "HTTPServerStoppedListening",
]


def echo(environ, start_response):
    message = parse_qs(environ.get("QUERY_STRING", "")).get("message", [""])[0]
    start_response("200 OK", [("echo", message), ("Content-Length", "0")])
    return [b""]


def ok(environ, start_response):
    start_response("200 OK", [("Content-Length", "0")])
    return [b""]


def assert_status(result: Result, code: int) -> None:
    assert result.error is None, f"expected {code}, got error {result.error!r}"
    assert result.status == code, f"expected {code}, got {result.status}: {result.body!r}"


def new_client_get(port: int, path: str, timeout: float = 1.0) -> Result:
    with Client("127.0.0.1", port, new_connection=True) as c:
        return c.get(path, timeout=timeout)


def wait_signaled(sig) -> None:
    assert sig.signaled().wait(WAIT), f"{sig.name} was not signaled"


class Running:
    """``prepared.run_with_context(ctx)`` in a goroutine: its error and an event when it returned."""

    def __init__(self, prepared: PreparedGenericAPIServer, ctx: gocontext.Context):
        self.error: Optional[BaseException] = None
        self.returned = rt.event("run-returned")
        self.goroutine = rt.go(self._run, prepared, ctx, name="run-with-context")

    def _run(self, prepared: PreparedGenericAPIServer, ctx: gocontext.Context) -> None:
        try:
            prepared.run_with_context(ctx)
        except Exception as err:
            self.error = err
        finally:
            self.returned.set()

    def wait(self) -> Optional[BaseException]:
        assert self.returned.wait(WAIT), "run_with_context did not return"
        return self.error


def real_server_config(keep_listening: bool = False, **kw: Any) -> Config:
    """Go's newGenericAPIServer: 100 ms delay, watch draining on, on 127.0.0.1 port 0."""
    c = new_config()
    c.shutdown_delay_duration = 0.1
    c.shutdown_send_retry_after = keep_listening
    c.shutdown_watch_termination_grace_period = 2.0
    c.secure_serving = SecureServingInfo(listener=listen("127.0.0.1", 0), **kw)
    return c


def port_of(c: Config) -> int:
    return c.secure_serving.listener.getsockname()[1]


def join_goroutines(*names: str) -> None:
    """Wait for the named goroutines still running (Go leaves them behind on error returns)."""
    for g in rt.THREADS.live():
        if g.name in names:
            assert g.join(WAIT), f"goroutine {g.name} did not end"


@pytest.fixture
def v1():
    """``--v=1``: Go logs the [graceful-termination] and MuxAndDiscoveryComplete lines at V(1)."""
    with klog.with_verbosity(1):
        yield


def simulate(scenario: Callable[[], Any], chooser=None) -> Any:
    sim = Simulation(chooser=chooser if chooser is not None else FirstRunnable())
    result = sim.run(scenario)
    assert sim.leftover() == [], f"goroutines left blocked: {sim.leftover()}"
    return result


# -- TestPreShutdownHooks --------------------------------------------------------------------


@pytest.mark.parametrize("keep_listening", [False, True], ids=["ShutdownSendRetryAfter is disabled", "ShutdownSendRetryAfter is enabled"])
def test_pre_shutdown_hooks(keep_listening: bool):
    c = real_server_config(keep_listening)
    port = port_of(c)
    s = c.complete().new("test")
    s.handler.non_go_restful_mux.handle("/echo", echo)
    signals = s.lifecycle_signals
    results: list[Result] = []
    hook_done = rt.event("hook-done")

    def hook() -> None:
        try:
            signals.after_shutdown_delay_duration.signaled().wait()
            # Go sends one request a second. The spacing proves nothing: NotAcceptingNewRequest
            # waits for this hook to return, so the server must accept however long it takes.
            # Back to back is just as strong and costs no time.
            for i in range(5):
                r = new_client_get(port, f"/echo?message=attempt-{i}", timeout=WAIT)  # served, however slow the machine
                results.append(r)
                if r.error is not None or r.status != 200:
                    break
        finally:
            hook_done.set()

    s.add_pre_shutdown_hook("test-backend", hook)
    ctx, stop = gocontext.with_cancel_cause(gocontext.background())
    run = Running(s.prepare_run(), ctx)
    try:
        # the listener is bound before run starts: this waits in the backlog until serving begins
        assert_status(new_client_get(port, "/echo?message=attempt-0", timeout=WAIT), 200)
        stop(RuntimeError("shutting down"))
        assert run.wait() is None
        assert hook_done.wait(WAIT)
        assert len(results) == 5, results
        for r in results:
            assert_status(r, 200)
        # the hook's requests were all served before the server stopped taking new ones
        assert signals.not_accepting_new_request.is_signaled()
    finally:
        stop(RuntimeError("test is done"))
        run.wait()


# -- TestMuxAndDiscoveryComplete -------------------------------------------------------------


def test_mux_and_discovery_complete():
    """Registered mux signals hold MuxAndDiscoveryComplete back until every one is set.

    Under the simulation a virtual ``rt.sleep(1)`` (Go's 1 s sleep before each check) lets every
    goroutine run until it blocks before the clock moves, so "not signalled yet" is certain.
    """

    def scenario() -> list[bool]:
        c = new_config()
        c.shutdown_send_retry_after = True
        s = c.complete().new("test")
        signal1, signal2 = rt.event("TestSignal1"), rt.event("TestSignal2")
        s.register_mux_and_discovery_complete_signal("TestSignal1", signal1)
        s.register_mux_and_discovery_complete_signal("TestSignal2", signal2)
        complete = s.lifecycle_signals.mux_and_discovery_complete
        ctx, cancel = gocontext.with_cancel(gocontext.background())
        run = rt.go(s.prepare_run().run_with_context, ctx, name="run")
        seen = []
        rt.sleep(1)
        seen.append(complete.is_signaled())
        signal1.set()
        rt.sleep(1)
        seen.append(complete.is_signaled())
        signal2.set()
        rt.sleep(1)
        seen.append(complete.is_signaled())
        cancel()
        run.join()
        return seen

    assert simulate(scenario) == [False, False, True]


def test_mux_and_discovery_complete_never_fires_when_stop_comes_first(caplog, v1):
    """Edge case 19: unknown paths then keep answering 503 (not 404) for the rest of the process."""
    caplog.set_level(logging.INFO, logger="genericserver")
    c = new_config()
    s = c.complete().new("test")
    s.register_mux_and_discovery_complete_signal("never", rt.event("never"))
    client = WSGIClient(s.handler)
    r = client.get("/unknown", buffered=True)
    assert r.status_code == 503
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    run = Running(s.prepare_run(), ctx)
    cancel()
    assert run.wait() is None
    join_goroutines("mux-and-discovery-complete")
    assert not s.lifecycle_signals.mux_and_discovery_complete.is_signaled()
    assert "haven't completed MuxAndDiscoveryComplete, stop requested" in caplog.messages
    # After the drain an ordinary path gets the wait group's 503; an exempt path the wait group
    # lets through (here /metrics/none: exempt by its /metrics prefix, served by nothing)
    # reaches the not-found handler: 503 still.
    r = client.get("/metrics/none", buffered=True)
    assert r.status_code == 503
    assert r.headers["Retry-After"] == "5"
    assert r.json["message"] == "the request has been made before all known HTTP paths have been installed, please try again"


def test_unknown_path_is_404_once_mux_and_discovery_complete():
    c = new_config()
    s = c.complete().new("test")
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    run = Running(s.prepare_run(), ctx)
    try:
        # no mux signals registered: it fires at once
        wait_signaled(s.lifecycle_signals.mux_and_discovery_complete)
        r = WSGIClient(s.handler).get("/unknown", buffered=True)
        assert (r.status_code, r.get_data()) == (404, b"404 page not found\n")
    finally:
        cancel()
        run.wait()


# -- TestGracefulShutdown --------------------------------------------------------------------


class TracedSafeWaitGroup(SafeWaitGroup):
    """Says when ``wait`` was called, so a handler can outlive the start of the drain."""

    def __init__(self) -> None:
        super().__init__()
        self.wait_called = rt.event("wait-called")

    def wait(self) -> None:
        self.wait_called.set()
        super().wait()


def test_graceful_shutdown():
    """RunServer level: the in-flight request finishes after stop, a new one is refused (the
    listener closed), and the wait group waits for the handler."""
    c = new_config()
    wg = c.non_long_running_request_wait_group = TracedSafeWaitGroup()

    def chain(api_handler, cfg: Config):
        handler = with_wait_group(api_handler, cfg.long_running_func, cfg.non_long_running_request_wait_group)
        return with_request_info(handler, cfg.request_info_resolver)

    c.build_handler_chain_func = chain
    s = c.complete().new("test")
    started, release = rt.event("handler-started"), rt.event("handler-release")
    grace_shutdown = []

    def handler(environ, start_response):
        started.set()
        release.wait()
        # Go sleeps 2 s here; this handler is still running when the drain begins instead
        wg.wait_called.wait()
        start_response("200 OK", [("Content-Length", "0")])
        grace_shutdown.append(True)
        return [b""]

    s.handler.non_go_restful_mux.handle("/test", handler)
    s.handler.non_go_restful_mux.handle("/200", ok)
    ln = listen("127.0.0.1", 0)
    port = ln.getsockname()[1]
    stop = rt.event("stop")
    stopped, listener_stopped = run_server(Server(s.handler), ln, 10.0, stop)
    result: list[Result] = []
    client_done = rt.event("client-done")

    def client() -> None:
        result.append(new_client_get(port, "/test", timeout=WAIT))
        client_done.set()

    rt.go(client, name="client-test")
    try:
        assert started.wait(WAIT)
        stop.set()
        # Go sleeps 500 ms; the listener-stopped event says exactly when it is closed
        assert listener_stopped.wait(WAIT)
        r = new_client_get(port, "/200")
        assert r.refused, f"expected connection refused, got {r!r}"
        release.set()
        wg.wait()
        assert grace_shutdown == [True], "the wait group did not wait for the handler"
        assert stopped.wait(WAIT)
        assert client_done.wait(WAIT)
        assert_status(result[0], 200)
    finally:
        stop.set()
        release.set()
        client_done.wait(WAIT)
        stopped.wait(WAIT)


# -- TestMuxAndDiscoveryCompleteSignals ------------------------------------------------------


def test_mux_and_discovery_complete_signals():
    cfg = new_config()
    # scenario 1: a single server
    root = cfg.complete().new("rootServer")
    assert root.mux_and_discovery_complete_signals() == {}
    root.register_mux_and_discovery_complete_signal("rootTestSignal", rt.event("root"))
    assert list(root.mux_and_discovery_complete_signals()) == ["rootTestSignal"]

    # scenario 2: the outermost server inherits its delegate's signals
    delegate = cfg.complete().new("delegateServer")
    delegate.register_mux_and_discovery_complete_signal("delegateTestSignal", rt.event("delegate"))
    assert list(delegate.mux_and_discovery_complete_signals()) == ["delegateTestSignal"]
    new_root = cfg.complete().new("newRootServer", delegate)
    assert list(new_root.mux_and_discovery_complete_signals()) == ["delegateTestSignal"]
    new_root.register_mux_and_discovery_complete_signal("newRootTestSignal", rt.event("new-root"))
    assert sorted(new_root.mux_and_discovery_complete_signals()) == ["delegateTestSignal", "newRootTestSignal"]
    # registering on the wrapper does not touch the delegate
    assert list(delegate.mux_and_discovery_complete_signals()) == ["delegateTestSignal"]

    with pytest.raises(ValueError, match="^delegateTestSignal already registered$"):
        new_root.register_mux_and_discovery_complete_signal("delegateTestSignal", rt.event("again"))


# -- TestPrepareRun --------------------------------------------------------------------------


def test_prepare_run():
    c = new_config()
    s = c.complete().new("test")
    director = WSGIClient(s.handler.director)
    assert director.get("/healthz", buffered=True).status_code == 404  # installed in prepare_run
    s.prepare_run()
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    s.run_post_start_hooks(ctx)
    try:
        # Go polls /healthz: the max-in-flight-filter hook finishes asynchronously
        for name, entry in s.post_start_hooks().items():
            assert entry.done.wait(WAIT), f"post-start hook {name} did not finish"
        for path in ("/healthz", "/healthz/ping", "/livez", "/readyz"):
            r = director.get(path, buffered=True)
            assert (r.status_code, r.get_data()) == (200, b"ok"), path
        # the shutdown check is readyz's last, and only readyz has it
        r = director.get("/readyz?verbose", buffered=True)
        assert r.get_data(as_text=True).splitlines()[-2:] == ["[+]shutdown ok", "readyz check passed"]
        assert b"shutdown" not in director.get("/healthz?verbose", buffered=True).get_data()
        assert b"shutdown" not in director.get("/livez?verbose", buffered=True).get_data()
        # the first green readyz signals HasBeenReady
        assert s.lifecycle_signals.has_been_ready.is_signaled()
    finally:
        cancel()


# -- destroy() on every return path ----------------------------------------------------------


class FailingAuditBackend(MemoryBackend):
    def run(self, stop: rt.Event) -> None:
        raise RuntimeError("audit backend is broken")


def failing_hook() -> None:
    raise RuntimeError("hook failed")


@pytest.mark.parametrize("path", ["normal return", "pre-shutdown hook error", "audit backend run error"])
def test_destroy_runs_on_every_return_path(path: str):
    destroyed: list[str] = []
    delegate = new_config().complete().new("delegate")
    delegate.register_destroy_func(lambda: destroyed.append("delegate-1"))
    delegate.register_destroy_func(lambda: destroyed.append("delegate-2"))
    c = new_config()
    if path == "audit backend run error":
        c.audit_backend = FailingAuditBackend()
    wrapper = c.complete().new("wrapper", delegate)
    wrapper.register_destroy_func(lambda: destroyed.append("wrapper-1"))
    wrapper.register_destroy_func(lambda: destroyed.append("wrapper-2"))
    if path == "pre-shutdown hook error":
        wrapper.add_pre_shutdown_hook("failing", failing_hook)
    signals = wrapper.lifecycle_signals
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    run = Running(wrapper.prepare_run(), ctx)
    cancel()
    err = run.wait()
    # own functions in registration order, then the delegate's; once each
    assert destroyed == ["wrapper-1", "wrapper-2", "delegate-1", "delegate-2"]
    if path == "normal return":
        assert err is None
    elif path == "pre-shutdown hook error":
        assert str(err) == 'PreShutdownHook "failing" failed: hook failed'
        # the rest of the shutdown carries on in the background
        wait_signaled(signals.in_flight_requests_drained)
        wait_signaled(signals.http_server_stopped_listening)
    else:
        assert str(err) == "failed to run the audit backend: audit backend is broken"
        # Go leaves the stop-http-server goroutine waiting for a signal that never comes (the
        # process exits on this error); release it so the test leaves nothing behind
        signals.not_accepting_new_request.signal()
        join_goroutines("delayed-stop", "stop-http-server", "mux-and-discovery-complete")
    assert destroyed == ["wrapper-1", "wrapper-2", "delegate-1", "delegate-2"]


def test_audit_backend_run_error_returns_before_serving():
    c = new_config()
    c.audit_backend = FailingAuditBackend()
    s = c.complete().new("test")
    ran = []
    s.add_post_start_hook("must-not-run", lambda ctx: ran.append(True))
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    with pytest.raises(RuntimeError, match=r"^failed to run the audit backend: audit backend is broken$"):
        # returned at once, before the context is even cancelled
        s.prepare_run().run_with_context(ctx)
    assert ran == [] and not s.post_start_hooks()["must-not-run"].done.is_set()
    cancel()
    s.lifecycle_signals.not_accepting_new_request.signal()  # see test_destroy_runs_on_every_return_path
    join_goroutines("delayed-stop", "stop-http-server", "mux-and-discovery-complete")


def test_pre_shutdown_hook_error_is_returned_without_waiting_for_the_drain():
    """Edge case 13: the error comes back right after PreShutdownHooksStopped, while a request is
    still in flight (so InFlightRequestsDrained cannot have fired); the drain carries on."""
    c = real_server_config()
    port = port_of(c)
    s = c.complete().new("test")
    started, release = rt.event("in-flight-started"), rt.event("in-flight-release")

    def held(environ, start_response):
        started.set()
        release.wait()
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    s.handler.non_go_restful_mux.handle("/held", held)
    s.add_pre_shutdown_hook("failing", failing_hook)
    destroyed: list[str] = []
    s.register_destroy_func(lambda: destroyed.append("test"))
    signals = s.lifecycle_signals
    ctx, stop = gocontext.with_cancel_cause(gocontext.background())
    run = Running(s.prepare_run(), ctx)
    held_result: list[Result] = []
    held_done = rt.event("held-done")

    def send_held() -> None:
        held_result.append(new_client_get(port, "/held", timeout=WAIT))
        held_done.set()

    rt.go(send_held, name="client-held")
    try:
        assert started.wait(WAIT)
        stop(RuntimeError("shutting down"))
        err = run.wait()
        assert str(err) == 'PreShutdownHook "failing" failed: hook failed'
        assert signals.pre_shutdown_hooks_stopped.is_signaled()
        assert not signals.in_flight_requests_drained.is_signaled()
        assert destroyed == ["test"]  # destroy ran although a request is still in flight
        release.set()
        assert held_done.wait(WAIT)
        assert_status(held_result[0], 200)
        wait_signaled(signals.in_flight_requests_drained)
        wait_signaled(signals.http_server_stopped_listening)
    finally:
        stop(RuntimeError("test is done"))
        release.set()
        held_done.wait(WAIT)
        join_goroutines("http-server-shutdown", "http-server-serve")


# -- the default mode's 503 --------------------------------------------------------------------


def test_default_mode_a_request_whose_header_completes_after_shutdown_began_is_dropped():
    """Go's TODO (map §7.5, §7.11): in the default mode the 503 of WithWaitGroup is mostly unseen,
    because the listener is closed first. A connection accepted before the shutdown whose first
    request header is not complete yet is kept for up to 5 s (net/http counts it as "new", not
    idle), and the server waits for it; but when its header does complete, net/http's
    ``conn.serve`` sees the server shutting down and closes the connection without an answer
    (checked against Go 1.27: an empty read). The request never reaches the chain; Go's client
    retries it on a new connection, which is refused."""
    accepted = rt.event("accepted")

    def server_factory(app, **kw):
        srv = Server(app, **kw)
        srv.conn_state_hook = lambda conn, state: accepted.set() if state == NEW else None
        return srv

    c = real_server_config(server_factory=server_factory)
    port = port_of(c)
    s = c.complete().new("test")
    reached = []
    s.handler.non_go_restful_mux.handle("/echo", lambda env, sr: reached.append(env["PATH_INFO"]) or echo(env, sr))
    signals = s.lifecycle_signals
    ctx, stop = gocontext.with_cancel_cause(gocontext.background())
    run = Running(s.prepare_run(), ctx)
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    try:
        sock.sendall(b"GET /echo?message=after-wait HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert accepted.wait(WAIT)
        stop(RuntimeError("shutting down"))
        wait_signaled(signals.in_flight_requests_drained)
        wait_signaled(signals.http_server_stopped_listening)
        assert not run.returned.is_set()  # the server's shutdown waits for this connection
        sock.sendall(b"User-Agent: Go-http-client/1.1\r\n\r\n")
        assert sock.recv(65536) == b""  # closed, no answer
        assert run.wait() is None
        assert reached == []
    finally:
        sock.close()
        stop(RuntimeError("test is done"))
        run.wait()


# -- klog lines and the event stream ---------------------------------------------------------


def watch_scenario(retry_after: bool = True, grace: float = 2.0) -> Callable[[], dict]:
    """A run with one watch held open until the server says it is shutting down, on the
    in-memory path (werkzeug's test client calls the full chain in a goroutine)."""

    def scenario() -> dict:
        c = new_config()
        c.shutdown_send_retry_after = retry_after
        c.shutdown_watch_termination_grace_period = grace
        c.audit_backend = c.audit_policy_rule_evaluator = audit = MemoryBackend()
        s = c.complete().new("test")
        recorder = SignalRecorder(s.lifecycle_signals)
        started = rt.event("watch-started")
        out: dict[str, Any] = {}

        def watch(environ, start_response):
            started.set()
            reqctx.server_shutdown_signal_from(environ).shutting_down().wait()
            start_response("200 OK", [("Content-Length", "0")])
            return [b""]

        s.handler.non_go_restful_mux.handle(WATCH_PATH, watch)

        def client() -> None:
            out["watch"] = WSGIClient(s.handler).get(WATCH_PATH + "?watch=true", buffered=True).status_code

        ctx, cancel = gocontext.with_cancel(gocontext.background())
        run = rt.go(s.prepare_run().run_with_context, ctx, name="run")
        # run has started all its goroutines once MuxAndDiscoveryComplete fired; a client started
        # now is younger than the drain goroutines, so first-runnable lets the watch drain start
        # (and count the watch) before the watch leaves
        s.lifecycle_signals.mux_and_discovery_complete.signaled().wait()
        rt.go(client, name="watch-client")
        started.wait()
        cancel()
        run.join()
        # run_with_context waits for the listener itself; the signal follows in its own goroutine
        s.lifecycle_signals.http_server_stopped_listening.signaled().wait()
        out["signals"] = recorder.names()
        out["events"] = [(e.kind, e.name) for e in s.events]
        out["audit_completed"] = audit.shutdown_completed()
        return out

    return scenario


def test_klog_lines(caplog, v1):
    caplog.set_level(logging.INFO, logger="genericserver")
    out = simulate(watch_scenario())
    assert out["watch"] == 200
    lines = [m for m in caplog.messages if "[graceful-termination]" in m]
    # one goroutine at a time, first-runnable: this order is exact and reproducible
    assert lines == [
        '"[graceful-termination] using HTTP Server shutdown timeout" shutdownTimeout="2s"',
        "[graceful-termination] waiting for shutdown to be initiated",
        '"[graceful-termination] pre-shutdown hooks completed" name="PreShutdownHooksStopped"',
        '"[graceful-termination] shutdown event" name="ShutdownInitiated"',
        '"[graceful-termination] shutdown event" name="AfterShutdownDelayDuration"',
        '"[graceful-termination] shutdown event" name="NotAcceptingNewRequest"',
        "[graceful-termination] in-flight non long-running request(s) have drained",
        '"[graceful-termination] active watch request(s) have drained" duration="2s" activeWatchesBefore=1 activeWatchesAfter=0 error=null',
        '"[graceful-termination] shutdown event" name="InFlightRequestsDrained"',
        '"[graceful-termination] audit backend shutdown completed"',
        '"[graceful-termination] shutdown event" name="HTTPServerStoppedListening"',
        "[graceful-termination] apiserver is exiting",
    ]


def test_the_watch_drain_duration_is_a_go_duration(caplog, v1):
    """Go logs the grace period as a time.Duration: 500ms, not 0.5s."""
    caplog.set_level(logging.INFO, logger="genericserver")
    simulate(watch_scenario(grace=0.5))
    (line,) = [m for m in caplog.messages if "active watch request(s) have drained" in m]
    assert line.startswith('"[graceful-termination] active watch request(s) have drained" duration="500ms" ')


@pytest.mark.parametrize("seed", range(6))
def test_klog_lines_keep_their_causal_order_under_any_schedule(caplog, v1, seed: int):
    """Whatever the interleaving, a line logged before a signal fires comes before the lines of
    whoever waits for that signal (Go's defer order makes this so)."""
    caplog.set_level(logging.INFO, logger="genericserver")
    out = simulate(watch_scenario(), SeededRandom(seed))
    assert out["watch"] == 200
    lines = [m for m in caplog.messages if "[graceful-termination]" in m]

    def at(fragment: str) -> int:
        found = [i for i, m in enumerate(lines) if fragment in m]
        assert len(found) == 1, f"{fragment!r} logged {len(found)} times"
        return found[0]

    assert at('name="ShutdownInitiated"') < at('name="AfterShutdownDelayDuration"') < at('name="NotAcceptingNewRequest"')
    assert at("in-flight non long-running") < at('name="InFlightRequestsDrained"')
    assert at("active watch request(s) have drained") < at('name="InFlightRequestsDrained"')
    assert at("waiting for shutdown") < at("pre-shutdown hooks completed") < at("audit backend shutdown") < at("apiserver is exiting")
    # no shutdown event is left to log after the last line: a process exiting then loses none
    assert at('name="InFlightRequestsDrained"') < at("apiserver is exiting")
    assert at('name="HTTPServerStoppedListening"') < at("apiserver is exiting")


def test_event_stream_records_each_signal_once_in_order():
    out = simulate(watch_scenario())
    signal_events = [name for kind, name in out["events"] if kind == "signal"]
    # the same order the signals fired in, each once
    assert signal_events == out["signals"]
    assert sorted(signal_events) == sorted(SHUTDOWN_SIGNALS + ["MuxAndDiscoveryComplete"])
    events = out["events"]
    assert events.index(("hook", "pre-shutdown")) < events.index(("signal", "PreShutdownHooksStopped"))
    assert events.index(("signal", "InFlightRequestsDrained")) < events.index(("audit", "shutdown-completed"))
    assert events.index(("listener", "stopped")) < events.index(("signal", "HTTPServerStoppedListening"))
    assert [e for e in events if e[0] == "hook"] == [("hook", "pre-shutdown"), ("hook", "pre-shutdown")]  # start, end
    assert out["audit_completed"]


# -- the shutdown timeout given to serving ---------------------------------------------------


class RecordingServing:
    """A stand-in for SecureServingInfo: records what ``serve`` was given; stops with the stop event."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, float]] = []

    def serve(self, handler, shutdown_timeout: float, stop_ch: rt.Event) -> tuple[rt.Event, rt.Event]:
        self.calls.append((handler, shutdown_timeout))
        return stop_ch, stop_ch


@pytest.mark.parametrize("keep_listening, expected", [(False, 17.0), (True, 2.0)], ids=["default mode", "retry-after mode"])
def test_shutdown_timeout_given_to_serve(keep_listening: bool, expected: float):
    serving = RecordingServing()

    def scenario() -> Any:
        c = new_config()
        c.request_timeout = 17.0
        c.shutdown_send_retry_after = keep_listening
        c.secure_serving = serving
        s = c.complete().new("test")
        ctx, cancel = gocontext.with_cancel(gocontext.background())
        rt.after_func(1.0, cancel, name="stop")
        s.prepare_run().run_with_context(ctx)
        return s.handler

    handler = simulate(scenario)
    assert RETRY_AFTER_MODE_SHUTDOWN_TIMEOUT == 2.0
    assert serving.calls == [(handler, expected)]


# -- the watch drain limiter -----------------------------------------------------------------


@pytest.mark.parametrize(
    "count, grace, qps",
    [(0, 2.0, 200.0), (10, 2.0, 200.0), (400, 2.0, 200.0), (1000, 2.0, 500.0), (3000, 10.0, 300.0), (30, 0.1, 300.0)],
)
def test_watch_drain_limiter(count: int, grace: float, qps: float):
    def scenario() -> tuple:
        limiter, ctx, cancel = watch_drain_limiter(count, grace)
        made_at = rt.now()
        deadline, err_before = ctx.deadline(), ctx.err()
        cancel()
        return limiter, limiter.limit(), limiter.burst(), deadline - made_at, err_before, ctx.err()

    limiter, limit, burst, timeout, err_before, err_after = simulate(scenario)
    assert isinstance(limiter, Limiter)
    assert (limit, burst) == (qps, 1)
    assert MIN_WATCH_DRAIN_QPS == 200.0
    # a hard stop after the grace period; the cancel function ends it
    assert timeout == grace
    assert err_before is None and err_after is not None


def test_watch_drain_is_rate_limited_on_virtual_time():
    """Three watches leave at 200 a second, burst 1: the last one 10 ms after the first."""

    def scenario() -> dict:
        c = new_config()
        c.shutdown_watch_termination_grace_period = 2.0
        s = c.complete().new("test")
        recorder = SignalRecorder(s.lifecycle_signals)
        started = [rt.event(f"watch-{i}-started") for i in range(3)]
        ends: list[float] = []

        def watch(environ, start_response):
            started[int(parse_qs(environ["QUERY_STRING"])["i"][0])].set()
            reqctx.server_shutdown_signal_from(environ).shutting_down().wait()
            start_response("200 OK", [("Content-Length", "0")])
            return [b""]

        s.handler.non_go_restful_mux.handle(WATCH_PATH, watch)

        def client(i: int) -> None:
            assert WSGIClient(s.handler).get(f"{WATCH_PATH}?watch=true&i={i}", buffered=True).status_code == 200
            ends.append(rt.now())

        ctx, cancel = gocontext.with_cancel(gocontext.background())
        run = rt.go(s.prepare_run().run_with_context, ctx, name="run")
        # clients younger than the drain goroutines (see watch_scenario): the drain starts first
        s.lifecycle_signals.mux_and_discovery_complete.signaled().wait()
        for i in range(3):
            rt.go(client, i, name=f"watch-client-{i}")
        rt.wait_all(started)
        rt.after_func(1.0, cancel, name="stop")
        run.join()
        return {"ends": sorted(ends), "fired": dict(recorder.fired)}

    out = simulate(scenario)
    assert out["fired"]["NotAcceptingNewRequest"] == 1.0
    assert out["ends"] == pytest.approx([1.0, 1.005, 1.01])
    assert out["fired"]["InFlightRequestsDrained"] == pytest.approx(1.01)


# -- the hops from NotAcceptingNewRequest to the HTTP server's Shutdown --------------------------


class StopNotingServing:
    """A serving info whose server only notes the stop channel it is given; it stops when told."""

    def __init__(self) -> None:
        self.stop_ch: Any = None
        self.serving = rt.event("fake-serving")

    def serve(self, handler: Any, shutdown_timeout: float, stop_ch: Any) -> tuple[Any, Any]:
        self.stop_ch = stop_ch
        stopped = rt.event("fake-server-stopped")
        rt.go(lambda: (stop_ch.wait(), stopped.set()), name="fake-http-server")
        self.serving.set()
        return stopped, stopped


def test_the_thread_that_fires_not_accepting_new_request_tells_the_http_server_to_stop():
    """Go's two goroutines between the signal and RunServer's stop channel (stop-http-server,
    internal-stop) are go_after goroutines: the thread that fires NotAcceptingNewRequest closes the
    server's stop channel itself, so under load the Shutdown is one thread wake-up away, not three."""
    c = new_config()
    c.shutdown_delay_duration = 0.0
    c.secure_serving = serving = StopNotingServing()
    s = c.complete().new("test")
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    run = Running(s.prepare_run(), ctx)
    assert serving.serving.wait(WAIT)  # the server's own go_after waits on the signal already
    seen: list[bool] = []
    # registered after the server's: the setter makes this call right after the server's
    rt.go_after(s.lifecycle_signals.not_accepting_new_request.signaled(),
                lambda: seen.append(serving.stop_ch.is_set()), name="probe")
    cancel()
    assert run.wait() is None
    assert seen == [True]


def test_the_thread_that_sets_run_servers_stop_event_shuts_the_listener_and_turns_keep_alives_off():
    """RunServer's goroutine would wake only once it gets the GIL; the first step of its
    Shutdown (keep-alives off, listeners shut) is a go_after goroutine's, made by the thread
    that sets the stop event, so the listener refuses connections before that thread returns."""
    ln = listen("127.0.0.1", 0)
    port = ln.getsockname()[1]
    srv = Server(ok)
    stop = rt.event("stop")
    stopped, listener_stopped = run_server(srv, ln, 10.0, stop)
    assert_status(new_client_get(port, "/", timeout=WAIT), 200)  # serve has its listener (Go: a stop before would win)
    seen: list[tuple[bool, bool]] = []

    def probe() -> None:
        # registered after run_server's own: the setter makes this call right after that one
        seen.append((srv.shutting_down(), new_client_get(port, "/", timeout=WAIT).refused))

    rt.go_after(stop, probe, name="probe")
    stop.set()
    assert seen == [(True, True)]
    assert listener_stopped.wait(WAIT) and stopped.wait(WAIT)


def test_run_with_context_returns_after_the_not_accepting_line_even_when_its_goroutine_is_held_up(caplog, v1):
    """The goroutine that fires NotAcceptingNewRequest makes the relays' calls (the HTTP server's
    first shutdown step among them) and only then logs the event; a thread that loses the GIL
    meanwhile can see the rest of the shutdown finish first. Go's run returns without waiting
    for it; here the process would exit before the line was written (two suites at once lost
    it), so run_with_context waits for that goroutine as for the two that log the last events."""
    caplog.set_level(logging.INFO, logger="genericserver")
    c = new_config()
    c.shutdown_delay_duration = 0.0
    c.secure_serving = serving = StopNotingServing()
    s = c.complete().new("test")
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    prepared = s.prepare_run()
    not_accepting = '"[graceful-termination] shutdown event" name="NotAcceptingNewRequest"'
    returned, logged_at_return = rt.event("returned"), []

    def run() -> None:
        try:
            prepared.run_with_context(ctx)
            logged_at_return.append(not_accepting in caplog.messages)
        finally:
            returned.set()

    g = rt.go(run, name="run-with-context")
    assert serving.serving.wait(WAIT)  # the server's own go_after waits on the signal already
    # a call made by the signalling thread, after the server's own: it holds that thread up
    # until run_with_context returned, or half a second if run waits for the thread (as it must)
    rt.go_after(s.lifecycle_signals.not_accepting_new_request.signaled(), lambda: returned.wait(0.5), name="held-up")
    cancel()
    assert g.join(WAIT)
    assert logged_at_return == [True]


def test_keep_alive_clients_busy_at_not_accepting_get_their_answer_with_connection_close_and_no_503():
    """Go's Shutdown turns keep-alives off (``inShutdown``, checked as each answer's header is
    written and before the next request is read): a keep-alive connection carries the answer in
    progress, with ``Connection: close``, and nothing after it. The 503s are bounded by what was in
    flight: here each client's one request was admitted before NotAcceptingNewRequest, so none."""
    import http.client

    c = real_server_config()
    port = port_of(c)
    s = c.complete().new("test")
    clients = 3
    mu, entered, all_in, release = rt.lock(), [0], rt.event("all-held"), rt.event("release")

    def held(environ, start_response):
        with mu:
            entered[0] += 1
            if entered[0] == clients:
                all_in.set()
        assert release.wait(WAIT)
        start_response("200 OK", [("Content-Length", "2")])
        return [b"ok"]

    s.handler.non_go_restful_mux.handle("/held", held)
    s.handler.non_go_restful_mux.handle("/200", ok)
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    run = Running(s.prepare_run(), ctx)
    conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT) for _ in range(clients)]
    for conn in conns:  # each a keep-alive connection, reused
        for _ in range(2):
            conn.request("GET", "/200")
            resp = conn.getresponse()
            assert (resp.status, resp.read(), resp.will_close) == (200, b"", False)
    answers: list[list[tuple[int, Optional[str]]]] = [[] for _ in conns]

    def in_flight(i: int) -> None:
        resp = conns[i].getresponse()
        resp.read()
        answers[i].append((resp.status, resp.getheader("Connection")))

    for conn in conns:
        conn.request("GET", "/held")
    readers = [rt.go(in_flight, i, name=f"held-client-{i}") for i in range(clients)]
    assert all_in.wait(WAIT)
    cancel()
    wait_signaled(s.lifecycle_signals.http_server_stopped_listening)  # Shutdown has begun
    release.set()
    assert all(g.join(WAIT) for g in readers)
    # each connection: the answer in progress, saying Connection: close; no 503 anywhere
    assert answers == [[(200, "close")]] * clients
    for conn in conns:  # the connection is gone and the listener closed: the next request is refused
        with pytest.raises(ConnectionRefusedError):
            conn.request("GET", "/200")
            conn.getresponse()
        conn.close()
    assert run.wait() is None


def test_http2_clients_busy_at_not_accepting_get_their_answers_and_a_goaway_and_no_503(tls_cert):
    """Go's Shutdown sends each HTTP/2 connection its GOAWAY (the last stream it read) before
    the next stream is read: the 503s are bounded by what was in flight, here none, since each
    client's streams were admitted before NotAcceptingNewRequest. A stream a client opens after
    the listener stopped is past its GOAWAY's last id: never answered (Go's clients retry it)."""
    import h2.errors
    import h2.events
    from h2client import H2Client

    c = real_server_config(cert_file=tls_cert[0], key_file=tls_cert[1])
    port = port_of(c)
    s = c.complete().new("test")
    clients, streams = 3, 2
    mu, entered, all_in, release = rt.lock(), [0], rt.event("all-held"), rt.event("release")

    def held(environ, start_response):
        with mu:
            entered[0] += 1
            if entered[0] == clients * streams:
                all_in.set()
        assert release.wait(WAIT)
        start_response("200 OK", [("Content-Length", "2")])
        return [b"ok"]

    s.handler.non_go_restful_mux.handle("/held", held)
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    run = Running(s.prepare_run(), ctx)
    conns = [H2Client(port, tls_cert[0]) for _ in range(clients)]
    try:
        in_flight = [[conn.request("/held") for _ in range(streams)] for conn in conns]
        assert all_in.wait(WAIT)
        cancel()
        wait_signaled(s.lifecycle_signals.http_server_stopped_listening)  # Shutdown has begun
        late = [conn.request_after_goaway("/held") for conn in conns]
        for conn, sids in zip(conns, in_flight):
            ga = conn.goaway()
            assert (ga.error_code, ga.last_stream_id) == (h2.errors.ErrorCodes.NO_ERROR, sids[-1])
        release.set()
        answers = [[conn.response(sid)[0] for sid in sids] for conn, sids in zip(conns, in_flight)]
        assert answers == [[200] * streams] * clients  # and no 503 anywhere
        for conn, sid in zip(conns, late):
            conn.wait_closed()  # a second after its last stream ended: nothing more will come
            assert not conn.of(h2.events.ResponseReceived, sid)
        assert entered == [clients * streams]
    finally:
        release.set()
        for conn in conns:
            conn.close()
    assert run.wait() is None


# -- NonBlockingRunWithContext without serving info ------------------------------------------


def test_non_blocking_run_with_context_without_secure_serving_info():
    """Go returns nil channels and RunWithContext would block forever (edge case 14); here both
    events are set once the context is done, so the shutdown completes (documented)."""
    c = new_config()
    s = c.complete().new("test")
    hook_ctx: list[Any] = []
    hook_ran = rt.event("hook-ran")

    def hook(ctx) -> None:
        hook_ctx.append(ctx)
        hook_ran.set()

    s.add_post_start_hook("record", hook)
    prepared = s.prepare_run()
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    stopped, listener_stopped = prepared.non_blocking_run_with_context(ctx, 1.0)
    assert hook_ran.wait(WAIT)
    assert not stopped.is_set() and not listener_stopped.is_set()
    assert not hook_ctx[0].done().is_set()
    cancel()
    assert stopped.wait(WAIT) and listener_stopped.wait(WAIT)
    # the post-start hooks' context is the one given here
    assert hook_ctx[0].done().is_set()


def test_run_without_secure_serving_info_completes_the_shutdown():
    c = new_config()
    s = c.complete().new("test")
    recorder = SignalRecorder(s.lifecycle_signals)
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    run = Running(s.prepare_run(), ctx)
    cancel()
    assert run.wait() is None
    wait_signaled(s.lifecycle_signals.http_server_stopped_listening)
    assert sorted(n for n in recorder.names() if n in SHUTDOWN_SIGNALS) == sorted(SHUTDOWN_SIGNALS)


def test_deprecated_run_with_a_stop_event():
    def scenario() -> list[tuple[str, float]]:
        s = new_config().complete().new("test")
        recorder = SignalRecorder(s.lifecycle_signals)
        stop = rt.event("stop")
        rt.after_func(3.0, stop.set, name="stop")
        s.prepare_run().run(stop)
        return [(n, t) for n, t in recorder.fired if n == "ShutdownInitiated"]

    assert simulate(scenario) == [("ShutdownInitiated", 3.0)]


# -- the timeline under the simulation runtime -----------------------------------------------


def sim_run(delay: float, hook_seconds: Optional[float] = None, *, stop_at: float = 1.0, retry_after: bool = False) -> Callable[[], dict]:
    def scenario() -> dict:
        c = new_config()
        c.shutdown_delay_duration = delay
        c.shutdown_send_retry_after = retry_after
        s = c.complete().new("test")
        recorder = SignalRecorder(s.lifecycle_signals)
        if hook_seconds is not None:
            s.add_pre_shutdown_hook("test-hook", lambda: rt.sleep(hook_seconds))
        ctx, cancel = gocontext.with_cancel(gocontext.background())
        rt.after_func(stop_at, cancel, name="stop")
        s.prepare_run().run_with_context(ctx)
        returned = rt.now()
        # the last signal may follow the return (its goroutine waits for the listener too)
        s.lifecycle_signals.http_server_stopped_listening.signaled().wait()
        return {"fired": list(recorder.fired), "returned": returned}

    return scenario


def test_run_with_context_70s_delay_on_virtual_time():
    started = time.perf_counter()
    out = simulate(sim_run(70.0))
    real = time.perf_counter() - started
    # the 70 s shutdown delay is not waited in real time (the bound is the delay, not a speed:
    # milliseconds here, seconds on a machine slowed many times)
    assert real < 70.0, f"waited in real time: took {real:.3f} s"
    t0 = 1.0
    assert out["fired"] == [
        ("MuxAndDiscoveryComplete", 0.0),
        ("PreShutdownHooksStopped", t0),
        ("ShutdownInitiated", t0),
        ("AfterShutdownDelayDuration", t0 + 70.0),
        ("NotAcceptingNewRequest", t0 + 70.0),
        ("HTTPServerStoppedListening", t0 + 70.0),
        ("InFlightRequestsDrained", t0 + 70.0),
    ]
    assert out["returned"] == t0 + 70.0


@pytest.mark.parametrize("hook_seconds, expected", [(0.0, "PreShutdownHooksStopped first"), (100.0, "AfterShutdownDelayDuration first")], ids=["quick hook", "hook slower than the delay"])
def test_pre_shutdown_hooks_stopped_vs_after_shutdown_delay(hook_seconds: float, expected: str):
    fired = dict(simulate(sim_run(70.0, hook_seconds))["fired"])
    t0 = 1.0
    assert fired["AfterShutdownDelayDuration"] == t0 + 70.0
    assert fired["PreShutdownHooksStopped"] == t0 + hook_seconds
    first = min(("PreShutdownHooksStopped", "AfterShutdownDelayDuration"), key=fired.__getitem__)
    assert f"{first} first" == expected
    # NotAcceptingNewRequest waits for both, whichever is later
    assert fired["NotAcceptingNewRequest"] == t0 + max(70.0, hook_seconds)


@given(
    delay=st.sampled_from([0.0, 0.1, 5.0, 70.0]),
    hook_seconds=st.one_of(st.none(), st.sampled_from([0.0, 0.05, 5.0, 100.0])),
    retry_after=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_shutdown_timeline_property(delay: float, hook_seconds: Optional[float], retry_after: bool, seed: int):
    """Any delay, hook duration, mode and schedule: every signal fires once, at the virtual time
    the contract says, and in its dependency order."""
    out = simulate(sim_run(delay, hook_seconds, stop_at=2.0, retry_after=retry_after), SeededRandom(seed))
    names = [n for n, _ in out["fired"]]
    assert sorted(names) == sorted(SHUTDOWN_SIGNALS + ["MuxAndDiscoveryComplete"])
    fired = dict(out["fired"])
    pos = {n: i for i, n in enumerate(names)}
    t0, hooks = 2.0, hook_seconds or 0.0
    t1 = t0 + max(delay, hooks)
    assert fired["ShutdownInitiated"] == t0
    assert fired["AfterShutdownDelayDuration"] == t0 + delay
    assert fired["PreShutdownHooksStopped"] == t0 + hooks
    assert fired["NotAcceptingNewRequest"] == fired["InFlightRequestsDrained"] == fired["HTTPServerStoppedListening"] == t1
    assert out["returned"] == t1
    assert pos["ShutdownInitiated"] < pos["AfterShutdownDelayDuration"] < pos["NotAcceptingNewRequest"]
    assert pos["PreShutdownHooksStopped"] < pos["NotAcceptingNewRequest"] < pos["InFlightRequestsDrained"]
    if retry_after:
        # the HTTP server is only stopped after the drain
        assert pos["InFlightRequestsDrained"] < pos["HTTPServerStoppedListening"]
    else:
        assert pos["NotAcceptingNewRequest"] < pos["HTTPServerStoppedListening"]

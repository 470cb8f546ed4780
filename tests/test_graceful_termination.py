"""Port of k8s.io/apiserver/pkg/server/genericapiserver_graceful_termination_test.go (v1.36.0).

Both modes, step by step, on a real server on 127.0.0.1 port 0 with real sockets: a keep-alive
client and new-connection clients, an in-flight request and a watch held open through the
shutdown, a test step run inside AfterShutdownDelayDuration (the signal is held back until the
step finished), a pre-shutdown hook making its own request, /readyz 200 then 500, the answer
each phase gives, both in-flight requests 200 and audited, the audit backend shut down, and the
exact signal order of each mode.

Each test runs twice: over HTTP/2 with TLS, as Go's test does (the requests held in flight share
the reusing client's connection, which reads a GOAWAY when ``Shutdown`` starts; its next request
then dials and is refused, or in retry-after mode gets its 429 and the GOAWAY follows), and over
plain HTTP/1.1, where each held request has its own connection and ``Connection: close`` does
what the GOAWAY does.
"""

from __future__ import annotations

import pytest

from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.audit.memory import MemoryBackend
from genericserver.config import new_config
from genericserver.context import context as gocontext
from genericserver.lifecycle_signals import LifecycleSignal, SignalRecorder
from genericserver.net.http.server import listen
from genericserver.secure_serving import SecureServingInfo
from genericserver.testing.client import Client, Result
from h2client import H2Doer

WAIT = 30.0  # Go's wait.ForeverTestTimeout
# Go's test gives each request a second (time.Second). No request here is expected to time out:
# each gets its answer or is refused at once, so the bound only matters if something hangs; on
# two cores running two suites a TLS dial and its answer took longer than a second.
REQUEST_TIMEOUT = WAIT


def echo(environ, start_response):
    from urllib.parse import parse_qs

    message = parse_qs(environ.get("QUERY_STRING", "")).get("message", [""])[0]
    start_response("200 OK", [("echo", message), ("Content-Length", "0")])
    return [b""]


class InFlight:
    """A request held inside its handler until the test unblocks it (Go's inFlightRequest)."""

    def __init__(self, path: str, url: str):
        self.path, self.url = path, url
        self.started = rt.event(f"{path}-started")
        self.blocked = rt.event(f"{path}-blocked")
        self.result_ready = rt.event(f"{path}-result")
        self.result: Result | None = None

    def launch(self, client) -> None:
        def send() -> None:
            self.result = client.get(self.url, timeout=None)
            self.result_ready.set()

        rt.go(send, name=f"client-{self.path}")

    def unblock_and_wait_for_result(self) -> Result:
        self.blocked.set()
        assert self.result_ready.wait(WAIT), f"{self.path}: no result"
        assert self.result is not None
        return self.result


def setup_in_flight_non_long_running(s) -> InFlight:
    flight = InFlight("/in-flight-non-long-running-request-as-designed", "/in-flight-non-long-running-request-as-designed")

    def handler(environ, start_response):
        flight.started.set()
        flight.blocked.wait()
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    s.handler.non_go_restful_mux.handle(flight.path, handler)
    return flight


def setup_in_flight_watch(s) -> InFlight:
    path = "/apis/watches.group/v1/namespaces/foo/bar"
    flight = InFlight(path, path + "?watch=true")

    def handler(environ, start_response):
        flight.started.set()
        flight.blocked.wait()
        signal = reqctx.server_shutdown_signal_from(environ)
        if signal is None:
            # the watch-termination filter must have attached the shutdown signal
            start_response("500 Internal Server Error", [("Content-Length", "0")])
            return [b""]
        signal.shutting_down().wait()
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    s.handler.non_go_restful_mux.handle(path, handler)
    return flight


class PreShutdownHook:
    def __init__(self, s, new_client):
        self.blocked = rt.event("hook-blocked")
        self.result: Result | None = None

        def hook() -> None:
            self.blocked.wait()
            with new_client() as c:
                self.result = c.get("/echo?message=request-from-pre-shutdown-hook-should-succeed", timeout=REQUEST_TIMEOUT)

        s.add_pre_shutdown_hook("test-preshutdown-hook", hook)


class InterceptingStep:
    """Runs test code inside a signal, before it fires (Go's signalInterceptingTestStep)."""

    def __init__(self, sig: LifecycleSignal):
        self._waiting = rt.event("step-waiting")
        self._done = rt.event("step-done")
        sig.observe(self._before)

    def _before(self, sig: LifecycleSignal, at: float) -> None:
        self._waiting.set()
        self._done.wait()

    def execute(self, fn) -> None:
        assert self._waiting.wait(WAIT), "the signal was never about to fire"
        try:
            fn()
        finally:
            self._done.set()


def new_generic_api_server(audit: MemoryBackend, keep_listening: bool, tls_cert=None):
    config = new_config()
    config.shutdown_delay_duration = 0.1
    config.shutdown_send_retry_after = keep_listening
    # any positive value turns watch draining on
    config.shutdown_watch_termination_grace_period = 2.0
    config.audit_backend = audit
    config.audit_policy_rule_evaluator = audit
    config.secure_serving = SecureServingInfo(listener=listen("127.0.0.1", 0))
    if tls_cert is not None:  # HTTP/2 offered first in ALPN, as Go's test serves it
        config.secure_serving.cert_file, config.secure_serving.key_file = tls_cert
    s = config.complete().new("test")
    s.handler.non_go_restful_mux.handle("/echo", echo)
    return s, config.secure_serving.listener.getsockname()[1]


def assert_status(result: Result, code: int) -> None:
    assert result.error is None, f"expected {code}, got error {result.error!r}"
    assert result.status == code, f"expected {code}, got {result.status}: {result.body!r}"


def assert_audited(result: Result, audit: MemoryBackend) -> None:
    audit_id = result.header("Audit-ID")
    assert audit_id, "response has no Audit-ID header"
    assert audit.audited(audit_id), f"request {audit_id} was not audited"


def wait_signaled(sig: LifecycleSignal) -> None:
    assert sig.signaled().wait(WAIT), f"{sig.name} was not signaled"


class Harness:
    def __init__(self, keep_listening: bool, tls_cert=None):
        self.audit = MemoryBackend()
        self.http2 = tls_cert is not None
        self.ca = tls_cert[0] if tls_cert else ""
        self.s, self.port = new_generic_api_server(self.audit, keep_listening, tls_cert)
        self.reusing = H2Doer(self.port, self.ca) if self.http2 else Client("127.0.0.1", self.port)
        self.non_long_running = setup_in_flight_non_long_running(self.s)
        self.watch = setup_in_flight_watch(self.s)
        self.hook = PreShutdownHook(self.s, self.new_client)
        self.signals = self.s.lifecycle_signals
        self.recorder = SignalRecorder(self.signals)
        self.step = InterceptingStep(self.signals.after_shutdown_delay_duration)
        self.ctx, self.stop = gocontext.with_cancel_cause(gocontext.background())
        self.run_error: list[BaseException] = []
        self.run_completed = rt.event("run-completed")

    def start(self) -> None:
        prepared = self.s.prepare_run()

        def run() -> None:
            try:
                prepared.run_with_context(self.ctx)
            except BaseException as err:
                self.run_error.append(err)
            finally:
                self.run_completed.set()

        rt.go(run, name="run-with-context")
        # The listener is bound before run starts, so the first request waits in the accept
        # backlog until serving begins: no polling needed (Go polls /echo).
        assert_status(self.new_client_get("/echo?message=attempt-1", timeout=WAIT), 200)
        # post-start hooks run in their own goroutines; readyz is red until they finished
        for name, entry in self.s.post_start_hooks().items():
            assert entry.done.wait(WAIT), f"post-start hook {name} did not finish"

    def new_client(self):
        if self.http2:
            return H2Doer(self.port, self.ca, new_connection=True)
        return Client("127.0.0.1", self.port, new_connection=True)

    def new_client_get(self, path: str, timeout: float = REQUEST_TIMEOUT) -> Result:
        with self.new_client() as c:
            r = c.get(path, timeout=timeout)
        assert not r.reused
        return r

    def launch_in_flight(self) -> None:
        # over HTTP/2 both ride on the reusing client's connection, as in Go's test
        self.non_long_running.launch(self.reusing if self.http2 else self.new_client())
        assert self.non_long_running.started.wait(WAIT), "in-flight non long-running request did not reach the server"
        self.watch.launch(self.reusing if self.http2 else self.new_client())
        assert self.watch.started.wait(WAIT), "in-flight watch request did not reach the server"

    def common_steps_until_not_accepting(self) -> None:
        """Steps shared by both modes: up to the pre-shutdown hook's own request."""
        self.start()
        # prime the reusing client's keep-alive connection
        assert_status(self.reusing.get("/echo?message=prime"), 200)
        self.launch_in_flight()

        assert_status(self.new_client_get("/readyz"), 200)

        self.stop(RuntimeError("shutting down"))
        wait_signaled(self.signals.shutdown_initiated)
        # readyz is red from ShutdownInitiated on
        r = self.new_client_get("/readyz")
        assert_status(r, 500)
        assert b"[-]shutdown failed: reason withheld" in r.body

        def before_delay_elapses() -> None:
            r = self.reusing.get("/echo?message=request-on-an-existing-connection-should-succeed", timeout=REQUEST_TIMEOUT)
            assert r.reused, "expected the keep-alive connection to be reused"
            assert_status(r, 200)
            assert_status(self.new_client_get("/echo?message=request-on-a-new-tcp-connection-should-succeed"), 200)

        self.step.execute(before_delay_elapses)
        wait_signaled(self.signals.after_shutdown_delay_duration)

        # the pre-shutdown hook is still blocked, so new requests are still served
        assert_status(self.new_client_get("/echo?message=request-on-a-new-tcp-connection-should-succeed"), 200)

        self.hook.blocked.set()
        wait_signaled(self.signals.pre_shutdown_hooks_stopped)
        assert self.hook.result is not None
        assert_status(self.hook.result, 200)
        wait_signaled(self.signals.not_accepting_new_request)

    def finish(self, expected_order: list[str]) -> None:
        r = self.non_long_running.unblock_and_wait_for_result()
        assert_status(r, 200)
        assert_audited(r, self.audit)
        r = self.watch.unblock_and_wait_for_result()
        assert_status(r, 200)
        assert_audited(r, self.audit)

        wait_signaled(self.signals.in_flight_requests_drained)
        # run_with_context waits for the listener itself; the signal fires in its own goroutine
        wait_signaled(self.signals.http_server_stopped_listening)
        assert self.run_completed.wait(WAIT), "the apiserver run_with_context did not return"
        assert self.run_error == []
        assert self.audit.shutdown_completed()
        shutdown_signals = [n for n in self.recorder.names() if n not in ("HasBeenReady", "MuxAndDiscoveryComplete")]
        assert shutdown_signals == expected_order

    def close(self) -> None:
        self.reusing.close()
        self.stop(RuntimeError("test has completed"))
        self.hook.blocked.set()
        self.non_long_running.blocked.set()
        self.watch.blocked.set()
        self.run_completed.wait(WAIT)


@pytest.fixture(params=["h2", "http/1.1"])
def harness_factory(request, tls_cert):
    made: list[Harness] = []

    def make(keep_listening: bool) -> Harness:
        h = Harness(keep_listening, tls_cert if request.param == "h2" else None)
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()


def test_graceful_termination_with_keep_listening_during_graceful_termination_disabled(harness_factory):
    h = harness_factory(False)
    h.common_steps_until_not_accepting()
    wait_signaled(h.signals.http_server_stopped_listening)

    # the listener is closed: a new connection is refused
    r = h.new_client_get("/echo?message=request-on-a-new-tcp-connection-should-fail-with-503")
    assert r.refused, f"expected connection refused, got {r!r}"
    if h.http2:
        # Shutdown's hook sent the reusing connection a GOAWAY; its streams in flight go on
        ga = h.reusing.conn.goaway()
        assert (ga.error_code, ga.last_stream_id) == (0, h.reusing.conn.conn.highest_outbound_stream_id)
    # the keep-alive connection was closed (HTTP/1.1) or went away (HTTP/2): the client redials and is refused
    r = h.reusing.get("/echo?message=request-on-an-existing-connection-should-fail-with-error", timeout=REQUEST_TIMEOUT)
    assert r.refused, f"expected connection refused, got {r!r}"

    h.finish(
        [
            "ShutdownInitiated",
            "AfterShutdownDelayDuration",
            "PreShutdownHooksStopped",
            "NotAcceptingNewRequest",
            "HTTPServerStoppedListening",
            "InFlightRequestsDrained",
        ]
    )


def test_graceful_termination_with_keep_listening_during_graceful_termination_enabled(harness_factory):
    h = harness_factory(True)
    h.common_steps_until_not_accepting()

    # still listening: every non-exempt request gets a 429 with Retry-After: 5
    r = h.new_client_get("/echo?message=request-on-a-new-tcp-connection-should-fail-with-429")
    assert_status(r, 429)
    assert r.header("Retry-After") == "5"
    r = h.reusing.get("/echo?message=request-on-an-existing-connection-should-fail-with-429", timeout=REQUEST_TIMEOUT)
    assert r.reused
    assert_status(r, 429)
    assert r.header("Retry-After") == "5"
    if h.http2:  # no such header in HTTP/2: it became a GOAWAY with this stream as the last
        assert r.header("Connection") is None
        ga = h.reusing.conn.goaway()
        assert (ga.error_code, ga.last_stream_id) == (0, h.reusing.conn.conn.highest_outbound_stream_id)
    else:
        assert r.header("Connection") == "close"
    assert not h.signals.http_server_stopped_listening.is_signaled()

    h.finish(
        [
            "ShutdownInitiated",
            "AfterShutdownDelayDuration",
            "PreShutdownHooksStopped",
            "NotAcceptingNewRequest",
            "InFlightRequestsDrained",
            "HTTPServerStoppedListening",
        ]
    )

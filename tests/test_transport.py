"""Tests for genericserver.testing.transport, the in-memory transport (no Go twin).

Everything runs under the simulation runtime, on virtual time; the last tests drive the
in-memory server through the real ``run_server`` of secure_serving.py.
"""

from __future__ import annotations

import pytest

from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.context import context as gocontext
from genericserver.events import EventStream
from genericserver.net.http.request import CONN_ID_KEY
from genericserver.net.http.server import ServerClosed
from genericserver.secure_serving import SecureServingInfo, run_server
from genericserver.testing.sim import Scripted, SeededRandom, Simulation
from genericserver.testing.transport import (
    ACTIVE,
    IDLE,
    NEW,
    ConnectionDropped,
    ConnectionRefused,
    MemoryListener,
    MemoryServer,
    Response,
    memory_server_factory,
)
from genericserver.testing.memclient import MemoryClient, serve_app


def simulate(fn, chooser=None):
    sim = Simulation(chooser)
    result = sim.run(fn)
    assert sim.leftover() == [], f"goroutines left: {sim.leftover()}"
    return result


def hello(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"hello ", environ["PATH_INFO"].encode()]


def slow(seconds):
    def app(environ, start_response):
        rt.sleep(seconds)
        start_response("200 OK", [])
        return [b"done"]

    return app


def stop(server):
    ctx, cancel = gocontext.with_timeout(gocontext.background(), 60)
    try:
        server.shutdown(ctx)
    finally:
        cancel()


def test_a_keep_alive_connection_is_reused():
    def scenario():
        ln = MemoryListener()
        server = serve_app(hello, ln)
        client = MemoryClient(ln)
        first, second = client.get("/a"), client.get("/b")
        stop(server)
        return first, second

    first, second = simulate(scenario)
    assert (first.status, first.body, first.reused) == (200, b"hello /a", False)
    assert (second.status, second.body, second.reused) == (200, b"hello /b", True)
    assert first.header("Content-Type") == "text/plain"


def test_connection_close_from_the_app_closes_the_connection():
    def closing(environ, start_response):
        start_response("429 Too Many Requests", [("Connection", "close"), ("Retry-After", "5")])
        return [b"later\n"]

    def scenario():
        ln = MemoryListener()
        server = serve_app(closing, ln)
        client = MemoryClient(ln)
        first, second = client.get("/"), client.get("/")
        states = server.conn_states()
        stop(server)
        return first, second, states

    first, second, states = simulate(scenario)
    assert first.status == second.status == 429
    assert first.header("Connection") == "close"
    assert not second.reused  # the first connection was closed after its answer
    assert states == {NEW: 0, ACTIVE: 0, IDLE: 0}


def test_a_dial_after_the_listener_closed_is_refused():
    def scenario():
        ln = MemoryListener(("10.0.0.1", 6443), probe=lambda: "phase-at-dial")
        ln.close()
        with pytest.raises(ConnectionRefused) as err:
            ln.dial()
        return err.value, MemoryClient(ln).get("/")

    err, result = simulate(scenario)
    assert isinstance(err, ConnectionRefusedError)
    assert err.phase == "phase-at-dial"
    assert "connect: connection refused" in str(err)
    assert result.refused and result.status is None


def test_a_connection_still_in_the_backlog_is_reset_when_the_listener_closes():
    def scenario():
        ln = MemoryListener()
        conn = ln.dial()  # nobody accepts it
        ln.close()
        return conn.closed, MemoryClient(ln).get("/").refused

    assert simulate(scenario) == (True, True)


def test_shutdown_closes_idle_connections_and_the_client_redials():
    def scenario():
        ln = MemoryListener()
        server = serve_app(hello, ln)
        client = MemoryClient(ln)
        assert client.get("/prime").status == 200
        states = server.conn_states()
        stop(server)
        return states, client.get("/again")

    states, again = simulate(scenario)
    assert states == {NEW: 0, ACTIVE: 0, IDLE: 1}
    assert again.refused and not again.reused  # the pool dropped the closed connection


@pytest.mark.parametrize("method, outcome", [("GET", "refused"), ("POST", "dropped")])
def test_a_pooled_connection_closed_before_the_answer_retries_only_idempotent_requests(method, outcome):
    def scenario():
        ln = MemoryListener()

        def answer_once_then_hang_up():
            c = ln.accept()
            c.next_request(None)
            c.respond(Response("200 OK", [], b""))
            c.next_request(None)  # read the second request, then drop the connection unanswered
            c.close()
            ln.close()

        rt.go(answer_once_then_hang_up, name="flaky-server")
        client = MemoryClient(ln)
        assert client.do(method, "/first").status == 200
        return client.do(method, "/second")

    result = simulate(scenario)
    if outcome == "refused":
        assert result.refused and not result.reused
    else:
        assert isinstance(result.error, ConnectionDropped) and result.reused


def test_shutdown_waits_for_active_requests_which_answer_with_connection_close():
    def scenario():
        ln = MemoryListener()
        server = serve_app(slow(3), ln)
        results = []

        def client():
            results.append(MemoryClient(ln).get("/slow"))

        h = rt.go(client, name="client")
        rt.sleep(1)
        stop(server)
        stopped_at = rt.now()
        h.join()
        return results[0], stopped_at

    result, stopped_at = simulate(scenario)
    assert stopped_at == 3.0
    assert result.status == 200 and result.header("Connection") == "close"


def test_shutdown_reports_the_deadline_while_a_request_is_active():
    def scenario():
        ln = MemoryListener()
        server = serve_app(slow(10), ln)
        h = rt.go(lambda: MemoryClient(ln).get("/"), name="client")
        rt.sleep(1)
        ctx, cancel = gocontext.with_timeout(gocontext.background(), 2)
        with pytest.raises(gocontext.ContextError) as err:
            server.shutdown(ctx)
        cancel()
        at = rt.now()
        h.join()
        return err.value, at

    err, at = simulate(scenario)
    assert err is gocontext.DEADLINE_EXCEEDED
    assert at == 3.0


def test_a_new_connection_that_sent_nothing_is_idle_after_five_seconds():
    def scenario():
        ln = MemoryListener()
        server = serve_app(hello, ln)
        conn = ln.dial()
        rt.sleep(0.1)  # accepted, silent
        stop(server)
        return rt.now(), conn.closed

    at, closed = simulate(scenario)
    assert at == pytest.approx(5.001)  # accepted at 0, idle once silent for over 5 s
    assert closed


def test_serve_after_shutdown_raises_server_closed_and_closes_the_listener():
    def scenario():
        ln = MemoryListener()
        server = MemoryServer(hello)
        stop(server)
        with pytest.raises(ServerClosed):
            server.serve(ln)
        return ln.closed

    assert simulate(scenario) is True


def test_an_idle_connection_times_out_and_the_client_redials():
    def scenario():
        ln = MemoryListener()
        server = MemoryServer(hello, idle_timeout=90)
        rt.go(lambda: pytest.raises(ServerClosed, server.serve, ln), name="serve")
        client = MemoryClient(ln)
        client.get("/1")
        rt.sleep(91)
        second = client.get("/2")
        stop(server)
        return second

    second = simulate(scenario)
    assert second.status == 200 and not second.reused


def test_the_body_is_always_closed_and_a_panic_drops_the_connection():
    closed = []

    class Body:
        def __iter__(self):
            yield b"partial"
            raise RuntimeError("boom")

        def close(self):
            closed.append(True)

    def failing(environ, start_response):
        start_response("200 OK", [])
        return Body()

    def scenario():
        ln = MemoryListener()
        events = EventStream()
        server = MemoryServer(failing, events=events)
        rt.go(lambda: pytest.raises(ServerClosed, server.serve, ln), name="serve")
        result = MemoryClient(ln).get("/", headers={"X-Scenario-Request": "7"})
        stop(server)
        return result, [(e.kind, e.name, e.fields["rid"]) for e in events.events("conn")]

    result, events = simulate(scenario)
    assert closed == [True]
    assert isinstance(result.error, ConnectionDropped) and not result.reused
    assert events == [("conn", "panic", "7")]


def test_the_environ_and_the_request_context():
    seen = {}

    def app(environ, start_response):
        seen.update(environ)
        seen["ctx"] = reqctx.context_from(environ)
        start_response("204 No Content", [])
        return []

    def scenario():
        ln = MemoryListener(("10.0.0.1", 6443))
        server = serve_app(app, ln)
        client = MemoryClient(ln, user_agent="kube-apiserver/v1.36.0")
        result = client.do("POST", "/api/v1/pods?watch=true&x=%2F", headers={"X-Test": "1"}, body=b"{}")
        stop(server)
        return result, seen["ctx"].done().is_set()

    result, cancelled = simulate(scenario)
    assert result.status == 204
    assert cancelled, "the request context is cancelled once the response is done"
    assert seen["REQUEST_METHOD"] == "POST"
    assert seen["PATH_INFO"] == "/api/v1/pods"
    assert seen["QUERY_STRING"] == "watch=true&x=%2F"
    assert seen["HTTP_USER_AGENT"] == "kube-apiserver/v1.36.0"
    assert seen["HTTP_X_TEST"] == "1"
    assert seen["CONTENT_LENGTH"] == "2" and seen["wsgi.input"].read() == b"{}"
    assert (seen["SERVER_NAME"], seen["SERVER_PORT"], seen[CONN_ID_KEY]) == ("10.0.0.1", "6443", 1)


def test_the_probe_brackets_each_decision():
    flag = {"phase": "before"}

    def app(environ, start_response):
        flag["phase"] = "after"
        start_response("200 OK", [])
        return [b"ok"]

    def scenario():
        ln = MemoryListener()
        events = EventStream()
        server = MemoryServer(app, events=events, probe=lambda: flag["phase"])
        rt.go(lambda: pytest.raises(ServerClosed, server.serve, ln), name="serve")
        MemoryClient(ln).get("/", headers={"X-Scenario-Request": "1"})
        stop(server)
        return events.events("conn")[0].fields

    sent = simulate(scenario)
    assert (sent["dispatched"], sent["decided"], sent["status"]) == ("before", "after", 200)


def test_run_server_drives_the_memory_server_and_reports_both_events():
    def scenario():
        ln = MemoryListener()
        stop_ch = rt.event("stop")
        serving = SecureServingInfo(listener=ln, server_factory=memory_server_factory())
        stopped, listener_stopped = serving.serve(hello, 60.0, stop_ch)
        client = MemoryClient(ln)
        before = client.get("/")
        stop_ch.set()
        listener_stopped.wait()
        stopped.wait()
        return before, client.get("/"), serving.address()

    before, after, address = simulate(scenario)
    assert before.status == 200
    assert after.refused
    assert address == "10.0.0.1:6443"


@pytest.mark.parametrize("seed", range(6))
def test_concurrent_clients_under_random_schedules(seed):
    def scenario():
        ln = MemoryListener()
        server = serve_app(slow(0.5), ln)
        pool = MemoryClient(ln)
        results = []
        hs = [rt.go(lambda: results.append(pool.get("/")), name=f"client-{i}") for i in range(4)]
        for h in hs:
            h.join()
        after_burst = pool.get("/")
        stop(server)
        return results, after_burst

    results, after_burst = simulate(scenario, SeededRandom(seed))
    assert [r.status for r in results] == [200] * 4
    assert after_burst.reused  # a pooled connection was left idle by the burst


def test_a_schedule_replays_identically():
    def scenario():
        ln = MemoryListener()
        server = serve_app(slow(0.5), ln)
        out = []
        hs = [rt.go(lambda i=i: out.append((i, MemoryClient(ln).get(f"/{i}").body)), name="c") for i in range(3)]
        for h in hs:
            h.join()
        stop(server)
        return out

    first = Simulation(SeededRandom(11))
    a = first.run(scenario)
    b = Simulation(Scripted(first.choices)).run(scenario)
    assert a == b

"""A request body that stalls does not hold the shutdown (issue 56; no Go twin: Go's behaviour is
recorded in the lifecycle corpus, scenarios ``stalled-body*``, and these tests say why ours matches).

In Go, ``WithWaitGroup``'s deferred ``Done`` runs when the handler returns. A handler that leaves
the body unread (``/echo``) returns before net/http writes its header: ``finishRequest`` flushes
the handler's buffer after it, and writing the header first reads a small unread body to its end.
So a client that stalls its body holds its connection, not the wait group: InFlightRequestsDrained
follows NotAcceptingNewRequest at once, the HTTP server's ``Shutdown`` gives up on the connection
at its timeout (the request timeout by default, 2 s in retry-after mode), and RunWithContext
returns. Ours held the wait-group slot until the header was written, which waited for the body:
InFlightRequestsDrained never came and the process never exited.
"""

from __future__ import annotations

import logging
import socket

import pytest

from genericserver import runtime as rt
from genericserver import sampleapi, wsgi
from genericserver.config import new_config
from genericserver.context import context as gocontext
from genericserver.net.http import response as httpresponse
from genericserver.net.http.server import Server, ServerClosed, listen
from genericserver.secure_serving import SecureServingInfo

from test_genericapiserver import Running, WAIT, wait_signaled

STALLED = b"POST /echo?message=a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\nabc"


def discarding(monkeypatch) -> rt.Event:
    """An event set when the server starts to read an unread body to its end (as it writes the
    header): a shutdown that begins before that turns keep-alives off, and then the header goes
    out at once with Connection: close and the body is never read, in Go as here."""
    started = rt.event("discarding")
    discard = httpresponse.Response._discard_small_unread_body

    def spy(self, *args):
        started.set()
        return discard(self, *args)

    monkeypatch.setattr(httpresponse.Response, "_discard_small_unread_body", spy)
    return started


@pytest.mark.parametrize("retry_after", [False, True], ids=["default", "retry-after"])
def test_a_post_whose_body_stalls_does_not_hold_the_shutdown(retry_after: bool, caplog, monkeypatch):
    caplog.set_level(logging.ERROR, logger="genericserver")
    reading_the_rest = discarding(monkeypatch)
    c = new_config()
    c.shutdown_delay_duration = 0.0
    c.shutdown_send_retry_after = retry_after
    c.request_timeout = 0.5  # the default mode's shutdown timeout (retry-after mode: 2 s)
    c.secure_serving = SecureServingInfo(listener=listen("127.0.0.1", 0))
    port = c.secure_serving.listener.getsockname()[1]
    s = c.complete().new("test")
    reached = rt.event("echo-reached")

    def echo(environ, start_response):
        reached.set()
        return sampleapi.echo(environ, start_response)

    s.handler.non_go_restful_mux.handle("/echo", echo)
    signals = s.lifecycle_signals
    ctx, stop = gocontext.with_cancel_cause(gocontext.background())
    run = Running(s.prepare_run(), ctx)
    client = socket.create_connection(("127.0.0.1", port))
    try:
        client.sendall(STALLED)  # 3 bytes of 10, and no more
        assert reached.wait(WAIT)
        assert reading_the_rest.wait(WAIT)
        stop(RuntimeError("SIGTERM"))
        # the handler returned: its slot is free although the body never came
        wait_signaled(signals.in_flight_requests_drained)
        assert run.wait() is None
        # RunWithContext returned because the HTTP server's Shutdown gave up on the connection
        assert "Failed to shutdown server: context deadline exceeded" in caplog.messages
        # and the client has no answer: the header waits for the body, as Go's does
        client.setblocking(False)
        with pytest.raises(BlockingIOError):
            client.recv(1)
    finally:
        stop(RuntimeError("test is done"))
        client.close()  # the connection's goroutine reads the end of the body and ends
        run.wait()


def test_the_echo_handler_leaves_its_answer_in_the_buffer():
    """``/echo``'s answer is a list, all at hand when the handler returns: the server writes the
    header after the filters' releases, not at a first empty chunk (Go's ``Flush``)."""
    seen = []
    body = sampleapi.echo({"REQUEST_METHOD": "POST", "QUERY_STRING": "message=a", "wsgi.input": None},
                          lambda status, headers, exc_info=None: seen.append((status, headers)))
    assert body == [b""]
    assert seen[0][0] == "200 OK" and ("echo", "a") in seen[0][1]


def test_the_server_closes_a_held_answer_before_it_reads_the_unread_body_to_its_end():
    """net/http alone: an answer all at hand is closed (the filters' releases run: Go's handler
    returned) before its header is written, which waits for the rest of a small unread body;
    the client gets its answer once the body is in."""
    released = rt.event("released")

    def app(environ, start_response):
        start_response("200 OK", [("Content-Length", "2")])
        return wsgi.on_close([b"ok"], released.set)

    server = Server(app)
    ln = listen("127.0.0.1", 0)
    serving = rt.go(lambda: pytest.raises(ServerClosed, server.serve, ln), name="serve")
    client = socket.create_connection(("127.0.0.1", ln.getsockname()[1]))
    try:
        client.sendall(STALLED)
        assert released.wait(WAIT)  # the body is still 7 bytes short
        client.setblocking(False)
        with pytest.raises(BlockingIOError):
            client.recv(1)
        client.setblocking(True)
        client.settimeout(WAIT)
        client.sendall(b"defghij")
        assert client.recv(4096).startswith(b"HTTP/1.1 200 OK\r\n")
    finally:
        client.close()
        server.close()
        serving.join(WAIT)


# -- under the simulation: the in-memory transport, on virtual time ------------------------------


@pytest.mark.parametrize("retry_after, timeout", [(False, 60.0), (True, 2.0)], ids=["default", "retry-after"])
def test_under_the_simulation_a_stalled_body_holds_its_connection_not_the_drain(retry_after: bool, timeout: float):
    """The real chain and run_with_context over the in-memory transport, whose server writes the
    header as Go does (with a flush, or after the handler returned) and waits there for the rest of
    an unread body: RunWithContext returns at the HTTP server's shutdown timeout (the request
    timeout, 60 s; 2 s in the retry-after mode), InFlightRequestsDrained long before."""
    from genericserver.testing.sim import FirstRunnable, Simulation
    from genericserver.testing.transport import LateBody, MemoryListener, Request, memory_server_factory

    def scenario():
        c = new_config()
        c.shutdown_delay_duration = 0.0
        c.shutdown_send_retry_after = retry_after
        c.request_timeout = 60.0
        ln = MemoryListener()
        c.secure_serving = SecureServingInfo(listener=ln, server_factory=memory_server_factory())
        s = c.complete().new("test")
        s.handler.non_go_restful_mux.handle("/echo", sampleapi.echo)
        drained_at = []
        rt.go_after(s.lifecycle_signals.in_flight_requests_drained.signaled(), lambda: drained_at.append(rt.now()),
                    name="drained-at")
        ctx, cancel = gocontext.with_cancel(gocontext.background())
        rt.after_func(1.0, cancel, name="sigterm")
        conn = ln.dial()
        answers = []
        late = LateBody(b"abc", 10)
        client = rt.go(lambda: answers.append(conn.round_trip(
            Request("POST", "/echo?message=a", [("Content-Length", "10")], late=late), None)), name="client")
        s.prepare_run().run_with_context(ctx)
        returned_at = rt.now()
        conn.close()  # the process is gone, and the connection with it
        client.join()
        return drained_at, returned_at, answers

    sim = Simulation(chooser=FirstRunnable())
    drained_at, returned_at, answers = sim.run(scenario)
    assert sim.leftover() == []
    assert drained_at == [1.0]  # at once: the handler returned
    assert returned_at == 1.0 + timeout  # Shutdown gave up on the connection
    assert answers == [None]  # unanswered: the connection closed first


def test_under_the_simulation_a_body_that_comes_within_the_shutdown_timeout_is_answered():
    """The retry-after mode, the rest of the body 1 s into Shutdown's 2 s: answered 200, without
    Connection: close (keep-alive was decided when the header began, before the shutdown, as
    genericserver-go's body-in-time-retry-after recording shows), and Shutdown returns then."""
    from genericserver.testing.sim import FirstRunnable, Simulation
    from genericserver.testing.transport import LateBody, MemoryListener, Request, memory_server_factory

    def scenario():
        c = new_config()
        c.shutdown_delay_duration = 0.0
        c.shutdown_send_retry_after = True
        ln = MemoryListener()
        c.secure_serving = SecureServingInfo(listener=ln, server_factory=memory_server_factory())
        s = c.complete().new("test")
        s.handler.non_go_restful_mux.handle("/echo", sampleapi.echo)
        ctx, cancel = gocontext.with_cancel(gocontext.background())
        rt.after_func(1.0, cancel, name="sigterm")
        late = LateBody(b"abc", 10)
        rt.after_func(2.0, late.arrive, name="the-rest")
        conn = ln.dial()
        answers = []
        client = rt.go(lambda: answers.append(conn.round_trip(
            Request("POST", "/echo?message=a", [("Content-Length", "10")], late=late), None)), name="client")
        s.prepare_run().run_with_context(ctx)
        returned_at = rt.now()
        client.join()
        conn.close()
        return returned_at, answers

    sim = Simulation(chooser=FirstRunnable())
    returned_at, (answer,) = sim.run(scenario)
    assert sim.leftover() == []
    assert returned_at == 2.0
    assert answer.code == 200 and not answer.closes() and ("echo", "a") in answer.headers

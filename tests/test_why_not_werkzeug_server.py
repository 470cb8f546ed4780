"""Why genericserver.net.http.server is a port of Go's net/http and not werkzeug's development server.

Each test shows one reason on werkzeug's own server (the installed version; if werkzeug changes,
the test says so) beside what our server does in the same situation. walkthrough.md section 8.3
and the README point here. werkzeug stays the WSGI toolkit: the sample API's request, response,
routing and errors, and the test client.
"""

from __future__ import annotations

import http.client
import logging
import socket
import ssl
import threading

import pytest
from werkzeug.serving import make_server

from genericserver import runtime as rt
from genericserver.context import context as gocontext
from genericserver.net.http import server as hs

WAIT = 10.0


def hello(environ, start_response):
    body = environ["wsgi.input"].read() if environ["REQUEST_METHOD"] == "POST" else b"hello"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


class Werkzeug:
    """werkzeug's threaded development server on a free port, in a thread of its own."""

    def __init__(self, app, **kw):
        logging.getLogger("werkzeug").setLevel(logging.CRITICAL)
        self.srv = make_server("127.0.0.1", 0, app, threaded=True, **kw)
        self.port = self.srv.server_port
        self.t = threading.Thread(target=self.srv.serve_forever, kwargs={"poll_interval": 0.05}, name="werkzeug-serve")
        self.t.start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()
        self.t.join(WAIT)


class Ours:
    def __init__(self, app, **kw):
        self.srv = hs.Server(app, **kw)
        ln = hs.listen()
        self.port = ln.getsockname()[1]
        self.g = rt.go(self._serve, ln, name="ours-serve")

    def _serve(self, ln):
        try:
            self.srv.serve(ln)
        except hs.ServerClosed:
            pass

    def stop(self):
        ctx, cancel = gocontext.with_timeout(gocontext.background(), WAIT)
        try:
            self.srv.shutdown(ctx)
        finally:
            cancel()
        assert self.g.join(WAIT)


@pytest.fixture
def servers():
    started = []

    def start(kind, app, **kw):
        s = kind(app, **kw)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def two_requests_on_one_connection(port: int) -> list:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    seen = []
    for _ in range(2):
        c.request("GET", "/")
        r = c.getresponse()
        r.read()
        seen.append((r.getheader("Connection"), c.sock is not None))
    c.close()
    return seen


def test_werkzeug_closes_every_connection_ours_keeps_it_alive(servers):
    # one TCP connection per request: the bench (bench_httpserver) shows what it costs
    assert two_requests_on_one_connection(servers(Werkzeug, hello).port) == [("close", False), ("close", False)]
    assert two_requests_on_one_connection(servers(Ours, hello).port) == [(None, True), (None, True)]


def test_werkzeug_does_not_wait_for_its_handler_threads_ours_waits_for_active_connections(servers):
    release, entered = threading.Event(), threading.Event()

    def blocks(environ, start_response):
        entered.set()
        release.wait(WAIT)
        return hello(environ, start_response)

    w = servers(Werkzeug, blocks)
    c = socket.create_connection(("127.0.0.1", w.port), timeout=WAIT)
    c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert entered.wait(WAIT)
    w.srv.shutdown()
    w.srv.server_close()  # returns with the handler still running: its thread is a daemon
    assert w.srv.daemon_threads and not release.is_set()
    release.set()
    c.close()

    entered.clear()
    release.clear()
    ours = servers(Ours, blocks)
    c = socket.create_connection(("127.0.0.1", ours.port), timeout=WAIT)
    c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert entered.wait(WAIT)
    ctx, cancel = gocontext.with_timeout(gocontext.background(), 0.05)
    with pytest.raises(Exception) as err:
        ours.srv.shutdown(ctx)  # Go's Shutdown waits for the active connection until the deadline
    cancel()
    assert str(err.value) == "context deadline exceeded"
    release.set()
    assert c.recv(4096).startswith(b"HTTP/1.1 200 OK")
    c.close()


def test_werkzeug_exits_the_process_on_a_bind_error_ours_raises():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        with pytest.raises(SystemExit):
            make_server("127.0.0.1", port, hello)
        with pytest.raises(hs.BindError) as err:
            hs.listen("127.0.0.1", port)
        assert str(err.value) == f"listen tcp 127.0.0.1:{port}: bind: address already in use"
    finally:
        taken.close()


def test_werkzeug_frames_chunked_bodies_leniently_ours_as_go_does(servers):
    body = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n"
    answers = {}
    for kind in (Werkzeug, Ours):
        s = servers(kind, hello)
        c = socket.create_connection(("127.0.0.1", s.port), timeout=WAIT)
        c.sendall(body)
        answers[kind.__name__] = c.recv(4096).split(b"\r\n")[0]
        c.close()
    # Python's int(x, 16) takes "0x5"; Go's chunked reader refuses it (a smuggling differential)
    assert answers == {"Werkzeug": b"HTTP/1.1 200 OK", "Ours": b"HTTP/1.1 400 Bad Request"}


def test_werkzeug_handshakes_tls_on_its_accept_thread_so_one_silent_client_stalls_everyone(servers, tls_cert):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*tls_cert)
    client_ctx = ssl.create_default_context(cafile=tls_cert[0])

    def served_while_one_client_is_silent(port: int, patience: float) -> bool:
        silent = socket.create_connection(("127.0.0.1", port), timeout=WAIT)  # connects, says nothing
        try:
            raw = socket.create_connection(("127.0.0.1", port), timeout=patience)
            try:
                with client_ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    return s.recv(4096).startswith(b"HTTP/1.1 200 OK")
            except (TimeoutError, OSError):
                return False
        finally:
            silent.close()

    # werkzeug stalls until the silent client leaves: a second of patience shows it; ours serves
    # at once, given all the time a loaded machine may need for the handshake
    assert not served_while_one_client_is_silent(servers(Werkzeug, hello, ssl_context=ctx).port, 1.0)
    assert served_while_one_client_is_silent(servers(Ours, hello, ssl_context=ctx).port, WAIT)

"""Tests of genericserver.net.http.connreader: the read limit, and the background read that notices a client
that went away, in process and in ``genericserver serve`` (abandoned watches must not stall SIGTERM)."""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import time

import pytest

from genericserver import runtime as rt
from genericserver.net.http import connreader
from genericserver.net.http.connreader import BackgroundReads, ConnReader

import zygote

WAIT = 20.0


def test_the_read_limit_ends_the_stream_and_says_it_was_hit():
    a, b = socket.socketpair()
    try:
        a.sendall(b"0123456789")
        r = ConnReader(b)
        r.set_read_limit(4)
        assert r.read(100) == b"0123" and r.hit_read_limit()
        assert r.read(100) == b""  # the limit reads as the end of the stream
        r.set_infinite_read_limit()
        assert r.read(100) == b"456789" and not r.hit_read_limit()
    finally:
        a.close()
        b.close()


POLLERS = ["selectors"] + (["epoll"] if hasattr(select, "EPOLLRDHUP") else [])


@pytest.fixture(params=POLLERS)
def reads(request, monkeypatch):
    """Background reads on each way this system has of waiting for sockets."""
    if request.param == "selectors":
        monkeypatch.setattr(connreader._Poller, "new", staticmethod(connreader._SelectorReads))
    reads = BackgroundReads("test-background-read")
    yield reads
    reads.stop_when_idle()


def _forgotten(reads: BackgroundReads, sock: socket.socket) -> bool:
    """Wait until the watcher let go of ``sock`` (it notifies after each look at a socket)."""
    with reads._mu:
        return reads._cond.wait_for(lambda: sock.fileno() not in reads._watches, WAIT)


def test_a_watch_ends_when_its_peer_hangs_up_not_when_it_sends_and_abort_stops_it(reads):
    pairs = [socket.socketpair() for _ in range(3)]
    gone = {i: rt.event(f"gone-{i}") for i in range(3)}
    try:
        for i, (client, server) in enumerate(pairs):
            reads.start(server, gone[i].set)
        pairs[0][0].close()  # hangs up
        assert gone[0].wait(WAIT)
        # a pipelined request, then the client's half-close: the watch ends on the bytes, which
        # stay in the socket for the connection's next read, and the hang-up after them is not seen
        pairs[1][0].sendall(b"GET /next")
        pairs[1][0].shutdown(socket.SHUT_WR)
        assert _forgotten(reads, pairs[1][1])
        assert pairs[1][1].recv(100) == b"GET /next" and not gone[1].is_set()
        reads.abort(pairs[2][1])  # the handler finished first
        pairs[2][0].close()
        assert not gone[2].wait(0.05)  # nobody watches any more: no call
        # the next request's watch sees that the client is gone, as Go's next background read would
        again = rt.event("gone-again")
        reads.start(pairs[2][1], again.set)
        assert again.wait(WAIT) and not gone[2].is_set()
    finally:
        for client, server in pairs:
            reads.forget(server)
            client.close()
            server.close()


def test_each_request_of_a_connection_is_watched_with_its_own_callback(reads):
    client, server = socket.socketpair()
    calls = []
    fired = rt.event("fired")
    try:
        for request in range(3):  # three requests on one keep-alive connection
            reads.start(server, lambda r=request: (calls.append(r), fired.set()))
            if request < 2:
                reads.abort(server)
        client.close()  # during the third
        assert fired.wait(WAIT)
        assert calls == [2]
    finally:
        reads.forget(server)
        server.close()


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _wait_until(predicate, what: str, proc: "zygote.Process | None" = None) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() >= deadline:
            stacks = ""
            if proc is not None:  # faulthandler prints every thread's stack on SIGABRT
                proc.send_signal(signal.SIGABRT)
                proc.wait(WAIT)
                stacks = "; stacks:\n" + proc.stderr.read()  # type: ignore[union-attr]
            raise AssertionError(what + stacks)
        time.sleep(0.01)  # a real process: its threads and sockets can only be looked at, not waited on


def test_sigterm_is_not_stalled_by_abandoned_watches_or_a_slow_request():
    # Go's background read cancels a request whose client went away; without it a quiet watch
    # holds its goroutine until its 30-60 min timeout and the shutdown waits out its 60 s
    proc = zygote.Process(["serve", "--secure-port", "0", "--shutdown-delay-duration", "1s", "--v=1"],
                          env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    try:
        port = None
        for line in proc.stderr:  # type: ignore[union-attr]
            m = re.search(r"Serving insecurely on 127\.0\.0\.1:(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        assert port is not None, "the server never said where it listens"
        # run_with_context logs this once it started all its goroutines: only then is the
        # thread count a baseline (on a loaded machine /readyz can be green before)
        assert any("waiting for shutdown to be initiated" in line for line in proc.stderr)  # type: ignore[union-attr]
        def ready() -> bool:  # /readyz is 200 once the post-start hooks (and their goroutines) ran
            with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as probe:
                probe.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                answer = b"".join(iter(lambda: probe.recv(65536), b""))
            return answer.startswith(b"HTTP/1.1 200")

        _wait_until(ready, "the server never became ready")
        baseline = _threads(proc.pid)  # (with the probe's goroutine thread perhaps still lingering)
        abandoned = []
        for target in ["/api/v1/namespaces/default/configmaps?watch=true"] * 3 + ["/slow?seconds=600"]:
            s = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
            s.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            abandoned.append(s)
        for s in abandoned[:3]:
            assert s.recv(65536).startswith(b"HTTP/1.1 200 OK")  # the watches are being served
        # (/slow answers nothing until done; were it still unread when its client leaves, the
        # server would read it, start its handler, and find the client gone at once all the same)
        for s in abandoned:
            s.close()  # and the clients are gone
        _wait_until(lambda: _threads(proc.pid) <= baseline, f"threads did not come back to {baseline}", proc)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(WAIT) == 0
        # the stall this guards against is the request timeout's 60 s: the shutdown delay and
        # a few seconds (two suites at once took 2.06 s to exit, over a one-second allowance)
        assert time.monotonic() - sent < 1.0 + 9.0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.parametrize("poller", POLLERS)
def test_a_tls_close_notify_without_a_fin_cancels_the_request(tls_cert, poller, monkeypatch):
    # issue 49: the client sends close_notify while its request runs, waits for the server's,
    # and only then closes: Go's tls.Conn reads the alert as the end of the stream, so the
    # background read cancels the request at once - no FIN comes to tell the kernel's side
    import ssl
    import threading

    from genericserver import request as reqctx
    from genericserver.net.http import server as hs
    from rawconn import handshake

    if poller == "selectors":
        monkeypatch.setattr(connreader._Poller, "new", staticmethod(connreader._SelectorReads))
    entered, cancelled = threading.Event(), threading.Event()

    def app(environ, start_response):
        ctx = reqctx.context_from(environ)
        entered.set()
        if rt.select(ctx.done(), timeout=WAIT) is ctx.done():
            cancelled.set()
        start_response("200 OK", [])
        return [b""]

    srv = hs.Server(app, ssl_context=hs.ssl_context_from_files(*tls_cert))
    ln = hs.listen()
    serving = rt.go(lambda: pytest.raises(hs.ServerClosed, srv.serve, ln), name="test-serve")
    raw = socket.create_connection(("127.0.0.1", ln.getsockname()[1]), timeout=WAIT)
    try:
        tls, incoming, outgoing = handshake(raw, ssl.create_default_context(cafile=tls_cert[0]))
        tls.write(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        raw.sendall(outgoing.read())
        assert entered.wait(WAIT)
        try:
            tls.unwrap()  # writes close_notify, then wants the server's
        except ssl.SSLWantReadError:
            pass
        raw.sendall(outgoing.read())  # and no FIN: the socket stays open both ways
        assert cancelled.wait(WAIT)
    finally:
        raw.close()
        srv.close()
        assert serving.join(WAIT)

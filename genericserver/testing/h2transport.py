"""HTTP/2 in the in-memory transport: Go's http2 server decisions for the simulation (no Go twin).

:mod:`genericserver.net.http.internal.http2.server` ports Go's HTTP/2 server over real sockets; this module models
the same decisions as whole messages between runtime primitives, so the fuzzing driver can draw
shutdown interleavings with multiplexed streams on virtual time (``Scenario.http2``):

* a connection dialled with ``MemoryListener.dial(http2=True)`` is *active* for ``Shutdown``
  from the start to its end (Go issue 39776), and carries many streams: each request is a
  HEADERS frame with the next odd stream id, served in its own goroutine;
* ``MemoryServer.shutdown`` sends every HTTP/2 connection a graceful GOAWAY with the highest
  stream id it took (the on-shutdown hook ``http2.ConfigureServer`` registers); a handler's
  ``Connection: close`` (the retry-after mode's 429) does the same for its connection, and the
  header is not sent; the frame reaches the client in a step of its own, so a stream the client
  sends meanwhile races it; streams newer than the GOAWAY's last id are dropped unanswered; once
  no stream is open after the GOAWAY, the connection closes ``GO_AWAY_TIMEOUT`` later;
* the client (``MemoryClient(http2=True)``) is Go 1.26.8's HTTP/2 transport as the recorded
  corpus shows it (tests/parity/README.md): one connection while it takes requests; a request the
  GOAWAY left unprocessed is retried on a new connection; a connection that read a GOAWAY is
  closed by the client when a stream of its own ends on it and none is left open
  (``forgetStreamID``); one idle when the GOAWAY comes stays open for the server to close.

A handler that aborts (or panics) resets its stream alone (Go's ``handlerPanicRST``): that
request fails, the connection and its other streams go on.

Events for the invariants (``h2`` kind): ``admitted`` (conn, stream), ``dropped`` (conn, stream,
last), ``reset`` (conn, stream), ``goaway`` (conn, last), ``closed`` (conn, by); the answers are
the HTTP/1 ``conn`` events with a ``stream`` field. No flow control, priorities, idle timeout or
resets by the client.
"""

from __future__ import annotations

from typing import Any, Optional

from genericserver import runtime as rt
from genericserver.net.http.internal.http2.server import GO_AWAY_TIMEOUT

ACTIVE, CLOSED = "active", "closed"


class H2State:
    """The HTTP/2 side of one in-memory connection (guarded by the connection's lock)."""

    def __init__(self) -> None:
        self.next_stream = 1  # the client's next stream id
        self.client_open: set[int] = set()  # streams the client waits on
        self.responses: dict[int, Any] = {}
        self.goaway: Optional[int] = None  # the last stream id of the GOAWAY the client has read
        self.waiters: list[rt.Event] = []
        # the server's side
        self.max_stream = 0
        self.server_open: set[int] = set()
        self.in_goaway = False
        self.timer_started = False


def _wake(st: H2State) -> list[rt.Event]:
    woken, st.waiters = st.waiters, []
    return woken


# -- the client's end ---------------------------------------------------------------------------
def round_trip(c: Any, req: Any, timeout: Optional[float]) -> Any:
    """Send ``req`` on the HTTP/2 connection ``c``: its response; ``"retry"`` if the GOAWAY left it
    unprocessed (or the connection takes no new stream); ``None`` if the connection closed
    under it or the server reset the stream; ``"timeout"`` after ``timeout``."""
    st: H2State = c.h2
    with c.lk:
        if c.closed or st.goaway is not None:
            return "retry"
        sid = st.next_stream
        st.next_stream += 2
        st.client_open.add(sid)
        c.to_server.append(("headers", sid, req))
        waiter, c.server_wait = c.server_wait, None
    if waiter is not None:
        waiter.set()
    deadline = None if timeout is None else rt.now() + timeout
    try:
        while True:
            with c.lk:
                if sid in st.responses:
                    return st.responses.pop(sid)
                if st.goaway is not None and sid > st.goaway:
                    return "retry"  # Go's transport fails it at once, as never processed
                if c.closed:
                    return None
                ev = rt.event(f"conn-{c.id}-stream-{sid}")
                st.waiters.append(ev)
            left = None if deadline is None else deadline - rt.now()
            if left is not None and left <= 0:
                return "timeout"
            rt.select(ev, timeout=left)
    finally:
        with c.lk:
            st.client_open.discard(sid)
            hang_up = st.goaway is not None and not st.client_open and not c.closed
        if hang_up:  # Go's client closes a GOAWAY'd connection when its last stream ends
            _close(c, "client")


def _close(c: Any, by: str) -> None:
    with c.lk:
        if c.closed:
            return
        woken = c.close_locked() + _wake(c.h2)
    if c.events is not None:
        c.events.record("h2", "closed", conn=c.id, by=by)
    for w in woken:
        w.set()


# -- the server's end ---------------------------------------------------------------------------
def serve_conn(server: Any, c: Any) -> None:
    """Go's ``serverConn.serve`` for the in-memory connection ``c`` of ``server`` (a MemoryServer)."""
    with c.lk:
        c.state, c.since = ACTIVE, rt.now()  # active until it ends, without hooks
    server._state_changed()
    try:
        while True:
            frame = c.next_request(None)
            if frame is None:
                return
            _, sid, req = frame
            st: H2State = c.h2
            with c.lk:
                dropped = st.in_goaway and sid > st.max_stream
                if not dropped:
                    st.max_stream = sid
                    st.server_open.add(sid)
            if dropped:  # newer than the GOAWAY's last id: never answered (RFC 9113 6.8)
                server._record_h2("dropped", conn=c.id, stream=sid, last=st.max_stream)
                continue
            server._record_h2("admitted", conn=c.id, stream=sid)
            rt.go(_run_stream, server, c, sid, req, name=f"memory-conn-{c.id}-stream-{sid}")
    finally:
        c.cancel()
        _close(c, "server")
        server._conn_ended(c)


def _run_stream(server: Any, c: Any, sid: int, req: Any) -> None:
    resp = server._run_app(c, req, stream=sid, protocol="HTTP/2.0")
    st: H2State = c.h2
    if resp is not None and resp.closes():
        graceful_shutdown(server, c)  # HTTP/2 has no Connection header: a GOAWAY says it
        resp.headers = [(k, v) for k, v in resp.headers if k.lower() != "connection"]
    with c.lk:
        st.server_open.discard(sid)
        woken: list[rt.Event] = []
        if not c.closed:
            # an abort or a panic (resp None): Go resets this stream alone (handlerPanicRST,
            # INTERNAL_ERROR); its request fails, the connection serves on
            st.responses[sid] = resp
            woken = _wake(st)
    for w in woken:
        w.set()
    if resp is None:
        server._record_h2("reset", conn=c.id, stream=sid)
    _maybe_close_later(server, c)


def graceful_shutdown(server: Any, c: Any) -> None:
    """Go's ``startGracefulShutdown``: a GOAWAY with NO_ERROR and the last stream id, once."""
    st: H2State = c.h2
    with c.lk:
        if st.in_goaway or c.closed:
            return
        st.in_goaway = True
        last = st.max_stream
    server._record_h2("goaway", conn=c.id, last=last)
    # the frame reaches the client in its own step: a stream the client sends meanwhile races
    # it, and the server drops that stream
    rt.go(_deliver_goaway, c, last, name=f"memory-conn-{c.id}-goaway")
    _maybe_close_later(server, c)


def _deliver_goaway(c: Any, last: int) -> None:
    st: H2State = c.h2
    with c.lk:
        st.goaway = last
        woken = _wake(st)
    for w in woken:
        w.set()
    # Go 1.26.8's client leaves an idle connection open on reading its GOAWAY (it closes one
    # when a stream ends on it: round_trip); the server closes it GO_AWAY_TIMEOUT later


def _maybe_close_later(server: Any, c: Any) -> None:
    st: H2State = c.h2
    with c.lk:
        start = st.in_goaway and not st.server_open and not st.timer_started and not c.closed
        if start:
            st.timer_started = True
    if start:  # the client gets a second to read the GOAWAY before the FIN (Go issue 18701)
        def close_after() -> None:
            rt.sleep(GO_AWAY_TIMEOUT)
            _close(c, "server")

        rt.go(close_after, name=f"memory-conn-{c.id}-goaway-close")


__all__ = ["H2State", "graceful_shutdown", "round_trip", "serve_conn"]

"""An in-memory HTTP transport with Go's net/http semantics, for the simulation runtime (no Go twin).

Real sockets never run under :class:`~genericserver.testing.sim.Simulation`; this module gives the
server the same shapes made of runtime primitives only (``rt.lock``, ``rt.event``, ``rt.go``,
``rt.select``), so the real handler chain and the real ``run_with_context`` run on virtual time:

* :class:`MemoryListener` has ``getsockname()``, ``accept()`` and ``close()`` like a listening
  socket, and ``dial()`` for clients: after ``close()`` a dial raises
  :class:`ConnectionRefused` (a ``ConnectionRefusedError``) and connections still waiting in the
  accept backlog are reset.
* :class:`MemoryServer` is what ``SecureServingInfo(server_factory=MemoryServer)`` builds: the
  interface of :class:`genericserver.net.http.server.Server` that ``run_server`` drives. ``serve``
  blocks until the listener closes and raises ``ServerClosed``; ``shutdown(ctx)`` closes the
  listener at once, closes idle connections (and new ones silent for over 5 s), waits for active
  ones and raises ``ctx.err()`` when the context ends first. One goroutine per connection reads
  requests, calls the WSGI app, iterates its body and always closes it. Keep-alive unless the
  response says ``Connection: close``; once shutdown began every response carries
  ``Connection: close`` and its connection closes after it, as Go's server does; a request
  read once shutdown began is dropped unanswered (Go's ``conn.serve``), so its client retries.
* :class:`~genericserver.testing.memclient.MemoryClient` (its own module) is Go's ``http.Client`` with its transport's connection pool: a request
  reuses an idle keep-alive connection when there is one (one the server closed meanwhile is
  dropped from the pool, as Go's background read notices); when the server closes it after the
  request went out but before answering, an idempotent request is retried once on a new
  connection (which is how a client of a shut-down server ends up with "connection refused").

Requests and responses travel as whole messages, not bytes: a request is (method, target,
headers, body); a response (status line, headers, body) is handed to the client once the body
iterable is exhausted and closed - the moment a Go handler has returned. A request may carry a
:class:`LateBody`, of which only the first bytes came: the server then writes the response's
"header" as Go does, with the body's first chunk (an empty one is Go's ``Flush``) or, for a body
that is a list, after ``close()``, and, while keep-alives are on, first waits for the rest of the
body (Go reads a small unread body to its end there); once shutting down it answers at once with
``Connection: close``.
So there is no TLS, no header size limit (``max_header_bytes`` is accepted and ignored); the
read-header timeout runs from the accept to the first request, the idle timeout between requests.

Optional seams for the fuzzing driver: ``events`` (an ``EventStream``) receives ``transport``
and ``conn`` events (listener closed; response sent, aborted, or the app panicked), and
``probe()`` is called at the exact points where the server's answer is decided (dial refused,
request handed to the app, status line set): each ``conn`` event carries the phases seen just
before the app ran (``dispatched``) and when the status was set (``decided``), so an invariant
can bracket each decision by the lifecycle phase.
"""

from __future__ import annotations

import errno
import io
import itertools
import logging
import sys
from collections import deque
from typing import Any, Callable, Optional, Sequence
from urllib.parse import unquote_to_bytes

from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.context import context as gocontext
from genericserver.net.http.request import CONN_ID_KEY
from genericserver.net.http.server import AbortHandler, ServerClosed, idle_for_shutdown
from genericserver.testing import h2transport
from genericserver.testing.h2transport import H2State
from genericserver.testing.latebody import LateBody, LateInput
from genericserver.wsgi import known_chunks

log = logging.getLogger("genericserver.testing.transport")

NEW, ACTIVE, IDLE, CLOSED = "new", "active", "idle", "closed"  # Go's ConnState names
REQUEST_ID_HEADER = "X-Scenario-Request"  # lets events name the request they are about
_REQUEST_ID_ENV = "HTTP_X_SCENARIO_REQUEST"
_TIMEOUT = object()
_REPLAYABLE = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})

Probe = Callable[[], Any]


class ConnectionRefused(ConnectionRefusedError):
    """A dial after the listener closed; ``phase`` is what ``probe()`` said at that moment."""

    def __init__(self, address: tuple[str, int], phase: Any = None):
        super().__init__(errno.ECONNREFUSED, f"dial tcp {address[0]}:{address[1]}: connect: connection refused")
        self.phase = phase


class ConnectionDropped(ConnectionResetError):
    """The server closed the connection before a (whole) response came."""

    def __init__(self, reused: bool):
        super().__init__(errno.ECONNRESET, "connection closed by the server before a response")
        self.reused = reused


class Request:
    __slots__ = ("method", "target", "headers", "body", "late")

    def __init__(self, method: str, target: str, headers: Sequence[tuple[str, str]], body: bytes = b"",
                 late: Optional[LateBody] = None):
        self.method, self.target, self.headers, self.body = method, target, list(headers), body
        self.late = late  # a body still arriving (its Content-Length is the announced length)


class Response:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status: str, headers: Sequence[tuple[str, str]], body: bytes):
        self.status, self.headers, self.body = status, list(headers), body

    @property
    def code(self) -> int:
        return int(self.status.split(" ", 1)[0])

    def closes(self) -> bool:
        return any(k.lower() == "connection" and v.lower() == "close" for k, v in self.headers)


class _Conn:
    """Both ends of one connection; every field is guarded by the listener's lock ``lk``."""

    def __init__(self, lk: Any, cid: int, client: tuple[str, int], server: tuple[str, int]):
        self.lk, self.id, self.client, self.server = lk, cid, client, server
        self.to_server: deque[Request] = deque()
        self.to_client: deque[Response] = deque()
        self.closed = False
        self.server_wait: Optional[rt.Event] = None
        self.client_wait: Optional[rt.Event] = None
        # the server's view (Go's ConnState); `closing`: the server decided to close it
        self.state = NEW
        self.since = 0.0
        self.closing = False
        self.ctx: Any = None
        self.cancel: Callable[[], None] = lambda: None
        self.h2: Optional[H2State] = None  # an HTTP/2 connection's streams (h2transport)
        self.events: Any = None
        self.late: Optional[LateBody] = None  # the body the server may be waiting for

    def close_locked(self) -> list[rt.Event]:
        """Close both directions; return the waiters to wake once the lock is released."""
        self.closed = True
        woken = [w for w in (self.server_wait, self.client_wait) if w is not None]
        if self.late is not None:
            woken.append(self.late.ended)
        self.server_wait = self.client_wait = None
        return woken

    def close(self) -> None:
        with self.lk:
            woken = self.close_locked()
        for w in woken:
            w.set()

    # -- the client's end -------------------------------------------------------------------
    def send(self, req: Request) -> bool:
        with self.lk:
            if self.closed:
                return False
            self.to_server.append(req)
            waiter, self.server_wait = self.server_wait, None
        if waiter is not None:
            waiter.set()
        return True

    def receive(self, timeout: Optional[float]) -> Any:
        """The next response; ``None`` once the connection closed first, ``_TIMEOUT`` after ``timeout``."""
        deadline = None if timeout is None else rt.now() + timeout
        while True:
            with self.lk:
                if self.to_client:
                    return self.to_client.popleft()
                if self.closed:
                    return None
                if self.client_wait is None:
                    self.client_wait = rt.event(f"conn-{self.id}-response")
                waiter = self.client_wait
            left = None if deadline is None else deadline - rt.now()
            if left is not None and left <= 0:
                return _TIMEOUT
            rt.select(waiter, timeout=left)

    # -- the server's end ---------------------------------------------------------------------
    def next_request(self, deadline: Optional[float]) -> Optional[Request]:
        """Take the next request and turn ``active`` atomically; ``None`` when closed or at ``deadline``."""
        while True:
            with self.lk:
                if self.closed or self.closing:
                    return None
                if self.to_server:
                    self.state, self.since = ACTIVE, rt.now()
                    return self.to_server.popleft()
                if self.server_wait is None:
                    self.server_wait = rt.event(f"conn-{self.id}-request")
                waiter = self.server_wait
            left = None if deadline is None else deadline - rt.now()
            if left is not None and left <= 0:
                return None
            rt.select(waiter, timeout=left)

    def respond(self, resp: Response) -> bool:
        with self.lk:
            if self.closed:
                return False
            self.to_client.append(resp)
            waiter, self.client_wait = self.client_wait, None
        if waiter is not None:
            waiter.set()
        return True


class NoLock:
    """A lock that does nothing, for ``locking=False`` (see :func:`new_lock`)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def new_lock(locking: bool) -> Any:
    """``rt.lock()``, or with ``locking=False`` none at all.

    Under the simulation runtime one goroutine runs at a time, and the critical sections here
    make no runtime call (no wait, no event set, no goroutine start), so they are atomic
    without a lock; each lock would only add two scheduling decisions that protect nothing.
    The driver of the fuzzing scenarios turns the locks off; anything with real threads keeps them.
    """
    return rt.lock() if locking else NoLock()


class MemoryListener:
    """A listening "socket" in memory; ``dial()`` connects to it (see the module docstring)."""

    def __init__(self, address: tuple[str, int] = ("10.0.0.1", 6443), *, probe: Optional[Probe] = None,
                 events: Any = None, locking: bool = True):
        self.address = address
        self.probe = probe
        self.events = events
        self.lk = new_lock(locking)
        self._backlog: deque[_Conn] = deque()
        self._accept_wait: Optional[rt.Event] = None
        self._closed = False
        self._ids = itertools.count(1)
        self.closed_event = rt.event("memory-listener-closed")

    def getsockname(self) -> tuple[str, int]:
        return self.address

    @property
    def closed(self) -> bool:
        return self._closed

    def dial(self, http2: bool = False) -> "ClientConn":
        with self.lk:
            if self._closed:
                raise ConnectionRefused(self.address, self.probe() if self.probe is not None else None)
            cid = next(self._ids)
            c = _Conn(self.lk, cid, ("10.0.0.2", 40000 + cid), self.address)
            c.h2, c.events = (H2State() if http2 else None), self.events
            self._backlog.append(c)
            waiter, self._accept_wait = self._accept_wait, None
        if waiter is not None:
            waiter.set()
        return ClientConn(c)

    def accept(self) -> _Conn:
        while True:
            with self.lk:
                if self._closed:
                    raise OSError(errno.EBADF, "use of closed network connection")
                if self._backlog:
                    return self._backlog.popleft()
                if self._accept_wait is None:
                    self._accept_wait = rt.event("listener-accept")
                waiter = self._accept_wait
            waiter.wait()

    def close(self) -> None:
        with self.lk:
            if self._closed:
                return
            self._closed = True
            woken: list[rt.Event] = []
            while self._backlog:  # not yet accepted: the kernel would reset them
                woken += self._backlog.popleft().close_locked()
            if self._accept_wait is not None:
                woken.append(self._accept_wait)
                self._accept_wait = None
        if self.events is not None:  # before anyone can see the listener closed
            self.events.record("transport", "listener-closed", address=f"{self.address[0]}:{self.address[1]}")
        for w in woken:
            w.set()
        self.closed_event.set()


class ClientConn:
    """The client's end of a connection."""

    def __init__(self, conn: _Conn):
        self._c = conn

    @property
    def closed(self) -> bool:
        return self._c.closed

    def round_trip(self, req: Request, timeout: Optional[float]) -> Any:
        """The response; ``None`` if the connection closed first; ``_TIMEOUT``; over HTTP/2
        ``"retry"`` when the request must go on a new connection."""
        if self._c.h2 is not None:
            resp = h2transport.round_trip(self._c, req, timeout)
            return _TIMEOUT if resp == "timeout" else resp
        if not self._c.send(req):
            return None
        return self._c.receive(timeout)

    def close(self) -> None:
        self._c.close()


class MemoryServer:
    """Go's ``http.Server`` over :class:`MemoryListener`; built by ``SecureServingInfo.serve``."""

    def __init__(self, app: Callable, *, max_header_bytes: int = 1 << 20, idle_timeout: Optional[float] = 90.0,
                 read_header_timeout: Optional[float] = 32.0, ssl_context: Any = None,
                 events: Any = None, probe: Optional[Probe] = None, locking: bool = True):
        if ssl_context is not None:
            raise ValueError("the in-memory transport has no TLS")
        self.app = app
        self.idle_timeout = idle_timeout or None
        self.read_header_timeout = read_header_timeout or None
        self.max_header_bytes = max_header_bytes
        self.events, self.probe = events, probe
        self._mu = new_lock(locking)
        self._shutting_down = rt.event("memory-server-shutting-down")
        self._listeners: list[tuple[MemoryListener, rt.Event]] = []
        self._conns: list[_Conn] = []  # a list, not a set: shutdown visits them in a stable order
        self._changed: Optional[rt.Event] = None

    def conn_states(self) -> dict[str, int]:
        with self._mu:
            counts = {NEW: 0, ACTIVE: 0, IDLE: 0}
            for c in self._conns:
                counts[c.state] = counts.get(c.state, 0) + 1
            return counts

    def _state_changed(self) -> None:
        # no lock: shutdown installs the event *before* it looks at the states, so a change it
        # did not see always finds the event (setting it twice is harmless)
        changed = self._changed
        if changed is not None:
            changed.set()

    # -- listening and stopping ------------------------------------------------------------
    def serve(self, listener: MemoryListener) -> None:
        """Accept until shutdown; always raises (``ServerClosed`` once shut down)."""
        stopped = rt.event("memory-serve-stopped")
        with self._mu:
            if self._shutting_down.is_set():
                listener.close()
                raise ServerClosed()
            self._listeners.append((listener, stopped))
        try:
            while True:
                try:
                    c = listener.accept()
                except OSError:
                    if self._shutting_down.is_set():
                        raise ServerClosed() from None
                    raise
                with self._mu:
                    c.since = rt.now()
                    c.ctx, c.cancel = gocontext.with_cancel(gocontext.background())
                    self._conns.append(c)
                rt.go(self._serve_conn, c, name=f"memory-conn-{c.id}")
        finally:
            with self._mu:
                self._listeners = [(ln, ev) for ln, ev in self._listeners if ln is not listener]
            listener.close()
            stopped.set()

    def _stop_listening(self) -> None:
        self._shutting_down.set()
        with self._mu:
            listeners = list(self._listeners)
        for ln, _ in listeners:
            ln.close()
        rt.wait_all([stopped for _, stopped in listeners])

    def shutdown(self, ctx: gocontext.Context) -> None:
        """Stop listening, close idle connections, wait for active ones until ``ctx`` is done."""
        self._stop_listening()
        rt.go(self._goaway_all, name="http-on-shutdown")  # the http2 server's on-shutdown hook
        while True:
            with self._mu:
                self._changed = changed = rt.event("memory-conn-state-changed")
                quiescent, wake, woken = self._close_idle_conns_locked()
            for w in woken:
                w.set()
            if quiescent:
                return
            if rt.select(ctx.done(), changed, timeout=wake) is ctx.done():
                raise (ctx.err() or gocontext.CANCELED).with_traceback(None)

    def _goaway_all(self) -> None:
        with self._mu:
            conns = [c for c in self._conns if c.h2 is not None]
        for c in conns:
            h2transport.graceful_shutdown(self, c)

    def _close_idle_conns_locked(self) -> tuple[bool, Optional[float], list[rt.Event]]:
        quiescent, wake, woken, now = True, None, [], rt.now()
        for c in self._conns:
            with c.lk:
                if c.closing or c.closed:
                    continue
                idle, left = idle_for_shutdown(c.state, c.since, now)
                if left is not None:
                    wake = left if wake is None else min(wake, left)
                if not idle:
                    quiescent = False
                    continue
                c.closing = True
                woken += c.close_locked()
        return quiescent, wake, woken

    # -- one connection ----------------------------------------------------------------------
    def _serve_conn(self, c: _Conn) -> None:
        if c.h2 is not None:
            h2transport.serve_conn(self, c)
            return
        try:
            deadline = rt.now() + self.read_header_timeout if self.read_header_timeout else None
            while True:
                req = c.next_request(deadline)
                if req is None:
                    return
                self._state_changed()
                if self._shutting_down.is_set():
                    return  # Go's conn.serve drops a request read once shutdown began
                if not self._handle(c, req):
                    return
                with c.lk:
                    if c.closed or c.closing:
                        return
                    c.state, c.since = IDLE, rt.now()
                self._state_changed()
                if self._shutting_down.is_set():
                    return  # the response said Connection: close
                deadline = rt.now() + self.idle_timeout if self.idle_timeout else None
        finally:
            c.cancel()
            c.close()
            self._conn_ended(c)

    def _conn_ended(self, c: _Conn) -> None:
        with self._mu:
            c.state = CLOSED
            self._conns = [other for other in self._conns if other is not c]
        self._state_changed()

    def _record(self, name: str, **fields: Any) -> None:
        if self.events is not None:
            self.events.record("conn", name, **fields)

    def _record_h2(self, name: str, **fields: Any) -> None:
        if self.events is not None:
            self.events.record("h2", name, **fields)

    def _handle(self, c: _Conn, req: Request) -> bool:
        """Serve one request; True if the connection may carry another."""
        resp = self._run_app(c, req)
        return resp is not None and c.respond(resp) and not resp.closes() and not self._shutting_down.is_set()

    def _run_app(self, c: _Conn, req: Request, stream: Optional[int] = None, protocol: str = "HTTP/1.1") -> Optional[Response]:
        """The app's whole response to ``req`` (``None`` if it aborted or panicked), recorded."""
        env = self.environ(c, req, protocol)
        late_input = None
        if req.late is not None:
            with c.lk:
                c.late = req.late
                gone = c.closed
            if gone:
                req.late.ended.set()
            env["wsgi.input"] = late_input = LateInput(req.late)
            env["CONTENT_LENGTH"] = str(req.late.length)
        rid = env.get(_REQUEST_ID_ENV, "")
        where = {"conn": c.id} if stream is None else {"conn": c.id, "stream": stream}
        ctx, cancel = gocontext.with_cancel(c.ctx)
        reqctx.with_context(env, ctx)
        dispatched = self.probe() if self.probe is not None else None
        started: list[Any] = []
        chunks: list[bytes] = []

        def start_response(status: str, headers: list, exc_info: Any = None) -> Callable[[bytes], None]:
            if exc_info is not None and started and started[2]:
                raise exc_info[1].with_traceback(exc_info[2])
            started[:] = [status, list(headers), False, self.probe() if self.probe is not None else None]
            return chunks.append

        body: Any = None
        resp: Optional[Response] = None
        header = {"written": False, "closes": False}

        def write_header() -> None:
            # Go writes the header with a flush, or after the handler returned; keep-alive still
            # on, it first reads a small unread body to its end (a client that stalls it holds
            # the connection); once shutting down it closes after the answer and reads nothing
            if header["written"]:
                return
            header["written"] = True
            if late_input is None or not late_input.unread():
                return
            if self._shutting_down.is_set() or stream is not None:
                header["closes"] = True
                return
            late_input.read()

        try:
            try:
                body = self.app(env, start_response)
                held = known_chunks(body) is not None  # a list: still in Go's buffer when the handler returns
                for chunk in body:
                    if not held and started:
                        write_header()  # a chunk, even an empty one (Go's Flush), sends the header
                    if chunk:
                        started[2] = True
                        chunks.append(bytes(chunk))
                if not started:
                    raise RuntimeError("the app returned without calling start_response")
                status, headers = started[0], started[1]
                if stream is None and self._shutting_down.is_set() and not any(k.lower() == "connection" for k, _ in headers):
                    headers.append(("Connection", "close"))  # Go: no keep-alive once shutting down
                resp = Response(status, headers, b"".join(chunks))
                self._record("sent", rid=rid, **where, request=f"{req.method} {req.target}", status=resp.code,
                             dispatched=dispatched, decided=started[3])
            except AbortHandler as exc:
                self._record("aborted", rid=rid, **where, error=str(exc), dispatched=dispatched)
            except Exception as exc:  # Go recovers the panic, logs it and drops the connection
                log.error("http: panic serving %s:%d: %r", c.client[0], c.client[1], exc)
                self._record("panic", rid=rid, **where, error=repr(exc), dispatched=dispatched)
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()
            if resp is not None:
                try:
                    write_header()  # Go's finishRequest, after the handler returned
                except OSError as exc:  # the client went away before the rest of its body
                    self._record("aborted", rid=rid, **where, error=str(exc), dispatched=dispatched)
                    resp = None
                if resp is not None and header["closes"] and not resp.closes():
                    resp.headers.append(("Connection", "close"))
        except Exception as exc:
            log.error("http: panic closing the response for %s:%d: %r", c.client[0], c.client[1], exc)
            self._record("panic", rid=rid, **where, error=repr(exc), dispatched=dispatched)
            resp = None
        finally:
            cancel()
        return resp

    @staticmethod
    def environ(c: _Conn, req: Request, protocol: str = "HTTP/1.1") -> dict:
        """The WSGI environ of ``req`` (the keys :func:`genericserver.net.http.request.environ` sets)."""
        path, _, query = req.target.partition("?")
        env = {
            "REQUEST_METHOD": req.method, "SCRIPT_NAME": "", "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
            "QUERY_STRING": query, "REQUEST_URI": req.target, "RAW_URI": req.target, "SERVER_PROTOCOL": protocol,
            "REMOTE_ADDR": c.client[0], "REMOTE_PORT": c.client[1], "SERVER_NAME": c.server[0],
            "SERVER_PORT": str(c.server[1]), "wsgi.version": (1, 0), "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(req.body), "wsgi.errors": sys.stderr, "wsgi.input_terminated": True,
            "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
            CONN_ID_KEY: c.id, "HTTP_HOST": f"{c.server[0]}:{c.server[1]}",
        }
        for name, value in req.headers:
            key = name.upper().replace("-", "_")
            if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                key = "HTTP_" + key
            env[key] = value
        if req.body and "CONTENT_LENGTH" not in env:
            env["CONTENT_LENGTH"] = str(len(req.body))
        return env


def memory_server_factory(events: Any = None, probe: Optional[Probe] = None, locking: bool = True) -> Callable[..., MemoryServer]:
    """A ``server_factory`` for ``SecureServingInfo`` that passes the seams on."""

    def factory(app: Callable, **options: Any) -> MemoryServer:
        return MemoryServer(app, events=events, probe=probe, locking=locking, **options)

    return factory



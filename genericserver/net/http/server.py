"""Port of Go's net/http package: ``http.Server`` (server.go, Go 1.26.8) as k8s.io/apiserver's secure serving drives it, for WSGI.

:class:`Server` serves a WSGI app the way Go's server serves a handler (werkzeug's own server
has neither keep-alive nor Go's shutdown): one goroutine per connection, HTTP/1.1 keep-alive
(the rules are in :mod:`.request`), and Go's life cycle:

* connection states ``new`` -> ``active`` (a request's header is in) -> ``idle`` -> ``closed``,
  counted by :meth:`Server.conn_states` and reported to ``conn_state_hook(conn, state)``.
* :meth:`Server.serve` blocks in ``accept`` and raises :class:`ServerClosed` as soon as
  ``shutdown`` or ``close`` shuts the listener down (``shutdown(SHUT_RDWR)`` wakes ``accept`` at
  once and new connections are refused from then on; ``serve`` then closes the socket).
* :meth:`Server.shutdown`: stop listening (:meth:`Server.stop_listening`: keep-alives off, the
  listeners shut), start the ``register_on_shutdown`` hooks (HTTP/2's GOAWAYs), wait for
  ``serve`` to return, then close idle connections (and ``new`` ones silent for over 5 s), wait
  for active ones to go idle - woken by their state changes, where Go polls every 500 ms - and
  raise ``ctx.err()`` if the context ends first. Responses written during shutdown carry
  ``Connection: close`` and their connections close after them. As in Go, ``serve`` returns
  (``HTTPServerStoppedListening``) before that first pass over idle connections.
* a TLS connection the server closes gets a close_notify first (Go's ``tls.Conn.Close``), also an
  idle one that ``shutdown`` closes (its thread is woken by shutting the read side alone).
* :meth:`Server.close`: stop listening and shut every connection down at once (``shutdown(SHUT_RDWR)``
  wakes a thread blocked reading or writing, a plain ``close()`` from another thread would not);
  the requests' contexts are cancelled, handlers are not waited for (they cannot be killed).
* ``read_header_timeout`` runs from the start of each request (and of the TLS handshake) until
  its header is in; ``idle_timeout`` between requests. Both are deadlines, as in Go, so a client
  trickling bytes cannot stretch them. A timed-out connection is closed without a reply.
* a panicking handler: Go recovers the panic, logs ``http: panic serving <addr>: <err>`` with
  the stack, and drops the connection without a response. That is the default here: an exception
  escaping the WSGI app or its iterable is logged with its traceback and the connection is
  aborted; no byte goes out if none had. ``on_panic="500"`` sends ``500 Internal Server Error``
  instead when nothing was sent yet (werkzeug's habit). Raising :data:`ERR_ABORT_HANDLER` (or any
  :class:`AbortHandler`: the timeout filter's abort) aborts without a log line, as in Go. The apiserver's filter chain recovers its own panics first.
* the response iterable's ``close()`` is always called; the request's context (see
  :mod:`genericserver.request`) is cancelled once the response is done or the connection ends.

A client that goes away while its handler runs cancels the request's context, as Go's background
read does (:mod:`.connreader`); tests/parity's HTTP/1 shutdown corpus checks it all. ``close()``,
unlike ``shutdown()``, does not run the ``register_on_shutdown`` hooks, as in Go.

HTTP/2 (``http2=`` an :class:`.internal.http2.server.Server`): a TLS connection that chose ``h2``
is served by it (Go's ``TLSNextProto``), *active* here until it ends; its GOAWAY is a shutdown hook.

Differences from Go: no hijacking; after a 431, or an unread body too big to drop, the
connection waits up to 500 ms for the client to hang up (reading what it still sends) where Go
sleeps 500 ms.
"""

from __future__ import annotations

import errno
import functools
import itertools
import logging
import socket
import ssl
import traceback
from typing import Any, Callable, Optional

from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.runtime import speed_tricks
from genericserver.bufio import bufio
from genericserver.context import context as gocontext
from genericserver.net.dial import BindError, join_host_port, listen, max_listener_backlog
from genericserver.net.http import request as httprequest, response as httpresponse
from genericserver.net.http.connreader import BackgroundReads, ConnReader
from genericserver.net.http.request import CONN_ID_KEY
from genericserver.net.textproto import reader as textproto
from genericserver.wsgi import close_iterable
from genericserver.x.net.http.httpguts import httplex as httpguts

__all__ = ["ACTIVE", "CLOSED", "CONN_ID_KEY", "ERR_ABORT_HANDLER", "IDLE", "NEW", "ON_PANIC_500", "ON_PANIC_ABORT",
           "AbortHandler", "BindError", "Conn", "Server", "ServerClosed", "listen", "ssl_context_from_files"]

log = logging.getLogger("genericserver.net.http.server")

NEW, ACTIVE, IDLE, CLOSED = "new", "active", "idle", "closed"  # Go's ConnState names
ON_PANIC_ABORT, ON_PANIC_500 = "abort", "500"
RST_AVOIDANCE_DELAY = 0.5  # how long a closing connection waits for the client's FIN
NEW_CONN_GRACE = 5.0  # shutdown takes a connection silent this long for idle (Go issue 22682)
_HTTP_PREFIXES = (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO")
_TEMPORARY_ACCEPT_ERRORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.ECONNABORTED}


def idle_for_shutdown(state: str, since: float, now: float) -> tuple[bool, Optional[float]]:
    """Whether shutdown may close a connection now, and (for a new one) in how many seconds it
    will be: Go counts a connection that has sent nothing for ``NEW_CONN_GRACE`` as idle."""
    if state == NEW:
        if now - since > NEW_CONN_GRACE:
            return True, None
        return False, since + NEW_CONN_GRACE - now + 0.001
    return state == IDLE, None


def send_close_notify(sock: Any) -> None:
    """Go's ``tls.Conn.Close``: a close_notify alert before the descriptor closes, without waiting
    for the peer's (a blocking ``unwrap`` would: the socket is made non-blocking first, so the
    alert goes out if the send buffer takes it, and the wait for the peer's ends at once)."""
    try:
        sock.settimeout(0.0)
        sock.unwrap()
    except (OSError, ValueError):  # (ssl.SSLWantReadError included: the peer's alert is not waited for)
        pass


class ServerClosed(Exception):
    """``http.ErrServerClosed``: what ``serve`` raises after ``shutdown`` or ``close``."""

    def __init__(self, msg: str = "http: Server closed"):
        super().__init__(msg)


class AbortHandler(Exception):
    """The type of :data:`ERR_ABORT_HANDLER`: raising any of its instances is Go's
    ``panic(http.ErrAbortHandler)`` (a filter raises a new one, so that no two threads raise one object)."""

    def __init__(self, msg: str = "net/http: abort Handler"):
        super().__init__(msg)


# http.ErrAbortHandler: raise it from an app to drop the connection without a log line
ERR_ABORT_HANDLER = AbortHandler()


def ssl_context_from_files(cert_file: str, key_file: str, alpn: tuple[str, ...] = ("http/1.1",)) -> ssl.SSLContext:
    """A server TLS context from PEM files (TLS >= 1.2), offering the protocols ``alpn``."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert_file, key_file)
    ctx.set_alpn_protocols(list(alpn))
    return ctx


class Conn:
    """One accepted connection as ``conn_state_hook`` sees it: ``id``, ``remote_addr``, ``state``, ``sock``."""

    def __init__(self, cid: int, sock: socket.socket, addr: Any):
        self.id, self.sock = cid, sock
        self.r = ConnReader(sock)  # Go's c.r, under the buffered reader Go's c.bufr
        self.bufr = bufio.Reader(self.r.read)
        self.remote = (addr[0], addr[1]) if isinstance(addr, tuple) else (str(addr), 0)
        self.remote_addr = join_host_port(*self.remote)
        try:
            self.local = sock.getsockname()[:2]
        except OSError:
            self.local = ("", 0)
        self.state: Optional[str] = None
        self.since = 0.0
        # closing: the server shut it down; released: its socket is closed; broken: I/O failed
        self.closing = self.released = self.broken = self.tls = False
        self.last_method = ""
        self.ctx, self.cancel = gocontext.with_cancel(gocontext.background())
        self.r.on_error = self.cancel  # a failed read cancels the connection's context (Go's handleReadError)
        self.environ_base: Optional[dict] = None  # what every request's environ starts from (httprequest.environ)

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError:
            self.broken = True
            self.cancel()  # Go's checkConnErrorWriter: a failed write cancels the context too
            raise

    def __repr__(self) -> str:
        return f"<Conn {self.id} {self.remote_addr} {self.state}>"


class Server:
    """Go's ``http.Server`` for one WSGI ``app``; see the module docstring."""

    def __init__(self, app: Callable, *, read_header_timeout: Optional[float] = 32.0,
                 idle_timeout: Optional[float] = 90.0, max_header_bytes: int = 1 << 20,
                 ssl_context: Optional[ssl.SSLContext] = None, error_log: Any = None,
                 conn_state_hook: Optional[Callable[[Conn, str], Any]] = None,
                 on_panic: str = ON_PANIC_ABORT, http2: Any = None):
        if on_panic not in (ON_PANIC_ABORT, ON_PANIC_500):
            raise ValueError(f"on_panic must be {ON_PANIC_ABORT!r} or {ON_PANIC_500!r}")
        self.app, self.ssl_context, self.on_panic = app, ssl_context, on_panic
        self.read_header_timeout = read_header_timeout or None  # 0 or None: no timeout
        self.idle_timeout = idle_timeout or None
        self.max_header_bytes = max_header_bytes if max_header_bytes > 0 else 1 << 20
        self.error_log, self.conn_state_hook = error_log, conn_state_hook
        self._mu = rt.lock()
        self._shutting_down = rt.event("http-server-shutting-down")
        self._listeners_shut = rt.event("http-server-listeners-shut")
        self._listeners: dict[socket.socket, rt.Event] = {}
        self._conns: set[Conn] = set()
        self._counts = {NEW: 0, ACTIVE: 0, IDLE: 0, CLOSED: 0}
        self._changed: Optional[rt.Event] = None  # set at the next state change, for shutdown
        self._on_shutdown: list[Callable[[], Any]] = []
        self._keep_alives_disabled = False
        self._ids = itertools.count(1)
        self._background_reads = BackgroundReads()
        self.http2 = http2  # takes the TLS connections that chose h2; its GOAWAY is a shutdown hook
        if http2 is not None:
            self.register_on_shutdown(http2.graceful_shutdown)

    def logf(self, fmt: str, *args: Any) -> None:
        """Go's ``srv.logf``: to ``error_log`` (a Logger or a callable) or this module's logger."""
        msg = fmt % args if args else fmt
        if self.error_log is None or isinstance(self.error_log, logging.Logger):
            (self.error_log or log).error("%s", msg)
        else:
            self.error_log(msg)

    def conn_states(self) -> dict[str, int]:
        """How many connections are new, active and idle now, and how many have closed so far."""
        with self._mu:
            return dict(self._counts)

    def _set_state(self, c: Conn, state: str, hooks: bool = True) -> None:
        with self._mu:
            if c.state is not None:
                self._counts[c.state] -= 1
            c.state, c.since = state, rt.now()
            self._counts[state] += 1
            if state == NEW:
                self._conns.add(c)
            elif state == CLOSED:
                self._conns.discard(c)
            changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()
        if self.conn_state_hook is not None and hooks:
            self.conn_state_hook(c, state)

    def shutting_down(self) -> bool:
        """Go's ``shuttingDown``: ``shutdown`` or ``close`` began (HTTP/2's connections ask it too)."""
        return self._shutting_down.is_set()

    def _do_keep_alives(self) -> bool:
        return not self._keep_alives_disabled and not self.shutting_down()

    def set_keep_alives_enabled(self, v: bool) -> None:
        """Go's ``SetKeepAlivesEnabled``: with ``False`` every answer says ``Connection: close``
        and the idle keep-alive connections are closed now (Go's "a best effort")."""
        with self._mu:
            self._keep_alives_disabled = not v
            if not v:
                self._close_idle_conns_locked()

    @staticmethod
    def _kill_locked(c: Conn) -> None:
        # shutdown, not close: it wakes the connection's thread if blocked in recv or send, and
        # that thread closes the descriptor itself, so it is never reused under its feet
        c.closing = True
        if not c.released:
            # an idle TLS connection's thread is blocked reading: the read side alone wakes it, and
            # it sends close_notify on its way out, as Go's tls.Conn.Close does
            how = socket.SHUT_RD if c.tls and c.state == IDLE else socket.SHUT_RDWR
            try:
                socket.socket.shutdown(c.sock, how)
            except OSError:
                pass
            c.cancel()  # Go: the closed socket fails the background read; handleReadError cancels

    # -- listening and stopping -----------------------------------------------------------
    def serve(self, listener: socket.socket) -> None:
        """Accept on ``listener`` until shutdown or close; always raises (ServerClosed then)."""
        stopped = rt.event("http-serve-stopped")
        with self._mu:
            if self.shutting_down():
                listener.close()
                raise ServerClosed()
            self._listeners[listener] = stopped
        delay = 0.0
        try:
            while True:
                try:
                    sock, addr = listener.accept()
                except OSError as err:
                    if self.shutting_down():
                        self._listeners_shut.wait()  # every listener, if several are served
                        raise ServerClosed() from None
                    if err.errno not in _TEMPORARY_ACCEPT_ERRORS:
                        raise
                    delay = min(max(delay * 2, 0.005), 1.0)
                    self.logf("http: Accept error: %s; retrying in %dms", err, int(delay * 1000))
                    rt.select(self._shutting_down, timeout=delay)
                    continue
                delay = 0.0
                if sock.family in (socket.AF_INET, socket.AF_INET6):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # Go's default
                c = Conn(next(self._ids), sock, addr)
                self._set_state(c, NEW)  # before serve can return, as in Go
                rt.go(self._serve_conn, c, name=f"http-conn-{c.remote_addr}")
        finally:
            with self._mu:
                self._listeners.pop(listener, None)
            speed_tricks.close_socket(listener)  # listener.close(), keeping the GIL (walkthrough 8.6)
            stopped.set()

    def register_on_shutdown(self, fn: Callable[[], Any]) -> None:
        """``RegisterOnShutdown``: ``fn`` runs in its own goroutine when shutdown starts."""
        with self._mu:
            self._on_shutdown.append(fn)

    def stop_listening(self) -> None:
        """The start of ``shutdown`` and ``close`` (Go's ``inShutdown`` and ``closeListenersLocked``):
        from now on keep-alives are off, no new HTTP/2 stream is read, and every listener is shut
        down, which wakes ``serve``'s accept at once. It never blocks, so :func:`genericserver.secure_serving.run_server`
        has it made by the thread that sets the stop channel; ``shutdown`` then finds it done."""
        if self._listeners_shut.is_set():
            return  # done already (run_server's relay, then Shutdown)
        self._shutting_down.set()
        with self._mu:  # a serve that registers its listener after this finds the flag set
            listeners = list(self._listeners)
        for ln in listeners:
            try:
                speed_tricks.shutdown_socket(ln, socket.SHUT_RDWR)  # serve closes the socket
            except OSError:
                pass
        self._listeners_shut.set()

    def _wait_for_listeners(self) -> None:
        with self._mu:
            listeners = list(self._listeners.values())
        rt.wait_all(listeners)  # Go's listenerGroup.Wait: every serve has returned

    def shutdown(self, ctx: gocontext.Context) -> None:
        """Go's ``Shutdown``: stop listening, start the ``register_on_shutdown`` hooks (HTTP/2's
        GOAWAYs), wait for ``serve`` to return, then close idle connections and wait for the
        active ones to go idle, until ``ctx`` is done (``ctx.err()`` is raised then)."""
        self.stop_listening()
        with self._mu:
            hooks = list(self._on_shutdown)
        for fn in hooks:
            rt.go(fn, name="http-on-shutdown")
        self._wait_for_listeners()
        self._background_reads.stop_when_idle()
        while True:
            with self._mu:
                quiescent, wake = self._close_idle_conns_locked()
                if quiescent:
                    return
                if self._changed is None:
                    self._changed = rt.event("http-conn-state-changed")
                changed = self._changed
            if rt.select(ctx.done(), changed, timeout=wake) is ctx.done():
                err = ctx.err() or gocontext.CANCELED
                raise err.with_traceback(None)

    def _close_idle_conns_locked(self) -> tuple[bool, Optional[float]]:
        """Close idle connections; report whether all are, and when a new one turns idle."""
        quiescent, wake, now = True, None, rt.now()
        for c in self._conns:
            if c.closing:
                continue  # Go forgets a connection once it closed it
            idle, left = idle_for_shutdown(c.state, c.since, now)
            if left is not None:
                wake = left if wake is None else min(wake, left)
            if not idle:
                quiescent = False
                continue
            self._kill_locked(c)
        return quiescent, wake

    def close(self) -> None:
        """Stop listening and shut every connection down now, without waiting for handlers."""
        self.stop_listening()  # (Go's Close runs no on-shutdown hook)
        self._wait_for_listeners()
        self._background_reads.stop_when_idle()
        with self._mu:
            for c in self._conns:
                self._kill_locked(c)

    # -- one connection: Go's conn.serve ---------------------------------------------------
    def _serve_conn(self, c: Conn) -> None:
        try:
            if self.ssl_context is not None and self._handshake(c) and self.http2 is not None \
                    and c.sock.selected_alpn_protocol() == "h2":  # type: ignore[attr-defined]
                # Go's TLSNextProto: active, without hooks, until it ends on its own (Go issue 39776)
                self._set_state(c, ACTIVE, hooks=False)
                self.http2.serve_conn(self, c)
            elif self.ssl_context is None or c.tls:
                self.prepare_conn(c)
                while self._serve_one(c) and self._wait_for_next_request(c):
                    pass
        except (OSError, ValueError, EOFError):
            pass  # the client went away, timed out or broke the protocol mid-stream
        finally:
            self._background_reads.forget(c.sock)
            c.cancel()
            if c.tls:
                send_close_notify(c.sock)
            with self._mu:
                c.released = True
                c.sock.close()
            self._set_state(c, CLOSED)

    def _handshake(self, c: Conn) -> bool:
        try:
            c.r.set_timeout(self.read_header_timeout)
            if c.sock.recv(5, socket.MSG_PEEK) in _HTTP_PREFIXES:
                c.sock.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
                self._close_write_and_wait(c)  # the request is still unread: avoid a reset
                return False
            with self._mu:  # close() must see the socket that now owns the descriptor
                if c.closing:
                    return False
                c.sock = c.r.sock = self.ssl_context.wrap_socket(  # type: ignore[union-attr]
                    c.sock, server_side=True, do_handshake_on_connect=False)
            c.sock.do_handshake()  # type: ignore[attr-defined]
        except OSError as err:
            self.logf("http: TLS handshake error from %s: %s", c.remote_addr, err)
            return False
        c.tls = True
        return True

    def _wait_for_next_request(self, c: Conn) -> bool:
        """Between requests: idle until 4 bytes arrive (Go's ``Peek(4)``), within the idle
        timeout; then the next request's header timeout starts."""
        self._set_state(c, IDLE)
        if not self._do_keep_alives():
            return False  # shutting down: the response already said Connection: close
        c.r.deadline = rt.now() + self.idle_timeout if self.idle_timeout else None
        if c.bufr.peek(4)[1] is not None:
            return False
        c.r.deadline = rt.now() + self.read_header_timeout if self.read_header_timeout else None
        return True

    def _read_request(self, c: Conn) -> tuple[Optional[httprequest.Request], Optional[BaseException]]:
        """Go's ``conn.readRequest``: the request, or the error it failed with."""
        c.r.set_read_limit(self._initial_read_limit_size())
        if c.last_method == "POST":  # old clients send a CRLF after a POST body
            peek, _ = c.bufr.peek(4)
            c.bufr.discard(len(peek) - len(peek.lstrip(b"\r\n")))
        try:
            req = httprequest.read_request(c.bufr)
        except BaseException as err:
            if c.r.hit_read_limit():
                err = httprequest.TooLarge()
            return None, err
        if req.proto_major != 1 and not (req.proto == "HTTP/2.0" and req.method == "PRI" and req.request_uri == "*"):
            return None, httprequest.StatusError(505, "unsupported protocol version")
        c.last_method = req.method
        c.r.set_infinite_read_limit()
        hosts = req.header.get("Host")
        h2_upgrade = req.method == "PRI" and req.proto == "HTTP/2.0"
        if req.proto_at_least(1, 1) and not hosts and not h2_upgrade and req.method != "CONNECT":
            return None, httprequest.StatusError(400, "missing required Host header")
        if hosts is not None and len(hosts) == 1 and not httpguts.valid_host_header(hosts[0]):
            return None, httprequest.StatusError(400, "malformed Host header")
        if not req.header_checked:  # (a header read at one go passed this very test on its way in)
            for name, values in req.header.items():
                if not httpguts.valid_header_field_name(name):
                    return None, httprequest.StatusError(400, "invalid header name")
                for v in values:
                    if not httpguts.valid_header_field_value(v):
                        return None, httprequest.StatusError(400, "invalid header value")
        c.r.deadline = None  # no deadline while the app runs and writes (Go's ReadTimeout is 0)
        c.r.set_timeout(None)
        return req, None

    def prepare_conn(self, c: Conn) -> None:
        """Before a connection's first HTTP/1 request: its header deadline, its background read's start and stop."""
        c.r.deadline = rt.now() + self.read_header_timeout if self.read_header_timeout else None
        c.watch = functools.partial(self._background_reads.start, c.sock, c.cancel)
        c.unwatch = functools.partial(self._background_reads.abort, c.sock)

    def _initial_read_limit_size(self) -> int:
        return self.max_header_bytes + 4096  # bufio's slop, as in Go

    def _refuse(self, c: Conn, err: BaseException) -> None:
        """Go's answers to a request it could not read, each followed by closing the connection."""
        if isinstance(err, httprequest.TooLarge):
            c.send(_canned("431 Request Header Fields Too Large"))
            self._close_write_and_wait(c)
        elif isinstance(err, httprequest.UnsupportedTE):
            c.send(_canned("501 Not Implemented", "Unsupported transfer encoding"))
        elif isinstance(err, httprequest.StatusError):
            text = f"{err.code} {httpresponse.STATUS_TEXT[err.code]}: {err.text}"
            c.send(_canned(text))
        elif isinstance(err, textproto.UnexpectedEOF) or not isinstance(err, (EOFError, OSError)):
            c.send(_canned("400 Bad Request"))  # (a clean end, a timeout or a reset gets no answer)

    def _serve_one(self, c: Conn) -> bool:
        """Read and answer one request; True if the connection may carry another."""
        req, err = self._read_request(c)
        if c.r.remain != self._initial_read_limit_size():
            self._set_state(c, ACTIVE)  # bytes were read off the wire (or a request was read)
        if self.shutting_down():
            return False  # Go drops a request read once shutdown began: the client retries
        if req is None:
            try:
                self._refuse(c, err)  # type: ignore[arg-type]
            except OSError:
                pass
            return False
        resp = httpresponse.Response(c, req, self._do_keep_alives, self.logf)
        if req.expects_continue():
            if req.proto_at_least(1, 1) and req.content_length != 0:
                resp.expect_continue = resp.can_write_continue = True
                req.body.on_first_read = resp.write_continue
        elif req.get("Expect"):
            resp.start_response("417 Expectation Failed", [("Connection", "close")])
            resp.finish(b"")  # (Go's sendExpectationFailed, then finishRequest: an empty body)
            return False
        # watch for the client going away once the body is read (Go's background read)
        if req.body.body_remains():
            req.body.register_on_hit_eof(c.watch)
        else:
            c.watch()
        # stop watching just before the answer's last write (Go: just after): the next request wakes no watcher
        resp.before_last_write = c.unwatch
        self._run_app(c, req, resp)
        c.unwatch()  # Go's finishRequest: stop watching, drop a small unread body
        # (no watch starts, and no 100 Continue goes out, when that drop reaches the body's end:
        # Go 1.26 drops it past the expectContinueReader, and the watch it may start ends with
        # the connection, which closes whenever anything was left to drop)
        req.body.register_on_hit_eof(None)
        resp.can_write_continue = False
        req.body.close()
        if not resp.should_reuse_connection():
            if resp.request_body_limit_hit or req.body.early_close:
                self._close_write_and_wait(c)
            return False
        return True

    def _run_app(self, c: Conn, req: httprequest.Request, resp: httpresponse.Response) -> None:
        env = httprequest.environ(c, req)
        ctx, cancel = gocontext.with_cancel(c.ctx)
        reqctx.with_context(env, ctx)
        app = _global_options if req.request_uri == "*" and req.method == "OPTIONS" else self.app
        body = None
        try:
            body = app(env, resp.start_response)
            resp.send_body(body)
        except Exception as err:
            self._recover(c, resp, err)
        finally:
            try:
                close_iterable(body)
            except Exception as err:
                self._recover(c, resp, err)
            cancel()
        # only now, as Go's finishRequest after the handler returned: the header of an answer
        # still held is written (an unread body read to its end) after every filter let go
        try:
            resp.finish_request()
        except Exception as err:  # a failed write, or an app that returned without start_response
            self._recover(c, resp, err)

    def _recover(self, c: Conn, resp: httpresponse.Response, err: Exception) -> None:
        """Go's deferred recover in conn.serve: log the panic and drop the connection."""
        resp.close_after_reply = True
        resp.abandon_held()  # what the handler left in Go's buffer is never written after a panic
        if c.broken:
            return  # the connection failed under the app: nothing to report
        if isinstance(err, httprequest.BodyError):
            # the client sent a broken or cut-off body, and the app let the read error through:
            # the client's fault, not a panic (see request.py's table of differences)
            self.logf("http: request body from %s: %s", c.remote_addr, err)
            if not resp.wrote_header:
                try:
                    c.send(_canned("400 Bad Request", str(err)))
                except OSError:
                    pass
            c.broken = True
            return
        if not isinstance(err, AbortHandler):
            self.logf("http: panic serving %s: %s\n%s", c.remote_addr, str(err) or repr(err), traceback.format_exc())
        if self.on_panic == ON_PANIC_500 and not resp.wrote_header:
            try:
                resp.internal_error()
                return
            except OSError:
                pass
        c.broken = True  # abort: no further byte, no reuse

    def _close_write_and_wait(self, c: Conn) -> None:
        # so that the client reads our answer before any reset: FIN, then drain until it hangs up
        try:
            socket.socket.shutdown(c.sock, socket.SHUT_WR)
            c.r.deadline = rt.now() + RST_AVOIDANCE_DELAY
            c.bufr.buf.clear()
            while c.r.read(READ_SIZE):
                pass
        except OSError:
            pass


ERROR_HEADERS = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
READ_SIZE = 64 << 10


def _canned(status: str, body: Optional[str] = None) -> bytes:
    """One of Go's canned answers: ``HTTP/1.1 <status>``, plain text, ``Connection: close``."""
    return ("HTTP/1.1 " + status + ERROR_HEADERS + (status if body is None else body)).encode("latin-1", "replace")


def _global_options(environ: dict, start_response: Callable) -> list[bytes]:
    """Go's ``globalOptionsHandler`` for ``OPTIONS *``: 200, no body; up to 4 KiB of body dropped."""
    body = environ["wsgi.input"]
    if environ.get("CONTENT_LENGTH") not in (None, "0") or environ.get("HTTP_TRANSFER_ENCODING"):
        if len(body.read(4097)) > 4096:  # MaxBytesReader's limit: the connection will not be reused
            start_response("200 OK", [("Content-Length", "0"), ("Connection", "close")])
            return []
    start_response("200 OK", [("Content-Length", "0")])
    return []

"""The client side of the in-memory transport: Go's ``http.Client`` on a :class:`MemoryListener` (no Go twin).

See :mod:`genericserver.testing.transport` for the server side and the model; over HTTP/2
(``http2=True``) requests share one connection as Go's HTTP/2 transport shares it
(:mod:`genericserver.testing.h2transport`).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from genericserver import runtime as rt
from genericserver.net.http.server import ServerClosed
from genericserver.testing.client import Result
from genericserver.testing.transport import (
    _REPLAYABLE, _TIMEOUT, ClientConn, ConnectionDropped, ConnectionRefused, MemoryListener, MemoryServer, Request, new_lock,
)


MAX_H2_RETRIES = 5  # a request the GOAWAYs keep leaving unprocessed fails as dropped


class MemoryClient:
    """Go's ``http.Client`` on a :class:`MemoryListener`, with a pool of keep-alive connections.

    ``new_connection=True`` dials for every request and closes after it (Go's
    ``DisableKeepAlives``). ``Result.reused`` says whether a pooled connection carried the
    request; ``Result.error`` is a :class:`ConnectionRefused`, a :class:`ConnectionDropped` or
    ``TimeoutError``. ``http2=True``: every request of the client shares one HTTP/2 connection
    until it reads a GOAWAY; a request the GOAWAY left unprocessed goes on a new one.
    """

    def __init__(self, listener: MemoryListener, *, new_connection: bool = False, user_agent: str = "Go-http-client/1.1",
                 locking: bool = True, http2: bool = False):
        self.listener = listener
        self.new_connection = new_connection
        self.user_agent = user_agent
        self.http2 = http2
        self._lk = new_lock(locking)
        self._idle: list[ClientConn] = []
        self._h2: Optional[ClientConn] = None

    def get(self, target: str, timeout: Optional[float] = None, headers: Optional[dict[str, str]] = None) -> Result:
        return self.do("GET", target, headers=headers, timeout=timeout)

    def do(self, method: str, target: str, *, headers: Optional[dict[str, str]] = None, body: bytes = b"",
           timeout: Optional[float] = None) -> Result:
        hs = {"User-Agent": self.user_agent, **(headers or {})}
        req = Request(method, target, list(hs.items()), body)
        if self.http2:
            return self._h2_attempt(req, timeout)
        result = self._attempt(req, timeout, pooled=not self.new_connection)
        if result.reused and isinstance(result.error, ConnectionDropped) and method in _REPLAYABLE:
            # the server closed the pooled connection before answering: Go's transport retries
            # an idempotent request once, on a new connection
            result = self._attempt(req, timeout, pooled=False)
        return result

    def _attempt(self, req: Request, timeout: Optional[float], pooled: bool) -> Result:
        conn = None
        if pooled:
            with self._lk:
                while self._idle and conn is None:
                    candidate = self._idle.pop()
                    if not candidate.closed:
                        conn = candidate
        reused = conn is not None
        if conn is None:
            try:
                conn = self.listener.dial()
            except ConnectionRefused as err:
                return Result(error=err)
        resp = conn.round_trip(req, timeout)
        if resp is None:
            conn.close()
            return Result(error=ConnectionDropped(reused), reused=reused)
        if resp is _TIMEOUT:
            conn.close()
            return Result(error=TimeoutError("timeout awaiting response headers"), reused=reused)
        headers = {k.lower(): v for k, v in resp.headers}
        if self.new_connection or resp.closes():
            conn.close()
        else:
            with self._lk:
                self._idle.append(conn)
        return Result(resp.code, headers, resp.body, None, reused)

    def _h2_attempt(self, req: Request, timeout: Optional[float]) -> Result:
        for _ in range(MAX_H2_RETRIES):
            with self._lk:
                conn = self._h2 if self._h2 is not None and not self._h2.closed else None
            reused = conn is not None
            if conn is None:
                try:
                    conn = self.listener.dial(http2=True)
                except ConnectionRefused as err:
                    return Result(error=err)
                if not self.new_connection:
                    with self._lk:
                        self._h2 = conn
            resp = conn.round_trip(req, timeout)
            if isinstance(resp, str):  # "retry": not processed; this connection takes no more
                with self._lk:
                    if self._h2 is conn:
                        self._h2 = None
                continue
            if self.new_connection:
                conn.close()
            if resp is None:
                return Result(error=ConnectionDropped(reused), reused=reused)
            if resp is _TIMEOUT:
                conn.close()
                return Result(error=TimeoutError("timeout awaiting response headers"), reused=reused)
            return Result(resp.code, {k.lower(): v for k, v in resp.headers}, resp.body, None, reused)
        return Result(error=ConnectionDropped(True), reused=True)

    def close_idle_connections(self) -> None:
        with self._lk:
            idle, self._idle = self._idle, []
            if self._h2 is not None:
                idle.append(self._h2)
                self._h2 = None
        for conn in idle:
            conn.close()

    close = close_idle_connections


def serve_app(app: Callable, listener: MemoryListener) -> MemoryServer:
    """Start a :class:`MemoryServer` for ``app`` on ``listener`` in a goroutine (tests)."""
    server = MemoryServer(app)

    def serve() -> None:
        try:
            server.serve(listener)
        except ServerClosed:
            pass

    rt.go(serve, name="memory-serve")
    return server


"""A small HTTP/1.1 client like Go's ``http.Client`` in the shutdown tests (no Go twin).

``Client(host, port, new_connection=False)`` keeps one keep-alive connection and reuses it, as
Go's transport does; ``new_connection=True`` dials a fresh TCP connection per request (Go's
``DisableKeepAlives``). Each :class:`Result` says whether the connection was reused (Go's
``httptrace.GotConnInfo.Reused``). When a reused connection turns out to have been closed by
the server before any response came, the request is retried once on a new connection, as Go's
transport retries idempotent requests; that is how a client of a shut-down server ends up with
"connection refused".
"""

from __future__ import annotations

import http.client
import socket
from dataclasses import dataclass, field
from typing import Optional


@dataclass
class Result:
    status: Optional[int] = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    error: Optional[BaseException] = None
    reused: bool = False

    @property
    def refused(self) -> bool:
        return isinstance(self.error, ConnectionRefusedError)

    def header(self, name: str) -> Optional[str]:
        return self.headers.get(name.lower())

    def __repr__(self) -> str:
        if self.error is not None:
            return f"<Result error={self.error!r} reused={self.reused}>"
        return f"<Result {self.status} reused={self.reused} body={self.body[:80]!r}>"


class Client:
    def __init__(self, host: str, port: int, *, new_connection: bool = False, user_agent: str = "Go-http-client/1.1"):
        self.host, self.port = host, port
        self.new_connection = new_connection
        self.user_agent = user_agent
        self._conn: Optional[http.client.HTTPConnection] = None

    def get(self, path: str, timeout: Optional[float] = 5.0, headers: Optional[dict[str, str]] = None, method: str = "GET", body: Optional[bytes] = None) -> Result:
        hs = {"User-Agent": self.user_agent, **(headers or {})}
        reused = self._conn is not None and self._conn.sock is not None and not self.new_connection
        result = self._do(method, path, hs, body, timeout, reused)
        if reused and result.error is not None and _dropped_before_response(result.error):
            # the server closed the idle connection: retry on a fresh one (Go's transport does)
            self.close()
            result = self._do(method, path, hs, body, timeout, False)
        return result

    def _do(self, method: str, path: str, headers: dict[str, str], body: Optional[bytes], timeout: Optional[float], reused: bool) -> Result:
        if self._conn is None or self._conn.sock is None or self.new_connection:
            self.close()
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        conn = self._conn
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            result = Result(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data, None, reused)
            if resp.will_close or self.new_connection:
                self.close()
            return result
        except (OSError, http.client.HTTPException) as err:
            self.close()
            return Result(error=err, reused=reused)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _dropped_before_response(err: BaseException) -> bool:
    return isinstance(err, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)) or (
        isinstance(err, http.client.BadStatusLine)
    )


def is_connection_refused(err: Optional[BaseException]) -> bool:
    return isinstance(err, ConnectionRefusedError) or (isinstance(err, socket.error) and getattr(err, "errno", None) == 111)

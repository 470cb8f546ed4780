"""Port of Go's net/http package: one HTTP/1.x exchange (readRequest, the body, response, chunkWriter).

:mod:`genericserver.httpserver` owns listeners, connections and shutdown; this module reads one
request off a connection and writes the WSGI app's response, deciding as Go does whether the
connection may carry another request:

* the header section (request line to blank line) may hold ``max_header_bytes`` + 4096 bytes (Go
  adds 4096 for bufio's slop); beyond: :class:`TooLarge` (Go's 431). A bad request line or
  header, a missing or repeated ``Host`` (HTTP/1.1), a bad ``Content-Length``: 400 with Go's
  text. A transfer coding other than ``chunked``: 501. Major version not 1: 505.
* the body (``wsgi.input``) is read straight off the connection, by ``Content-Length`` or
  chunked; ``Expect: 100-continue`` is answered at the first read.
* the response: ``HTTP/1.1`` to HTTP/1.1 requests, a ``Date`` header, and - like Go's
  ``chunkWriter.writeHeader`` - ``Connection: close`` when the request asked for it, when it was
  HTTP/1.0 without keep-alive, when the app said ``Connection: close``, when keep-alives are off
  (shutdown has begun) or when 256 KiB or more of the request body went unread (less is read and
  dropped). A response with no ``Content-Length`` is chunked on HTTP/1.1 (or ends with the
  connection on HTTP/1.0).

Differences from Go: a WSGI response is not held in Go's 2 KiB buffer, since PEP 3333 wants each
chunk sent as the app yields it; a list or tuple gets a ``Content-Length`` (Go gives one to any
short response its handler has finished), anything else is chunked. No Content-Type sniffing. The
header limit counts header bytes only, where Go counts what its reader fetched ahead too.
"""

from __future__ import annotations

import re
import sys
from email.utils import formatdate
from typing import Any, Callable, Optional
from urllib.parse import unquote_to_bytes, urlsplit

from genericserver import runtime as rt

CONN_ID_KEY = "genericserver.httpserver.conn_id"  # environ: the server-side connection id
MAX_POST_HANDLER_READ_BYTES = 256 << 10  # unread body Go still drops to keep a connection
READ_SIZE = 64 << 10
ERROR_HEADERS = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_VERSION = re.compile(r"HTTP/(\d)\.(\d)\Z")
_END_OF_HEADER = re.compile(rb"\r?\n\r?\n")


class TooLarge(Exception):
    """The header section is over the limit (Go's errTooLarge)."""


class BadRequest(Exception):
    """A request Go answers with a canned response and a close; ``args[0]`` is that response."""

    def __init__(self, code: int = 400, text: str = "Bad Request", why: str = "", body: Optional[str] = None):
        line = f"{code} {text}" + (f": {why}" if why else "")
        super().__init__("HTTP/1.1 " + line + ERROR_HEADERS + (line if body is None else body))


class UnexpectedEOF(ConnectionError):
    def __init__(self) -> None:
        super().__init__("unexpected EOF")


class Reader:
    """A connection's read buffer; ``deadline`` (runtime time, or None) bounds each wait for bytes."""

    __slots__ = ("sock", "buf", "deadline", "_timeout")

    def __init__(self, sock: Any):
        self.sock, self.buf, self.deadline, self._timeout = sock, bytearray(), None, None

    def set_timeout(self, t: Optional[float]) -> None:
        if t != self._timeout:
            self.sock.settimeout(t)
            self._timeout = t

    def fill(self) -> bool:
        """Receive more bytes; False at end of stream. A passed deadline raises TimeoutError."""
        if self.deadline is None:
            self.set_timeout(None)
        else:
            left = self.deadline - rt.now()
            if left <= 0:
                raise TimeoutError("i/o timeout")
            self.set_timeout(left)
        data = self.sock.recv(READ_SIZE)
        self.buf += data
        return bool(data)

    def read_head(self, limit: int, skip_crlf: bool = False) -> Optional[bytes]:
        """The request line and header through the blank line; None at a clean end of stream."""
        start = 0
        while True:
            if skip_crlf and self.buf:  # stray CR/LF before a request line
                del self.buf[: len(self.buf) - len(self.buf.lstrip(b"\r\n"))]
                skip_crlf = not self.buf
            m = _END_OF_HEADER.search(self.buf, start)
            if m is not None:
                if m.end() > limit:
                    raise TooLarge()
                head = bytes(self.buf[: m.end()])
                del self.buf[: m.end()]
                return head
            if len(self.buf) >= limit:
                raise TooLarge()
            start = max(0, len(self.buf) - 3)
            if not self.fill():
                if self.buf:
                    raise UnexpectedEOF()
                return None

    def readline(self, limit: int = 4096) -> bytes:
        start = 0
        while (i := self.buf.find(b"\n", start)) < 0:
            if len(self.buf) > limit:
                raise ValueError("http: line too long")
            start = len(self.buf)
            if not self.fill():
                raise UnexpectedEOF()
        line = bytes(self.buf[: i + 1])
        del self.buf[: i + 1]
        return line


class Input:
    """``wsgi.input``: the request body, by Content-Length (``length >= 0``) or chunked (-1)."""

    def __init__(self, conn: Any, length: int, expect_continue: bool = False):
        self._c, self.left, self.chunked = conn, max(length, 0), length < 0
        self.done, self.failed, self.expect = length == 0, False, expect_continue

    def _some(self, n: int, line: bool = False) -> bytes:
        if self.done:
            return b""
        r = self._c.reader
        try:
            if self.expect:  # the client waits for this before it sends the body
                self.expect = False
                self._c.send(b"HTTP/1.1 100 Continue\r\n\r\n")
            if self.chunked and self.left == 0:
                size = int(r.readline().split(b";", 1)[0].strip(), 16)
                if size <= 0:
                    while size == 0 and r.readline().strip():  # trailers
                        pass
                    if size < 0:
                        raise ValueError("negative chunk size")
                    self.done = True
                    return b""
                self.left = size
            if not r.buf and not r.fill():
                raise UnexpectedEOF()
            k = min(n, self.left, len(r.buf))
            if line and (i := r.buf.find(b"\n", 0, k)) >= 0:
                k = i + 1
            data = bytes(r.buf[:k])
            del r.buf[:k]
            self.left -= k
            if self.left == 0:
                if not self.chunked:
                    self.done = True
                elif r.readline().strip():
                    raise ValueError("missing chunk terminator")
            return data
        except (OSError, ValueError):
            self.failed = self.done = self._c.broken = True
            raise

    def read(self, size: Optional[int] = -1) -> bytes:
        if size is None or size < 0:
            return b"".join(iter(lambda: self._some(READ_SIZE), b""))
        out = bytearray()
        while len(out) < size and (b := self._some(size - len(out))):
            out += b
        return bytes(out)

    def readline(self, size: Optional[int] = -1) -> bytes:
        out = bytearray()
        while (size is None or size < 0 or len(out) < size) and not out.endswith(b"\n"):
            b = self._some(READ_SIZE if size is None or size < 0 else size - len(out), line=True)
            if not b:
                break
            out += b
        return bytes(out)

    def readlines(self, hint: int = -1) -> list[bytes]:
        return list(iter(self.readline, b""))

    def __iter__(self):
        return iter(self.readline, b"")

    def discard(self) -> bool:
        """Drop what is left if it is small (Go's rule); False means the connection must close."""
        if self.done:
            return not self.failed
        if self.expect or (not self.chunked and self.left >= MAX_POST_HANDLER_READ_BYTES):
            return False
        dropped = 0
        try:
            while dropped <= MAX_POST_HANDLER_READ_BYTES and (b := self._some(READ_SIZE)):
                dropped += len(b)
        except (OSError, ValueError):
            return False
        return self.done


class Request:
    """What ``read_request`` parsed; ``body`` is the ``wsgi.input``."""

    __slots__ = ("method", "uri", "proto", "is11", "headers", "body", "wants_close", "wants10ka")


def read_request(conn: Any, max_header_bytes: int, after_post: bool = False) -> Optional[Request]:
    """Go's ``readRequest``: None at a clean end of stream; raises TooLarge, BadRequest, OSError."""
    head = conn.reader.read_head(max_header_bytes + 4096, skip_crlf=after_post)
    if head is None:
        return None
    lines = head.decode("latin-1").split("\n")
    method, _, rest = lines[0].rstrip("\r").partition(" ")
    uri, sep, proto = rest.partition(" ")
    version = (1, 1) if proto == "HTTP/1.1" else (1, 0) if proto == "HTTP/1.0" else None
    if version is None and (m := _VERSION.match(proto)):
        version = (int(m.group(1)), int(m.group(2)))
    if not sep or not uri or not _TOKEN.match(method) or version is None:
        raise BadRequest()
    if version[0] != 1:
        raise BadRequest(505, "HTTP Version Not Supported", "unsupported protocol version")
    req = Request()
    req.method, req.uri, req.proto, req.is11 = method, uri, proto, version >= (1, 1)
    req.headers, fields = [], {}
    for line in lines[1:]:
        line = line.rstrip("\r")
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon or not _TOKEN.match(name):
            raise BadRequest()  # this includes obsolete line folding
        value = value.strip(" \t")
        req.headers.append((name, value))
        fields.setdefault(name.lower(), []).append(value)
    hosts = fields.get("host", [])
    if req.is11 and not hosts and method != "CONNECT":
        raise BadRequest(why="missing required Host header")
    if len(hosts) > 1:
        raise BadRequest(why="too many Host headers")
    tokens = {t.strip().lower() for v in fields.get("connection", []) for t in v.split(",")}
    req.wants10ka = not req.is11 and "keep-alive" in tokens
    req.wants_close = "close" in tokens or (not req.is11 and not req.wants10ka)
    te = fields.get("transfer-encoding") if req.is11 else None  # HTTP/1.0 has no chunking
    if te is not None:
        if len(te) != 1 or te[0].lower() != "chunked":
            raise BadRequest(501, "Not Implemented", body="Unsupported transfer encoding")
        length = -1
    else:
        cls = {v.strip() for v in fields.get("content-length", [])}
        if len(cls) > 1 or (cls and not _digits(next(iter(cls)))):
            raise BadRequest()
        length = int(cls.pop()) if cls else 0
    expect = fields.get("expect", [""])[0].lower()
    req.body = Input(conn, length, expect_continue=expect == "100-continue" and req.is11 and length != 0)
    return req


def _digits(s: str) -> bool:
    return s.isascii() and s.isdigit()


def environ(conn: Any, req: Request) -> dict:
    """The WSGI environ of ``req`` (PEP 3333; header names with ``_`` dropped, as werkzeug does)."""
    path, _, query = req.uri.partition("?")
    env = {
        "REQUEST_METHOD": req.method, "SCRIPT_NAME": "", "QUERY_STRING": query,
        "REQUEST_URI": req.uri, "RAW_URI": req.uri, "SERVER_PROTOCOL": req.proto,
        "REMOTE_ADDR": conn.remote[0], "REMOTE_PORT": conn.remote[1],
        "SERVER_NAME": conn.local[0], "SERVER_PORT": str(conn.local[1]),
        "wsgi.version": (1, 0), "wsgi.url_scheme": "https" if conn.tls else "http",
        "wsgi.input": req.body, "wsgi.errors": sys.stderr, "wsgi.input_terminated": True,
        "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
        CONN_ID_KEY: conn.id,
    }
    for name, value in req.headers:
        if "_" in name:
            continue  # it would pass for a dash: a way to smuggle a header past a proxy
        key = name.upper().replace("-", "_")
        if key == "CONTENT_LENGTH" and req.body.chunked:
            continue
        if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            key = "HTTP_" + key
            if key in env:
                value = env[key] + "," + value
        env[key] = value
    if "://" in path:  # absolute form: the URL's host wins (RFC 7230 section 5.4)
        url = urlsplit(req.uri)
        path, env["QUERY_STRING"], env["HTTP_HOST"] = url.path, url.query, url.netloc
    env["PATH_INFO"] = unquote_to_bytes(path).decode("latin-1")
    return env


_date_cache: list = [0, ""]


def _http_date() -> str:
    now = int(rt.wall())
    if _date_cache[0] != now:
        _date_cache[:] = [now, formatdate(now, usegmt=True)]
    return _date_cache[1]


class Response:
    """The app's response to ``req`` on ``conn`` (Go's response and chunkWriter, for WSGI)."""

    def __init__(self, conn: Any, req: Request, keep_alives: Callable[[], bool], logf: Callable[..., None]):
        self.c, self.req, self.keep_alives, self.logf = conn, req, keep_alives, logf
        self.status: Optional[str] = None
        self.headers: list = []
        self.wrote_header = self.chunking = self.limit_hit = self.close_after = False
        self.content_length, self.written, self.body_ok = -1, 0, True

    def start_response(self, status: str, headers: list, exc_info: Any = None) -> Callable[[bytes], None]:
        if exc_info:
            try:
                if self.wrote_header:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        elif self.status is not None:
            raise AssertionError("Headers already set")
        self.status, self.headers = status, headers
        return self.write

    def write(self, data: bytes) -> None:
        self.emit(data, None, False)

    def send_body(self, body: Any) -> None:
        """Send the app's iterable; headers go with the first chunk, or an empty one (Go's Flush)."""
        known = sum(map(len, body)) if isinstance(body, (list, tuple)) else None
        for chunk in body:
            if chunk:
                self.emit(chunk, known, False)
            elif not self.wrote_header and known is None and self.status is not None:
                # an empty chunk before any body flushes the header, as Go's Flush does: a
                # watch with nothing to report yet still answers its client at once
                self.emit(b"", None, False)
        self.emit(b"", self.written if known is None else known, True)

    def internal_error(self) -> None:
        """A 500 in place of a response the app failed to start (werkzeug's habit, not Go's)."""
        body = b"Internal Server Error\n"
        self.status, self.headers = "500 Internal Server Error", [
            ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body))), ("Connection", "close")]
        self.emit(body, None, True)

    def emit(self, data: bytes, known: Optional[int], final: bool) -> None:
        if self.c.broken:
            raise ConnectionAbortedError("http: connection already failed")
        parts = []
        if not self.wrote_header:
            if self.status is None:
                raise AssertionError("write() before start_response")
            parts.append(self._header(known))
        if data and self.body_ok:
            if 0 <= self.content_length < self.written + len(data):
                data = data[: self.content_length - self.written]  # Go refuses the extra bytes
                self.close_after = True
            self.written += len(data)
            if self.chunking:
                parts += [b"%x\r\n" % len(data), data, b"\r\n"]
            elif data:
                parts.append(data)
        if final and self.chunking:
            parts.append(b"0\r\n\r\n")
        if parts:
            self.c.send(b"".join(parts))

    def _header(self, known: Optional[int]) -> bytes:
        """Finalize and encode the header, deciding keep-alive as Go's writeHeader does."""
        self.wrote_header = True
        req, keep_alives = self.req, self.keep_alives()
        code = int(str(self.status).split(" ", 1)[0])
        is_head = req.method == "HEAD"
        allowed = not (100 <= code < 200 or code in (204, 304))
        self.body_ok = allowed and not is_head
        out, connection, cl, te, has_date = [], None, None, None, False
        for k, v in self.headers:
            lk = k.lower()
            if lk == "connection":
                connection = v
            elif lk == "content-length":
                cl = v.strip()
            elif lk == "transfer-encoding":
                te = v.strip().lower()
            else:
                has_date = has_date or lk == "date"
                out.append(f"{k}: {v}\r\n")
        if cl is not None and not _digits(cl):
            self.logf("http: invalid Content-Length of %r", cl)
        elif cl is not None:
            self.content_length = int(cl)
        elif known is not None and not te and allowed and (not is_head or known > 0):
            self.content_length = known  # the whole body is at hand: say how long it is
        if te is not None and te != "identity" and self.content_length >= 0:
            self.logf("http: WriteHeader called with both Transfer-Encoding of %r and a Content-Length of %d", te, self.content_length)
            self.content_length = -1
        if not allowed:
            self.content_length, te = -1, None
        has_cl = self.content_length >= 0
        close = False
        if req.wants10ka and (is_head or has_cl or not allowed):
            connection = "keep-alive" if connection is None else connection
        elif not req.is11 or req.wants_close:
            close = True
        if connection == "close" or not keep_alives:
            close = True
        if not close and not req.body.discard():
            close = True
            if not req.body.done and not req.body.expect:  # too much left unread
                self.limit_hit, connection = True, "close"
        if is_head or not allowed or code == 204 or has_cl:
            te = None
        elif req.is11 and te != "identity":
            self.chunking, te = True, "chunked"
        else:
            close, te = True, te if req.is11 else None
        if not has_date:
            out.append(f"Date: {_http_date()}\r\n")
        if has_cl:
            out.append(f"Content-Length: {self.content_length}\r\n")
        if close and (not keep_alives or connection is None or "close" not in connection.lower()):
            connection = "close" if req.is11 else None
        if connection is not None:
            out.append(f"Connection: {connection}\r\n")
        if te is not None:
            out.append(f"Transfer-Encoding: {te}\r\n")
        self.close_after = close
        return (("HTTP/1.1 " if req.is11 else "HTTP/1.0 ") + str(self.status) + "\r\n" + "".join(out) + "\r\n").encode("latin-1")

    def should_reuse(self) -> bool:
        """Go's shouldReuseConnection, asked once the response is complete."""
        if self.close_after or self.c.broken or not self.req.body.done or self.req.body.failed:
            return False
        return not (self.body_ok and self.content_length >= 0 and self.written != self.content_length)

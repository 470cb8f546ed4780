"""Port of Go's net/http package (server.go ``response`` and ``chunkWriter``, header.go, status.go, Go 1.26.8): writing a response.

A WSGI app's ``start_response(status, headers)`` and body become the bytes Go's server would
send for the same handler, decided where Go decides them (``chunkWriter.writeHeader``):

* the status line is ``HTTP/1.1 <code> <Go's StatusText>`` (``HTTP/1.0`` to a 1.0 request);
  the app's reason phrase is not sent, so it cannot carry bytes into the status line;
* header lines go out sorted by their canonical name (``Header.writeSubset``): a name that is
  not a token is dropped, CR and LF in a value become spaces and the value is trimmed, so an
  app that copies request input into a header cannot split the response;
* ``Content-Length`` is the app's if it is a valid number (else it is dropped and logged), or
  the body's own length when the whole body is at hand (a list or tuple, also under the filters'
  ``on_close`` wrappers, as Go knows it when a handler returns having written less than its
  buffer); otherwise HTTP/1.1 is chunked and
  HTTP/1.0 ends with the connection; 1xx, 204 and 304 have no body and no framing headers
  (304 no ``Content-Type`` either); a HEAD answer's body is counted, never sent;
* ``Connection: close`` when the request asked for it or was HTTP/1.0 without keep-alive, when
  the app said so, when keep-alives are off (the server is shutting down), when a 100-continue
  body was never read, or when 256 KiB or more of the request body is left unread (a smaller
  rest is read and dropped first); a ``Date`` header when the app gave none;
* body writes past the ``Content-Length`` are refused (Go's ``ErrContentLength``) and the
  connection is closed after the answer.

A streamed body's chunks go out as they come (PEP 3333); what completes the answer (the header
and body of an answer that is all at hand, or the last chunk) is held until
:meth:`Response.finish_request`, which the server calls after closing the iterable, as Go's
``finishRequest`` writes its buffer only after the handler returned: the filters' releases come
before the header is written (and so before an unread request body is read to its end) and
before the client sees its answer. ``should_reuse_connection`` is asked once the response is
complete (Go's ``shouldReuseConnection``).

Four Go files in one module: header.go writes the response's header lines and status.go its status
texts, for server.go's writer alone.
"""

from __future__ import annotations

from email.utils import formatdate
from typing import Any, Callable, Optional

from genericserver import runtime as rt
from genericserver.net.http.request import MAX_POST_HANDLER_READ_BYTES, Request, has_token
from genericserver.net.textproto.reader import canonical_mime_header_key, go_quote
from genericserver.wsgi import known_chunks
from genericserver.x.net.http.httpguts import httplex as httpguts

STATUS_TEXT = {
    100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
    200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
    205: "Reset Content", 206: "Partial Content", 207: "Multi-Status", 208: "Already Reported", 226: "IM Used",
    300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
    305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
    400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required",
    408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed",
    413: "Request Entity Too Large", 414: "Request URI Too Long", 415: "Unsupported Media Type",
    416: "Requested Range Not Satisfiable", 417: "Expectation Failed", 418: "I'm a teapot",
    421: "Misdirected Request", 422: "Unprocessable Entity", 423: "Locked", 424: "Failed Dependency",
    425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
    431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
    500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
    504: "Gateway Timeout", 505: "HTTP Version Not Supported", 506: "Variant Also Negotiates",
    507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
}


def status_line(is11: bool, code: int) -> str:
    """Go's ``writeStatusLine``."""
    text = STATUS_TEXT.get(code)
    reason = f"{code} {text}" if text else f"{code:03d} status code {code}"
    return ("HTTP/1.1 " if is11 else "HTTP/1.0 ") + reason + "\r\n"


def body_allowed_for_status(status: int) -> bool:
    return not (100 <= status <= 199 or status in (204, 304))


def suppressed_headers(status: int) -> tuple[str, ...]:
    if status == 304:
        return ("Content-Type", "Content-Length", "Transfer-Encoding")
    if not body_allowed_for_status(status):
        return ("Content-Length", "Transfer-Encoding")
    return ()


def write_subset(header: dict[str, list[str]], exclude: set[str]) -> str:
    """Go's ``Header.writeSubset``: sorted, invalid names dropped, CR/LF in values as spaces."""
    out = []
    for key in sorted(header):
        if key in exclude or not httpguts.valid_header_field_name(key):
            continue
        for v in header[key]:
            if "\r" in v or "\n" in v:  # Go's headerNewlineToSpace (rare: a test is cheaper than translate)
                v = v.replace("\r", " ").replace("\n", " ")
            out.append(f"{key}: {v.strip(_TRIMMED)}\r\n")
    return "".join(out)


# Go's bufferBeforeChunkingSize: what a handler writes is buffered this far; a response whose
# whole body fit when the handler returned gets a Content-Length, a longer one is chunked
BUFFER_BEFORE_CHUNKING_SIZE = 2048
_TRIMMED = " \t\n\r"  # textproto.TrimString's ASCII whitespace


def _status_code(status: Any) -> int:
    """The code of a WSGI status line (``"200 OK"`` -> 200); Go panics on a code outside 100-999."""
    known = _STATUS_CODES.get(status)
    if known is not None:
        return known
    code = str(status)[:3]
    if not (code.isascii() and code.isdigit()) or not 100 <= int(code) <= 999 or str(status)[3:4] not in ("", " "):
        raise ValueError(f"invalid WriteHeader code {status!r}")
    if len(_STATUS_CODES) < _STATUS_CODES_MAX and isinstance(status, str):
        _STATUS_CODES[status] = int(code)
    return int(code)


# status lines already read, as apps answer with the same few (bounded: an app may invent reasons)
_STATUS_CODES: dict[str, int] = {}
_STATUS_CODES_MAX = 256


_date_cache: list = [0, ""]


def http_date() -> str:
    now = int(rt.wall())
    if _date_cache[0] != now:
        _date_cache[:] = [now, formatdate(now, usegmt=True)]
    return _date_cache[1]


class Response:
    """The app's response to ``req`` on ``conn`` (Go's ``response`` and ``chunkWriter``, for WSGI)."""

    def __init__(self, conn: Any, req: Request, keep_alives: Callable[[], bool], logf: Callable[..., None]):
        self.c, self.req, self.keep_alives, self.logf = conn, req, keep_alives, logf
        self.status: Optional[int] = None
        self.header: dict[str, list[str]] = {}
        self.wrote_header = self.chunking = self.close_after_reply = self.request_body_limit_hit = False
        self.content_length, self.written = -1, 0
        self.wants10_keep_alive, self.wants_close = req.wants_http10_keep_alive(), req.wants_close()
        self.expect_continue = self.can_write_continue = False
        # called just before the write that completes the response (the server stops watching
        # the connection then, so a keep-alive client's next request does not wake the watcher)
        self.before_last_write: Optional[Callable[[], None]] = None
        # the end of the answer, until finish_request writes it: the body when the app's whole
        # output is at hand (a list), else None; set once the app's iterable is exhausted
        self._held: Optional[tuple[Optional[bytes]]] = None
        # the app's Content-Length was not a number: it is not sent, yet, as in Go (whose header
        # snapshot still holds it), the response gets no Content-Length of the server's either
        self.invalid_content_length = False

    # -- the WSGI side ----------------------------------------------------------------------
    def start_response(self, status: str, headers: list, exc_info: Any = None) -> Callable[[bytes], None]:
        if exc_info:
            try:
                if self.wrote_header:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        elif self.status is not None:
            raise AssertionError("Headers already set")
        self.status, self.header = _status_code(status), {}
        for name, value in headers:
            self.header.setdefault(canonical_mime_header_key(name), []).append(value)
        cl = self._get("Content-Length")
        if cl:
            if cl.isascii() and cl.isdigit():
                self.content_length = int(cl)
            else:
                self.logf("http: invalid Content-Length of %s", _quote(cl))
                del self.header["Content-Length"]
                self.invalid_content_length = True
        return self.write

    def write(self, data: bytes) -> None:
        self.emit(data, None)

    def send_body(self, body: Any) -> None:
        """Send the app's iterable; the header goes with the first chunk, or with an empty one
        (Go's ``Flush``: a watch with nothing to report yet still answers its client at once).

        What completes the answer is held, not written: :meth:`finish_request` writes it once the
        server has closed the iterable. A body whose chunks are all at hand (a list or tuple,
        alone or under ``on_close`` wrappers) is the handler's whole output, still in Go's buffer
        when its handler returns: the header has not gone out, and its writing (which reads and
        drops a small unread request body, and so may wait for a slow client) waits for
        :meth:`finish_request` too."""
        chunks = known_chunks(body)
        if chunks is not None:
            self._held = (b"".join(chunks),)
            return
        for chunk in body:
            if chunk:
                self.emit(chunk, None)
            elif not self.wrote_header and self.status is not None:
                self.emit(b"", None)
        self._held = (None,)

    def finish_request(self) -> None:
        """Go's ``finishRequest``: write the held end of the answer (the header too, if not yet).

        Go writes a handler's last bytes from its buffer only after the handler returned, its
        deferred calls included, and after the request's context was cancelled. A WSGI app's
        "return" is its iterable's ``close``, so the server calls this after it: the filters'
        releases (a wait-group slot, an in-flight slot) are done before the header is written,
        before an unread request body is read to its end (a client that stalls it holds the
        connection, as in Go, not the wait group), and before the client can see its answer and
        send the next request. A whole body gets a length if it fits Go's 2 KiB response buffer;
        a longer one overflowed the buffer before Go's handler returned, so it goes out without
        one (chunked on HTTP/1.1)."""
        held, self._held = self._held, None
        if held is None or self.c.broken:
            return  # the app failed, or the connection did: nothing more goes out
        data = held[0]
        if data is None:
            out = self._end()
        else:
            whole = data if len(data) <= BUFFER_BEFORE_CHUNKING_SIZE else None
            out = (self._write(data, whole) if data else b"") + self._end(b"" if not self.wrote_header else None)
        hook, self.before_last_write = self.before_last_write, None
        if hook is not None:
            hook()
        if out:
            self.c.send(out)

    def abandon_held(self) -> None:
        """Drop the held end of the answer: the app panicked, so ``finish_request`` writes none of it."""
        self._held = None

    def write_continue(self) -> None:
        """Before the first body read: tell an ``Expect: 100-continue`` client to send it."""
        if self.can_write_continue:
            self.can_write_continue = False
            self.c.send(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _get(self, key: str) -> str:
        values = self.header.get(key)
        return values[0] if values else ""

    # -- Go's write path --------------------------------------------------------------------
    def emit(self, data: bytes, whole: Optional[bytes]) -> None:
        """Go's ``response.write``, sent at once: ``whole`` is the complete body when the app has finished."""
        out = self._write(data, whole)
        if out:
            self.c.send(out)

    def finish(self, whole: Optional[bytes] = None) -> None:
        """The end of the answer (``finishRequest``), sent at once."""
        out = self._end(whole)
        if out:
            self.c.send(out)

    def _write(self, data: bytes, whole: Optional[bytes]) -> bytes:
        """The bytes Go's ``response.write`` puts on the wire for ``data``: the header first if not yet."""
        if self.c.broken:
            raise ConnectionAbortedError("http: connection already failed")
        if self.status is None:
            raise AssertionError("write() before start_response")
        self.can_write_continue = False
        parts = []
        if not self.wrote_header:
            parts.append(self._write_header(whole))
        if data and body_allowed_for_status(self.status):
            self.written += len(data)
            if self.content_length != -1 and self.written > self.content_length:
                self.close_after_reply = True  # Go's ErrContentLength: the write is refused
            elif self.req.method != "HEAD":
                parts += [b"%x\r\n" % len(data), data, b"\r\n"] if self.chunking else [data]
        return b"".join(parts)

    def _end(self, whole: Optional[bytes] = None) -> bytes:
        """Go's ``finishRequest`` and ``chunkWriter.close``: the header if not yet, the last chunk."""
        if self.status is None:
            raise AssertionError("the app returned without calling start_response")
        parts = [] if self.wrote_header else [self._write_header(whole)]
        if self.chunking:
            parts.append(b"0\r\n\r\n")
        return b"".join(parts)

    def internal_error(self) -> None:
        """A 500 in place of a response the app failed to start (werkzeug's habit, not Go's)."""
        self.status, self.header = 500, {"Content-Type": ["text/plain; charset=utf-8"], "Connection": ["close"]}
        self.content_length = -1
        self.emit(b"Internal Server Error\n", b"Internal Server Error\n")
        self.finish()

    def _write_header(self, p: Optional[bytes]) -> bytes:
        """Go's ``chunkWriter.writeHeader``; ``p`` is the whole body when the app is done."""
        self.wrote_header = True
        req, header, code = self.req, self.header, self.status
        keep_alives = self.keep_alives()
        is_head = req.method == "HEAD"
        body_allowed = body_allowed_for_status(code)
        is11 = req.proto_at_least(1, 1)
        exclude: set[str] = set()
        extra: dict[str, str] = {}
        te = self._get("Transfer-Encoding")
        connection = self._get("Connection")
        has_cl_header = "Content-Length" in header or self.invalid_content_length
        if p is not None and not te and body_allowed and not has_cl_header and (not is_head or p):
            self.content_length = len(p)  # the app is done: say how long its body is
            extra["Content-Length"] = str(len(p))
        if self.wants10_keep_alive and keep_alives and self._get("Content-Length") and connection == "keep-alive":
            self.close_after_reply = False
        has_cl = self.content_length != -1
        if self.wants10_keep_alive and (is_head or has_cl or not body_allowed):
            if "Connection" not in header:
                extra["Connection"] = "keep-alive"
        elif not is11 or self.wants_close:
            self.close_after_reply = True
        if connection == "close" or not keep_alives:
            self.close_after_reply = True
        if self.expect_continue and req.body.body_remains():
            self.close_after_reply = True  # the client may still be waiting to send it
        if req.content_length != 0 and not self.close_after_reply:
            self._discard_small_unread_body(exclude, extra)
        for k in suppressed_headers(code):
            if k in header:
                exclude.add(k)
        if "Date" not in header:
            extra["Date"] = http_date()
        if has_cl and te and te != "identity":
            self.logf("http: WriteHeader called with both Transfer-Encoding of %s and a Content-Length of %d",
                      _quote(te), self.content_length)
            exclude.add("Content-Length")
            has_cl = False
        if is_head or not body_allowed or code == 204 or has_cl:
            exclude.add("Transfer-Encoding")
        elif is11:
            if te == "identity":
                self.chunking, self.close_after_reply = False, True
                exclude.add("Transfer-Encoding")
            else:
                self.chunking = True
                extra["Transfer-Encoding"] = "chunked"
                if te == "chunked":
                    exclude.add("Transfer-Encoding")
        else:
            self.close_after_reply = True
            exclude.add("Transfer-Encoding")
        if self.chunking:
            exclude.add("Content-Length")
        if self.close_after_reply and (not keep_alives or not has_token(connection, "close")) and code != 101:
            exclude.add("Connection")
            if is11:
                extra["Connection"] = "close"
        lines = [status_line(is11, code), write_subset(header, exclude)]
        for key in ("Date", "Content-Length", "Connection", "Transfer-Encoding"):  # Go's extraHeader order
            if key in extra:
                lines.append(f"{key}: {extra[key]}\r\n")
        lines.append("\r\n")
        return "".join(lines).encode("latin-1", "replace")

    def _discard_small_unread_body(self, exclude: set[str], extra: dict[str, str]) -> None:
        """Drop a request body the app left unread if it is small; if it is big, close after:
        Go 1.26 reads at most 256 KiB and a byte, and a body that goes on past them is too big."""
        body = self.req.body
        too_big = False
        if body.closed:
            if not body.saw_eof:
                self.close_after_reply = True
        elif body.unread_data_size() >= MAX_POST_HANDLER_READ_BYTES:
            too_big = True
        else:
            _, err = body.discard(MAX_POST_HANDLER_READ_BYTES + 1)
            if err is None:
                too_big = True  # there is even more
            elif isinstance(err, EOFError):
                body.close()
            else:  # a read that failed (a timeout, a bad chunk): the rest is no request to read
                self.close_after_reply = True
        if too_big:
            self.request_body_limit_hit = True  # Go's requestTooLarge
            self.close_after_reply = True
            exclude.add("Connection")
            extra["Connection"] = "close"

    def should_reuse_connection(self) -> bool:
        """Go's ``shouldReuseConnection``, asked once the response is complete."""
        if self.close_after_reply or self.c.broken:
            return False
        if (self.req.method != "HEAD" and self.content_length != -1 and body_allowed_for_status(self.status or 200)
                and self.content_length != self.written):
            return False
        return not self.req.body.early_close



def _quote(s: str) -> str:
    return go_quote(s.encode("latin-1", "replace"))

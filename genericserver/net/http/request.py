"""Port of Go's net/http package (request.go ``readRequest``, transfer.go ``readTransfer`` and ``body``, http.go ``hasToken``, Go 1.26.8): reading one HTTP/1.x request.

:mod:`genericserver.net.http.server` (server.go) reads each request with :func:`read_request`, checks
it as Go's ``conn.readRequest`` does, and hands the app :func:`environ` with the request body as
``wsgi.input`` (:class:`Body`); :mod:`genericserver.net.http.response` writes the answer. Go's rules,
function by function:

* ``readRequest``: the request line is ``METHOD SP TARGET SP VERSION`` (:func:`parse_request_line`;
  an HTTP/0.9 ``GET /`` has no version and is refused at once); the method is a token; the version
  is ``HTTP/d.d`` (:func:`parse_http_version`); the target passes ``url.ParseRequestURI``
  (:mod:`genericserver.net.url.url`); the header is read line by line by :mod:`genericserver.net.textproto.reader`
  (obsolete folding joined, control bytes in values refused; no limit on the number of lines,
  only the server's 1 MiB on the header's bytes);
  a second ``Host`` is refused; ``Pragma: no-cache`` adds ``Cache-Control: no-cache``.
* ``readTransfer``: ``Transfer-Encoding`` is honoured on HTTP/1.1 only, once, and only as
  ``chunked`` (else 501); ``Content-Length`` must be plain digits, repeated only with the same
  value, and is dropped when the body is chunked (``fixLength``); a request with neither has no
  body; ``Trailer`` names are checked (``fixTrailer``).
* the body (:class:`Body`, Go's ``body``): read by length or by :mod:`genericserver.net.http.internal.chunked`; the
  trailer after the last chunk must end within bufio's buffer and is read with the header's
  rules (``readTrailer``); after the handler, less than 256 KiB of unread body is dropped so the
  connection can be reused (``Close`` with ``doEarlyClose``).

Errors carry Go's texts; :mod:`genericserver.net.http.server` turns them into Go's canned answers
(``400 Bad Request``, ``431``, ``501``, ``505``).

Deliberate differences from Go 1.26.8. The parity corpus (tests/parity/, recorded from a real Go
server) finds no other; the cases that show one are named, and :data:`KNOWN_DIFFERENCES` holds
the same list for the replay:

=======================================  ======================  ==================================================
what                                     parity case             why (all are safe: nothing smuggled or split)
=======================================  ======================  ==================================================
header names holding ``_`` are not in    name-underscore         the WSGI environ spells ``-`` as ``_``: ``X_Foo``
the environ                                                      would pass for ``X-Foo`` past a proxy that filtered
                                                                 the latter (werkzeug and gunicorn drop them too);
                                                                 the request is still served
no ``Content-Type`` sniffing             sniff-content-type      the app's headers are sent as given (Go's
                                                                 ``DetectContentType`` fills a missing type)
an h2c preface's length reads 0, not     pri-preface             a WSGI environ has no "length unknown" without
-1                                                               chunking; the body is empty either way
repeated headers reach the app joined    (the replay joins)      a WSGI environ holds one string per header
by ``,``                                                         (PEP 3333); Go hands the handler the list
trailers are read and checked but not    (the replay skips)      WSGI has no place for them; the framing and
shown to the app                                                 checks are Go's
a body error escaping the app is         (no Go counterpart)     a Go handler cannot leak a read error; werkzeug
answered 400 (nothing sent yet) or the                           and other WSGI servers blame the client too; the
connection dropped                                               connection closes either way, as in Go
the reason phrase is Go's                (the replay agrees)     Go's handlers cannot set one; a WSGI status string
``StatusText``                                                   could carry bytes into the status line
a body iterable's chunks are sent as     (not observable)        PEP 3333 asks for each chunk to be sent at once;
they come                                                        Go buffers up to 2 KiB. A body all at hand (a
                                                                 list) follows Go's buffer rule: a length if it
                                                                 fits 2 KiB, chunked if not; it and the end of the
                                                                 answer go out after the iterable is closed, as
                                                                 Go's ``finishRequest``
=======================================  ======================  ==================================================

What Go 1.27 changes, what the next kube will do (the corpus is recorded from 1.26.8, the Go
kube-apiserver v1.36.0 is built with, and from 1.27.3, whose six different answers are
``version_differences`` in tests/parity/go-answers.json): 1.27 adds ``MaxHeaderValueCount``, 500
header lines (then 431) and 500 ``Trailer`` names (a 431, or a body error for more trailer
lines), where 1.26 has only the 1 MiB byte limit; a successful ``CONNECT`` answer carries no
framing headers and every ``CONNECT`` ends its connection, where 1.26 keeps both; and ``Close``
after the handler reads an unread rest of exactly 256 KiB to its end (1.26 reads 256 KiB and
gives up). This server follows 1.26.8; walkthrough 10.2 lists the changes as the next kube's.

Three Go files in one module: transfer.go reads the body of the request request.go reads, and
http.go's ``hasToken`` reads its ``Connection`` and ``Expect`` headers.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from genericserver.bufio import bufio
from genericserver.net.http.internal import chunked
from genericserver.net.textproto import reader as textproto
from genericserver.net.url import url as neturl
from genericserver.x.net.http.httpguts import httplex as httpguts

CONN_ID_KEY = "genericserver.net.http.server.conn_id"  # environ: the server-side connection id
MAX_POST_HANDLER_READ_BYTES = 256 << 10  # unread body Go still drops to keep a connection
READ_SIZE = 64 << 10

# parity case id -> why this server answers it differently from Go on purpose (the table above)
KNOWN_DIFFERENCES: dict[str, str] = {
    "name-underscore": (
        "WSGI (CGI) spells header names with '_' for '-', so X_Forwarded_For would pass for "
        "X-Forwarded-For; names with '_' are dropped from the environ, as werkzeug and gunicorn do"
    ),
    "sniff-content-type": (
        "no Content-Type sniffing: a WSGI app names its content type, where Go sniffs the first "
        "512 bytes of a response that has none"
    ),
    "pri-preface": (
        "Go gives an h2c preface a ContentLength of -1; a WSGI environ can only leave the length "
        "out, which reads as 0; the body is empty either way"
    ),
}


class TooLarge(Exception):
    """Go's ``errTooLarge``: 431 Request Header Fields Too Large."""


class UnsupportedTE(Exception):
    """Go's ``unsupportedTEError``: 501 Not Implemented, "Unsupported transfer encoding"."""


class BadRequest(ValueError):
    """A request Go refuses with ``400 Bad Request`` (its reason is only logged, not sent)."""


class StatusError(Exception):
    """Go's ``statusError``: a canned answer that names its reason (``400 Bad Request: <text>``)."""

    def __init__(self, code: int, text: str):
        super().__init__(text)
        self.code, self.text = code, text


class BodyError(OSError):
    """Reading the request body failed; the message is Go's (``unexpected EOF``, a chunked error).
    ``partial`` holds the bytes a ``read(n)`` got before the failure (Go returns them with it)."""

    partial = b""


def parse_request_line(line: str) -> Optional[tuple[str, str, str]]:
    """Go's ``parseRequestLine``: split at the first two spaces; None without two."""
    method, sp1, rest = line.partition(" ")
    uri, sp2, proto = rest.partition(" ")
    if not sp1 or not sp2:
        return None
    return method, uri, proto


def parse_http_version(vers: str) -> Optional[tuple[int, int]]:
    """Go's ``ParseHTTPVersion``: ``HTTP/1.1`` and ``HTTP/1.0``, or exactly ``HTTP/d.d``."""
    if vers == "HTTP/1.1":
        return 1, 1
    if vers == "HTTP/1.0":
        return 1, 0
    if not vers.startswith("HTTP/") or len(vers) != len("HTTP/X.Y") or vers[6] != ".":
        return None
    if not (vers[5].isascii() and vers[5].isdigit() and vers[7].isascii() and vers[7].isdigit()):
        return None
    return int(vers[5]), int(vers[7])


def valid_method(method: str) -> bool:
    return httpguts.valid_header_field_name(method)


def _go_quote(s: str) -> str:
    return textproto.go_quote(s.encode("latin-1"))


class Request:
    """What :func:`read_request` parsed (the fields of Go's ``Request`` the server uses)."""

    __slots__ = ("method", "request_uri", "url", "proto", "proto_major", "proto_minor", "header", "host",
                 "close", "content_length", "chunked", "trailer", "body", "header_checked")

    def proto_at_least(self, major: int, minor: int) -> bool:
        return (self.proto_major, self.proto_minor) >= (major, minor)

    def get(self, key: str) -> str:
        """``Header.get``: the first value of a canonical key, or ""."""
        values = self.header.get(key)
        return values[0] if values else ""

    def wants_http10_keep_alive(self) -> bool:
        return (self.proto_major, self.proto_minor) == (1, 0) and has_token(self.get("Connection"), "keep-alive")

    def wants_close(self) -> bool:
        return self.close or has_token(self.get("Connection"), "close")

    def expects_continue(self) -> bool:
        return has_token(self.get("Expect"), "100-continue")


def has_token(v: str, token: str) -> bool:
    """Go's ``hasToken``: ``token`` (lower case) appears in ``v`` between space, comma or tab."""
    if not token or len(token) > len(v):
        return False
    lv = v.lower()
    start = lv.find(token)
    while start >= 0:
        end = start + len(token)
        if (start == 0 or v[start - 1] in " ,\t") and (end == len(v) or v[end] in " ,\t"):
            return True
        start = lv.find(token, start + 1)
    return False


def read_request(b: bufio.Reader) -> Request:
    """Go's ``readRequest``. Raises EOFError when the stream ends before a request line,
    :class:`textproto.UnexpectedEOF` when it ends inside one, :class:`BadRequest`,
    :class:`TooLarge`, :class:`UnsupportedTE`, or a source's ``OSError``."""
    tp = textproto.Reader(b)
    line = tp.read_line()  # EOFError: a clean end of the connection
    try:
        parts = parse_request_line(line)
        if parts is None:
            raise BadRequest(f"malformed HTTP request {_go_quote(line)}")
        req = Request()
        req.method, req.request_uri, req.proto = parts
        if not valid_method(req.method):
            raise BadRequest(f"invalid method {_go_quote(req.method)}")
        version = parse_http_version(req.proto)
        if version is None:
            raise BadRequest(f"malformed HTTP version {_go_quote(req.proto)}")
        req.proto_major, req.proto_minor = version
        # CONNECT's target is an authority (host:port), not a URL: parse it as one
        raw = req.request_uri
        just_authority = req.method == "CONNECT" and not raw.startswith("/")
        try:
            req.url = neturl.parse_request_uri("http://" + raw if just_authority else raw)
        except neturl.URLError as err:
            raise BadRequest(str(err)) from None
        if just_authority:
            req.url.scheme = ""
        try:
            req.header = tp.read_mime_header()
            req.header_checked = tp.checked  # every name a token, no control byte in a value
        except textproto.MessageTooLarge:
            raise TooLarge() from None
        except textproto.ProtocolError as err:
            raise BadRequest(str(err)) from None
        if len(req.header.get("Host", ())) > 1:
            raise BadRequest("too many Host headers")
        req.host = req.url.host or req.get("Host")
        if req.header.get("Pragma") == ["no-cache"] and "Cache-Control" not in req.header:
            req.header["Cache-Control"] = ["no-cache"]  # fixPragmaCacheControl
        req.close = should_close(req.proto_major, req.proto_minor, req.header)
        read_transfer(req, b)
        if req.method == "PRI" and not req.header and req.url.path == "*" and req.proto == "HTTP/2.0":
            req.content_length, req.close = -1, True  # an h2c preface: the handler may hijack it
        return req
    except EOFError:
        raise textproto.UnexpectedEOF("unexpected EOF") from None


def should_close(major: int, minor: int, header: dict[str, list[str]]) -> bool:
    """Go's ``shouldClose`` for a request: HTTP/1.0 closes unless it asked for keep-alive."""
    if major < 1:
        return True
    conv = header.get("Connection", [])
    has_close = httpguts.header_values_contain_token(conv, "close")
    if (major, minor) == (1, 0):
        return has_close or not httpguts.header_values_contain_token(conv, "keep-alive")
    return has_close


def parse_transfer_encoding(req: Request) -> None:
    """Go's ``parseTransferEncoding``: sets ``req.chunked``; only one ``chunked`` on HTTP/1.1."""
    req.chunked = False
    raw = req.header.pop("Transfer-Encoding", None)
    if raw is None or not req.proto_at_least(1, 1):  # HTTP/1.0 had no chunking: ignore it
        return
    if len(raw) != 1:
        raise UnsupportedTE(f"too many transfer encodings: {raw!r}")
    if raw[0].lower() != "chunked" or not raw[0].isascii():
        raise UnsupportedTE(f"unsupported transfer encoding: {_go_quote(raw[0])}")
    req.chunked = True


def parse_content_length(cl_headers: list[str]) -> int:
    """Go's ``parseContentLength``: plain decimal digits, below 2**63; -1 without one."""
    if not cl_headers:
        return -1
    cl = textproto.trim_string(cl_headers[0])
    if cl == "":
        raise BadRequest(f"invalid empty Content-Length {_go_quote(cl)}")
    if not (cl.isascii() and cl.isdigit()) or int(cl) >= 1 << 63:
        raise BadRequest(f"bad Content-Length {_go_quote(cl)}")
    return int(cl)


def fix_length(req: Request) -> int:
    """Go's ``fixLength`` for a request: the body's length, -1 for chunked, 0 for none."""
    content_lens = req.header.get("Content-Length", [])
    if len(content_lens) > 1:  # repeated: only with one value (request smuggling)
        first = textproto.trim_string(content_lens[0])
        if any(textproto.trim_string(v) != first for v in content_lens[1:]):
            raise BadRequest(f"http: message cannot contain multiple Content-Length headers; got {content_lens!r}")
        req.header["Content-Length"] = content_lens = [first]
    n = parse_content_length(content_lens) if content_lens else 0
    if req.chunked:
        req.header.pop("Content-Length", None)  # Transfer-Encoding overrides Content-Length
        return -1
    if content_lens:
        return n
    req.header.pop("Content-Length", None)
    return 0


def fix_trailer(req: Request) -> Optional[dict[str, None]]:
    """Go's ``fixTrailer``: the trailer names a chunked request announced, or None."""
    vv = req.header.get("Trailer")
    if vv is None or not req.chunked:
        return None  # a Trailer header without chunking stays a plain header
    del req.header["Trailer"]
    trailer: dict[str, None] = {}
    for v in vv:
        for key in v.split(","):  # foreachHeaderElement
            key = textproto.canonical_mime_header_key(textproto.trim_string(key))
            if not key:
                continue
            if key in ("Transfer-Encoding", "Trailer", "Content-Length"):
                raise BadRequest(f"bad trailer key {_go_quote(key)}")
            trailer[key] = None
    return trailer or None


def read_transfer(req: Request, b: bufio.Reader) -> None:
    """Go's ``readTransfer`` for a request: its framing, and the body reader."""
    parse_transfer_encoding(req)
    req.content_length = fix_length(req)
    req.trailer = fix_trailer(req)
    if req.chunked:
        req.body = Body(b, chunked.ChunkedReader(b), -1)
    else:
        req.body = Body(b, None, req.content_length)
        req.body.closing = req.close


def see_upcoming_double_crlf(r: bufio.Reader) -> bool:
    """Whether ``\\r\\n\\r\\n`` ends the trailer within bufio's buffer (Go reads no further)."""
    peek_size = 4
    while True:
        buf, err = r.peek(peek_size)
        if buf.endswith(b"\r\n\r\n"):
            return True
        if err is not None:
            return False
        peek_size += 1


class Body:
    """Go's ``body``, and the request's ``wsgi.input``: ``read``, ``readline``, iteration.

    ``length`` >= 0 reads that many bytes; -1 reads ``src``, the chunked reader, then the trailer.
    ``on_first_read`` runs before the first read (``Expect: 100-continue``); ``on_hit_eof`` when
    the body is consumed (the server's background read starts then).
    """

    def __init__(self, r: bufio.Reader, src: Optional[chunked.ChunkedReader], length: int):
        self._r, self._src, self._left = r, src, length
        self.saw_eof = length == 0
        self.closed = self.early_close = False
        self.closing = False  # the connection closes after this request (Go's body.closing)
        self.err: Optional[BaseException] = None
        self.on_first_read: Optional[Callable[[], None]] = None
        self.on_hit_eof: Optional[Callable[[], None]] = None

    @property
    def chunked(self) -> bool:
        return self._src is not None

    def unread_data_size(self) -> int:
        """Bytes still to come of a body of known length; -1 for chunked."""
        return -1 if self._src is not None else self._left

    def body_remains(self) -> bool:
        return not self.saw_eof

    def register_on_hit_eof(self, fn: Optional[Callable[[], None]]) -> None:
        self.on_hit_eof = fn

    def _read_locked(self, n: int) -> bytes:
        """Go's ``readLocked``: up to ``n`` bytes; b"" once the body is complete."""
        if self.saw_eof:
            return b""
        if self.err is not None:
            raise self.err
        first, self.on_first_read = self.on_first_read, None
        if first is not None:
            first()
        try:
            if self._src is not None:
                data = self._src.read(n)
                if not data:
                    self.saw_eof = True
                    self._read_trailer()
            else:
                data = self._r.read(min(n, self._left))
                if not data:
                    raise BodyError("unexpected EOF")
                self._left -= len(data)
                self.saw_eof = self._left == 0
        except BodyError as err:
            self.err, self.saw_eof = err, False
            raise
        except (chunked.ChunkedError, EOFError, OSError) as err:  # framing, cut off, timeout, reset
            self.err, self.saw_eof = BodyError(str(err) or type(err).__name__), False
            raise self.err from None
        if self.saw_eof and self.on_hit_eof is not None:
            self.on_hit_eof()
        return data

    def _read_trailer(self) -> None:
        """Go's ``readTrailer``: a bare CRLF, or header lines ending within bufio's buffer."""
        buf, _ = self._r.peek(2)
        if buf == b"\r\n":
            self._r.discard(2)
            return
        if len(buf) < 2:
            raise BodyError("http: unexpected EOF reading trailer")
        if not see_upcoming_double_crlf(self._r):
            raise BodyError("http: suspiciously long trailer after chunked body")
        try:
            textproto.Reader(self._r).read_mime_header()
        except textproto.UnexpectedEOF:
            raise BodyError("http: unexpected EOF reading trailer") from None
        except (textproto.ProtocolError, textproto.MessageTooLarge) as err:
            raise BodyError(str(err)) from None

    # -- wsgi.input ------------------------------------------------------------------------
    def read(self, size: Optional[int] = -1) -> bytes:
        if self.closed:
            raise BodyError("http: invalid Read on closed Body")
        if size is None or size < 0:
            return b"".join(iter(lambda: self._read_locked(READ_SIZE), b""))
        out = bytearray()
        try:
            while len(out) < size and (chunk := self._read_locked(size - len(out))):
                out += chunk
        except BodyError as err:
            # Go's Read returns what arrived *and* the error; a Python read(n) that returned
            # fewer bytes would mean "the body ended" to every caller, so the error is raised,
            # carrying what arrived before it (``partial``)
            err.partial = bytes(out)
            raise
        return bytes(out)

    def readline(self, size: Optional[int] = -1) -> bytes:
        out = bytearray()
        while (size is None or size < 0 or len(out) < size) and not out.endswith(b"\n"):
            want = READ_SIZE if size is None or size < 0 else size - len(out)
            if self._src is None and not self.saw_eof:
                # a known length: take through the newline if it is buffered, never past the body
                if not self._r.buffered():
                    self._r.peek(1)
                newline = self._r.buf.find(b"\n", 0, min(want, self._left))
                want = newline + 1 if newline >= 0 else min(want, self._r.buffered()) or 1
            else:
                want = 1  # chunked: a byte at a time, no read-ahead past the line
            chunk = self._read_locked(want)
            if not chunk:
                break
            out += chunk
        return bytes(out)

    def readlines(self, hint: int = -1) -> list[bytes]:
        return list(iter(self.readline, b""))

    def __iter__(self):
        return iter(self.readline, b"")

    def discard(self, limit: int) -> tuple[int, Optional[BaseException]]:
        """Go's ``io.CopyN(io.Discard, body, limit)``: read and drop up to ``limit`` bytes; how
        many, and the error that stopped it early (``EOFError`` at the body's end), or None."""
        dropped = 0
        try:
            while dropped < limit:
                chunk = self._read_locked(min(READ_SIZE, limit - dropped))
                if not chunk:
                    return dropped, EOFError("EOF")
                dropped += len(chunk)
        except (OSError, ValueError) as err:
            return dropped, err
        return dropped, None

    def close(self) -> None:
        """Go's ``Close`` after the handler (``doEarlyClose``): drop an unread rest below 256 KiB
        so the connection can carry another request; a rest of 256 KiB or more (Go 1.26 reads
        256 KiB and gives up, even if the body ends there) is abandoned (``early_close``) and
        the connection must close. A failed read is the connection's end anyway."""
        if self.closed:
            return
        self.closed = True
        if self.saw_eof:
            return
        if self._src is None and self.closing:
            return  # the connection closes next: no point reading the rest (and no deadline to)
        if self._src is None and self._left > MAX_POST_HANDLER_READ_BYTES:
            self.early_close = True
            return
        dropped, err = self.discard(MAX_POST_HANDLER_READ_BYTES)
        # (a failed read leaves Go's earlyClose unset; the response's discard met the failure
        # first and closes the connection, so this only keeps a failed body from being reused)
        if dropped == MAX_POST_HANDLER_READ_BYTES or (err is not None and not isinstance(err, EOFError)):
            self.early_close = True


def environ(conn: Any, req: Request) -> dict:
    """The WSGI environ of ``req`` (PEP 3333). What Go's handler reads as ``r.Host``,
    ``r.URL.Path`` and ``r.URL.RawQuery`` is ``HTTP_HOST``, ``PATH_INFO`` and ``QUERY_STRING``;
    header names holding ``_`` are left out (see the module docstring)."""
    env = dict(_connection_environ(conn))
    env["REQUEST_METHOD"], env["PATH_INFO"], env["QUERY_STRING"] = req.method, req.url.path, req.url.raw_query
    env["REQUEST_URI"] = env["RAW_URI"] = req.request_uri
    env["SERVER_PROTOCOL"], env["wsgi.input"] = req.proto, req.body
    if req.host:
        env["HTTP_HOST"] = req.host
    for name, values in req.header.items():
        key = _WSGI_KEYS.get(name)
        if key is None:
            key = wsgi_key(name)
        if key:
            env[key] = ",".join(values)
    if req.chunked:
        env["HTTP_TRANSFER_ENCODING"] = "chunked"  # what WSGI libraries look for
    return env


def _connection_environ(conn: Any) -> dict:
    """The environ keys that are the same for every request of ``conn``, worked out once."""
    base = conn.environ_base
    if base is None:
        base = conn.environ_base = {
            "SCRIPT_NAME": "", "REMOTE_ADDR": conn.remote[0], "REMOTE_PORT": conn.remote[1],
            "SERVER_NAME": conn.local[0], "SERVER_PORT": str(conn.local[1]),
            "wsgi.version": (1, 0), "wsgi.url_scheme": "https" if conn.tls else "http",
            "wsgi.errors": sys.stderr, "wsgi.input_terminated": True,
            "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
            CONN_ID_KEY: conn.id,
        }
    return base


def wsgi_key(name: str) -> str:
    """The environ key of a header (``Accept-Encoding`` -> ``HTTP_ACCEPT_ENCODING``); "" for the
    names the environ leaves out: ``Host`` (it is ``HTTP_HOST`` already) and names with ``_``."""
    key = _WSGI_KEYS.get(name)
    if key is not None:
        return key
    if "_" in name or name == "Host":
        key = ""
    else:
        key = name.upper().replace("-", "_")
        if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            key = "HTTP_" + key
    if len(_WSGI_KEYS) < _WSGI_KEYS_MAX:
        _WSGI_KEYS[name] = key
    return key


# environ keys already worked out, by header name (bounded: a client may invent names)
_WSGI_KEYS: dict[str, str] = {}
_WSGI_KEYS_MAX = 1024

"""Port of Go's net/textproto package (reader.go, Go 1.26.8): reading a request line and its header.

What decides which headers reach a handler: lines end in ``\\r\\n`` or a bare ``\\n``; a line
that starts with a space or tab continues the previous one (obsolete folding, joined with one
space); the first line may not start with one; a line must hold a colon and a key of token bytes
(a space before the colon is let through uncanonicalised, for net/http to reject); a value may not
hold a control byte other than a tab; each line counts against ``max_headers``, which net/http
(Go 1.26.8) leaves unbounded: Go 1.27's ``MaxHeaderValueCount`` is the next kube's. Errors are
exceptions carrying Go's texts: :class:`ProtocolError` ("malformed MIME header line: ..."),
:class:`MessageTooLarge` ("message too large") and :class:`UnexpectedEOF` when the stream ends
inside the header.
"""

from __future__ import annotations

import re

from genericserver.bufio import bufio

# RFC 7230 tchar as bytes, and a value's allowed bytes (VCHAR, SP, HTAB, obs-text)
_FIELD_NAME = b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BAD_VALUE = bytes(c for c in range(0x20) if c != 0x09) + b"\x7f"


class ProtocolError(ValueError):
    """``textproto.ProtocolError``: a protocol violation, with Go's text."""


class MessageTooLarge(ValueError):
    """``errMessageTooLarge``: over a size or count limit."""

    def __init__(self) -> None:
        super().__init__("message too large")


class UnexpectedEOF(EOFError):
    """The stream ended where more was required (``io.EOF`` inside a header)."""

    def __init__(self, msg: str = "EOF") -> None:
        super().__init__(msg)


def trim_string(s: str) -> str:
    """Go's ``TrimString``: without leading and trailing ASCII whitespace."""
    return s.strip(" \t\n\r")


def _trim(b: bytes) -> bytes:
    return b.strip(b" \t")


def go_quote(b: bytes) -> str:
    """``%q`` of a byte string, as Go prints it in an error."""
    out = []
    for c in b:
        ch = chr(c)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= c < 0x7F:
            out.append(ch)
        else:
            out.append({0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}.get(c, f"\\x{c:02x}"))
    return '"' + "".join(out) + '"'


def canonical_mime_header_key(s: str) -> str:
    """Go's ``CanonicalMIMEHeaderKey``: ``content-length`` -> ``Content-Length``; a key holding a
    byte that is not a token byte is returned unchanged."""
    known = _CANONICAL.get(s)
    if known is not None:
        return known
    if not s or s.translate(_DELETE_TOKEN_BYTES):
        return s
    key = "-".join(part[:1].upper() + part[1:].lower() for part in s.split("-"))
    if len(_CANONICAL) < _CANONICAL_MAX:
        _CANONICAL[s] = key
    return key


# Keys already canonicalised, as Go keeps its commonHeader table: the same few header names come
# with every request. Bounded, so a client inventing names cannot grow it.
_CANONICAL: dict[str, str] = {}
_CANONICAL_MAX = 1024
_DELETE_TOKEN_BYTES = str.maketrans("", "", _FIELD_NAME.decode("ascii"))


def _canonical_key(a: bytes) -> tuple[str, bool]:
    """``(key, ok)``: ``ok`` is False for an empty key or one with a byte other than token bytes
    and spaces; a key with a space is kept as is (Go lets it through for net/http to refuse)."""
    key = a.decode("latin-1")
    return canonical_mime_header_key(key), bool(key) and not key.translate(_DELETE_TOKEN_BYTES).strip(" ")


class Reader:
    """``textproto.Reader`` over a :class:`genericserver.bufio.bufio.Reader`.

    ``checked`` says whether the last header was read at one go (``_read_buffered_header``),
    whose pattern is also net/http's later test of every name and value (``ValidHeaderFieldName``,
    ``ValidHeaderFieldValue``), so that test has nothing left to find."""

    __slots__ = ("r", "checked")

    def __init__(self, r: bufio.Reader):
        self.r = r
        self.checked = False

    def read_line(self) -> str:
        """One line without its line ending; EOFError at the end of the stream."""
        return self._read_line_slice(-1).decode("latin-1")

    def _read_line_slice(self, lim: int) -> bytes:
        line = b""
        while True:
            piece, more, err = self.r.read_line()
            if err is not None:
                raise EOFError("EOF")
            if 0 <= lim < len(line) + len(piece):
                raise MessageTooLarge()
            line += piece
            if not more:
                return line

    def _skip_space(self) -> int:
        n = 0
        while True:
            c = self.r.read_byte()
            if c is None:
                return n
            if c not in (0x20, 0x09):
                self.r.unread_byte(c)
                return n
            n += 1

    def _read_continued_line_slice(self, lim: int) -> bytes:
        """A header line with its continuation lines joined by single spaces; b"" for the blank
        line that ends the header. The first line must hold a colon."""
        line = self._read_line_slice(lim)
        if not line:
            return line
        if b":" not in line:
            raise ProtocolError(f"malformed MIME header: missing colon: {go_quote(line)}")
        # Go's shortcut: the next line is buffered and starts with a letter or ends the header,
        # so it is no continuation (a copy of this line, and the byte-by-byte look, are spared)
        if self.r.buffered() > 1:
            peek = self.r.buf[:2]
            if peek[:1].isalpha() or peek[:1] == b"\n" or peek == b"\r\n":
                return _trim(line)
        buf = _trim(line)
        if lim < 0:
            lim = 1 << 63
        lim -= len(buf)
        while self._skip_space() > 0:  # the next line starts with a space or tab: it continues this one
            buf += b" "
            if len(buf) >= lim:
                raise MessageTooLarge()
            buf += _trim(self._read_line_slice(lim - len(buf)))
        return buf

    def read_mime_header(self, max_headers: int = 1 << 63) -> dict[str, list[str]]:
        """Go's ``readMIMEHeader`` as net/http calls it: no memory limit, ``max_headers`` lines."""
        m = self._read_buffered_header(max_headers)
        self.checked = m is not None
        if m is not None:
            return m
        m = {}
        first, err = self.r.peek(1)
        if err is None and first in (b" ", b"\t"):
            try:
                line = self._read_line_slice(80)
            except MessageTooLarge:
                raise
            raise ProtocolError(f"malformed MIME header initial line: {go_quote(line)}")
        while True:
            try:
                kv = self._read_continued_line_slice(-1)
            except EOFError:
                raise UnexpectedEOF() from None
            if not kv:
                return m
            k, _, v = kv.partition(b":")
            key, ok = _canonical_key(k)
            if not ok or len(v.translate(None, _BAD_VALUE)) != len(v):
                raise ProtocolError(f"malformed MIME header line: {go_quote(kv)}")
            max_headers -= 1
            if max_headers < 0:
                raise MessageTooLarge()
            m.setdefault(key, []).append(v.lstrip(b" \t").decode("latin-1"))

    def _read_buffered_header(self, max_headers: int) -> "dict[str, list[str]] | None":
        """The usual header at one go: all of it already in bufio's buffer, each line a key of
        token bytes, a colon and a value without control bytes, ending in ``\r\n``, none
        folded, no more than ``max_headers``; the same map as the line-by-line reading gives.
        None for anything else, with the buffer untouched, so the line-by-line reading takes
        over and fails, or not, as Go does."""
        buf = self.r.buf
        if buf[:2] == b"\r\n":
            del buf[:2]
            return {}
        end = buf.find(b"\r\n\r\n")
        if end < 0 or _PLAIN_HEADER.fullmatch(buf, 0, end) is None:
            return None
        lines = buf[:end].decode("latin-1").split("\r\n")
        if len(lines) > max_headers:
            return None
        m: dict[str, list[str]] = {}
        for line in lines:
            k, _, v = line.partition(":")
            m.setdefault(canonical_mime_header_key(k), []).append(v.strip(" \t"))
        del buf[: end + 4]
        return m


# what _read_buffered_header takes at one go: lines of "<token>:<value>", no control byte but tab
# (the name is httpguts.ValidHeaderFieldName's token, the value ValidHeaderFieldValue's bytes)
_PLAIN_LINE = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\x00-\x08\x0a-\x1f\x7f]*"
_PLAIN_HEADER = re.compile(_PLAIN_LINE + rb"(?:\r\n" + _PLAIN_LINE + rb")*")

"""Port of Go's net/http/internal package (chunked.go, Go 1.26.8): reading a chunked request body.

The framing rules that keep a request from being smuggled past a proxy that reads it otherwise:

* a chunk-size line must end in ``\\r\\n``: a bare LF, or a CR anywhere else, is an error
  (the shape of CVE-2025-22871); with its line ending it must fit in bufio's 4096-byte buffer;
* the size is plain hex digits, at most 16 of them: no ``0x``, sign, ``_`` or leading space
  (Python's ``int(x, 16)`` accepts all of those); trailing spaces and tabs and a ``;extension``
  are dropped;
* the chunk data must be followed by exactly ``\\r\\n``;
* the bytes spent on framing (size lines and extensions) beyond 16 per chunk plus twice the
  chunk's data may not add up to more than 16 KiB (CVE-2023-39326), so a client cannot make the
  server read megabytes of extensions for a few bytes of body.

Errors carry Go's texts (:class:`ChunkedError`); the end of the stream mid-body is
:class:`UnexpectedEOF`. The zero-size chunk ends the data; the trailer after it is
``transfer.go``'s business (:mod:`genericserver.net.http.request`).
"""

from __future__ import annotations

from genericserver.bufio import bufio

MAX_LINE_LENGTH = 4096  # assumed <= bufio's default buffer size
_HEX = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}


class ChunkedError(ValueError):
    """A malformed chunked body; the message is Go's."""


class UnexpectedEOF(EOFError):
    def __init__(self) -> None:
        super().__init__("unexpected EOF")


def read_chunk_line(b: bufio.Reader) -> bytes:
    """Go's ``readChunkLine``: one CRLF-terminated line, without the CRLF."""
    p, err = b.read_slice(ord("\n"))
    if err == bufio.EOF:
        raise UnexpectedEOF()
    if err == bufio.BUFFER_FULL:
        raise ChunkedError("header line too long")
    idx = p.find(b"\r")
    if idx == -1:
        raise ChunkedError("chunked line ends with bare LF")
    if idx != len(p) - 2:
        raise ChunkedError("invalid CR in chunked line")
    p = p[:-2]
    if len(p) >= MAX_LINE_LENGTH:
        raise ChunkedError("header line too long")
    return p


def remove_chunk_extension(p: bytes) -> bytes:
    """Go's ``removeChunkExtension``: everything from the first ``;`` on is dropped, unread."""
    return p.partition(b";")[0]


def parse_hex_uint(v: bytes) -> int:
    """Go's ``parseHexUint``: 1 to 16 hex digits and nothing else."""
    if not v:
        raise ChunkedError("empty hex number for chunk length")
    n = 0
    for i, c in enumerate(v):
        digit = _HEX.get(c)
        if digit is None:
            raise ChunkedError("invalid byte in chunk length")
        if i == 16:
            raise ChunkedError("http chunk length too large")
        n = n << 4 | digit
    return n


class ChunkedReader:
    """Go's ``chunkedReader``: ``read(n)`` returns data bytes, ``b""`` after the last chunk."""

    __slots__ = ("r", "n", "err", "check_end", "excess")

    def __init__(self, r: bufio.Reader):
        self.r = r
        self.n = 0  # unread bytes of the current chunk
        self.err: BaseException | None = None  # sticky: once failed (or ended), always so
        self.check_end = False  # the chunk's data is read: its CRLF is next
        self.excess = 0  # framing bytes beyond what the data justifies

    def _begin_chunk(self) -> None:
        line = read_chunk_line(self.r)
        self.excess += len(line) + 2  # the size line, and the CRLF after the chunk's data
        line = remove_chunk_extension(line.rstrip(b" \t"))
        self.n = parse_hex_uint(line)
        self.excess = max(self.excess - (16 + 2 * self.n), 0)
        if self.excess > 16 * 1024:
            raise ChunkedError("chunked encoding contains too much non-data")

    def _chunk_header_available(self) -> bool:
        return self.r.buffered() > 0 and b"\n" in self.r.buf

    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes of data; ``b""`` once the zero-size chunk was read. A framing
        error or the stream's end mid-body raises, and raises again on every later call."""
        out = bytearray()
        while self.err is None:
            try:
                if self.check_end:
                    if out and self.r.buffered() < 2:
                        break  # return what we have rather than wait for the CRLF
                    crlf = self.r.read(2)
                    if len(crlf) == 1:
                        crlf += self.r.read(1)
                    if len(crlf) < 2:
                        raise UnexpectedEOF()
                    if crlf != b"\r\n":
                        raise ChunkedError("malformed chunked encoding")
                    self.check_end = False
                if self.n == 0:
                    if out and not self._chunk_header_available():
                        break
                    self._begin_chunk()
                    if self.n == 0:
                        self.err = EOFError("EOF")  # the last chunk: the data is complete
                    continue
                if len(out) >= size:
                    break
                data = self.r.read(min(size - len(out), self.n))
                if not data:
                    raise UnexpectedEOF()
                out += data
                self.n -= len(data)
                if self.n == 0:
                    self.check_end = True
            except (ChunkedError, UnexpectedEOF) as err:
                self.err = err
        if out:
            return bytes(out)
        if isinstance(self.err, (ChunkedError, UnexpectedEOF)):
            raise self.err
        return b""

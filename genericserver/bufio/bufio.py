"""Port of Go's bufio package (bufio.go, Go 1.26.8): the buffered ``Reader`` net/http reads requests through.

Its 4096-byte buffer is part of what the server accepts: a chunk-size line must fit in it
(``chunked.go``), and a request's trailer must show its end within it (``transfer.go``). So the
server reads through this port rather than a buffer of its own size.

``rd`` is the source: a callable ``rd(n)`` returning up to ``n`` bytes, ``b""`` at the end of the
stream, and raising ``OSError`` (a timeout, a reset) as Go's ``Read`` returns an error. Go returns
``(data, err)`` pairs; here :meth:`Reader.read_slice` and :meth:`Reader.read_line` return
``(data, err)`` too, with ``err`` one of :data:`EOF` and :data:`BUFFER_FULL` or ``None``, because
their callers act on data and error together; a source's ``OSError`` is raised.
"""

from __future__ import annotations

from typing import Callable, Optional

DEFAULT_BUF_SIZE = 4096
EOF = "EOF"  # io.EOF
BUFFER_FULL = "bufio: buffer full"  # bufio.ErrBufferFull


class Reader:
    """Go's ``bufio.Reader`` over ``rd`` with a ``size``-byte buffer."""

    __slots__ = ("rd", "buf", "size")

    def __init__(self, rd: Callable[[int], bytes], size: int = DEFAULT_BUF_SIZE):
        self.rd = rd
        self.buf = bytearray()
        self.size = size

    def buffered(self) -> int:
        """How many bytes can be read without reading from ``rd``."""
        return len(self.buf)

    def _fill(self) -> bool:
        """Read once more into the buffer; False at the end of the stream."""
        data = self.rd(self.size - len(self.buf))
        self.buf += data
        return bool(data)

    def peek(self, n: int) -> tuple[bytes, Optional[str]]:
        """The next ``n`` bytes without consuming them; fewer with EOF or BUFFER_FULL."""
        while len(self.buf) < n and len(self.buf) < self.size:
            if not self._fill():
                return bytes(self.buf), EOF
        if n > self.size:
            return bytes(self.buf), BUFFER_FULL
        return bytes(self.buf[:n]), None

    def discard(self, n: int) -> int:
        """Skip up to ``n`` buffered-or-readable bytes; how many were skipped."""
        skipped = 0
        while skipped < n:
            if not self.buf and not self._fill():
                break
            k = min(n - skipped, len(self.buf))
            del self.buf[:k]
            skipped += k
        return skipped

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes (at most one read from ``rd``); ``b""`` only at the end of the stream."""
        if n <= 0:
            return b""
        if not self.buf:
            if n >= self.size:
                return self.rd(n)  # a big read with an empty buffer goes straight to the source
            if not self._fill():
                return b""
        k = min(n, len(self.buf))
        data = bytes(self.buf[:k])
        del self.buf[:k]
        return data

    def read_byte(self) -> Optional[int]:
        """The next byte, or None at the end of the stream."""
        if not self.buf and not self._fill():
            return None
        b = self.buf[0]
        del self.buf[:1]
        return b

    def unread_byte(self, b: int) -> None:
        self.buf[:0] = bytes((b,))

    def read_slice(self, delim: int) -> tuple[bytes, Optional[str]]:
        """Through the first ``delim``; without it, what there is and EOF (or BUFFER_FULL when
        the buffer filled up first, Go's ``ErrBufferFull``)."""
        start = 0
        while True:
            i = self.buf.find(delim, start)
            if i >= 0:
                line = bytes(self.buf[: i + 1])
                del self.buf[: i + 1]
                return line, None
            if len(self.buf) >= self.size:
                line = bytes(self.buf)
                self.buf.clear()
                return line, BUFFER_FULL
            start = len(self.buf)
            if not self._fill():
                line = bytes(self.buf)
                self.buf.clear()
                return line, EOF

    def read_line(self) -> tuple[bytes, bool, Optional[str]]:
        """Go's ``ReadLine``: ``(line, is_prefix, err)``, the line without its ``\\n`` or ``\\r\\n``.

        A line longer than the buffer comes in pieces with ``is_prefix`` True. At the end of the
        stream a last unterminated line is returned as a line; only the next call reports EOF.
        """
        line, err = self.read_slice(ord("\n"))
        if err == BUFFER_FULL:
            if line.endswith(b"\r"):  # a "\r\n" split across the buffer's end: keep the "\r" for later
                self.buf[:0] = b"\r"
                line = line[:-1]
            return line, True, None
        if not line:
            return b"", False, err
        if line.endswith(b"\n"):
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        return line, False, None

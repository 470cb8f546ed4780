"""Port of Go's net/http/internal/http2 package (Go 1.27): pipe.go's ``pipe`` and server.go's ``requestBody``, a stream's request body.

The serve goroutine feeds it the DATA frames' bytes (Go's ``pipe.Write``); the handler reads
them as ``wsgi.input``, and each read gives its bytes' window back to the client through the
connection's ``note_body_read``. When the stream closes first, the unread bytes are thrown away
and counted, so the connection gives their window back (``break_with_error``).
"""

from __future__ import annotations

from typing import Any, Optional

from genericserver import runtime as rt
from genericserver.net.http import request as httprequest

READ_SIZE = 64 << 10


class Body:
    """A stream's request body as ``wsgi.input`` (Go's ``requestBody`` and its ``pipe``): bytes
    as DATA frames bring them; reading gives the flow-control window back."""

    def __init__(self, sc: Any, st: Any):  # the ServerConn, and the Stream it belongs to
        self.sc, self.st = sc, st
        self._cond = rt.condition(rt.lock())
        self._chunks: list[bytes] = []
        self._eof = False
        self._err: Optional[BaseException] = None

    def feed(self, data: bytes) -> None:
        with self._cond:
            self._chunks.append(data)
            self._cond.notify_all()

    def end(self, err: Optional[BaseException] = None) -> None:
        with self._cond:
            self._eof, self._err = True, self._err or err
            self._cond.notify_all()

    def break_with_error(self, err: BaseException) -> int:
        """Go's ``BreakWithError``: the unread bytes are thrown away (their count returned, for
        the connection's window) and a read meets ``err``, unless the body had ended."""
        with self._cond:
            unread = sum(map(len, self._chunks))
            self._chunks.clear()
            if not self._eof:
                self._eof, self._err = True, err
            self._cond.notify_all()
            return unread

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all, for -1); fewer only at the end of the body, as a WSGI
        caller takes a short read for the end. A reset or a dropped connection with nothing
        read is :class:`genericserver.net.http.request.BodyError`."""
        return self._take(size, line=False)

    def readline(self, size: int = -1) -> bytes:
        """Up to and including the next newline (or ``size`` bytes, or the end)."""
        return self._take(size, line=True)

    def _take(self, size: int, line: bool) -> bytes:
        out = bytearray()
        while size < 0 or len(out) < size:
            with self._cond:
                while not self._chunks and not self._eof:
                    self._cond.wait()
                if not self._chunks:  # the end: clean, or with the error that ended it
                    if self._err is not None and not out:
                        raise httprequest.BodyError(str(self._err))
                    break
                chunk = self._chunks.pop(0)
                want = len(chunk) if size < 0 else min(len(chunk), size - len(out))
                if line and b"\n" in chunk[:want]:
                    want = chunk.index(b"\n") + 1
                if want < len(chunk):
                    chunk, rest = chunk[:want], chunk[want:]
                    self._chunks.insert(0, rest)
            out += chunk
            # each piece taken gives its window back (Go's noteBodyReadFromHandler), outside
            # the body's lock: the connection's lock is taken before it elsewhere
            self.sc.note_body_read(self.st, len(chunk))
            if line and chunk.endswith(b"\n"):
                break
        return bytes(out)

    def __iter__(self) -> Any:
        return iter(lambda: self.read(READ_SIZE), b"")


__all__ = ["Body"]

"""A request body still arriving, for the in-memory transport (no Go twin).

:class:`LateBody` is what a client of :mod:`genericserver.testing.transport` sends when only the
first bytes of its body have come (a client that stalls, or sends the rest late); the server's
``wsgi.input`` over it is a :class:`LateInput`, whose read waits for the rest. Where the server
waits for it as Go does (when it writes the header) is the transport's.
"""

from __future__ import annotations

import errno
import io
from typing import Any

from genericserver import runtime as rt


class LateBody:
    """A request body of which only ``sent`` has come, out of ``length`` announced; the rest comes
    when the client calls :meth:`arrive`, or never (the connection closes first)."""

    def __init__(self, sent: bytes, length: int):
        self.sent, self.length = sent, length
        self.arrived = False
        self.ended = rt.event("late-body-ended")  # the rest came, or the connection closed

    def arrive(self) -> None:
        self.arrived = True
        self.ended.set()


class LateInput(io.RawIOBase):
    """``wsgi.input`` over a :class:`LateBody`: what came, then a wait for the rest."""

    def __init__(self, late: LateBody):
        self.late, self.pos = late, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        if self.pos == len(self.late.sent) and self.pos < self.late.length:
            self.late.ended.wait()
            if not self.late.arrived:
                raise ConnectionResetError(errno.ECONNRESET, "the client went away before the rest of its body")
        data = (self.late.sent + b"x" * (self.late.length - len(self.late.sent)))[self.pos:self.pos + len(buf)]
        if not self.late.arrived:
            data = data[:len(self.late.sent) - self.pos]
        buf[:len(data)] = data
        self.pos += len(data)
        return len(data)

    def unread(self) -> bool:
        return self.pos < self.late.length

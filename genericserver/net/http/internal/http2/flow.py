"""Port of Go's net/http/internal/http2 package (Go 1.27): flow.go's ``inflow``, the window a peer may send into.

The server gives request-body bytes back to the client by Go's rule, not ``h2``'s: ``h2``'s own
window manager waits for half the window (12.8 MB of kube's 25.6 MB connection window) before it
sends a WINDOW_UPDATE, where Go sends one as soon as 4 KiB are owed, or sooner if that doubles what
the client may still send. :class:`Inflow` decides when and how much; the server has ``h2`` send
the frame (``increment_flow_control_window``), so ``h2``'s accounting of the window stays in step.
"""

from __future__ import annotations

INFLOW_MIN_REFRESH = 4 << 10  # the smallest WINDOW_UPDATE worth a frame, unless it doubles the window


class Inflow:
    """Go's ``inflow``: what the peer may still send (``avail``) and what is owed back (``unsent``)."""

    __slots__ = ("avail", "unsent")

    def __init__(self, n: int):
        self.avail = n  # Go's init
        self.unsent = 0

    def add(self, n: int) -> int:
        """``n`` bytes were consumed (read, or thrown away): the increment to send now, or 0
        while what is owed is under 4 KiB and would not double the peer's window."""
        self.unsent += n
        if self.unsent < INFLOW_MIN_REFRESH and self.unsent < self.avail:
            return 0
        send, self.unsent = self.unsent, 0
        self.avail += send
        return send

    def take(self, n: int) -> bool:
        """The peer sent ``n`` flow-controlled bytes: False if it had no room for them."""
        if n > self.avail:
            return False
        self.avail -= n
        return True


__all__ = ["INFLOW_MIN_REFRESH", "Inflow"]

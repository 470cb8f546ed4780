"""The h2 library's connection, made to report two things Go decides otherwise (no Go twin).

``h2`` closes its state machine on any GOAWAY it reads, so nothing more could be sent or read on
the streams in flight, and it ends the connection for one stream over the advertised limit. Go's
server (``processGoAway``, ``processHeaders``) lets the streams in flight finish and refuses just
the extra stream: :class:`GracefulH2Connection` only reports both, as events, for the server to
decide. Its two overrides are of private ``h2`` methods; setup.cfg pins ``h2`` to the release they
were read from (tests/test_http2_h2_internals.py).
"""

from __future__ import annotations

from typing import Any

import h2.connection
import h2.errors
import h2.events
from h2.connection import _decode_headers


class RequestRefused(h2.events.Event):
    """A new stream over the advertised limit, which :class:`GracefulH2Connection` reports
    instead of ending the connection (not one of ``h2``'s events)."""

    def __init__(self, stream_id: int):
        self.stream_id = stream_id


class GracefulH2Connection(h2.connection.H2Connection):
    """h2's connection, except for a GOAWAY read from the peer, and a stream over the advertised
    limit: both are reported, for the server to decide as Go does.

    h2 closes its state machine on any GOAWAY it reads, so nothing more could be sent or read on
    the streams in flight; Go (``processGoAway``, whatever the code) lets them finish, and stops
    taking new ones. h2 ends the connection for one stream too many; Go refuses that stream."""

    def _receive_headers_frame(self, frame: Any) -> tuple[list, list]:
        if frame.stream_id not in self.streams and self.open_inbound_streams + 1 > self.local_settings.max_concurrent_streams:
            # the header block is still decoded, so HPACK's table stays in step with the client's
            _decode_headers(self.decoder, frame.data)
            self.highest_inbound_stream_id = max(self.highest_inbound_stream_id, frame.stream_id)
            return [], [RequestRefused(frame.stream_id)]
        return super()._receive_headers_frame(frame)

    def _receive_goaway_frame(self, frame: Any) -> tuple[list, list]:
        event = h2.events.ConnectionTerminated()
        try:
            event.error_code = h2.errors.ErrorCodes(frame.error_code)
        except ValueError:
            event.error_code = frame.error_code  # an unknown code, kept as a number
        event.last_stream_id, event.additional_data = frame.last_stream_id, frame.additional_data or None
        return [], [event]



__all__ = ["GracefulH2Connection", "RequestRefused"]

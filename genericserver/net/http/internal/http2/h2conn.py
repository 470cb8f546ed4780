"""The h2 library's connection, made to report what Go decides otherwise (no Go twin).

``h2`` closes its state machine on any GOAWAY it reads, so nothing more could be sent or read on
the streams in flight, and it ends the connection for one stream over the advertised limit, for
trailers without END_STREAM, for a new stream that depends on itself, and for a body that does
not match its ``content-length``. Go's server (``processGoAway``, ``processHeaders``,
``processTrailerHeaders``, ``checkPriority``, ``processData``) lets the streams in flight finish,
refuses just the extra stream, and resets just the stream in error:
:class:`GracefulH2Connection` only reports these, as events, for the server to decide (a header
block it does not hand on is still decoded, so HPACK's table stays in step), leaves the body's
length to the server, and reports DATA for a closed stream, whose window Go gives back by its own rule. It writes
Go's first SETTINGS frame, not h2's. A server's HPACK is Go's (genericserver/x/net/http2/hpack):
its answers are coded by a port of Go's encoder put in place of h2's ``encoder``, and each request's
header block is decoded and judged as Go's framer does it (:meth:`GracefulH2Connection.read_meta_headers`),
not by h2's decoder. Its three overrides are of private ``h2`` methods, and that frame and that
encoder go through h2's state machine and send buffer: setup.cfg pins ``h2`` to the release they
were read from (tests/test_http2_h2_internals.py).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import h2.connection
import h2.errors
import h2.events
import h2.exceptions
from h2.connection import AllowedStreamIDs, ConnectionInputs
from h2.settings import SettingCodes
from h2.stream import StreamState
from hyperframe.frame import RstStreamFrame, SettingsFrame

from genericserver.x.net.http2.hpack import hpack
from genericserver.x.net.http2.hpack.encode import INITIAL_HEADER_TABLE_SIZE, H2Encoder

# the SETTINGS Go's server writes first (serve's writeSettings), in its order; h2 would write every
# setting it keeps, ENABLE_PUSH and ENABLE_CONNECT_PROTOCOL among them, which kube-apiserver never sends
GO_SETTINGS = (SettingCodes.MAX_FRAME_SIZE, SettingCodes.MAX_CONCURRENT_STREAMS, SettingCodes.MAX_HEADER_LIST_SIZE,
               SettingCodes.HEADER_TABLE_SIZE, SettingCodes.INITIAL_WINDOW_SIZE)


class RequestRefused(h2.events.Event):
    """A new stream over the advertised limit, which :class:`GracefulH2Connection` reports
    instead of ending the connection (not one of ``h2``'s events)."""

    def __init__(self, stream_id: int):
        self.stream_id = stream_id


class StreamRejected(h2.events.Event):
    """A HEADERS frame Go refuses with a stream error where h2 would end the connection:
    trailers without END_STREAM, or a new stream that depends on itself. Its header block is
    decoded all the same (HPACK's table stays in step); not one of ``h2``'s events."""

    def __init__(self, stream_id: int, code: int, opened: bool = True, why: str = ""):
        # opened: False for a header block Go's framer refuses (the stream never opens, and
        # does not count as the last stream read)
        self.stream_id, self.code, self.opened, self.why = stream_id, code, opened, why


class DataOnClosedStream(h2.events.Event):
    """DATA for a stream already closed here (reset, or answered), which
    :class:`GracefulH2Connection` reports for the server to give its window back."""

    def __init__(self, stream_id: int, flow_controlled_length: int):
        self.stream_id, self.flow_controlled_length = stream_id, flow_controlled_length


def _go_connection_error(code: int, why: str) -> h2.exceptions.ProtocolError:
    """What the server reads as Go's ``ConnectionError(code)`` returned with the frame read
    (processframe.py takes the code, and the frame's stream for the GOAWAY's last stream id,
    as Go's ``processFrameFromReader`` does when ``readMetaFrame`` hands back its frame)."""
    err = h2.exceptions.ProtocolError(why)
    err.error_code = code
    err.with_frame = True
    return err


class GracefulH2Connection(h2.connection.H2Connection):
    """h2's connection, except for a GOAWAY read from the peer, a stream over the advertised
    limit, and DATA for a closed stream: each is reported, for the server to decide as Go does.

    h2 closes its state machine on any GOAWAY it reads, so nothing more could be sent or read on
    the streams in flight; Go (``processGoAway``, whatever the code) lets them finish, and stops
    taking new ones. h2 ends the connection for one stream too many; Go refuses that stream. h2
    gives a closed stream's DATA back to the connection's window by its own rule (once half the
    window is owed); Go's ``processData`` by its ``inflow`` rule, at once for 4 KiB."""

    def initiate_connection(self) -> None:
        """h2's, but a server's first SETTINGS frame holds Go's settings only (GO_SETTINGS)."""
        if self.config.client_side:  # the tests' client (tests/h2client.py): its preface and h2's settings
            super().initiate_connection()
            return
        self.state_machine.process_input(ConnectionInputs.SEND_SETTINGS)
        frame = SettingsFrame(0)
        for code in GO_SETTINGS:
            frame.settings[code] = self.local_settings[code]
        self._data_to_send += frame.serialize()

    def __init__(self, *args: Any, check_field: Optional[Callable[[bytes, bytes, bool], str]] = None,
                 check_pseudos: Optional[Callable[[list], str]] = None, **kw: Any):
        super().__init__(*args, **kw)
        if not self.config.client_side:
            self.encoder = H2Encoder()  # the answers' fields coded as Go's server codes them
            # and the requests' decoded as Go's framer decodes them (read_meta_headers)
            self.meta_decoder = hpack.Decoder(INITIAL_HEADER_TABLE_SIZE, lambda f: None)
        # the server's judges of a decoded header block (Go's readMetaFrame), run where h2 would
        # validate the fields itself (the server turns h2's validation off): each field as it is
        # decoded (name, value, whether a regular field came before), then the pseudo-fields of
        # the whole block; each gives the error, or ""
        self.check_field = check_field
        self.check_pseudos = check_pseudos
        # Go's maxHeaderListSize (the server sets it: MaxHeaderBytes + 320), 0 for no limit, and
        # the lengths of the frames' fragments of the block being read (the server's frame
        # checks note them; h2 hands the block over whole)
        self.max_header_list_size = 0
        self.header_fragments: list[int] = []

    def read_meta_headers(self, block: bytes) -> tuple[list, bool, str]:
        """Go's ``readMetaFrame``: the fields, whether the list went over ``max_header_list_size``
        (Go's ``Truncated``), and the first malformed field's error ("" if none). From a
        malformed field or the limit on, fields are decoded for HPACK's table only. Raises h2's
        ``ProtocolError`` with Go's code where Go ends the connection: COMPRESSION_ERROR for a
        block HPACK cannot decode, PROTOCOL_ERROR for a fragment more than twice what the list
        may still hold, or for one that follows a malformed field."""
        fields: list = []
        remain = self.max_header_list_size or (1 << 62)
        truncated, invalid, saw_regular = False, "", False
        dec, check_field = self.meta_decoder, self.check_field

        def emit(f: Any) -> None:
            nonlocal remain, truncated, invalid, saw_regular
            if check_field is not None:
                invalid = check_field(f.name, f.value, saw_regular)
            if not f.name.startswith(b":"):
                saw_regular = True
            if invalid:
                dec.emit_enabled = False
                return
            size = f.size()
            if size > remain:
                dec.emit_enabled = False
                truncated, remain = True, 0
                return
            remain -= size
            fields.append((f.name, f.value))

        dec.emit, dec.emit_enabled = emit, True
        dec.max_str_len = self.max_header_list_size
        fragments, self.header_fragments = self.header_fragments, []
        if sum(fragments) != len(block):
            fragments = [len(block)]
        try:
            pos = 0
            for n in fragments:
                frag = block[pos:pos + n]
                pos += n
                if len(frag) > 2 * remain or invalid:
                    raise _go_connection_error(h2.errors.ErrorCodes.PROTOCOL_ERROR, invalid or "header list too large")
                try:
                    dec.write(frag)
                except ValueError as err:  # Go's DecodingError, ErrStringLength, ErrInvalidHuffman
                    raise _go_connection_error(h2.errors.ErrorCodes.COMPRESSION_ERROR, str(err)) from None
            try:
                dec.close()
            except ValueError as err:
                raise _go_connection_error(h2.errors.ErrorCodes.COMPRESSION_ERROR, str(err)) from None
        finally:
            dec.emit = lambda f: None
        if not invalid and self.check_pseudos is not None:
            invalid = self.check_pseudos(fields)
        return fields, truncated, invalid

    def _receive_headers_frame(self, frame: Any) -> tuple[list, list]:
        sid = frame.stream_id
        if self.config.client_side:
            return super()._receive_headers_frame(frame)
        # decoded here, whatever becomes of the stream, so HPACK's table stays in step with the client's
        headers, truncated, invalid = self.read_meta_headers(frame.data)
        if invalid:  # a malformed field: this stream's error, and it never opened (Go's framer)
            return [], [StreamRejected(sid, h2.errors.ErrorCodes.PROTOCOL_ERROR, opened=False, why=invalid)]
        stream = self.streams.get(sid)
        if stream is None:
            refused = self.open_inbound_streams + 1 > self.local_settings.max_concurrent_streams
            if refused or ("PRIORITY" in frame.flags and frame.depends_on == sid):
                self.highest_inbound_stream_id = max(self.highest_inbound_stream_id, sid)
                return [], [RequestRefused(sid) if refused else StreamRejected(sid, h2.errors.ErrorCodes.PROTOCOL_ERROR)]
        elif stream.state_machine.state in (StreamState.OPEN, StreamState.HALF_CLOSED_LOCAL) and "END_STREAM" not in frame.flags:
            # trailers that do not end the stream (Go: a stream error, "trailers_not_ended")
            return [], [StreamRejected(sid, h2.errors.ErrorCodes.PROTOCOL_ERROR)]
        # h2's own steps, on the block decoded above
        events = self.state_machine.process_input(ConnectionInputs.RECV_HEADERS)
        stream = self._get_or_create_stream(sid, AllowedStreamIDs(not self.config.client_side))
        frames, stream_events = stream.receive_headers(headers, "END_STREAM" in frame.flags, self.config.header_encoding)
        if "PRIORITY" in frame.flags:
            p_frames, p_events = self._receive_priority_frame(frame)
            stream_events[0].priority_updated = p_events[0]
            stream_events.extend(p_events)
        # the server counts a body against its content-length as Go does (a stream error, or
        # the handler's), where h2 would end the connection
        stream._expected_content_length = None
        for ev in stream_events:
            ev.header_list_truncated = truncated  # (Go's MetaHeadersFrame.Truncated: answered 431)
        return frames, events + stream_events

    def _receive_goaway_frame(self, frame: Any) -> tuple[list, list]:
        event = h2.events.ConnectionTerminated()
        try:
            event.error_code = h2.errors.ErrorCodes(frame.error_code)
        except ValueError:
            event.error_code = frame.error_code  # an unknown code, kept as a number
        event.last_stream_id, event.additional_data = frame.last_stream_id, frame.additional_data or None
        return [], [event]

    def _handle_data_on_closed_stream(self, events: list, exc: Any, frame: Any) -> tuple[list, list]:
        # h2's RST_STREAM still goes out; the window is the server's to give back
        rst = RstStreamFrame(exc.stream_id)
        rst.error_code = exc.error_code
        return [rst], events + exc._events + [DataOnClosedStream(frame.stream_id, frame.flow_controlled_length)]


__all__ = ["DataOnClosedStream", "GracefulH2Connection", "RequestRefused", "StreamRejected"]

"""genericserver.net.http.internal.http2 (h2conn.py, server.py) leans on the ``h2`` library's insides: it overrides
three private methods of ``H2Connection`` and reads some of its attributes. setup.cfg pins ``h2`` to
the release they were read from; this file fails first when a release moves them."""

from __future__ import annotations

import inspect
import pathlib
import re

import h2
import h2.config
import h2.connection
import h2.events
import h2.exceptions
import hyperframe.frame
from hyperframe.frame import GoAwayFrame, HeadersFrame

from genericserver.net.http.internal.http2 import h2conn

SETUP_CFG = pathlib.Path(__file__).resolve().parent.parent / "setup.cfg"


def params(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def test_setup_cfg_pins_the_installed_h2():
    pin = re.search(r"^\s*h2==(\S+)\s*$", SETUP_CFG.read_text(), re.M)
    assert pin, "setup.cfg must pin h2 with ==: the server relies on its private methods"
    assert pin.group(1) == h2.__version__


def test_the_overridden_private_methods_are_h2s_frame_handlers():
    # GracefulH2Connection replaces these two; h2 must still call them for those frames, with one
    # frame, and expect (frames to send, events) back
    conn = h2conn.GracefulH2Connection(h2.config.H2Configuration(client_side=False))
    for name, frame in (("_receive_headers_frame", HeadersFrame), ("_receive_goaway_frame", GoAwayFrame)):
        base = getattr(h2.connection.H2Connection, name)
        assert params(base) == ["self", "frame"], name
        assert "tuple[list[Frame], list[Event]]" in str(inspect.signature(base).return_annotation), name
        handler = conn._frame_dispatch_table[frame]
        assert handler.__func__ is getattr(h2conn.GracefulH2Connection, name), name


def test_the_closed_stream_data_handler_the_third_override_replaces():
    base = h2.connection.H2Connection._handle_data_on_closed_stream
    assert params(base) == ["self", "events", "exc", "frame"]
    assert "_handle_data_on_closed_stream" in inspect.getsource(h2.connection.H2Connection._receive_data_frame)
    assert h2.exceptions.StreamClosedError(1)._events == []  # the events h2 hands on with it


def test_the_encoder_h2_codes_answers_with_is_the_server_connections_own():
    # h2conn puts Go's HPACK encoder in place of h2's: h2 must still code a HEADERS frame's
    # fields with its connection's ``encoder`` and tell it the peer's table size; the requests'
    # blocks are decoded by the override itself (read_meta_headers), not by h2's decoder
    import h2.stream
    assert "encoder.encode(headers)" in inspect.getsource(h2.stream.H2Stream._build_headers_frames)
    assert "self.encoder.header_table_size = " in inspect.getsource(h2.connection.H2Connection._acknowledge_settings)
    conn = h2conn.GracefulH2Connection(h2.config.H2Configuration(client_side=False))
    assert type(conn.encoder).__name__ == "H2Encoder"
    assert "_decode_headers" not in inspect.getsource(h2conn.GracefulH2Connection._receive_headers_frame)


def test_the_attributes_the_server_reads_and_sets():
    conn = h2conn.GracefulH2Connection(h2.config.H2Configuration(client_side=False))
    for attr in ("streams", "open_inbound_streams", "local_settings", "decoder", "highest_inbound_stream_id",
                 "max_inbound_frame_size"):
        assert hasattr(conn, attr), attr
    assert isinstance(conn.streams, dict) and conn.highest_inbound_stream_id == 0
    assert conn.local_settings.max_concurrent_streams > 0
    # public, but the server's flow control rests on them: Go's inflow decides, h2 sends
    assert params(h2.connection.H2Connection.increment_flow_control_window) == ["self", "increment", "stream_id"]
    assert params(h2.connection.H2Connection.local_flow_control_window) == ["self", "stream_id"]
    assert conn.max_outbound_frame_size > 0


def test_the_first_settings_frame_is_go_s_list_through_h2_s_state_machine_and_buffer():
    # GracefulH2Connection.initiate_connection writes Go's SETTINGS itself: it relies on h2's
    # SEND_SETTINGS input and its _data_to_send buffer, and on h2 then taking the client's frames
    conn = h2conn.GracefulH2Connection(h2.config.H2Configuration(client_side=False))
    assert isinstance(conn._data_to_send, bytearray)
    conn.initiate_connection()
    sent = conn.data_to_send()
    frame, length = hyperframe.frame.Frame.parse_frame_header(memoryview(sent[:9]))
    frame.parse_body(memoryview(sent[9:9 + length]))
    assert list(frame.settings) == list(h2conn.GO_SETTINGS)
    client = h2.connection.H2Connection()
    client.initiate_connection()
    events = conn.receive_data(client.data_to_send())
    assert any(isinstance(e, h2.events.RemoteSettingsChanged) for e in events)


def test_the_stream_attributes_the_override_reads_and_sets():
    # h2conn reads a stream's state (trailers on a stream still receiving) and turns off h2's own
    # content-length check (the server counts the body as Go does)
    import h2.stream
    stream = h2.stream.H2Stream(1, h2.config.H2Configuration(client_side=False), 65535, 65535)
    assert stream.state_machine.state == h2.stream.StreamState.IDLE
    assert stream._expected_content_length is None
    assert "_expected_content_length" in inspect.getsource(h2.stream.H2Stream._track_content_length)
    assert {"OPEN", "HALF_CLOSED_LOCAL"} <= set(h2.stream.StreamState.__members__)

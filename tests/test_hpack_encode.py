"""genericserver.x.net.http2.hpack: Go's HPACK encoder (encode.go and what it uses), ported.

The table-driven tests are Go's encode_test.go cases, with Go's expected octets; the properties
draw field lists and table size changes and decode what was encoded with the ``hpack`` library's
decoder (the client side), and hold the two maps of a dynamic table to a search entry by entry.
The server's own answers go through the encoder (h2conn.py), after a client's
``SETTINGS_HEADER_TABLE_SIZE`` with the size update Go sends."""

from __future__ import annotations

import h2.config
import h2.connection
import h2.events
import h2.settings
import hpack
import pytest
from hpack.huffman import HuffmanEncoder
from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH
from hyperframe.frame import Frame
from hypothesis import given, settings
from hypothesis import strategies as st

from genericserver.net.http.internal.http2.h2conn import GracefulH2Connection
from genericserver.net.http.internal.http2.server import h2_config
from genericserver.x.net.http2.hpack import encode
from genericserver.x.net.http2.hpack.encode import Encoder, H2Encoder
from genericserver.x.net.http2.hpack.hpack import HeaderField
from genericserver.x.net.http2.hpack.huffman import append_huffman_string, huffman_encode_length
from genericserver.x.net.http2.hpack.static_table import STATIC_TABLE


def pair(name: str, value: str, sensitive: bool = False) -> HeaderField:
    return HeaderField(name.encode(), value.encode(), sensitive)


def hexed(fn, *args) -> str:
    buf = bytearray()
    fn(buf, *args)
    return buf.hex()


@pytest.mark.parametrize("size1, size2, want", [
    (2048, 4096, "3fe10f 3fe11f 82"),  # the least size since the last update, then the size now
    (16384, 2048, "3fe10f 82"),  # 16384 is over the limit (4096): one update, to 2048
])
def test_table_size_updates_come_before_the_first_field(size1, size2, want):
    e = Encoder()
    e.set_max_dynamic_table_size(size1)
    e.set_max_dynamic_table_size(size2)
    e.write_field(pair(":method", "GET"))
    assert e.buf.hex() == want.replace(" ", "")


def test_search_prefers_the_static_table_and_the_newest_entry():
    e = Encoder()
    for f in (pair("foo", "bar"), pair("blake", "miz"), pair(":method", "GET")):
        e.dyn_tab.add(f)
    n = len(STATIC_TABLE.ents)
    assert n == 61
    cases = [(pair("foo", "bar"), n + 3, True), (pair("blake", "miz"), n + 2, True), (pair(":method", "GET"), 2, True),
             (pair(":method", "GET", sensitive=True), 3, False),  # a sensitive field matches by name only
             (pair("foo", "..."), n + 3, False), (pair("blake", "..."), n + 2, False), (pair(":method", "..."), 3, False),
             (pair("foo-", "bar"), 0, False)]
    for f, want_i, want_match in cases:
        assert e.search_table(f) == (want_i, want_match), f


@pytest.mark.parametrize("n, i, want", [(1, 0, [0]), (2, 2, [2]), (3, 6, [6]), (4, 14, [14]), (5, 30, [30]),
                                        (6, 62, [62]), (7, 126, [126]), (8, 254, [254]), (5, 1337, [31, 154, 10])])
def test_append_var_int(n, i, want):
    buf = bytearray()
    encode.append_var_int(buf, n, i)
    assert list(buf) == want


@pytest.mark.parametrize("s, want", [("www.example.com", "8c f1e3 c2e5 f23a 6ba0 ab90 f4ff"),
                                     ("a", "01 61"),  # Huffman would not be shorter
                                     ("", "00")])
def test_append_hpack_string(s, want):
    assert hexed(encode.append_hpack_string, s.encode()) == want.replace(" ", "")


@pytest.mark.parametrize("i, want", [(1, "81"), (126, "fe"), (127, "ff00"), (128, "ff01")])
def test_append_indexed(i, want):
    assert hexed(encode.append_indexed, i) == want


CUSTOM = "88 25a8 49e9 5ba9 7d7f 89 25a8 49e9 5bb8 e8b4 bf"


@pytest.mark.parametrize("sensitive, indexing, want", [(False, True, "40 " + CUSTOM), (False, False, "00 " + CUSTOM),
                                                       (True, True, "10 " + CUSTOM), (True, False, "10 " + CUSTOM)])
def test_append_new_name(sensitive, indexing, want):
    f = pair("custom-key", "custom-value", sensitive)
    assert hexed(encode.append_new_name, f, indexing) == want.replace(" ", "")


@pytest.mark.parametrize("sensitive, indexing, want", [(False, True, "48 82 6402"), (False, False, "08 82 6402"),
                                                       (True, True, "18 82 6402"), (True, False, "18 82 6402")])
def test_append_indexed_name(sensitive, indexing, want):
    f = pair(":status", "302", sensitive)
    assert hexed(encode.append_indexed_name, f, 8, indexing) == want.replace(" ", "")


@pytest.mark.parametrize("i, want", [(30, "3e"), (31, "3f00"), (32, "3f01")])
def test_append_table_size(i, want):
    assert hexed(encode.append_table_size, i) == want


def test_set_max_dynamic_table_size_keeps_the_least_and_the_limit():
    e = Encoder()
    for v, min_size, max_size in ((2048, 2048, 2048), (16384, 2048, 4096)):
        e.set_max_dynamic_table_size(v)
        assert (e.table_size_update, e.min_size, e.dyn_tab.max_size) == (True, min_size, max_size)


def test_set_max_dynamic_table_size_limit():
    e = Encoder()
    e.set_max_dynamic_table_size_limit(4095)
    assert (e.dyn_tab.max_size, e.max_size_limit, e.table_size_update) == (4095, 4095, True)
    e.set_max_dynamic_table_size(16384)
    assert e.dyn_tab.max_size == 4095
    e.set_max_dynamic_table_size_limit(8192)
    assert (e.dyn_tab.max_size, e.max_size_limit) == (4095, 8192)


def test_the_static_table_maps_a_name_to_its_last_entry():
    # Go's gen.go adds the entries in order, so a later entry of a name takes its place in byName
    assert STATIC_TABLE.search(pair(":status", "201")) == (14, False)
    assert STATIC_TABLE.search(pair(":path", "/x")) == (5, False)
    assert STATIC_TABLE.search(pair(":status", "404")) == (13, True)


@given(st.binary(max_size=60))
def test_huffman_coding_is_rfc_7541s(s):
    buf = bytearray()
    append_huffman_string(buf, s)
    assert bytes(buf) == HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH).encode(s)
    assert huffman_encode_length(s) == len(buf)


NAMES = st.sampled_from([b"audit-id", b"date", b"content-type", b"x-custom", b":status", b"cache-control", b"cookie"])
FIELDS = st.lists(st.tuples(NAMES, st.binary(max_size=40), st.booleans()), max_size=8)
STEPS = st.lists(st.one_of(FIELDS, st.integers(0, 6000)), min_size=1, max_size=25)


@settings(max_examples=150, deadline=None)
@given(STEPS)
def test_what_is_encoded_decodes_to_the_fields_and_the_maps_agree_with_the_entries(steps):
    enc, dec = H2Encoder(), hpack.Decoder()
    for step in steps:
        if isinstance(step, int):  # the peer's SETTINGS_HEADER_TABLE_SIZE (its decoder takes it at once)
            enc.header_table_size = step
            dec.max_allowed_table_size = max(step, dec.max_allowed_table_size)
            continue
        fields = [hpack.NeverIndexedHeaderTuple(n, v) if sensitive else (n, v) for n, v, sensitive in step]
        assert dec.decode(enc.encode(fields), raw=True) == [(n, v) for n, v, _ in step]
        table = enc.dyn_tab.table
        assert enc.dyn_tab.size == sum(f.size() for f in table.ents) <= enc.dyn_tab.max_size
        for f in table.ents:
            newest = max(i for i, g in enumerate(table.ents) if g.name == f.name)
            assert table.search(HeaderField(f.name, b"\0never")) == (len(table.ents) - newest, False)
            newest = max(i for i, g in enumerate(table.ents) if (g.name, g.value) == (f.name, f.value))
            assert table.search(f) == (len(table.ents) - newest, True)


def answer_block(conn: GracefulH2Connection, stream_id: int) -> bytes:
    """The header block of the HEADERS frame ``conn`` sends for an answer on ``stream_id``."""
    conn.send_headers(stream_id, [(":status", "200"), ("content-type", "text/plain")], end_stream=True)
    sent = conn.data_to_send()
    while sent:
        frame, length = Frame.parse_frame_header(memoryview(sent[:9]))
        frame.parse_body(memoryview(sent[9:9 + length]))
        if frame.type == 0x1:
            return bytes(frame.data)
        sent = sent[9 + length:]
    raise AssertionError("no HEADERS frame")


def test_the_server_connection_codes_answers_with_go_s_encoder():
    server = GracefulH2Connection(config=h2_config())
    assert isinstance(server.encoder, H2Encoder)
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.local_settings = h2.settings.Settings(client=True, initial_values={
        h2.settings.SettingCodes.HEADER_TABLE_SIZE: 4096})
    client.initiate_connection()
    server.initiate_connection()
    server.receive_data(client.data_to_send())  # its SETTINGS: HEADER_TABLE_SIZE 4096, as before
    client.receive_data(server.data_to_send())
    for stream_id in (1, 3):
        client.send_headers(stream_id, [(":method", "GET"), (":scheme", "https"), (":path", "/version"),
                                        (":authority", "x")], end_stream=True)
        server.receive_data(client.data_to_send())
    # Go sends a size update after any SETTINGS_HEADER_TABLE_SIZE, the same size or not (h2's
    # encoder only after a change); ":status: 200" is static entry 8, content-type a new value
    # under static name 31, indexed: 5f, then "text/plain" Huffman-coded (7 octets)
    first = answer_block(server, 1)
    assert first.hex().startswith("3fe11f" + "88" + "5f87")
    assert answer_block(server, 3).hex() == "88be"  # both now indexed: static 8, dynamic 62

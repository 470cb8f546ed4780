"""A request's header block as Go's framer reads it (``readMetaFrame`` with golang.org/x/net/http2/hpack's
decoder, ported in genericserver/x/net/http2/hpack/decode.py): a block HPACK cannot decode ends
the connection with COMPRESSION_ERROR (its GOAWAY naming the block's stream, as kube-apiserver's
does: tests/parity/go-h2kube.json's ``hpack-undecodable``), a header list over ``MaxHeaderBytes`` + 320 is answered
431 on its stream (the fields up to the limit are decoded, the rest only kept in HPACK's table),
and a fragment more than twice what may still come ends the connection with PROTOCOL_ERROR. The
431 is recorded from kube-apiserver too (``header-list-431``)."""

from __future__ import annotations

import h2.errors
import hpack
from hyperframe.frame import ContinuationFrame, DataFrame, GoAwayFrame, HeadersFrame, RstStreamFrame

from test_http2_rules import answered, get, raw_frames
from test_http2server import serve, text  # noqa: F401 - serve is the fixture

E = h2.errors.ErrorCodes


def goaways(frames):
    return [(f.error_code, f.last_stream_id) for f in frames if isinstance(f, GoAwayFrame)]


def block(sid: int, data: bytes) -> HeadersFrame:
    return HeadersFrame(sid, data, flags=["END_HEADERS", "END_STREAM"])


def test_a_block_hpack_cannot_decode_ends_the_connection_with_compression_error(serve):
    h = serve(text(b"ok"))
    for data in (b"\x80",  # index 0
                 b"\xff\x80\x01",  # index 255: past both tables
                 b"\x82\x84\x87\x41",  # a literal whose name index is cut off
                 b"\x82\x84\x87\x41\x01x\x3f\xe1\x1f",  # a size update after a field the table holds
                 b"\x82\x84\x87\x41\x82\xff\xff"):  # Huffman with padding longer than 7 bits
        got = raw_frames(h, [block(1, data)], lambda fs: any(isinstance(f, GoAwayFrame) for f in fs))
        assert goaways(got) == [(E.COMPRESSION_ERROR, 1)], data.hex()  # the frame's stream: Go's framer hands it back


def test_a_size_update_after_the_first_field_is_refused_only_once_the_table_holds_one(serve):
    # Go's parseDynamicTableSizeUpdate; the hpack library refused it with the table empty too
    h = serve(text(b"ok"))
    data = b"\x82\x84\x87\x01\x01x\x3f\xe1\x1f"  # :authority: x, not indexed, then the update
    got = raw_frames(h, [block(1, data)], lambda fs: answered(fs, 1))
    assert answered(got, 1) and not goaways(got)


def test_a_header_list_over_the_limit_is_answered_431(serve):
    h = serve(text(b"ok"))
    h.srv.max_header_bytes = 1000  # the list may hold 1000 + 320 octets
    enc, dec = hpack.Encoder(), hpack.Decoder()
    big = [(f"x-field-{i}", "v" * 100) for i in range(12)]  # 12 * (10 + 100 + 32) octets: over 1320
    got = raw_frames(h, [get(enc, 1, *big), get(enc, 3)], lambda fs: answered(fs, 1) and answered(fs, 3))
    heads = {f.stream_id: dict(dec.decode(f.data, raw=False)) for f in got if isinstance(f, HeadersFrame)}
    body = b"".join(f.data for f in got if isinstance(f, DataFrame) and f.stream_id == 1)
    assert heads[1][":status"] == "431"
    assert body == b"<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>"
    assert heads[3][":status"] == "200"  # HPACK stayed in step: the fields past the limit were read
    assert not goaways(got) and not any(isinstance(f, RstStreamFrame) for f in got)


def test_a_fragment_more_than_twice_the_list_left_ends_the_connection(serve):
    h = serve(text(b"ok"))
    h.srv.max_header_bytes = 1000
    enc = hpack.Encoder()
    huge = get(enc, 1, ("x-big", "v" * 4000))  # 3,500 octets Huffman-coded: over 2 * 1320
    got = raw_frames(h, [huge], lambda fs: any(isinstance(f, GoAwayFrame) for f in fs))
    assert goaways(got) == [(E.PROTOCOL_ERROR, 1)]


# -- a malformed field, in Go's order: each field judged as it is decoded (readMetaFrame's emit) --------
def fields_block(enc, sid, fields, end_headers=True):
    flags = ["END_STREAM"] + (["END_HEADERS"] if end_headers else [])
    return HeadersFrame(sid, enc.encode(fields), flags=flags)


BASE = [(":method", "GET"), (":path", "/"), (":scheme", "https"), (":authority", "x")]


def resets(frames):
    return [(f.stream_id, f.error_code) for f in frames if isinstance(f, RstStreamFrame)]


def test_a_malformed_field_that_would_cross_the_limit_is_a_stream_error_not_431(serve):
    # Go judges the field before it counts its size: the stream is reset, no 431
    h = serve(text(b"ok"))
    h.srv.max_header_bytes = 1000
    enc = hpack.Encoder()
    fields = BASE + [("x-a", "v" * 600), ("X-Upper", "v" * 800)]  # the second is malformed and over
    got = raw_frames(h, [fields_block(enc, 1, fields), get(enc, 3)], lambda fs: answered(fs, 3))
    assert resets(got) == [(1, E.PROTOCOL_ERROR)] and answered(got, 3) and not goaways(got)


def test_a_fragment_after_a_malformed_field_ends_the_connection(serve):
    h = serve(text(b"ok"))
    enc = hpack.Encoder()
    first = fields_block(enc, 1, BASE + [("X-Upper", "1")], end_headers=False)
    rest = ContinuationFrame(1, enc.encode([("x-more", "1")]), flags=["END_HEADERS"])
    got = raw_frames(h, [first, rest], lambda fs: any(isinstance(f, GoAwayFrame) for f in fs))
    assert goaways(got) == [(E.PROTOCOL_ERROR, 1)]


def test_an_unknown_pseudo_field_is_judged_once_the_block_is_read(serve):
    # checkPseudos runs on the whole block: a CONTINUATION after it is read, then the stream reset
    h = serve(text(b"ok"))
    enc = hpack.Encoder()
    first = fields_block(enc, 1, BASE + [(":foo", "1")], end_headers=False)
    rest = ContinuationFrame(1, enc.encode([("x-more", "1")]), flags=["END_HEADERS"])
    got = raw_frames(h, [first, rest, get(enc, 3)], lambda fs: answered(fs, 3))
    assert resets(got) == [(1, E.PROTOCOL_ERROR)] and answered(got, 3) and not goaways(got)

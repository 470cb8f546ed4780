"""genericserver.x.net.http2.hpack: Go's HPACK decoder (hpack.go) and Huffman decoding (huffman.go), ported.

Go's hpack_test.go cases with their expected fields and errors, and properties: a block decodes
to the same fields however it is cut into pieces, and Huffman decoding undoes the encoding."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver.x.net.http2.hpack import encode
from genericserver.x.net.http2.hpack.encode import Encoder
from genericserver.x.net.http2.hpack.hpack import Decoder, DecodingError, HeaderField, _NeedMore, read_var_int
from genericserver.x.net.http2.hpack.huffman import (InvalidHuffmanError, StringLengthError, append_huffman_string,
                                                     huffman_decode)


def pair(name: str, value: str, sensitive: bool = False) -> HeaderField:
    return HeaderField(name.encode(), value.encode(), sensitive)


def dynamic_entries(d: Decoder) -> list:
    return list(reversed(d.dyn_tab.table.ents))  # newest first, as Go's reverseCopy


@pytest.mark.parametrize("data, want, table", [
    ("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",  # RFC 7541 C.2.1
     [pair("custom-key", "custom-header")], [pair("custom-key", "custom-header")]),
    ("040c 2f73 616d 706c 652f 7061 7468", [pair(":path", "/sample/path")], []),  # C.2.2
    ("1008 7061 7373 776f 7264 0673 6563 7265 74", [pair("password", "secret", True)], []),  # C.2.3
    ("82", [pair(":method", "GET")], []),  # C.2.4
])
def test_decode_the_rfcs_examples(data, want, table):
    d = Decoder(4096, lambda f: None)
    assert d.decode_full(bytes.fromhex(data.replace(" ", ""))) == want
    assert dynamic_entries(d) == table


@pytest.mark.parametrize("data", [b"\xff", b"\x1f\xff", b"\x1f\xff\xff", b"\x1f\xff\xff\xff",
                                  b"\xff\x9f\xff\xff\xff",  # padding of 29 bits
                                  b"R\xbc0\xff\xff\xff\xff",  # padding that ends inside a symbol
                                  b"\xff\xff\xff\xff\xfc",  # the end-of-string code, then "?"
                                  b"\x00"])  # padding of zeros
def test_invalid_huffman(data):
    with pytest.raises(InvalidHuffmanError):
        huffman_decode(data)


def test_huffman_max_length_on_the_trailing_byte():
    with pytest.raises(StringLengthError):
        huffman_decode(b"\x00\x01", 2)  # "000"


@pytest.mark.parametrize("n, data, want", [
    (1, [0], (0, 1)), (2, [2], (2, 1)), (3, [6], (6, 1)), (4, [14], (14, 1)), (5, [30], (30, 1)),
    (6, [62], (62, 1)), (7, [126], (126, 1)), (8, [254], (254, 1)),
    (1, [1], None), (2, [3], None), (3, [7], None), (4, [15], None), (5, [31], None), (6, [63], None),
    (7, [127], None), (8, [255], None),  # each needs more
    (5, [255, 154, 10], (1337, 3)), (5, [159, 154, 10], (1337, 3)), (5, [191, 154, 10], (1337, 3)),
    (5, [191, 154, 10, 2], (1337, 3)), (5, [191, 154], None)])
def test_read_var_int(n, data, want):
    if want is None:
        with pytest.raises(_NeedMore):
            read_var_int(n, bytes(data), 0)
    else:
        assert read_var_int(n, bytes(data), 0) == want


def test_read_var_int_overflow():
    with pytest.raises(DecodingError, match="varint integer overflow"):
        read_var_int(1, bytes([255] + [128] * 15), 0)


def test_emit_can_be_turned_off_while_the_block_is_still_decoded():
    e = Encoder()
    e.write_field(pair("foo", "bar"))
    e.write_field(pair("foo", "bar"))
    calls = []

    def emit(f):
        calls.append(f)
        d.emit_enabled = False

    d = Decoder(8 << 20, emit)
    d.write(bytes(e.buf))
    assert len(calls) == 1 and not d.emit_enabled


def test_a_piece_left_incomplete_is_bounded_by_the_string_limit():
    got = []
    d = Decoder(4096, got.append)
    d.max_str_len = 1 << 10
    frag = bytearray([encode.encode_type_byte(False, False)])
    encode.append_var_int(frag, 7, 3)
    frag += b"foo"
    encode.append_var_int(frag, 7, 3)
    frag += b"bar"
    d.write(bytes(frag))
    assert got == [pair("foo", "bar")]
    frag = bytearray([encode.encode_type_byte(False, False)])
    encode.append_var_int(frag, 7, 3 << 10)
    frag += bytes(3 << 10)
    with pytest.raises(StringLengthError):
        d.write(bytes(frag))


def test_a_size_update_comes_first_in_a_block():
    e = Encoder()
    e.set_max_dynamic_table_size(255)
    e.write_field(pair("foo", "bar"))
    d = Decoder(4096, lambda f: None)
    d.write(bytes(e.buf))
    d.close()
    d.write(bytes(e.buf))  # a new block: the update is first
    with pytest.raises(DecodingError, match="MUST occur at the beginning"):
        d.write(bytes(e.buf))  # the same block, with the table holding foo


def test_a_block_that_ends_inside_a_field_is_truncated():
    d = Decoder(4096, lambda f: None)
    d.write(b"\x41")  # a literal whose value never comes
    with pytest.raises(DecodingError, match="truncated headers"):
        d.close()


FIELDS = st.lists(st.tuples(st.sampled_from([b"a", b"cookie", b":path", b"x-long-name"]), st.binary(max_size=30),
                            st.booleans()), min_size=1, max_size=10)


@given(st.lists(FIELDS, min_size=1, max_size=4), st.data())
def test_a_block_decodes_the_same_in_any_pieces(blocks, data):
    e, whole, pieces = Encoder(), Decoder(4096, lambda f: None), Decoder(4096, lambda f: None)
    for fields in blocks:
        e.buf = bytearray()
        for name, value, sensitive in fields:
            e.write_field(HeaderField(name, value, sensitive))
        block = bytes(e.buf)
        want = [HeaderField(n, v, s) for n, v, s in fields]
        assert whole.decode_full(block) == want
        cuts = sorted(data.draw(st.lists(st.integers(0, len(block)), max_size=4)))
        got: list = []
        pieces.emit = got.append
        for start, end in zip([0, *cuts], [*cuts, len(block)]):
            pieces.write(block[start:end])
        pieces.close()
        assert got == want


@given(st.binary(max_size=80))
def test_huffman_decoding_undoes_the_encoding(s):
    buf = bytearray()
    append_huffman_string(buf, s)
    assert huffman_decode(bytes(buf)) == s

"""Tests of genericserver.net.http.internal.chunked: Go's chunked.go, with the cases of its chunked_test.go that apply
to reading, and the request-smuggling shapes Go fixed (CVE-2023-39326, CVE-2025-22871)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from genericserver.bufio import bufio
from genericserver.net.http.internal.chunked import ChunkedError, ChunkedReader, UnexpectedEOF, parse_hex_uint


def reader_of(data: bytes, piece: int = 7) -> ChunkedReader:
    """A chunked reader over ``data``, delivered ``piece`` bytes per read as a socket might."""
    src = [data[i : i + piece] for i in range(0, len(data), piece)]

    def rd(n: int) -> bytes:
        if not src:
            return b""
        head = src.pop(0)
        if len(head) > n:
            src.insert(0, head[n:])
            head = head[:n]
        return head

    return ChunkedReader(bufio.Reader(rd))


def read_all(r: ChunkedReader) -> bytes:
    out = b""
    while chunk := r.read(5):
        out += chunk
    return out


def encode(pieces: list[bytes], ext: bytes = b"") -> bytes:
    return b"".join(b"%x%s\r\n%s\r\n" % (len(p), ext, p) for p in pieces if p) + b"0\r\n"


def test_TestChunk_reads_the_data_and_stops_at_the_last_chunk():
    r = reader_of(b"7\r\nhello, \r\n17\r\nworld! 0123456789abcdef\r\n0\r\n" + b"Trailer: here\r\n\r\n")
    assert read_all(r) == b"hello, world! 0123456789abcdef"
    assert r.read(5) == b""  # stays at the end; the trailer is transfer.go's to read
    rest = b"".join(iter(lambda: r.r.read(100), b""))
    assert rest == b"Trailer: here\r\n\r\n"  # nothing of the trailer was consumed


@pytest.mark.parametrize(
    "size_line,error",
    [
        (b"0x19", "invalid byte in chunk length"),
        (b"+19", "invalid byte in chunk length"),
        (b"1_9", "invalid byte in chunk length"),
        (b" 19", "invalid byte in chunk length"),
        (b"-0", "invalid byte in chunk length"),
        (b"", "empty hex number for chunk length"),
        (b"1" * 17, "http chunk length too large"),
        (b"19 ;ext", "invalid byte in chunk length"),  # no space before the extension
    ],
    ids=["0x-prefix", "plus-sign", "underscore", "leading-space", "negative-zero", "empty", "17-digits", "space-before-ext"],
)
def test_python_int_accepts_chunk_sizes_go_refuses(size_line, error):
    r = reader_of(size_line + b"\r\n" + b"x" * 25 + b"\r\n0\r\n\r\n")
    with pytest.raises(ChunkedError, match=error):
        read_all(r)
    with pytest.raises(ChunkedError, match=error):
        r.read(5)  # the error sticks


@pytest.mark.parametrize(
    "body,error",
    [
        (b"5\nhello\r\n0\r\n", "chunked line ends with bare LF"),
        (b"5\r\nhello\n0\r\n", "malformed chunked encoding"),
        (b"5\r\nhelloXY0\r\n", "malformed chunked encoding"),
        (b"5\r\r\nhello\r\n0\r\n", "invalid CR in chunked line"),
        (b"5;a\rb\r\nhello\r\n0\r\n", "invalid CR in chunked line"),
        (b"5" + b" " * 5000 + b"\r\nhello\r\n0\r\n", "header line too long"),
    ],
    ids=["bare-lf-after-size", "bare-lf-after-data", "garbage-after-data", "double-cr", "cr-in-extension", "size-line-too-long"],
)
def test_line_endings_and_framing_errors(body, error):
    with pytest.raises(ChunkedError, match=error):
        read_all(reader_of(body))


def test_trailing_whitespace_or_an_extension_is_allowed_but_not_whitespace_before_the_extension():
    assert read_all(reader_of(b"5;name=value;x\r\nhello\r\n3 \t\r\nbye\r\n0;last\r\n")) == b"hellobye"
    with pytest.raises(ChunkedError, match="invalid byte in chunk length"):
        read_all(reader_of(b"5 \t;name\r\nhello\r\n0\r\n"))  # trailing space is trimmed only at the line's end


def test_too_much_extension_overhead_is_refused_but_normal_use_is_not():
    # CVE-2023-39326: 1 byte of data per chunk, each with a 1 KiB extension
    one_byte_chunks = b"".join(b"1;" + b"e" * 1024 + b"\r\nx\r\n" for _ in range(20)) + b"0\r\n"
    with pytest.raises(ChunkedError, match="chunked encoding contains too much non-data"):
        read_all(reader_of(one_byte_chunks, piece=4096))
    # the same extensions on big chunks are paid for by their data
    big_chunks = b"".join(b"800;" + b"e" * 1024 + b"\r\n" + b"y" * 0x800 + b"\r\n" for _ in range(20)) + b"0\r\n"
    assert read_all(reader_of(big_chunks, piece=4096)) == b"y" * (0x800 * 20)


def test_a_body_cut_off_is_an_unexpected_eof():
    with pytest.raises(UnexpectedEOF):
        read_all(reader_of(b"a\r\nhello"))
    with pytest.raises(UnexpectedEOF):
        read_all(reader_of(b"5\r\nhello\r"))
    with pytest.raises(UnexpectedEOF):
        read_all(reader_of(b"5\r\nhel"))


@given(st.integers(min_value=0, max_value=(1 << 64) - 1), st.booleans())
def test_parse_hex_uint_agrees_with_int_on_plain_hex(n, upper):
    digits = f"{n:x}"
    assert parse_hex_uint((digits.upper() if upper else digits).encode()) == n


@given(st.lists(st.binary(min_size=0, max_size=300), max_size=12), st.sampled_from([b"", b";a=b", b"; x", b" \t"]),
       st.integers(min_value=1, max_value=64))
def test_any_well_formed_body_reads_back_whatever_the_split(pieces, ext, piece):
    assert read_all(reader_of(encode(pieces, ext), piece)) == b"".join(pieces)

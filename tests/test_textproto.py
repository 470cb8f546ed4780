"""Tests of genericserver.textproto: Go's reader_test.go cases for ReadMIMEHeader, and its limits."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from genericserver import bufio
from genericserver.textproto import (
    MessageTooLarge,
    ProtocolError,
    Reader,
    UnexpectedEOF,
    canonical_mime_header_key,
)


def reader(data: bytes) -> Reader:
    src = [data]
    return Reader(bufio.Reader(lambda n: src.pop(0) if src else b""))


def test_TestReadMIMEHeader_joins_repeated_keys_and_folded_lines():
    m = reader(b"my-key: Value 1  \r\nLong-key: Even \n Longer Value\r\nmy-Key: Value 2\r\n\n").read_mime_header()
    assert m == {"My-Key": ["Value 1", "Value 2"], "Long-Key": ["Even Longer Value"]}


def test_TestReadMIMEHeaderSingle_and_no_key_canonicalisation_with_a_space():
    assert reader(b"Foo: bar\n\n").read_mime_header() == {"Foo": ["bar"]}
    # Go lets a space before the colon through, uncanonicalised, for net/http to refuse the name
    assert reader(b"Foo Bar: baz\r\n\r\n").read_mime_header() == {"Foo Bar": ["baz"]}


@pytest.mark.parametrize(
    "raw,error",
    [
        (b" First: line\r\n\r\n", 'malformed MIME header initial line: " First: line"'),
        (b"NoColon\r\n\r\n", 'malformed MIME header: missing colon: "NoColon"'),
        (b": empty key\r\n\r\n", 'malformed MIME header line: ": empty key"'),
        (b"K\x00ey: v\r\n\r\n", 'malformed MIME header line: "K\\x00ey: v"'),
        (b"Key: a\x00b\r\n\r\n", 'malformed MIME header line: "Key: a\\x00b"'),
        (b"Key: a\rb\r\n\r\n", 'malformed MIME header line: "Key: a\\rb"'),
        (b"Key: a\x7fb\r\n\r\n", 'malformed MIME header line: "Key: a\\x7fb"'),
        (b"Ke(y: v\r\n\r\n", 'malformed MIME header line: "Ke(y: v"'),
    ],
    ids=["space-first", "no-colon", "empty-key", "nul-in-key", "nul-in-value", "bare-cr-in-value", "del-in-value", "separator-in-key"],
)
def test_malformed_lines_are_protocol_errors_with_go_texts(raw, error):
    with pytest.raises(ProtocolError) as err:
        reader(raw).read_mime_header()
    assert str(err.value) == error


@pytest.mark.parametrize("byte", [c for c in range(0x20) if c != 0x09] + [0x7F])
def test_every_control_byte_but_tab_is_refused_in_a_value(byte):
    with pytest.raises(ProtocolError):
        reader(b"X: a" + bytes([byte]) + b"b\r\n\r\n").read_mime_header()


def test_tab_and_obs_text_are_allowed_in_a_value():
    assert reader(b"X: a\tb\xe9\r\n\r\n").read_mime_header() == {"X": ["a\tb\xe9"]}


def test_max_headers_counts_lines_and_says_message_too_large():
    lines = b"".join(b"H%d: v\r\n" % i for i in range(500))
    assert len(reader(lines + b"\r\n").read_mime_header(500)) == 500
    with pytest.raises(MessageTooLarge, match="message too large"):
        reader(lines + b"One-More: v\r\n\r\n").read_mime_header(500)


def test_the_stream_ending_inside_the_header_is_an_unexpected_eof():
    with pytest.raises(UnexpectedEOF):
        reader(b"Key: v\r\n").read_mime_header()


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-", min_size=1, max_size=30))
def test_canonical_keys_are_idempotent_and_case_insensitive(key):
    once = canonical_mime_header_key(key)
    assert canonical_mime_header_key(once) == once == canonical_mime_header_key(key.swapcase())
    assert once.lower() == key.lower()

"""Tests of genericserver.net.textproto.reader: Go's reader_test.go cases for ReadMIMEHeader, and its limits."""

from __future__ import annotations

import pytest
from hypothesis import example, given, strategies as st

from genericserver.bufio import bufio
from genericserver.x.net.http.httpguts import httplex as httpguts
from genericserver.net.textproto.reader import (
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


def _outcome(r: Reader, max_headers: int):
    """What reading the header gives: the map and the bytes left after it, or the error."""
    try:
        m = r.read_mime_header(max_headers)
    except (ProtocolError, MessageTooLarge, UnexpectedEOF) as err:
        return type(err).__name__, str(err)
    rest = b""
    while True:
        more = r.r.read(4096)
        if not more:
            return m, rest
        rest += more


def buffered(data: bytes) -> Reader:
    """A reader with all of ``data`` in its buffer already, as the request line's read leaves it."""
    r = reader(data)
    r.r.peek(1)
    assert r.r.buffered() == len(data)
    return r


def byte_by_byte(data: bytes) -> Reader:
    """A reader whose source gives one byte per read, so the header is never buffered whole."""
    src = list(data)
    return Reader(bufio.Reader(lambda n: bytes([src.pop(0)]) if src else b""))


_PIECES = ["Host", "a", "x-Y", ":", ": ", " ", "\t", "\r", "\x00", "\x7f", "\xe9", "(", "v 1"]
_LINE = st.one_of(
    st.builds("{}:{}{}".format, st.sampled_from(["Host", "accept", "X-a", "a b", "K\xe9"]), st.sampled_from(["", " ", "\t "]),
              st.sampled_from(["v", "a b ", "\xe9", "x\ty", ""])),  # well formed, mostly
    st.lists(st.sampled_from(_PIECES), max_size=6).map("".join),  # anything
)


@given(st.lists(st.tuples(st.sampled_from(["", "", " ", "\t"]), _LINE, st.sampled_from(["\r\n", "\r\n", "\n"])), max_size=8),
       st.sampled_from(["\r\n", "\n"]), st.integers(1, 6))
def test_a_header_read_at_one_go_is_read_as_line_by_line(lines, end, max_headers):
    # the buffered shortcut (the whole header in bufio's buffer) against Go's line-by-line
    # reading: the same map and the same bytes left, or the same error
    data = "".join(fold + line + eol for fold, line, eol in lines).encode("latin-1") + end.encode() + b"BODY"
    assert _outcome(buffered(data), max_headers) == _outcome(byte_by_byte(data), max_headers)


@given(st.lists(st.tuples(st.sampled_from(["", "", " ", "\t"]), _LINE, st.sampled_from(["\r\n", "\r\n", "\n"])), max_size=8),
       st.sampled_from(["\r\n", "\n"]))
@example([("", "a:\x00", "\r\n")], "\r\n")
@example([("", "Host:\x7f", "\r\n"), ("", "a b:1", "\r\n")], "\r\n")
def test_a_header_marked_checked_passes_net_https_name_and_value_tests(lines, end):
    # the server skips its own test of every name and value for a header the reader marks
    # checked: that header must pass both (ValidHeaderFieldName, ValidHeaderFieldValue)
    data = "".join(fold + line + eol for fold, line, eol in lines).encode("latin-1") + end.encode() + b"BODY"
    r = buffered(data)
    try:
        m = r.read_mime_header()
    except (ProtocolError, UnexpectedEOF, MessageTooLarge):
        return
    if r.checked:
        assert all(httpguts.valid_header_field_name(k) for k in m)
        assert all(httpguts.valid_header_field_value(v) for vs in m.values() for v in vs)


def test_only_a_header_read_at_one_go_is_marked_checked():
    r = buffered(b"Host: a\r\nAccept: */*\r\n\r\nBODY")
    assert r.read_mime_header() == {"Host": ["a"], "Accept": ["*/*"]} and r.checked
    r = buffered(b"Host: a\r\nX Y: 1\r\n\r\n")  # a space in a name: read line by line, for net/http to refuse
    assert r.read_mime_header() == {"Host": ["a"], "X Y": ["1"]} and not r.checked
    r = byte_by_byte(b"Host: a\r\n\r\n")  # not in the buffer whole
    assert r.read_mime_header() == {"Host": ["a"]} and not r.checked

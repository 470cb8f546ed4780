"""Tests of genericserver.bufio.bufio: the ReadLine, ReadSlice and Peek semantics net/http relies on."""

from __future__ import annotations

from genericserver.bufio import bufio


def reader(*pieces: bytes, size: int = 16) -> bufio.Reader:
    src = list(pieces)

    def rd(n: int) -> bytes:  # what a socket would return: at most n bytes of what arrived
        if not src:
            return b""
        head = src.pop(0)
        if len(head) > n:
            src.insert(0, head[n:])
        return head[:n]

    return bufio.Reader(rd, size)


def test_read_line_strips_crlf_or_lf_and_returns_a_last_unterminated_line():
    r = reader(b"one\r\ntwo\nthr", b"ee")
    assert r.read_line() == (b"one", False, None)
    assert r.read_line() == (b"two", False, None)
    assert r.read_line() == (b"three", False, None)  # at the end of the stream: still a line
    assert r.read_line() == (b"", False, bufio.EOF)


def test_a_line_longer_than_the_buffer_comes_in_prefixed_pieces_and_a_split_crlf_is_kept_whole():
    r = reader(b"0123456789abcde\r", b"\nnext\n", size=16)
    assert r.read_line() == (b"0123456789abcde", True, None)  # the "\r" waits for its "\n"
    assert r.read_line() == (b"", False, None)
    assert r.read_line() == (b"next", False, None)


def test_read_slice_reports_a_full_buffer_and_peek_never_consumes():
    r = reader(b"x" * 20, size=16)
    assert r.peek(4) == (b"xxxx", None) and r.buffered() == 16
    assert r.read_slice(ord("\n")) == (b"x" * 16, bufio.BUFFER_FULL)
    assert r.read_slice(ord("\n")) == (b"x" * 4, bufio.EOF)
    assert r.peek(1) == (b"", bufio.EOF)


def test_a_big_read_with_an_empty_buffer_goes_straight_to_the_source():
    asked = []
    r = bufio.Reader(lambda n: asked.append(n) or b"y" * min(n, 100), 16)
    assert r.read(64) == b"y" * 64 and asked == [64] and r.buffered() == 0
    assert r.read(4) == b"yyyy" and asked == [64, 16] and r.buffered() == 12

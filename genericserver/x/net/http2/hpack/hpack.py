"""Port of Go's golang.org/x/net/http2/hpack package (hpack.go, v0.49.0): ``HeaderField``, the ``dynamicTable`` and the ``Decoder``.

The server's HTTP/2 connection decodes each request's header block with :class:`Decoder`, as Go's
framer does (``readMetaFrame``, h2conn.py): every field is handed to an ``emit`` function, which
may turn emitting off and still have the block decoded to its end, so that the table stays in
step with the client's. Go's decoder takes a block in pieces (``Write``, then ``Close``) and keeps
what a piece left incomplete; a piece here is a frame's fragment of the block, and an incomplete
field at ``close`` is Go's "truncated headers".
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from hpack.table import HeaderTable

from genericserver.x.net.http2.hpack.huffman import StringLengthError, huffman_decode
from genericserver.x.net.http2.hpack.tables import HeaderFieldTable


class HeaderField(NamedTuple):
    """A name and value, as bytes; a ``sensitive`` one is never put in a table (RFC 7541 7.1.3)."""

    name: bytes
    value: bytes
    sensitive: bool = False

    def size(self) -> int:
        """What the entry counts against a table's size (RFC 7541 4.1): its octets and 32 more."""
        return len(self.name) + len(self.value) + 32


class DynamicTable:
    """Go's ``dynamicTable``: the entries added, oldest evicted first while over ``max_size``."""

    __slots__ = ("table", "size", "max_size", "allowed_max_size")

    def __init__(self) -> None:
        self.table = HeaderFieldTable()
        self.size = 0  # in octets, as ``HeaderField.size`` counts them
        self.max_size = 0
        self.allowed_max_size = 0  # the most a size update from the peer may set (a decoder's)

    def set_max_size(self, v: int) -> None:
        self.max_size = v
        self.evict()

    def add(self, f: HeaderField) -> None:
        self.table.add_entry(f)
        self.size += f.size()
        self.evict()

    def evict(self) -> None:
        ents, n = self.table.ents, 0
        while self.size > self.max_size and n < len(ents):
            self.size -= ents[n].size()
            n += 1
        self.table.evict_oldest(n)


class DecodingError(ValueError):
    """Go's ``DecodingError``: the block is not valid HPACK."""


class InvalidIndexError(DecodingError):
    """Go's ``InvalidIndexError``, which it wraps in a ``DecodingError``."""

    def __init__(self, index: int):
        super().__init__(f"decoding error: invalid indexed representation index {index}")


class _NeedMore(Exception):
    """Go's ``errNeedMore``: the piece ends inside a field."""


VARINT_OVERFLOW = "decoding error: varint integer overflow"


class Decoder:
    """Go's ``Decoder``: a connection's decoding context. ``emit(field)`` gets each field while
    ``emit_enabled``; ``max_str_len`` (0: none) bounds a name or value."""

    def __init__(self, max_dynamic_table_size: int, emit: Callable[[HeaderField], None]):
        self.dyn_tab = DynamicTable()
        self.dyn_tab.allowed_max_size = max_dynamic_table_size
        self.dyn_tab.set_max_size(max_dynamic_table_size)
        self.emit = emit
        self.emit_enabled = True
        self.max_str_len = 0
        self.save_buf = b""  # what the last piece left of an incomplete field
        self.first_field = True

    def write(self, p: bytes) -> None:
        """Decode a piece of a block; raises what Go's ``Write`` returns."""
        if not p:
            return
        buf = self.save_buf + p if self.save_buf else p
        self.save_buf = b""
        pos = 0
        while pos < len(buf):
            try:
                pos = self.parse_header_field_repr(buf, pos)
            except _NeedMore:
                # (the varint and string readers catch overlong fields first; Go keeps this
                # bound as a last resort)
                if self.max_str_len and len(buf) - pos > 2 * (self.max_str_len + 8):
                    raise StringLengthError() from None
                self.save_buf = buf[pos:]
                return
            self.first_field = False

    def close(self) -> None:
        """The block ended: an incomplete field is an error; the next block starts afresh."""
        if self.save_buf:
            self.save_buf = b""
            raise DecodingError("decoding error: truncated headers")
        self.first_field = True

    def decode_full(self, p: bytes) -> list[HeaderField]:
        """Go's ``DecodeFull``: a whole block's fields."""
        fields: list[HeaderField] = []
        emit, self.emit = self.emit, fields.append
        try:
            self.write(p)
            self.close()
        finally:
            self.emit = emit
        return fields

    def at(self, i: int) -> Optional[HeaderField]:
        """Entry ``i`` of the static table then the dynamic one (newest first); None past both."""
        static = STATIC_ENTRIES
        if i == 0:
            return None
        if i <= len(static):
            return static[i - 1]
        ents = self.dyn_tab.table.ents
        if i > len(ents) + len(static):
            return None
        return ents[len(ents) - (i - len(static))]

    def parse_header_field_repr(self, buf: bytes, pos: int) -> int:
        """One representation at ``pos``; where the next begins."""
        b = buf[pos]
        if b & 128:
            return self.parse_field_indexed(buf, pos)  # 6.1
        if b & 192 == 64:
            return self.parse_field_literal(buf, pos, 6, indexed=True, sensitive=False)  # 6.2.1
        if b & 240 == 0:
            return self.parse_field_literal(buf, pos, 4, indexed=False, sensitive=False)  # 6.2.2
        if b & 240 == 16:
            return self.parse_field_literal(buf, pos, 4, indexed=False, sensitive=True)  # 6.2.3
        if b & 224 == 32:
            return self.parse_dynamic_table_size_update(buf, pos)  # 6.3
        raise DecodingError("decoding error: invalid encoding")

    def parse_field_indexed(self, buf: bytes, pos: int) -> int:
        idx, pos = read_var_int(7, buf, pos)
        hf = self.at(idx)
        if hf is None:
            raise InvalidIndexError(idx)
        self.call_emit(HeaderField(hf.name, hf.value))
        return pos

    def parse_field_literal(self, buf: bytes, pos: int, n: int, indexed: bool, sensitive: bool) -> int:
        name_idx, pos = read_var_int(n, buf, pos)
        want_str = self.emit_enabled or indexed
        name = b""
        if name_idx > 0:
            ihf = self.at(name_idx)
            if ihf is None:
                raise InvalidIndexError(name_idx)
            name = ihf.name
        else:
            undecoded_name, pos = self.read_string(buf, pos)
        undecoded_value, pos = self.read_string(buf, pos)
        value = b""
        if want_str:  # (past the list's limit Go keeps the table in step without decoding)
            if name_idx <= 0:
                name = self.decode_string(undecoded_name)
            value = self.decode_string(undecoded_value)
        hf = HeaderField(name, value, sensitive)
        if indexed:
            self.dyn_tab.add(HeaderField(name, value))
        self.call_emit(hf)
        return pos

    def call_emit(self, hf: HeaderField) -> None:
        if self.max_str_len and (len(hf.name) > self.max_str_len or len(hf.value) > self.max_str_len):
            raise StringLengthError()
        if self.emit_enabled:
            self.emit(hf)

    def parse_dynamic_table_size_update(self, buf: bytes, pos: int) -> int:
        # RFC 7541 4.2: only at the start of the first block after a change of size
        if not self.first_field and self.dyn_tab.size > 0:
            raise DecodingError("decoding error: dynamic table size update MUST occur at the beginning of a header block")
        size, pos = read_var_int(5, buf, pos)
        if size > self.dyn_tab.allowed_max_size:
            raise DecodingError("decoding error: dynamic table size update too large")
        self.dyn_tab.set_max_size(size)
        return pos

    def read_string(self, buf: bytes, pos: int) -> tuple[tuple[bool, bytes], int]:
        """A string literal, undecoded: (Huffman-coded or not, its octets), and what follows."""
        if pos >= len(buf):
            raise _NeedMore()
        is_huff = bool(buf[pos] & 128)
        str_len, pos = read_var_int(7, buf, pos)
        if self.max_str_len and str_len > self.max_str_len:
            raise StringLengthError()  # (before any Huffman error in it: Go's order)
        if len(buf) - pos < str_len:
            raise _NeedMore()
        return (is_huff, buf[pos:pos + str_len]), pos + str_len

    def decode_string(self, u: tuple[bool, bytes]) -> bytes:
        is_huff, b = u
        if not is_huff:
            return bytes(b)
        return huffman_decode(b, self.max_str_len)


def read_var_int(n: int, buf: bytes, pos: int) -> tuple[int, int]:
    """An integer with an ``n``-bit prefix at ``pos`` (RFC 7541 5.1), and where it ends."""
    if pos >= len(buf):
        raise _NeedMore()
    i = buf[pos] & ((1 << n) - 1)
    pos += 1
    if i < (1 << n) - 1:
        return i, pos
    m = 0
    while pos < len(buf):
        b = buf[pos]
        pos += 1
        i += (b & 127) << m
        if b & 128 == 0:
            return i, pos
        m += 7
        if m >= 63:  # (Go's bound, which it says it made up)
            raise DecodingError(VARINT_OVERFLOW)
    raise _NeedMore()


# RFC 7541 Appendix A, from the hpack library's copy; static_table.py makes the searchable table of them
STATIC_ENTRIES = [HeaderField(name, value) for name, value in HeaderTable.STATIC_TABLE]

__all__ = ["Decoder", "DecodingError", "DynamicTable", "HeaderField", "InvalidIndexError", "StringLengthError"]

"""Port of Go's golang.org/x/net/http2/hpack package (encode.go, v0.49.0): ``Encoder``, a connection's HPACK encoding context.

Go's http2 server writes each answer's fields through one of these (``writeResHeaders``); the
``h2`` library's connection takes one in place of its own (:class:`H2Encoder`), so an answer's
header block is the octets Go's would be:

* a field found with its value in the static table, else in the dynamic one, is sent as that
  index; otherwise under the index of its name where one has it (the static table's first) and
  its value as a literal, or as a new name;
* every field goes into the dynamic table unless it is sensitive or larger than the table;
* a string is Huffman-coded only where that makes it shorter;
* after the client sets ``SETTINGS_HEADER_TABLE_SIZE`` the next block starts with a table size
  update (two where the size went down and up again in between), even for the size it had.

The ``hpack`` library's encoder differs in each of the last three and searches its dynamic table
entry by entry (tables.py).
"""

from __future__ import annotations

from typing import Any, Iterable

from genericserver.x.net.http2.hpack.hpack import DynamicTable, HeaderField
from genericserver.x.net.http2.hpack.huffman import append_huffman_string, huffman_encode_length
from genericserver.x.net.http2.hpack.static_table import STATIC_TABLE

UINT32_MAX = (1 << 32) - 1
INITIAL_HEADER_TABLE_SIZE = 4096
STATIC_LEN = len(STATIC_TABLE.ents)


class Encoder:
    """Go's ``Encoder``; ``write_field`` adds to ``buf`` where Go writes to its writer."""

    def __init__(self) -> None:
        self.dyn_tab = DynamicTable()
        self.min_size = UINT32_MAX  # the least size set since the last size update was sent
        self.max_size_limit = INITIAL_HEADER_TABLE_SIZE  # no size above this is taken
        self.table_size_update = False  # a size update is owed
        self.buf = bytearray()
        self.dyn_tab.set_max_size(INITIAL_HEADER_TABLE_SIZE)

    def write_field(self, f: HeaderField) -> None:
        buf = self.buf
        if self.table_size_update:
            self.table_size_update = False
            if self.min_size < self.dyn_tab.max_size:
                append_table_size(buf, self.min_size)
            self.min_size = UINT32_MAX
            append_table_size(buf, self.dyn_tab.max_size)
        idx, name_value_match = self.search_table(f)
        if name_value_match:
            append_indexed(buf, idx)
            return
        indexing = self.should_index(f)
        if indexing:
            self.dyn_tab.add(f)
        if idx == 0:
            append_new_name(buf, f, indexing)
        else:
            append_indexed_name(buf, f, idx, indexing)

    def search_table(self, f: HeaderField) -> tuple[int, bool]:
        """The static table first; the dynamic one for a whole match, or for a name the static
        table lacks. ``(0, False)``: neither has the name."""
        i, name_value_match = STATIC_TABLE.search(f)
        if name_value_match:
            return i, True
        j, name_value_match = self.dyn_tab.table.search(f)
        if name_value_match or (i == 0 and j != 0):
            return j + STATIC_LEN, name_value_match
        return i, False

    def set_max_dynamic_table_size(self, v: int) -> None:
        """The peer's ``SETTINGS_HEADER_TABLE_SIZE``, bounded by ``max_size_limit``."""
        v = min(v, self.max_size_limit)
        self.min_size = min(self.min_size, v)
        self.table_size_update = True
        self.dyn_tab.set_max_size(v)

    def max_dynamic_table_size(self) -> int:
        return self.dyn_tab.max_size

    def set_max_dynamic_table_size_limit(self, v: int) -> None:
        self.max_size_limit = v
        if self.dyn_tab.max_size > v:
            self.table_size_update = True
            self.dyn_tab.set_max_size(v)

    def should_index(self, f: HeaderField) -> bool:
        return not f.sensitive and f.size() <= self.dyn_tab.max_size


def append_indexed(dst: bytearray, i: int) -> None:
    """An indexed header field (RFC 7541 6.1)."""
    first = len(dst)
    append_var_int(dst, 7, i)
    dst[first] |= 0x80


def append_new_name(dst: bytearray, f: HeaderField, indexing: bool) -> None:
    """A literal field with a new name (6.2): never indexed if sensitive, else with incremental
    indexing or without, as ``indexing`` says."""
    dst.append(encode_type_byte(indexing, f.sensitive))
    append_hpack_string(dst, f.name)
    append_hpack_string(dst, f.value)


def append_indexed_name(dst: bytearray, f: HeaderField, i: int, indexing: bool) -> None:
    """A literal field whose name is entry ``i`` (6.2)."""
    first = len(dst)
    append_var_int(dst, 6 if indexing else 4, i)
    dst[first] |= encode_type_byte(indexing, f.sensitive)
    append_hpack_string(dst, f.value)


def append_table_size(dst: bytearray, v: int) -> None:
    """A dynamic table size update (6.3)."""
    first = len(dst)
    append_var_int(dst, 5, v)
    dst[first] |= 0x20


def append_var_int(dst: bytearray, n: int, i: int) -> None:
    """``i`` as an integer with an ``n``-bit prefix (5.1)."""
    k = (1 << n) - 1
    if i < k:
        dst.append(i)
        return
    dst.append(k)
    i -= k
    while i >= 128:
        dst.append(0x80 | (i & 0x7F))
        i >>= 7
    dst.append(i)


def append_hpack_string(dst: bytearray, s: bytes) -> None:
    """A string literal (5.2), Huffman-coded only where that is strictly shorter."""
    huffman_length = huffman_encode_length(s)
    if huffman_length < len(s):
        first = len(dst)
        append_var_int(dst, 7, huffman_length)
        append_huffman_string(dst, s)
        dst[first] |= 0x80
    else:
        append_var_int(dst, 7, len(s))
        dst += s


def encode_type_byte(indexing: bool, sensitive: bool) -> int:
    if sensitive:
        return 0x10
    if indexing:
        return 0x40
    return 0


class H2Encoder(Encoder):
    """The encoder as the ``h2`` library's connection uses its own (``hpack.Encoder``): a header
    block from a list of fields, and the peer's table size set as an attribute. A field the
    ``hpack`` library would mark never-indexed (``NeverIndexedHeaderTuple``) is sensitive."""

    def encode(self, headers: Iterable[Any], huffman: bool = True) -> bytes:
        self.buf = bytearray()
        for field in headers:
            self.write_field(HeaderField(field[0], field[1], not getattr(field, "indexable", True)))
        return bytes(self.buf)

    @property
    def header_table_size(self) -> int:
        return self.max_dynamic_table_size()

    @header_table_size.setter
    def header_table_size(self, value: int) -> None:
        self.set_max_dynamic_table_size(value)


__all__ = ["Encoder", "H2Encoder", "INITIAL_HEADER_TABLE_SIZE"]

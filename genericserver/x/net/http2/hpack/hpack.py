"""Port of Go's golang.org/x/net/http2/hpack package (hpack.go, v0.49.0): ``HeaderField`` and the ``dynamicTable``, the parts the encoder uses.

The decoding half of hpack.go is not ported: the server's h2 connection decodes requests with the
``hpack`` library (server.py's docstring says why the answers are encoded here instead).
"""

from __future__ import annotations

from typing import NamedTuple

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

    __slots__ = ("table", "size", "max_size")

    def __init__(self) -> None:
        self.table = HeaderFieldTable()
        self.size = 0  # in octets, as ``HeaderField.size`` counts them
        self.max_size = 0

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


__all__ = ["DynamicTable", "HeaderField"]

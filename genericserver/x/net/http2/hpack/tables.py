"""Port of Go's golang.org/x/net/http2/hpack package (tables.go, v0.49.0): ``headerFieldTable``, a table searched by name and by name and value at once.

The ``hpack`` library searches its dynamic table entry by entry for every field it encodes; a
kube-apiserver answer adds an ``audit-id`` to it each time, so the table holds some fifty entries
and each answer's six or seven fields cost hundreds of comparisons. Go keeps two maps beside the
entries instead, and so does this table. The Huffman code tables of tables.go are RFC 7541's, as
huffman.py takes them from the ``hpack`` library.
"""

from __future__ import annotations

from typing import Any


class HeaderFieldTable:
    """The static table or a dynamic one.

    ``ents`` runs oldest first. Each entry gets an id when added (1, 2, ...; ``evict_count`` plus
    its place plus one), which eviction does not change, so the maps can hold ids: ``by_name``
    the newest entry of each name, ``by_name_value`` the newest of each name and value.
    """

    __slots__ = ("ents", "evict_count", "by_name", "by_name_value", "is_static")

    def __init__(self, is_static: bool = False) -> None:
        self.ents: list[Any] = []  # HeaderField
        self.evict_count = 0
        self.by_name: dict[bytes, int] = {}
        self.by_name_value: dict[tuple[bytes, bytes], int] = {}
        self.is_static = is_static  # (Go compares the table with its staticTable)

    def add_entry(self, f: Any) -> None:
        entry_id = len(self.ents) + self.evict_count + 1
        self.by_name[f.name] = entry_id
        self.by_name_value[(f.name, f.value)] = entry_id
        self.ents.append(f)

    def evict_oldest(self, n: int) -> None:
        if n > len(self.ents):
            raise ValueError(f"evictOldest({n}) on table with {len(self.ents)} entries")
        for k in range(n):
            f = self.ents[k]
            entry_id = self.evict_count + k + 1
            # a newer entry of the same name (and value) keeps its place in the maps
            if self.by_name.get(f.name) == entry_id:
                del self.by_name[f.name]
            if self.by_name_value.get((f.name, f.value)) == entry_id:
                del self.by_name_value[(f.name, f.value)]
        del self.ents[:n]
        self.evict_count += n

    def search(self, f: Any) -> tuple[int, bool]:
        """``(index, True)`` for an entry with ``f``'s name and value (never for a sensitive
        ``f``), ``(index, False)`` for one with its name only, ``(0, False)`` for none; an
        index is HPACK's, counted from 1 (RFC 7541 2.3.3)."""
        if not f.sensitive:
            entry_id = self.by_name_value.get((f.name, f.value))
            if entry_id:
                return self.id_to_index(entry_id), True
        entry_id = self.by_name.get(f.name)
        if entry_id:
            return self.id_to_index(entry_id), False
        return 0, False

    def id_to_index(self, entry_id: int) -> int:
        if entry_id <= self.evict_count:
            raise ValueError(f"id ({entry_id}) <= evictCount ({self.evict_count})")
        k = entry_id - self.evict_count - 1  # its place in ents
        if self.is_static:
            return k + 1
        return len(self.ents) - k  # a dynamic table counts from its newest entry


__all__ = ["HeaderFieldTable"]

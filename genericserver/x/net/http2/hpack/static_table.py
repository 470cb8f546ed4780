"""Port of Go's golang.org/x/net/http2/hpack package (static_table.go, v0.49.0): the static table, as a searchable table.

Go generates the file (gen.go) by adding RFC 7541 Appendix A's 61 entries in order, so a name
with several entries maps to its last (``:status`` to 14, ``500``). The entries here are
hpack.py's (the ``hpack`` library's copy of the same appendix), added the same way.
"""

from __future__ import annotations

from genericserver.x.net.http2.hpack.hpack import STATIC_ENTRIES
from genericserver.x.net.http2.hpack.tables import HeaderFieldTable


def _static_table() -> HeaderFieldTable:
    table = HeaderFieldTable(is_static=True)
    for f in STATIC_ENTRIES:
        table.add_entry(f)
    return table


STATIC_TABLE = _static_table()

__all__ = ["STATIC_TABLE"]

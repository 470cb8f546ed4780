"""Port of Go's golang.org/x/net/http2/hpack package (static_table.go, v0.49.0): the static table, as a searchable table.

Go generates the file (gen.go) by adding RFC 7541 Appendix A's 61 entries in order, so a name
with several entries maps to its last (``:status`` to 14, ``500``). The entries here come from
the ``hpack`` library's copy of the same appendix and are added the same way.
"""

from __future__ import annotations

from hpack.table import HeaderTable

from genericserver.x.net.http2.hpack.hpack import HeaderField
from genericserver.x.net.http2.hpack.tables import HeaderFieldTable


def _static_table() -> HeaderFieldTable:
    table = HeaderFieldTable(is_static=True)
    for name, value in HeaderTable.STATIC_TABLE:
        table.add_entry(HeaderField(name, value))
    return table


STATIC_TABLE = _static_table()

__all__ = ["STATIC_TABLE"]

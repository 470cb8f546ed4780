"""Port of k8s.io/apiserver/pkg/registry/rest/table.go (v1.36.0): objects as a meta.k8s.io/v1 Table.

kubectl asks for its listings as a Table (``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``)
and prints the server's columns and cells as they come. A :class:`TableConvertor` turns one
object or a list into a Table: column definitions (left out with ``no_headers``, which a watch
sets after its first event), one row per object with its cells and the object, and the list's
resource version, continue token and remaining count. :class:`DefaultTableConvertor` is Go's
default: Name and Created At. A resource with kube's printer columns passes its own
``columns`` and ``cells`` (:mod:`genericserver.printers.internalversion`).

The column descriptions are the served types' own field docs (ours), not Go's swagger texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from genericserver.apimachinery.apis.meta.v1.types import OBJECT_META

Cells = Callable[[dict, float], list]


def column(name: str, type: str, description: str, *, format: str = "", priority: int = 0) -> dict:
    """``metav1.TableColumnDefinition``, in its JSON field order."""
    return {"name": name, "type": type, "format": format, "description": description, "priority": priority}


NAME_COLUMN = column("Name", "string", OBJECT_META.field("name").doc, format="name")


def _default_cells(obj: dict, now: float) -> list:
    return [obj["metadata"].get("name", ""), obj["metadata"].get("creationTimestamp") or "0001-01-01T00:00:00Z"]


@dataclass(frozen=True)
class TableConvertor:
    """``columns`` and a ``cells(object, now)`` function: Go's printer handlers for one kind."""

    columns: Sequence[dict]
    cells: Cells

    def convert_to_table(self, obj: dict, now: float, *, no_headers: bool = False, is_list: bool = False) -> dict:
        items = obj.get("items") or [] if is_list else [obj]
        rows = [{"cells": self.cells(item, now), "object": item} for item in items]
        meta: dict[str, Any] = {}
        src = obj.get("metadata") or {}
        for k in ("resourceVersion", "continue", "remainingItemCount"):
            if src.get(k):
                meta[k] = src[k]
        if not is_list:
            meta = {"resourceVersion": src["resourceVersion"]} if src.get("resourceVersion") else {}
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
                "columnDefinitions": None if no_headers else list(self.columns), "rows": rows}


DefaultTableConvertor = TableConvertor(
    (NAME_COLUMN, column("Created At", "date", OBJECT_META.field("creationTimestamp").doc)), _default_cells)


def partial_object_metadata(obj: dict, group_version: str = "meta.k8s.io/v1") -> dict:
    """``meta.AsPartialObjectMetadata``: the object's metadata alone, as a kind of its own."""
    return {"kind": "PartialObjectMetadata", "apiVersion": group_version, "metadata": obj.get("metadata", {})}


def include(table: dict, include_object: Optional[str], group_version: str = "meta.k8s.io/v1",
            kind: str = "", api_version: str = "") -> dict:
    """What each row carries, by ``includeObject`` (response.go's ``asTable``): the metadata
    (the default), the whole object, or nothing (the row's ``RawExtension`` left empty, which Go
    writes as ``"object": null``). A whole object is written with its ``kind`` and
    ``apiVersion`` (an item of a list has none of its own; Go's encoder sets them on the embedded
    object, and kubectl's ``--sort-by`` decodes each row's object by them)."""
    for row in table["rows"]:
        if include_object == "Object":
            if "kind" not in row["object"] and kind:
                row["object"] = {"kind": kind, "apiVersion": api_version, **row["object"]}
            continue
        if include_object in ("Metadata", "", None):
            row["object"] = partial_object_metadata(row["object"], group_version)
        else:
            row["object"] = None
    return table

"""Port of k8s.io/kubernetes/pkg/printers/internalversion/printers.go (v1.36.0): kube's columns, for the kinds served here.

kube-apiserver fills ``kubectl get``'s table itself, with the columns these printers define;
kubectl prints them as they come. A ConfigMap's are NAME, DATA (how many keys: ``data`` and
``binaryData`` together) and AGE (``HumanDuration`` of the time since its creation; a missing
timestamp reads ``<unknown>``). Column descriptions are our field docs.
"""

from __future__ import annotations

from datetime import datetime, timezone

from genericserver.api.core.v1.types import CONFIG_MAP
from genericserver.apimachinery.apis.meta.v1.types import OBJECT_META
from genericserver.apimachinery.duration import human_duration
from genericserver.registry.rest.table import NAME_COLUMN, TableConvertor, column


def translate_timestamp_since(timestamp: str, now: float) -> str:
    """``translateTimestampSince``: the age of an RFC 3339 time at ``now`` (Unix seconds)."""
    if not timestamp:
        return "<unknown>"
    when = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
    return human_duration(now - when)


AGE_COLUMN = column("Age", "string", OBJECT_META.field("creationTimestamp").doc)


def _config_map_cells(obj: dict, now: float) -> list:
    return [obj["metadata"].get("name", ""), len(obj.get("data") or {}) + len(obj.get("binaryData") or {}),
            translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now)]


CONFIG_MAP_TABLE = TableConvertor((NAME_COLUMN, column("Data", "string", CONFIG_MAP.field("data").doc), AGE_COLUMN),
                                  _config_map_cells)

"""Port of k8s.io/kubernetes/pkg/registry/core/event/strategy.go (v1.36.0): the fields an event can be selected by.

``kubectl describe pod P`` lists P's events with
``fieldSelector=involvedObject.name=P,involvedObject.namespace=NS,involvedObject.uid=UID``
(and the kind, when it knows it): without these the 400 it gets leaves its Events section
empty. They are the labels the v1 Event's field label conversion accepts.
"""

from __future__ import annotations


def to_selectable_fields(event: dict) -> dict[str, str]:
    """Go's ``ToSelectableFields`` without the metadata's two (the handlers add those)."""
    ref = event.get("involvedObject") or {}
    # an event written through events.k8s.io names its reporter there, not in the source
    source = (event.get("source") or {}).get("component", "") or event.get("reportingComponent", "")
    out = {f"involvedObject.{k}": ref.get(k, "") for k in
           ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")}
    out.update({"reason": event.get("reason", ""), "reportingComponent": event.get("reportingComponent", ""),
                "source": source, "type": event.get("type", "")})
    return out

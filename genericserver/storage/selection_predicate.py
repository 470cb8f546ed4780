"""Port of k8s.io/apiserver/pkg/storage/selection_predicate.go (v1.36.0): which objects a list or a watch selects.

A :class:`SelectionPredicate` holds the label and field selectors of the request (a name in the
path is a ``metadata.name`` term already: get.go's ``listOpts``), the ``limit`` and the
``continue`` token. ``matches`` reads an object's labels and fields through ``get_attrs``
(``DefaultNamespaceScopedAttr``: ``metadata.name`` and ``metadata.namespace``, plus the fields
a resource converts, such as a pod's ``spec.nodeName``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from genericserver.apimachinery.fields import selector as field_selector
from genericserver.apimachinery.labels import selector as label_selector

AttrFunc = Callable[[dict], tuple[Optional[dict], dict]]


def default_namespace_scoped_attr(obj: dict) -> tuple[Optional[dict], dict]:
    """``DefaultNamespaceScopedAttr``: the labels, and the name and namespace as fields."""
    meta = obj.get("metadata", {})
    return meta.get("labels"), {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}


def with_field_labels(field_labels: Optional[Callable[[dict], dict]]) -> AttrFunc:
    """``AttrFunc.WithFieldMutation``: the default attributes and a resource's own fields."""
    if field_labels is None:
        return default_namespace_scoped_attr

    def attrs(obj: dict) -> tuple[Optional[dict], dict]:
        labels, fields = default_namespace_scoped_attr(obj)
        fields.update(field_labels(obj))
        return labels, fields
    return attrs


@dataclass
class SelectionPredicate:
    label: Any = field(default_factory=lambda: label_selector.parse(""))
    field: Any = field(default_factory=lambda: field_selector.parse(""))
    get_attrs: AttrFunc = default_namespace_scoped_attr
    limit: int = 0
    continue_: str = ""

    def matches(self, obj: dict) -> bool:
        if self.empty():
            return True
        labels, fields = self.get_attrs(obj)
        return self.label.matches(labels) and self.field.matches(fields)

    def empty(self) -> bool:
        """``Empty``: both selectors select everything."""
        return self.label.empty() and self.field.empty()

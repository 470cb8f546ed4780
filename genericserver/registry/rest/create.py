"""Port of k8s.io/apiserver/pkg/registry/rest/create.go (v1.36.0): ``BeforeCreate``, the checks every new object passes.

:func:`before_create`, in Go's order: the object's namespace must be the request's (400; a
cluster-scoped kind's is cleared), its deletion timestamp and grace are never the client's; the
strategy prepares it (``PrepareForCreate``) and validates it (``Validate``: 422 Invalid naming
the kind); only when that passes, the metadata every kind shares is checked once more with the
name as a URL path segment (``ValidateObjectMetaAccessor`` with ``validatePathSegment``: not
``.`` or ``..``, no ``/`` or ``%``), so that a kind's own, more specific words come first; then
the strategy's warnings and ``Canonicalize``. The name is made from ``generateName`` before
(the generic store's ``create``), and the uid and creation time set (``FillObjectMetaSystemFields``,
:mod:`genericserver.registry.rest.meta`).
"""

from __future__ import annotations

from typing import Any

from genericserver.apimachinery.api import errors
from genericserver.apimachinery.api.objectmeta import validate_object_meta_accessor
from genericserver.apimachinery.api.validate.content import is_path_segment_name, is_path_segment_prefix
from genericserver.apimachinery.field import errors as field
from genericserver.registry.rest import meta as restmeta


def validate_path_segment(name: str, prefix: bool) -> list[str]:
    """``validatePathSegment``: the name rule of the metadata every kind shares."""
    return is_path_segment_prefix(name) if prefix else is_path_segment_name(name)


def qualified_kind(kind: str, group: str) -> str:
    """``GroupKind.String()``: ``ConfigMap``, ``Deployment.apps``."""
    return f"{kind}.{group}" if group else kind


def new_invalid(kind: str, group: str, name: str, errs: list[field.Error]) -> errors.StatusError:
    return errors.new_invalid(qualified_kind(kind, group), name, field.to_causes(errs))


def before_create(strategy: Any, kind: str, group: str, obj: dict, request_namespace: str, warnings: list[str]) -> None:
    """``BeforeCreate``: raises the 400 or 422; ``warnings`` gets the strategy's."""
    meta = obj.setdefault("metadata", {})
    restmeta.ensure_object_namespace_matches_request_namespace(
        restmeta.expected_namespace_for_scope(request_namespace, strategy.namespace_scoped()), meta)
    strategy.prepare_for_create(obj)
    errs = strategy.validate(obj)
    if errs:
        raise new_invalid(kind, group, meta.get("name", ""), errs)
    errs = validate_object_meta_accessor(meta, strategy.namespace_scoped(), validate_path_segment)
    if errs:
        raise new_invalid(kind, group, meta.get("name", ""), errs)
    warnings.extend(strategy.warnings_on_create(obj))
    strategy.canonicalize(obj)

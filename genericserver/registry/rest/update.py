"""Port of k8s.io/apiserver/pkg/registry/rest/update.go (v1.36.0): what of a client's metadata an update takes, and ``BeforeUpdate``.

:func:`before_update` is Go's ``BeforeUpdate`` for the generic store: the namespace must be the
request's (400), the generation stays the old one, the strategy prepares the object, the uid
(when the client sent none), the creation time and the deletion timestamp and grace stay the old
ones; then every error at once in a 422 naming the kind: the metadata every kind shares as on a
create and as an update may change it (``validateCommonFields``), then the strategy's
``ValidateUpdate`` (which checks much of the metadata again: Go's answer lists such an error
more than once among its causes, once in its message). :func:`default_updated_object_info_preconditions`
is ``DefaultUpdatedObjectInfo.Preconditions``: the uid of a PUT's body is a precondition.

``BeforeUpdate`` starts from the client's object and puts the old one's system fields back (the
generation, the uid, the creation and deletion timestamps): what is left of the client's metadata
is what a client owns. The registries here start from the stored object instead (it also holds
what the simulation keeps beside the API's fields), so they take the client's owned fields into
it: :func:`take_client_metadata`. A field the client left out or empty is removed, as an update
replaces the whole object. Then the kind's ``PrepareForUpdate`` has its say (a changed spec is a
new generation: :func:`take_spec`).
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from genericserver.apimachinery.api.objectmeta import validate_object_meta_accessor, validate_object_meta_accessor_update
from genericserver.apimachinery.field import errors as field
from genericserver.registry.rest import meta as restmeta
from genericserver.registry.rest.create import new_invalid, validate_path_segment

# the metadata a client writes (the rest is the server's: BeforeUpdate keeps the old values)
CLIENT_METADATA = ("labels", "annotations", "finalizers")


def take_client_metadata(stored: dict, new: dict, keys: tuple[str, ...] = CLIENT_METADATA) -> dict:
    """A copy of ``stored`` with the client's ``keys`` of ``new``'s metadata."""
    out = copy.deepcopy(stored)
    for k in keys:
        value = (new.get("metadata") or {}).get(k)
        if value:
            out["metadata"][k] = copy.deepcopy(value)
        else:
            out["metadata"].pop(k, None)
    return out


def take_spec(stored: dict, new: dict) -> dict:
    """The ``PrepareForUpdate`` of a kind with a status of its controller's (a Deployment, a
    PodDisruptionBudget): the client's metadata and spec, the stored status, and the generation
    bumped when the spec changed."""
    out = take_client_metadata(stored, new)
    spec = copy.deepcopy(new.get("spec") or {})
    if spec != stored.get("spec"):
        out["spec"] = spec
        out["metadata"]["generation"] = stored["metadata"].get("generation", 1) + 1
    return out


def default_updated_object_info_preconditions(obj: Optional[dict]) -> Optional[dict]:
    """``DefaultUpdatedObjectInfo.Preconditions``: ``{"uid": ...}`` when the object names a uid."""
    uid = ((obj or {}).get("metadata") or {}).get("uid")
    return {"uid": uid} if uid else None


def validate_common_fields(obj: dict, old: dict, strategy: Any) -> list[field.Error]:
    meta, old_meta = obj.get("metadata") or {}, old.get("metadata") or {}
    return (validate_object_meta_accessor(meta, strategy.namespace_scoped(), validate_path_segment)
            + validate_object_meta_accessor_update(meta, old_meta))


def before_update(strategy: Any, kind: str, group: str, obj: dict, old: dict, request_namespace: str,
                  warnings: list[str]) -> None:
    """``BeforeUpdate``: ``obj`` is changed in place; raises the 400 or 422."""
    meta = obj.setdefault("metadata", {})
    restmeta.ensure_object_namespace_matches_request_namespace(
        restmeta.expected_namespace_for_scope(request_namespace, strategy.namespace_scoped()), meta)
    old_meta = old.get("metadata") or {}
    _set(meta, "generation", old_meta.get("generation"))
    strategy.prepare_for_update(obj, old)
    if not meta.get("uid"):
        _set(meta, "uid", old_meta.get("uid"))
    if old_meta.get("creationTimestamp"):
        meta["creationTimestamp"] = old_meta["creationTimestamp"]
    if old_meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = old_meta["deletionTimestamp"]
    if old_meta.get("deletionGracePeriodSeconds") is not None and meta.get("deletionGracePeriodSeconds") is None:
        meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
    errs = validate_common_fields(obj, old, strategy) + strategy.validate_update(obj, old)
    if errs:
        raise new_invalid(kind, group, meta.get("name", ""), errs)
    warnings.extend(strategy.warnings_on_update(obj, old))
    strategy.canonicalize(obj)


def _set(meta: dict, key: str, value: Any) -> None:
    if value is None:
        meta.pop(key, None)
    else:
        meta[key] = value

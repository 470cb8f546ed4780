"""Port of k8s.io/apiserver/pkg/registry/rest/delete.go (v1.36.0): ``BeforeDelete``'s early check of a delete's preconditions.

Before the generic store deletes an object, ``BeforeDelete`` holds the ``DeleteOptions``'
preconditions against the object as read: a ``uid`` or ``resourceVersion`` that is not the
object's is a 409 Conflict on the object's *kind* (``GroupResource{Group, Resource: Kind}``, so
``Operation cannot be fulfilled on ConfigMap "a"``, details ``kind: ConfigMap``), worded
``the UID in the precondition (...) does not match the UID in record (...)``. The storage holds
them again on the write itself, in its own words (a write that came in between). Graceful
deletion, the rest of ``BeforeDelete``, is the cluster's pod store's
(:func:`genericserver.cluster.store.before_delete`).
"""

from __future__ import annotations

from typing import Optional

from genericserver.apimachinery.api import errors


def check_preconditions(obj: dict, kind: str, group: str, preconditions: Optional[dict]) -> None:
    """delete.go:83-90: raise the 409 when a precondition is not the object's."""
    if not preconditions:
        return
    meta = obj.get("metadata") or {}
    # schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}.String()
    qualified = f"{kind}.{group}" if group else kind
    uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
    if uid is not None and uid != meta.get("uid", ""):
        raise errors.new_conflict(qualified, meta.get("name", ""),
                                  f"the UID in the precondition ({uid}) does not match the UID in record ({meta.get('uid', '')}). "
                                  "The object might have been deleted and then recreated")
    if rv is not None and rv != meta.get("resourceVersion", ""):
        raise errors.new_conflict(qualified, meta.get("name", ""),
                                  f"the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record "
                                  f"({meta.get('resourceVersion', '')}). The object might have been modified")

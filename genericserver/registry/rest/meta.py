"""Port of k8s.io/apiserver/pkg/registry/rest/meta.go (v1.36.0): the namespace an object must carry, and the metadata the system owns.

``WipeObjectMetaSystemFields`` (:func:`wipe_object_meta_system_fields`): what a client sends of the
creation time, uid, deletion timestamp and grace, and selfLink is dropped from a new object (the
create handler does it); ``FillObjectMetaSystemFields``: the generic store sets the uid and the
creation time (:func:`fill_object_meta_system_fields`).

``EnsureObjectNamespaceMatchesRequestNamespace``: an object that names no namespace takes the
request's; a cluster-scoped one (the request names none) has its namespace cleared; an object
that names another namespace than the request's is Go's 400. ``ExpectedNamespaceForResource``:
what the request's namespace is for that check (none for a namespace itself, whose path names
it as the object's own name).
"""

from __future__ import annotations

from typing import Callable

from genericserver.apimachinery.api import errors

SYSTEM_FIELDS = ("creationTimestamp", "uid", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink")


def wipe_object_meta_system_fields(meta: dict) -> None:
    for key in SYSTEM_FIELDS:
        meta.pop(key, None)


def fill_object_meta_system_fields(meta: dict, now: str, new_uid: Callable[[], str]) -> None:
    meta["creationTimestamp"] = now
    meta["uid"] = new_uid()


def ensure_object_namespace_matches_request_namespace(request_namespace: str, meta: dict) -> None:
    have = meta.get("namespace", "")
    if have == request_namespace:
        return
    if not have:
        if request_namespace:
            meta["namespace"] = request_namespace
        return
    if not request_namespace:
        meta.pop("namespace", None)
        return
    raise errors.new_bad_request("the namespace of the provided object does not match the namespace sent on the request")


def expected_namespace_for_resource(request_namespace: str, group: str, resource: str) -> str:
    return "" if (group, resource) == ("", "namespaces") else request_namespace


def expected_namespace_for_scope(request_namespace: str, namespace_scoped: bool) -> str:
    return request_namespace if namespace_scoped else ""

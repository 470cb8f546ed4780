"""Port of k8s.io/apiserver/pkg/registry/generic/registry/store.go (v1.36.0): the generic store, in memory.

Go's generic ``Store`` turns the REST verbs into storage calls on etcd: create, get, list, update
(with the resource-version precondition), delete and watch, with a resource version that every
change bumps. Here the storage is a dict and a bounded history stands in for etcd's watch
cache:

* objects by (namespace, name) (namespace "" for a cluster-scoped resource), handed out as deep
  copies, so nobody shares an object with the store;
* every change bumps the resource version, appends ``(rv, type, object)`` to the history and
  sets the current *changed* event (then replaces it), which is what watches wait on;
* an update with a ``metadata.resourceVersion`` that is not the current one is Go's 409
  Conflict; what the server owns (uid, creation timestamp, namespace, generateName) is kept;
* a watch may start at any version still in the history, else 410 Expired, with Go's text.

Objects are JSON-shaped dicts already in Go's field order (the handlers decode them with the
resource's struct).

The module's functions are the generic store's verbs on top of such a storage (this ``Store``,
or the cluster's, which has the same methods): :func:`list_predicate` (``List`` with its
``ListPredicate``: the selection, the ``limit`` and the ``continue`` token of
:mod:`genericserver.storage.storage_continue`, with the rules of
:mod:`genericserver.storage.interfaces`), :func:`delete` (``Delete``: the preconditions, dry
run, and ``finalizeDelete``'s ``Success`` Status naming the object) and
:func:`delete_collection` (``DeleteCollection``: what the list options select, deleted one by
one, answered as the list it was). Graceful deletion and finalizers are the cluster's pod
store's (:mod:`genericserver.cluster.store`); TTLs and the store's hooks are not ported.
"""

from __future__ import annotations

import collections
import copy
import uuid
from datetime import datetime, timezone
from typing import Callable, Optional

from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.registry.rest.rest import Resource
from genericserver.registry.rest import delete as rest_delete
from genericserver.storage import interfaces, storage_continue
from genericserver.storage import cacher
from genericserver.storage.selection_predicate import SelectionPredicate

DEFAULT_HISTORY = 1000
Key = tuple[str, str]


def timestamp() -> str:
    """Now, as the API writes a ``metav1.Time``: RFC 3339 to the second, in UTC."""
    return datetime.fromtimestamp(rt.wall(), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Store:
    """One resource's objects, its resource version and a bounded event history."""

    def __init__(self, resource: Resource, *, history: int = DEFAULT_HISTORY,
                 new_uid: Callable[[], str] = lambda: str(uuid.uuid4())):
        self.resource = resource
        self._lock = rt.lock()
        self._objects: dict[Key, dict] = {}
        self._rv = 1
        self._history: collections.deque = collections.deque()
        self._max_history = history
        self._oldest = self._rv  # a watch may resume from any version >= this
        self._changed = rt.event(f"{resource.name}-changed")
        self._new_uid = new_uid

    # -- writes ---------------------------------------------------------------------------------

    def _commit(self, typ: str, key: Key, obj: dict) -> dict:
        # the caller holds the lock; a DELETED object keeps the deletion's version, as in etcd
        self._rv += 1
        obj["metadata"] = _with_server_fields(obj["metadata"], {"resourceVersion": str(self._rv)})
        if typ == "DELETED":
            self._objects.pop(key, None)
        else:
            self._objects[key] = obj
        self._history.append((self._rv, typ, copy.deepcopy(obj)))
        while len(self._history) > self._max_history:
            self._oldest = self._history.popleft()[0]
        changed, self._changed = self._changed, rt.event(f"{self.resource.name}-changed")
        changed.set()
        return copy.deepcopy(obj)

    def create(self, namespace: str, obj: dict, *, dry_run: bool = False) -> dict:
        """Store a new object; the server sets its namespace, uid and creation time."""
        with self._lock:
            meta = obj["metadata"]
            key = (namespace, meta["name"])
            if key in self._objects:
                raise errors.new_already_exists(self.resource.group_resource, meta["name"])
            meta.pop("resourceVersion", None)
            server_owned = {"namespace": namespace} if self.resource.namespaced else {}
            server_owned.update(uid=self._new_uid(), creationTimestamp=timestamp())
            obj["metadata"] = _with_server_fields(meta, server_owned)
            if dry_run:
                return copy.deepcopy(obj)
            return self._commit("ADDED", key, obj)

    def update(self, namespace: str, name: str, obj: dict, *, dry_run: bool = False) -> dict:
        """Replace an object; a stale ``metadata.resourceVersion`` is a Conflict."""
        with self._lock:
            current = self._objects.get((namespace, name))
            if current is None:
                raise errors.new_not_found(self.resource.group_resource, name)
            meta = obj["metadata"]
            if meta.get("resourceVersion") and meta["resourceVersion"] != current["metadata"]["resourceVersion"]:
                raise errors.new_conflict(self.resource.group_resource, name, "the object has been modified; please apply your changes to the latest version and try again")
            owned = {k: current["metadata"][k] for k in ("generateName", "namespace", "uid", "creationTimestamp") if k in current["metadata"]}
            obj["metadata"] = _with_server_fields({k: v for k, v in meta.items() if k not in owned}, owned)
            if dry_run:
                obj["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                return copy.deepcopy(obj)
            return self._commit("MODIFIED", (namespace, name), obj)

    def delete(self, namespace: str, name: str, *, uid: Optional[str] = None, resource_version: Optional[str] = None,
               dry_run: bool = False) -> dict:
        """Remove the object; returns its last state (with the deletion's resource version).
        ``uid`` and ``resource_version`` are DeleteOptions' preconditions (409 when unmet)."""
        with self._lock:
            obj = self._objects.get((namespace, name))
            if obj is None:
                raise errors.new_not_found(self.resource.group_resource, name)
            meta = obj["metadata"]
            if uid is not None and uid != meta.get("uid"):
                raise errors.new_conflict(self.resource.group_resource, name,
                                          f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.get('uid', '')}")
            if resource_version is not None and resource_version != meta.get("resourceVersion"):
                raise errors.new_conflict(self.resource.group_resource, name,
                                          f"Precondition failed: ResourceVersion in precondition: {resource_version}, "
                                          f"ResourceVersion in object meta: {meta.get('resourceVersion', '')}")
            if dry_run:
                return copy.deepcopy(obj)
            return self._commit("DELETED", (namespace, name), copy.deepcopy(obj))

    # -- reads ----------------------------------------------------------------------------------

    def resource_version(self) -> int:
        with self._lock:
            return self._rv

    def list(self, namespace: Optional[str] = None) -> tuple[list[dict], int]:
        """The objects (of one namespace, or all), sorted by namespace and name, and the version."""
        with self._lock:
            keys = sorted(k for k in self._objects if namespace is None or k[0] == namespace)
            return [copy.deepcopy(self._objects[k]) for k in keys], self._rv

    def get(self, namespace: str, name: str, resource_version: str = "") -> dict:
        """The object; a ``resourceVersion`` is parsed first, as kube-apiserver's watch cache does
        (:class:`~genericserver.storage.interfaces.InvalidError`), and then read at the newest."""
        interfaces.parse_resource_version(resource_version)
        with self._lock:
            obj = self._objects.get((namespace, name))
            if obj is None:
                raise errors.new_not_found(self.resource.group_resource, name)
            return copy.deepcopy(obj)

    def watch_start(self, namespace: Optional[str], resource_version: str) -> tuple[list[dict], int]:
        """Where a watch begins: the objects to send as ADDED and the version to follow from."""
        with self._lock:
            if resource_version in ("", "0"):
                keys = sorted(k for k in self._objects if namespace is None or k[0] == namespace)
                return [copy.deepcopy(self._objects[k]) for k in keys], self._rv
            if not resource_version.isdigit():
                raise errors.new_bad_request(f"invalid resource version {errors._q(resource_version)}")
            rv = int(resource_version)
            if rv < self._oldest:
                raise errors.new_resource_expired(f"too old resource version: {rv} ({self._oldest})")
            return [], rv

    def events_after(self, rv: int, namespace: Optional[str]) -> tuple[list[tuple[str, dict]], int, rt.Event]:
        """The changes after ``rv`` (of one namespace, or all), the newest version, and the
        event set by the next change; taken together so that no change slips in between."""
        with self._lock:
            if rv < self._oldest:
                raise errors.new_resource_expired(f"too old resource version: {rv} ({self._oldest})")
            events = [(typ, copy.deepcopy(obj)) for erv, typ, obj in self._history
                      if erv > rv and (namespace is None or obj["metadata"].get("namespace") == namespace)]
            return events, max(rv, self._rv), self._changed


# ObjectMeta's field order, which Go's encoder writes (types.go)
_META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
               "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
               "managedFields")


def _with_server_fields(meta: dict, server: dict) -> dict:
    merged = {**meta, **server}
    return {k: merged[k] for k in _META_ORDER if merged.get(k) not in (None, "", {}, [])}


# -- the generic store's verbs, on any storage shaped like Store ----------------------------------

def key_root(resource: Resource, namespace: Optional[str]) -> str:
    """``NamespaceKeyRootFunc``: the etcd key under which a list of one namespace (or of all) lies."""
    root = f"/registry/{resource.name}"
    return f"{root}/{namespace}" if namespace and resource.namespaced else root


def _key(resource: Resource, obj: dict) -> str:
    meta = obj["metadata"]
    return f"{key_root(resource, meta.get('namespace') or None)}/{meta['name']}"


def list_predicate(storage, resource: Resource, namespace: Optional[str], p: SelectionPredicate,
                   resource_version: str = "", resource_version_match: str = "") -> dict:
    """``ListPredicate``: the list object of what ``p`` selects, sorted by key as etcd's keys
    sort, cut at ``p.limit`` as the watch cache cuts it (:mod:`genericserver.storage.cacher`:
    no limit at ``resourceVersion=0``) with a ``continue`` token and, when no selector filtered,
    the count of what is left (``remainingItemCount``)."""
    key_prefix = key_root(resource, namespace) + "/"
    _, continue_key = interfaces.validate_list_options(key_prefix, resource_version, resource_version_match,
                                                       p.limit, p.continue_)
    items, rv = storage.list(namespace)
    keyed = sorted(((_key(resource, i), i) for i in items), key=lambda ki: ki[0])
    if continue_key:
        keyed = [(k, i) for k, i in keyed if k >= continue_key]
    total = len(keyed)
    # the watch cache's rules (kube-apiserver serves lists from it): no limit at resourceVersion=0,
    # and more to come whenever a key follows the last item taken
    selected, has_more = cacher.select_page(keyed, p.matches, cacher.compute_list_limit(p.limit, resource_version))
    meta: dict = {"resourceVersion": str(rv)}
    if selected:
        token, remaining = storage_continue.prepare_continue_token(selected[-1][0], key_prefix, rv, total, has_more,
                                                                   p.limit, p.empty())
        if token:
            meta["continue"] = token
        if remaining is not None:
            meta["remainingItemCount"] = remaining
    out = []
    for _, item in selected:  # the items of a typed list carry no kind of their own
        item.pop("kind", None)
        item.pop("apiVersion", None)
        out.append(item)
    kind = resource.list_struct.short_name if resource.list_struct else resource.kind + "List"
    return {"kind": kind, "apiVersion": resource.group_version, "metadata": meta, "items": out}


def finalize_delete(resource: Resource, obj: dict) -> dict:
    """``finalizeDelete`` of a store without ``ReturnDeletedObject``: a ``Success`` Status with
    the object's name, the group, the resource (as ``kind``: Go does the same) and the uid."""
    details = {"name": obj["metadata"]["name"]}
    if resource.group:
        details["group"] = resource.group
    details.update(kind=resource.name, uid=obj["metadata"].get("uid", ""))
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def delete(storage, resource: Resource, namespace: str, name: str, options: dict) -> tuple[dict, bool]:
    """``Delete`` without graceful deletion: the preconditions of ``options`` must hold (409,
    checked first by ``BeforeDelete`` on the object as read, then by the storage on the write),
    ``dryRun`` deletes nothing; the Status of :func:`finalize_delete`, and whether it is gone."""
    pre = options.get("preconditions") or {}
    rest_delete.check_preconditions(storage.get(namespace, name), resource.struct.short_name, resource.group, pre)
    gone = storage.delete(namespace, name, uid=pre.get("uid"), resource_version=pre.get("resourceVersion"),
                          dry_run=bool(options.get("dryRun")))
    return finalize_delete(resource, gone), True


def delete_collection(storage, resource: Resource, namespace: Optional[str], p: SelectionPredicate, options: dict,
                      delete_one: Callable[[str, str, dict], tuple[dict, bool]]) -> dict:
    """``DeleteCollection``: each object the list options select is deleted with ``delete_one``
    (a copy of the options each); one deleted by someone else meanwhile is no error; the answer
    is the list as it was read. (Go spreads the deletes over ``DeleteCollectionWorkers``
    goroutines; here they run one after another.)"""
    listed = list_predicate(storage, resource, namespace, p)
    for item in listed["items"]:
        meta = item["metadata"]
        try:
            delete_one(meta.get("namespace", ""), meta["name"], copy.deepcopy(options))
        except errors.StatusError as err:
            if not errors.is_not_found(err):
                raise
    return listed

"""Port of k8s.io/apiserver/pkg/registry/generic/registry/store.go (v1.36.0): the generic store, in memory.

Go's generic ``Store`` turns the REST verbs into storage calls on etcd: create, get, list, update
(with the resource-version precondition), delete and watch, with a resource version that every
change bumps. Here the storage is a dict and a bounded history stands in for etcd's watch
cache:

* objects by (namespace, name) (namespace "" for a cluster-scoped resource), handed out as deep
  copies, so nobody shares an object with the store;
* every change bumps the resource version, appends ``(rv, type, object)`` to the history and
  sets the current *changed* event (then replaces it), which is what watches wait on;
* a create is Go's ``Store.create`` (the uid and creation time, a name from ``generateName``,
  the strategy's ``BeforeCreate``, etcd3's 500 for a resourceVersion set on a new object, 409 for
  a name taken, ``object is being deleted: ...`` while finalizers hold the old one); an update is
  ``Store.Update``'s ``GuaranteedUpdate``: the body's uid as a precondition, a resourceVersion
  that must parse (500) and, when given, be the current one (409), the strategy's
  ``BeforeUpdate`` (422), and an update that takes the last finalizer off an object being deleted
  deletes it (``ShouldDeleteDuringUpdate``);
* a watch may start at any version still in the history, else 410 Expired, with Go's text.

Objects are JSON-shaped dicts already in Go's field order (the handlers decode them with the
resource's struct).

The module's functions are the generic store's verbs on top of such a storage (this ``Store``,
or the cluster's, which has the same methods): :func:`list_predicate` (``List`` with its
``ListPredicate``: the selection, the ``limit`` and the ``continue`` token of
:mod:`genericserver.storage.storage_continue`, with the rules of
:mod:`genericserver.storage.interfaces`), :func:`delete` (``Delete`` of a kind without graceful
deletion: the preconditions, finalizers and the garbage collector's two (``orphan``,
``foregroundDeletion``, as ``propagationPolicy`` or ``orphanDependents`` ask:
``deletionFinalizersForGarbageCollection``), which keep the object, marked as being deleted
(``markAsDeleting``), until an update takes the last one off; dry run; and ``finalizeDelete``'s
``Success`` Status naming a deleted object) and :func:`delete_collection` (``DeleteCollection``:
what the list options select, deleted one by one, answered as the list it was). Graceful
deletion (a grace period, ``CheckGracefulDelete``) is the cluster's pod store's
(:mod:`genericserver.cluster.store`), which shares this module's finalizer functions; TTLs and
the store's hooks are not ported.
"""

from __future__ import annotations

import collections
import uuid
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from genericserver import klog
from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.api.validate.content import is_path_segment_name
from genericserver.apimachinery.field import errors as field
from genericserver.apimachinery.runtime.converter import deep_copy_json_value
from genericserver.registry.rest import create as rest_create
from genericserver.registry.rest import delete as rest_delete
from genericserver.registry.rest import meta as restmeta
from genericserver.registry.rest import update as rest_update
from genericserver.registry.rest.rest import Resource
from genericserver.storage import errors as storage_errors
from genericserver.storage import interfaces, storage_continue
from genericserver.storage import cacher
from genericserver.storage.selection_predicate import SelectionPredicate

DEFAULT_HISTORY = 1000
Key = tuple[str, str]
OPTIMISTIC_LOCK_ERROR_MSG = "the object has been modified; please apply your changes to the latest version and try again"



def _parses_to_non_zero(meta: dict) -> bool:
    """etcd3's ``Create`` refuses a resourceVersion that parses to anything but 0, and lets one
    that does not parse through (it is dropped before the write)."""
    try:
        return _object_resource_version(meta) != 0
    except storage_errors.UnwrappedError:
        return False


def _object_resource_version(meta: dict) -> int:
    """``APIObjectVersioner.ObjectResourceVersion``: "" is 0, else a uint64; what does not parse
    is strconv's error, unwrapped (a 500)."""
    text = meta.get("resourceVersion") or ""
    if not text:
        return 0
    if text.isascii() and text.isdigit():
        if int(text) >= 1 << 64:
            raise storage_errors.UnwrappedError(f"strconv.ParseUint: parsing {errors._q(text)}: value out of range")
        return int(text)
    raise storage_errors.UnwrappedError(f"strconv.ParseUint: parsing {errors._q(text)}: invalid syntax")


def timestamp() -> str:
    """Now, as the API writes a ``metav1.Time``: RFC 3339 to the second, in UTC."""
    return datetime.fromtimestamp(rt.wall(), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Store:
    """One resource's objects, its resource version and a bounded event history. With a
    ``strategy`` (the kind's: :mod:`genericserver.registry.core.configmap_strategy`) its create and
    update run registry/rest's ``BeforeCreate`` and ``BeforeUpdate`` as Go's generic store does;
    without one, the handlers' ``validate`` is all the checking there is."""

    def __init__(self, resource: Resource, *, history: int = DEFAULT_HISTORY,
                 new_uid: Callable[[], str] = lambda: str(uuid.uuid4()), strategy: Any = None):
        self.resource = resource
        self.strategy = strategy
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
        # the caller holds the lock; a DELETED object keeps the deletion's version, as in etcd;
        # what is written has no selfLink (the versioner's PrepareObjectForStorage clears it)
        self._rv += 1
        obj["metadata"].pop("selfLink", None)
        obj["metadata"] = _with_server_fields(obj["metadata"], {"resourceVersion": str(self._rv)})
        if typ == "DELETED":
            self._objects.pop(key, None)
        else:
            self._objects[key] = obj
        self._history.append((self._rv, typ, deep_copy_json_value(obj)))
        while len(self._history) > self._max_history:
            self._oldest = self._history.popleft()[0]
        changed, self._changed = self._changed, rt.event(f"{self.resource.name}-changed")
        changed.set()
        return deep_copy_json_value(obj)

    def _storage_key(self, namespace: str, name: str, dry_run: bool = False) -> str:
        """The key a storage error names: etcd3's, with its ``/registry`` prefix; a dry run's
        never reaches etcd3 and names the registry's key, without it (DryRunnableStorage)."""
        key = f"{key_root(self.resource, namespace or None)}/{name}"
        return key.removeprefix("/registry") if dry_run else key

    def create(self, namespace: str, obj: dict, *, dry_run: bool = False, warnings: Optional[list[str]] = None) -> dict:
        """``Store.create``: the uid and creation time set, a name made from ``generateName``,
        ``BeforeCreate`` (with a strategy), then the storage's ``Create``: a resourceVersion
        that parses to anything but 0 is its 500 (not on a dry run, which never reaches etcd),
        a name that exists is 409 (``object is being deleted: ...`` while a finalizer holds it)."""
        meta = obj.setdefault("metadata", {})
        restmeta.fill_object_meta_system_fields(meta, timestamp(), self._new_uid)
        if self.strategy is not None:
            if meta.get("generateName") and not meta.get("name"):
                meta["name"] = self.strategy.generate_name(meta["generateName"])
            rest_create.before_create(self.strategy, self.resource.kind, self.resource.group, obj, namespace,
                                      warnings if warnings is not None else [])
        with self._lock:
            key = (namespace, meta["name"])
            if not dry_run and _parses_to_non_zero(meta):
                raise storage_errors.ResourceVersionSetOnCreateError(storage_errors.ERR_RESOURCE_VERSION_SET_ON_CREATE)
            existing = self._objects.get(key)
            if existing is not None:
                err = errors.new_already_exists(self.resource.group_resource, meta["name"])
                if existing["metadata"].get("deletionTimestamp"):
                    err.status["message"] = f"object is being deleted: {err.status['message']}"
                raise err
            if self.resource.namespaced:
                meta["namespace"] = namespace
            if dry_run:  # the object as sent, stored nowhere
                obj["metadata"] = _with_server_fields(meta, {})
                return deep_copy_json_value(obj)
            meta.pop("resourceVersion", None)  # PrepareObjectForStorage
            obj["metadata"] = _with_server_fields(meta, {})
            return self._commit("ADDED", key, obj)

    def update(self, namespace: str, name: str, obj: dict, *, dry_run: bool = False,
               preconditions: Optional[dict] = None, warnings: Optional[list[str]] = None) -> dict:
        """``Store.Update`` (one ``GuaranteedUpdate`` under the lock): a missing object is 404;
        then ``preconditions`` (the uid of a PUT's body: 409 ``Precondition failed``); a
        resourceVersion that does not parse is the storage's 500; none (or 0) is an
        unconditional update, any other but the stored one a 409; ``BeforeUpdate`` (422); an
        update that leaves no finalizer on an object whose deletion is due deletes it
        (``ShouldDeleteDuringUpdate``, ``deleteWithoutFinalizers``: the answer is the object as
        updated, the watch's DELETED the object as it was stored)."""
        namespace_key_func(self.resource, namespace, name)
        with self._lock:
            current = self._objects.get((namespace, name))
            if current is None:  # no create on update: etcd3's GuaranteedUpdate does not ignore a missing key
                raise errors.new_not_found(self.resource.group_resource, name)
            try:
                interfaces.check_preconditions(preconditions, self._storage_key(namespace, name, dry_run), current)
            except storage_errors.StorageError as err:
                raise errors.new_conflict(self.resource.group_resource, name, str(err)) from None
            obj = deep_copy_json_value(obj)
            meta = obj.setdefault("metadata", {})
            new_rv = _object_resource_version(meta)
            existing_rv = current["metadata"]["resourceVersion"]
            unconditional = new_rv == 0 and (self.strategy is None or self.strategy.allow_unconditional_update())
            if unconditional:
                meta["resourceVersion"] = existing_rv
            elif new_rv == 0:
                kind = f"{self.resource.name}.{self.resource.group}" if self.resource.group else self.resource.name
                raise errors.new_invalid(kind, name, field.to_causes(
                    [field.invalid("metadata.resourceVersion", 0, "must be specified for an update")]))
            elif str(new_rv) != existing_rv:
                raise errors.new_conflict(self.resource.group_resource, name, OPTIMISTIC_LOCK_ERROR_MSG)
            if self.strategy is not None:
                rest_update.before_update(self.strategy, self.resource.kind, self.resource.group, obj, current, namespace,
                                          warnings if warnings is not None else [])
            else:  # what the server owns is kept
                owned = {k: current["metadata"][k] for k in ("generateName", "namespace", "uid", "creationTimestamp")
                         if k in current["metadata"]}
                meta = {k: v for k, v in meta.items() if k not in owned}
                meta.update(owned)
            obj["metadata"] = _with_server_fields(obj["metadata"] if self.strategy is not None else meta, {})
            if should_delete_during_update(obj, current):
                if not dry_run:
                    self._commit("DELETED", (namespace, name), deep_copy_json_value(current))
                return deep_copy_json_value(obj)
            if dry_run:
                return deep_copy_json_value(obj)
            return self._commit("MODIFIED", (namespace, name), obj)

    def delete(self, namespace: str, name: str, *, uid: Optional[str] = None, resource_version: Optional[str] = None,
               dry_run: bool = False) -> dict:
        """The storage's ``Delete``: removes the object and returns its last state (with the
        deletion's resource version). ``uid`` and ``resource_version`` are preconditions (409
        when unmet, in the storage's words)."""
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
                return deep_copy_json_value(obj)
            return self._commit("DELETED", (namespace, name), deep_copy_json_value(obj))

    def update_for_graceful_deletion_and_finalizers(self, namespace: str, name: str, options: dict) -> tuple[dict, str]:
        """``updateForGracefulDeletionAndFinalizers`` for a kind without graceful deletion: the
        garbage collector's finalizers as ``options`` ask; an object that keeps a finalizer is
        marked as being deleted (``markAsDeleting``: now, grace 0) and kept ("kept"); one with
        none left is to be deleted now ("delete-now"). The preconditions hold on the write."""
        pre = options.get("preconditions") or {}
        with self._lock:
            current = self._objects.get((namespace, name))
            if current is None:
                raise errors.new_not_found(self.resource.group_resource, name)
            try:
                interfaces.check_preconditions(pre, self._storage_key(namespace, name, bool(options.get("dryRun"))), current)
            except storage_errors.StorageError as err:
                raise errors.new_conflict(self.resource.group_resource, name, str(err)) from None
            existing = deep_copy_json_value(current)
            meta = existing["metadata"]
            changed, finalizers = deletion_finalizers_for_garbage_collection(meta, options)
            if changed:
                meta["finalizers"] = finalizers
            if not meta.get("finalizers"):
                return existing, "delete-now"
            mark_as_deleting(meta, timestamp())
            existing["metadata"] = _with_server_fields(meta, {})
            if existing == current or options.get("dryRun"):  # etcd writes nothing for an unchanged object
                return existing, "kept"
            return self._commit("MODIFIED", (namespace, name), existing), "kept"

    # -- reads ----------------------------------------------------------------------------------

    def resource_version(self) -> int:
        with self._lock:
            return self._rv

    def list(self, namespace: Optional[str] = None) -> tuple[list[dict], int]:
        """The objects (of one namespace, or all), sorted by namespace and name, and the version."""
        with self._lock:
            keys = sorted(k for k in self._objects if namespace is None or k[0] == namespace)
            return [deep_copy_json_value(self._objects[k]) for k in keys], self._rv

    def get(self, namespace: str, name: str, resource_version: str = "") -> dict:
        """The object; its key first (:func:`namespace_key_func`: a name no path segment may be is
        400), then a ``resourceVersion`` is parsed, as kube-apiserver's watch cache does
        (:class:`~genericserver.storage.interfaces.InvalidError`), and then read at the newest."""
        namespace_key_func(self.resource, namespace, name)
        interfaces.parse_resource_version(resource_version)
        with self._lock:
            obj = self._objects.get((namespace, name))
            if obj is None:
                raise errors.new_not_found(self.resource.group_resource, name)
            return deep_copy_json_value(obj)

    def watch_start(self, namespace: Optional[str], resource_version: str) -> tuple[list[dict], int]:
        """Where a watch begins: the objects to send as ADDED and the version to follow from."""
        with self._lock:
            if resource_version in ("", "0"):
                keys = sorted(k for k in self._objects if namespace is None or k[0] == namespace)
                return [deep_copy_json_value(self._objects[k]) for k in keys], self._rv
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
            events = [(typ, deep_copy_json_value(obj)) for erv, typ, obj in self._history
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


def namespace_key_func(resource: Resource, namespace: str, name: str) -> str:
    """``NamespaceKeyFunc`` (``NoNamespaceKeyFunc`` for a resource without namespaces): the
    object's etcd key, which the generic store makes before it reads or writes by name. A name
    that cannot be one segment of a URL's path (".", "..", one holding "/" or "%") is refused
    here with 400, before the storage is asked."""
    if resource.namespaced and not namespace:
        raise errors.new_bad_request("Namespace parameter required.")
    if not name:
        raise errors.new_bad_request("Name parameter required.")
    problems = is_path_segment_name(name)
    if problems:
        raise errors.new_bad_request(f"Name parameter invalid: {klog.go_quote(name)}: {';'.join(problems)}")
    return f"{key_root(resource, namespace or None)}/{name}"


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


# -- finalizers: the garbage collector's two, and an update that removes the last one -------------

ORPHAN_FINALIZER, FOREGROUND_FINALIZER = "orphan", "foregroundDeletion"


def should_orphan_dependents(meta: dict, options: dict) -> bool:
    """``shouldOrphanDependents`` for a strategy without a garbage collection policy of its own
    (every kind here): the options first (``orphanDependents``, then ``propagationPolicy``), then
    a finalizer already set; by default not."""
    if options.get("orphanDependents") is not None:
        return bool(options["orphanDependents"])
    policy = options.get("propagationPolicy")
    if policy in ("Orphan", "Background", "Foreground"):
        return policy == "Orphan"
    for f in meta.get("finalizers") or []:
        if f in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER):
            return f == ORPHAN_FINALIZER
    return False


def should_delete_dependents(meta: dict, options: dict) -> bool:
    """``shouldDeleteDependents``: Foreground asked for, or its finalizer already set."""
    if options.get("orphanDependents") is not None:
        return False
    policy = options.get("propagationPolicy")
    if policy in ("Orphan", "Background", "Foreground"):
        return policy == "Foreground"
    for f in meta.get("finalizers") or []:
        if f in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER):
            return f == FOREGROUND_FINALIZER
    return False


def deletion_finalizers_for_garbage_collection(meta: dict, options: dict) -> tuple[bool, list[str]]:
    """``deletionFinalizersForGarbageCollection``: the two finalizers taken out and put back (at
    the end) as the options want them; (whether the set changed, the finalizers)."""
    old = list(meta.get("finalizers") or [])
    new = [f for f in old if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
    if should_orphan_dependents(meta, options):
        new.append(ORPHAN_FINALIZER)
    if should_delete_dependents(meta, options):
        new.append(FOREGROUND_FINALIZER)
    if set(new) == set(old):
        return False, old
    return True, new


def should_delete_during_update(new: dict, old: dict) -> bool:
    """``ShouldDeleteDuringUpdate``: the last finalizer went, and the deletion it held up was
    already due (grace 0, or none recorded)."""
    if new["metadata"].get("finalizers"):
        return False
    if old["metadata"].get("deletionTimestamp") is None:
        return False
    return not old["metadata"].get("deletionGracePeriodSeconds")


def mark_as_deleting(meta: dict, now: Any) -> None:
    """``markAsDeleting``: a kind without graceful deletion held by finalizers is due now, grace
    0; a deletion already due earlier keeps its time. ``now`` is what the store's times are
    (RFC 3339 text here, which sorts as time does; cluster seconds in the cluster's store)."""
    if meta.get("deletionTimestamp") is None and meta.get("generation", 0) > 0:
        meta["generation"] += 1
    if meta.get("deletionTimestamp") is None or meta["deletionTimestamp"] > now:
        meta["deletionTimestamp"] = now
    meta["deletionGracePeriodSeconds"] = 0


def delete(storage, resource: Resource, namespace: str, name: str, options: dict) -> tuple[dict, bool]:
    """``Store.Delete`` of a kind without graceful deletion: ``BeforeDelete`` holds the
    preconditions against the object as read (409 in its words); an object with finalizers, or
    whose garbage collector finalizers the options change (``propagationPolicy`` Orphan or
    Foreground, ``orphanDependents``), is updated instead (:meth:`Store.update_for_graceful_deletion_and_finalizers`)
    and answered as it now is, kept (200, or 202 when ``orphanDependents`` is false: the handler's
    rule); otherwise it is deleted (``dryRun``: not) and the answer is :func:`finalize_delete`'s
    Status. Returns (answer, whether it is gone)."""
    pre = options.get("preconditions") or {}
    obj = storage.get(namespace, name)
    rest_delete.check_preconditions(obj, resource.struct.short_name, resource.group, pre)
    meta = obj["metadata"]
    should_update, _ = deletion_finalizers_for_garbage_collection(meta, options)
    if meta.get("finalizers") or should_update:
        out, state = storage.update_for_graceful_deletion_and_finalizers(namespace, name, options)
        if state == "kept":
            return out, False
        if state == "gone":  # a storage that deleted it itself
            return finalize_delete(resource, out), True
        if options.get("dryRun"):
            # Go answers the object its dry-run update left in ``out``: none was, so an empty one
            return {"kind": resource.kind, "apiVersion": resource.object_group_version, "metadata": {}}, True
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
            delete_one(meta.get("namespace", ""), meta["name"], deep_copy_json_value(options))
        except errors.StatusError as err:
            if not errors.is_not_found(err):
                raise
    return listed

"""Port of k8s.io/apiserver/pkg/registry/rest/delete.go and pkg/registry/generic/registry/store.go's graceful deletion, with k8s.io/kubernetes/pkg/registry/core/pod/strategy.go's CheckGracefulDelete (v1.36.0), in a small object store.

``before_delete`` is Go's ``BeforeDelete`` step for step; :meth:`Store.delete` follows
``Store.Delete`` and ``updateForGracefulDeletionAndFinalizers`` of
pkg/registry/generic/registry/store.go; :class:`PodStrategy` is the pod strategy's
``CheckGracefulDelete`` (k8s.io/kubernetes pkg/registry/core/pod/strategy.go). Together:

* a delete without a grace period uses the pod's ``terminationGracePeriodSeconds`` (default 30);
  an unscheduled or finished pod is deleted at once; a negative grace becomes 1;
* a graceful delete only *updates* the pod: ``deletionTimestamp = now + grace`` and
  ``deletionGracePeriodSeconds = grace``; watchers see MODIFIED, and the pod shows as
  Terminating. It is removed (DELETED) only by a delete with grace 0;
* a later delete may shorten the grace (the timestamp moves back by the difference, never into
  the past; a graceful request that would land in the past becomes 1 s), never lengthen it;
* a ``uid`` or ``resourceVersion`` precondition that does not match is a 409 Conflict.

Objects are plain dicts shaped like the API's JSON (``metadata``/``spec``/``status``); reads and
watch events hand out deep copies. Timestamps are cluster seconds from a
:class:`~genericserver.cluster.clock.ClusterClock` (the API keeps whole seconds; floats here).
Finalizers hold a deletion up (``updateForGracefulDeletionAndFinalizers``): a delete sets the
deletion timestamp but leaves the object while any finalizer remains, even at grace 0, and the
update that removes the last one removes the object (``ShouldDeleteDuringUpdate``). A delete's
``propagationPolicy`` (or ``orphanDependents``) adds or removes the garbage collector's
``orphan`` and ``foregroundDeletion`` finalizers (``deletionFinalizersForGarbageCollection``);
these finalizer functions are the generic store's (:mod:`genericserver.registry.generic.registry.store`).

Every change gets the next resource version, a deletion too, and is kept in a bounded history,
so the API's watches can resume from a version (:meth:`Store.changes_after`).
Left out: dry run, admission and the garbage collector itself (nothing here has dependents).
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import itertools
import uuid
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

from genericserver import responsewriters
from genericserver import runtime as rt
from genericserver.cluster.clock import ClusterClock
from genericserver.events import EventStream
from genericserver.apimachinery.api.errors import StatusError
from genericserver.apimachinery.runtime.converter import deep_copy_json_value
from genericserver.registry.generic.registry import store as generic_store

POD, SERVICE, ENDPOINT_SLICE, DEPLOYMENT, EVENT = "Pod", "Service", "EndpointSlice", "Deployment", "Event"
REPLICA_SET, NODE, NAMESPACE, LEASE, PDB = "ReplicaSet", "Node", "Namespace", "Lease", "PodDisruptionBudget"
RESOURCES = {POD: "pods", SERVICE: "services", ENDPOINT_SLICE: "endpointslices.discovery.k8s.io", DEPLOYMENT: "deployments.apps",
             EVENT: "events", REPLICA_SET: "replicasets.apps", NODE: "nodes", NAMESPACE: "namespaces",
             LEASE: "leases.coordination.k8s.io", PDB: "poddisruptionbudgets.policy"}
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30  # what the API defaults a pod's grace to
ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
HISTORY = 10000  # changes kept for watches that resume from a resource version
STAMPED_VERSIONS = 64  # each object's last changes kept for reads as of a controller's due time


@dataclass
class Preconditions:
    uid: Optional[str] = None
    resource_version: Optional[str] = None


@dataclass
class DeleteOptions:
    """``metav1.DeleteOptions``: ``grace_period_seconds`` None means "the object's own"."""

    grace_period_seconds: Optional[int] = None
    preconditions: Optional[Preconditions] = None
    propagation_policy: Optional[str] = None  # Orphan, Background or Foreground
    orphan_dependents: Optional[bool] = None  # the deprecated form of Orphan


def new_delete_options(grace: int) -> DeleteOptions:
    """``metav1.NewDeleteOptions``."""
    return DeleteOptions(grace_period_seconds=grace)


def _status_error(code: int, reason: str, message: str, kind: str, name: str) -> StatusError:
    return StatusError(responsewriters.status(code, reason, message, {"name": name, "kind": RESOURCES.get(kind, kind)}))


def new_not_found(kind: str, name: str) -> StatusError:
    return _status_error(404, "NotFound", f'{RESOURCES.get(kind, kind)} "{name}" not found', kind, name)


def new_already_exists(kind: str, name: str) -> StatusError:
    return _status_error(409, "AlreadyExists", f'{RESOURCES.get(kind, kind)} "{name}" already exists', kind, name)


def new_conflict(kind: str, name: str, why: str) -> StatusError:
    """Go's ``NewConflict``: the message names the resource (``pods``), not the kind."""
    return _status_error(409, "Conflict", f'Operation cannot be fulfilled on {RESOURCES.get(kind, kind)} "{name}": {why}', kind, name)


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, StatusError) and err.status.get("reason") == "NotFound"


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, StatusError) and err.status.get("reason") == "Conflict"


def new_pod(name: str, *, namespace: str = "default", labels: Optional[dict] = None,
            containers: Optional[list[dict]] = None, node_name: str = "node-1",
            termination_grace_period_seconds: Optional[int] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS) -> dict:
    """A pod as the API would store it after defaulting (``nodeName`` set: no scheduler here)."""
    return {
        "kind": POD,
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": {"nodeName": node_name, "terminationGracePeriodSeconds": termination_grace_period_seconds,
                 "containers": list(containers or [{"name": "app", "image": "fake"}])},
        "status": {"phase": "Pending", "conditions": []},
    }


# -- the delete strategies --------------------------------------------------------------------


class PodStrategy:
    """The pod strategy's ``CheckGracefulDelete``: the request's grace, else the pod's."""

    def check_graceful_delete(self, pod: dict, options: Optional[DeleteOptions]) -> bool:
        if options is None:
            return False
        period = 0
        if options.grace_period_seconds is not None:
            period = options.grace_period_seconds
        elif pod["spec"].get("terminationGracePeriodSeconds") is not None:
            period = pod["spec"]["terminationGracePeriodSeconds"]
        if not pod["spec"].get("nodeName"):
            period = 0  # never scheduled: nothing runs that needs time to stop
        if pod.get("status", {}).get("phase") in ("Failed", "Succeeded"):
            period = 0  # already finished
        if period < 0:
            period = 1
        options.grace_period_seconds = period  # the options and the pod agree from here on
        return True


def before_delete(strategy: Any, obj: dict, options: DeleteOptions, now: float) -> tuple[bool, bool]:
    """``rest.BeforeDelete``: returns (graceful, graceful_pending); may update ``obj`` and ``options``.

    *graceful*: update the object (timestamp and grace) instead of removing it. *pending*: it is
    already being deleted no sooner than asked; nothing to change."""
    meta = obj["metadata"]
    name = meta["name"]
    pre = options.preconditions
    if pre is not None:
        # checked here to fail early; Go's storage layer checks them again on the write
        if pre.uid is not None and pre.uid != meta.get("uid"):
            raise new_conflict(obj["kind"], name, f"the UID in the precondition ({pre.uid}) does not match the UID in record ({meta.get('uid')}). The object might have been deleted and then recreated")
        if pre.resource_version is not None and pre.resource_version != meta.get("resourceVersion"):
            raise new_conflict(obj["kind"], name, f"the ResourceVersion in the precondition ({pre.resource_version}) does not match the ResourceVersion in record ({meta.get('resourceVersion')}). The object might have been modified")
    # deleting with a negative grace counts as 1 s
    if options.grace_period_seconds is not None and options.grace_period_seconds < 0:
        options.grace_period_seconds = 1
    if meta.get("deletionGracePeriodSeconds") is not None and meta["deletionGracePeriodSeconds"] < 0:
        meta["deletionGracePeriodSeconds"] = 1
    if not hasattr(strategy, "check_graceful_delete"):
        return False, False
    if meta.get("deletionTimestamp") is not None:
        current = meta.get("deletionGracePeriodSeconds")
        # grace 0 (or none) recorded: an earlier update went through but its delete did not;
        # finish the job now
        if not current:
            return False, False
        if options.grace_period_seconds is not None:
            period = options.grace_period_seconds
            if period >= current:
                return False, True  # only a shorter grace period may be asked for
            # move the timestamp back by the old grace and forward by the new one...
            when = meta["deletionTimestamp"] - current + options.grace_period_seconds
            if when < now:
                # ...but never into the past; a graceful request whose time is already up
                # still leaves the final delete to whoever watches (the kubelet)
                when = now
                if period != 0:
                    period = 1
            meta["deletionTimestamp"] = when
            meta["deletionGracePeriodSeconds"] = period
            return True, False
        options.grace_period_seconds = current
        return False, True
    if not strategy.check_graceful_delete(obj, options):
        return False, False
    if options.grace_period_seconds is None:
        raise StatusError(responsewriters.status(500, "InternalError", "Internal error occurred: options.GracePeriodSeconds should not be nil"))
    meta["deletionTimestamp"] = now + options.grace_period_seconds
    meta["deletionGracePeriodSeconds"] = options.grace_period_seconds
    # controllers must see the first step of a deletion as a change of the object's intent
    if meta.get("generation", 0) > 0:
        meta["generation"] += 1
    return True, False


def is_terminating(obj: dict) -> bool:
    return obj["metadata"].get("deletionTimestamp") is not None


# -- finalizers (store.go: the generic store's functions, on this store's DeleteOptions) --------

ORPHAN_FINALIZER, FOREGROUND_FINALIZER = generic_store.ORPHAN_FINALIZER, generic_store.FOREGROUND_FINALIZER
should_delete_during_update = generic_store.should_delete_during_update
mark_as_deleting = generic_store.mark_as_deleting  # with cluster seconds for times


def deletion_finalizers(meta: dict, options: DeleteOptions) -> tuple[bool, list[str]]:
    """``deletionFinalizersForGarbageCollection``
    (:func:`genericserver.registry.generic.registry.store.deletion_finalizers_for_garbage_collection`)
    with these options: (changed, finalizers)."""
    as_json = {"orphanDependents": options.orphan_dependents, "propagationPolicy": options.propagation_policy}
    return generic_store.deletion_finalizers_for_garbage_collection(meta, {k: v for k, v in as_json.items() if v is not None})


# -- the store -------------------------------------------------------------------------------


class Watch:
    """One watcher's queue of ``(type, object)``; ``next(timeout)`` blocks on the runtime.

    Each event also carries the cluster time of its change (``take_all``), so that a controller
    that reads it late can still act as of when it happened (:mod:`.workqueue`)."""

    def __init__(self, store: "Store", kind: Optional[str]):
        self.kind = kind
        self._store = store
        self._cond = rt.condition(rt.lock())
        self._queue: list[tuple[str, dict, float]] = []
        self._stopped = False

    def _push(self, typ: str, obj: dict, at: float) -> None:
        with self._cond:
            self._queue.append((typ, obj, at))
            self._cond.notify_all()

    @property
    def stopped(self) -> bool:
        """Stopped, and every event queued before taken: :meth:`next` returns None for good."""
        with self._cond:
            return self._stopped and not self._queue

    def next(self, timeout: Optional[float] = None) -> Optional[tuple[str, dict]]:
        """The next event; None once stopped, or if ``timeout`` runtime seconds passed first."""
        with self._cond:
            if not self._queue and not self._stopped:
                self._cond.wait(timeout)
            if self._queue:
                typ, obj, _ = self._queue.pop(0)
                return typ, obj
            return None

    def wait_pending(self) -> bool:
        """Wait until an event is queued (True) or the watch is stopped with none left (False)."""
        with self._cond:
            while not self._queue and not self._stopped:
                self._cond.wait()
            return bool(self._queue)

    def take_all(self) -> list[tuple[str, dict, float]]:
        """Every queued event, oldest first, as ``(type, object, cluster time of the change)``;
        does not wait."""
        with self._cond:
            taken, self._queue = self._queue, []
            return taken

    def stop(self) -> None:
        self._store._unwatch(self)
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    @property
    def stopped(self) -> bool:
        return self._stopped


# the cluster time a controller's sync is due, while it writes (see Store.as_of)
_acting_at: contextvars.ContextVar[Optional[float]] = contextvars.ContextVar("store-acting-at", default=None)


class Store:
    """Objects by (kind, namespace, name) with a resource version counter and watches."""

    @staticmethod
    @contextlib.contextmanager
    def as_of(at: float):
        """Within the block, in this thread, the store is as it was at ``at`` (cluster seconds):
        writes reach watchers stamped ``at`` instead of now, and ``get`` and ``list`` read each
        object as its last change stamped by then left it. A controller that syncs late acts as
        of when it was due, on what it would have seen then: a change made meanwhile is its next
        sync's (a late kube-proxy once routed by an EndpointSlice written after the sync it stamped)."""
        token = _acting_at.set(at)
        try:
            yield
        finally:
            _acting_at.reset(token)

    def __init__(self, clock: Optional[ClusterClock] = None, events: Optional[EventStream] = None,
                 new_uid: Callable[[], str] = lambda: str(uuid.uuid4())):
        self.clock = clock if clock is not None else ClusterClock()
        self.events = events if events is not None else EventStream()
        self._new_uid = new_uid
        self._lock = rt.lock()
        self._objects: dict[tuple[str, str, str], dict] = {}
        self._rv = itertools.count(1)
        self._watches: list[Watch] = []
        self.strategies: dict[str, Any] = {POD: PodStrategy()}
        # the changes, as etcd keeps them for watches that resume: (version, type, object)
        self._history: collections.deque = collections.deque(maxlen=HISTORY)
        # each object's last changes as (stamp, version, object or None once deleted), for as_of's reads
        self._stamped: dict[tuple[str, str, str], collections.deque] = {}
        self._changed = rt.event("cluster-store-changed")
        self._event_names = itertools.count(1)
        self._events_seen: dict[tuple, str] = {}  # the recorder's cache: an event's key -> its name
        self._events_lock = rt.lock()

    def record_event(self, ref: dict, typ: str, reason: str, message: str, *, component: str, host: str = "",
                     at: Optional[float] = None) -> dict:
        """An Event about the object ``ref`` names, as client-go's recorder writes one to the
        API (``kubectl get events``, ``describe``'s Events), and no line of the timeline (the
        component prints its own). The same event again (the same source, object, type, reason
        and message: ``getEventKey``) is not a new one: its count goes up and its lastTimestamp
        moves, as the EventCorrelator's logger patches it, so ``describe`` shows ``(x4 over 3s)``.
        (The correlator's aggregation of similar messages and its spam filter are left out.)"""
        at = self.clock.now() if at is None else at
        namespace = ref.get("namespace", "default")
        key = (component, host, *(ref.get(k, "") for k in ("kind", "namespace", "name", "fieldPath", "uid", "apiVersion")),
               typ, reason, message)
        with self._events_lock:
            seen = self._events_seen.get(key)
            if seen is not None:
                try:
                    return self.guaranteed_update(EVENT, seen, lambda e: {**e, "count": e["count"] + 1, "lastTimestamp": at},
                                                  namespace=namespace)
                except StatusError as err:
                    if not is_not_found(err):
                        raise
            source = {"component": component, **({"host": host} if host else {})}
            event = self.create({"kind": EVENT, "metadata": {"name": f"{ref['name']}.{next(self._event_names):016x}",
                                                              "namespace": namespace},
                                 "involvedObject": ref, "reason": reason, "message": message, "source": source,
                                 "firstTimestamp": at, "lastTimestamp": at, "count": 1, "type": typ,
                                 "reportingComponent": component, "reportingInstance": host}, record=False)
            self._events_seen[key] = event["metadata"]["name"]
            return event

    # -- reads ------------------------------------------------------------------------------
    def get(self, kind: str, name: str, namespace: str = "default") -> dict:
        with self._lock:
            obj = self._read_locked((kind, namespace, name))
            if obj is None:
                raise new_not_found(kind, name)
            return deep_copy_json_value(obj)

    def list(self, kind: str, namespace: Optional[str] = None) -> list[dict]:
        with self._lock:
            keys = sorted(k for k in self._stamped if k[0] == kind and namespace in (None, k[1]))
            return [deep_copy_json_value(o) for o in map(self._read_locked, keys) if o is not None]

    def _read_locked(self, key: tuple[str, str, str]) -> Optional[dict]:
        """The object now, or within ``as_of`` as its last change stamped by then left it."""
        at = _acting_at.get()
        if at is None:
            return self._objects.get(key)
        versions = self._stamped.get(key, ())
        seen = [(stamp, rv, obj) for stamp, rv, obj in versions if stamp <= at]
        if not seen:
            # made after ``at``, or older than the versions kept: as it is now, unless it is new
            return None if versions and versions[0][0] > at and len(versions) < STAMPED_VERSIONS else self._objects.get(key)
        return max(seen, key=lambda v: (v[0], v[1]))[2]

    def watch(self, kind: Optional[str] = None) -> Watch:
        """Events from now on (list first for the current state, as an informer does)."""
        w = Watch(self, kind)
        with self._lock:
            self._watches.append(w)
        return w

    def _unwatch(self, w: Watch) -> None:
        with self._lock:
            if w in self._watches:
                self._watches.remove(w)

    # -- writes (callers hold no lock; each write is one critical section) --------------------
    def _commit_locked(self, typ: str, obj: dict) -> dict:
        key = (obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"])
        # every change is a new version, a deletion too (its object keeps it, as in etcd)
        rv = next(self._rv)
        obj["metadata"]["resourceVersion"] = str(rv)
        if typ == DELETED:
            self._objects.pop(key, None)
        else:
            self._objects[key] = obj
        at = _acting_at.get()
        if at is None:
            at = self.clock.now()
        for w in list(self._watches):
            if w.kind in (None, obj["kind"]):
                w._push(typ, deep_copy_json_value(obj), at)
        snapshot = deep_copy_json_value(obj)
        self._history.append((rv, typ, snapshot))
        self._stamped.setdefault(key, collections.deque(maxlen=STAMPED_VERSIONS)).append(
            (at, rv, None if typ == DELETED else snapshot))
        changed, self._changed = self._changed, rt.event("cluster-store-changed")
        changed.set()
        return deep_copy_json_value(obj)

    # -- what the API's watches read (the generic store's interface) -----------------------------
    def resource_version(self) -> int:
        with self._lock:
            return int(self._history[-1][0]) if self._history else 0

    def oldest_version(self) -> int:
        """A watch may resume from this version or any later one."""
        with self._lock:
            return self._history[0][0] - 1 if len(self._history) == self._history.maxlen else 0

    def changes_after(self, rv: int, kind: str) -> tuple[list[tuple[str, dict]], int, rt.Event]:
        """The changes of ``kind`` after version ``rv``, the newest version, and the event the
        next change sets; read together so that no change slips in between."""
        with self._lock:
            latest = self._history[-1][0] if self._history else 0
            out = [(typ, deep_copy_json_value(obj)) for v, typ, obj in self._history if v > rv and obj["kind"] == kind]
            return out, max(rv, latest), self._changed

    def list_at(self, kind: str, namespace: Optional[str] = None) -> tuple[list[dict], int]:
        """The objects of ``kind`` and the version they were read at."""
        with self._lock:
            latest = self._history[-1][0] if self._history else 0
            return [deep_copy_json_value(o) for (k, ns, _), o in sorted(self._objects.items())
                    if k == kind and namespace in (None, ns)], latest

    def create(self, obj: dict, *, record: bool = True) -> dict:
        """Store a new object (its uid and creation time set); ``record`` puts the creation on
        the timeline (the kubelet's Events are not worth a line of their own)."""
        obj = deep_copy_json_value(obj)
        meta = obj["metadata"]
        meta.setdefault("namespace", "default")
        with self._lock:
            if (obj["kind"], meta["namespace"], meta["name"]) in self._objects:
                raise new_already_exists(obj["kind"], meta["name"])
            meta["uid"] = self._new_uid()
            meta["creationTimestamp"] = self.clock.now()
            meta.pop("deletionTimestamp", None)
            meta.pop("deletionGracePeriodSeconds", None)
            out = self._commit_locked(ADDED, obj)
        if record:
            self.events.record("store", f"{obj['kind'].lower()} {meta['name']} created", uid=meta["uid"])
        return out

    def guaranteed_update(self, kind: str, name: str, fn: Callable[[dict], Optional[dict]], namespace: str = "default") -> dict:
        """Apply ``fn`` to a copy of the current object and store what it returns (None: no
        change). The store's lock makes the read-modify-write atomic, so no retry is needed.

        An update that removes the last finalizer of an object whose deletion is due removes
        the object (``ShouldDeleteDuringUpdate``): watchers see DELETED."""
        with self._lock:
            cur = self._objects.get((kind, namespace, name))
            if cur is None:
                raise new_not_found(kind, name)
            new = fn(deep_copy_json_value(cur))
            if new is None:
                return deep_copy_json_value(cur)
            new["metadata"]["uid"] = cur["metadata"]["uid"]
            for k in ("deletionTimestamp", "deletionGracePeriodSeconds"):  # only delete sets these
                if k in cur["metadata"]:
                    new["metadata"][k] = cur["metadata"][k]
            if should_delete_during_update(new, cur):
                out = self._commit_locked(DELETED, new)
                deleted = True
            else:
                return self._commit_locked(MODIFIED, new)
        if deleted:
            self.events.record("store", f"{kind.lower()} {name} deleted: its last finalizer was removed", uid=out["metadata"]["uid"])
        return out

    def apply(self, obj: dict) -> dict:
        """Create ``obj`` or replace the stored one's spec and status (for controllers' slices)."""
        meta = obj["metadata"]
        try:
            return self.create(obj)
        except StatusError as err:
            if err.status.get("reason") != "AlreadyExists":
                raise

        def replace_body(cur: dict) -> Optional[dict]:
            if all(cur.get(k) == obj.get(k) for k in obj if k != "metadata"):
                return None
            cur.update({k: deep_copy_json_value(v) for k, v in obj.items() if k != "metadata"})
            return cur

        return self.guaranteed_update(obj["kind"], meta["name"], replace_body, meta.get("namespace", "default"))

    def delete(self, kind: str, name: str, options: Optional[DeleteOptions] = None,
               namespace: str = "default") -> tuple[dict, bool]:
        """``Store.Delete``: returns (object, deleted). A graceful delete returns the updated
        object and False; a delete with grace 0 (or of a kind without graceful deletion) removes
        it and returns True. Raises NotFound, or Conflict on a failed precondition."""
        # support older clients: no options at all means "now"
        options = new_delete_options(0) if options is None else replace(options)
        strategy = self.strategies.get(kind)
        with self._lock:
            cur = self._objects.get((kind, namespace, name))
            if cur is None:
                raise new_not_found(kind, name)
            obj = deep_copy_json_value(cur)
            now = self.clock.now()
            graceful, pending = before_delete(strategy, obj, options, now)
            if pending:
                return deep_copy_json_value(cur), False
            meta = obj["metadata"]
            # the garbage collector's finalizers, as the options ask; once a deletion has
            # started (pending, above) the options can no longer change them
            changed, finalizers = deletion_finalizers(meta, options)
            if changed:
                meta["finalizers"] = finalizers
            held = bool(meta.get("finalizers"))
            if held and not graceful:
                mark_as_deleting(meta, now)
            if graceful or held:
                out = self._commit_locked(MODIFIED, obj)
                if held or options.grace_period_seconds:
                    if graceful and options.grace_period_seconds:
                        self._record_graceful(out, now)
                    elif held:
                        self._record_held(out)
                    return out, False
                obj = out  # grace 0: the update went through; now remove it for real
            out = self._commit_locked(DELETED, obj)
        self.events.record("store", f"{kind.lower()} {name} deleted", uid=out["metadata"].get("uid"))
        return out, True

    def _record_held(self, obj: dict) -> None:
        m = obj["metadata"]
        self.events.record("store", f"{obj['kind'].lower()} {m['name']} kept: finalizers {', '.join(m['finalizers'])} "
                           f"must be removed first (Terminating)", finalizers=list(m["finalizers"]))

    def _record_graceful(self, obj: dict, now: float) -> None:
        m = obj["metadata"]
        self.events.record("store", f"{obj['kind'].lower()} {m['name']} updated: deletionTimestamp=now+{round(m['deletionTimestamp'] - now, 3):g}s, "
                           f"deletionGracePeriodSeconds={m['deletionGracePeriodSeconds']} (Terminating)",
                           deletionTimestamp=m["deletionTimestamp"], deletionGracePeriodSeconds=m["deletionGracePeriodSeconds"])

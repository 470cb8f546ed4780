"""The cluster's store behind the API's REST handlers: one storage per served resource (no Go twin: stands for the registries of k8s.io/kubernetes pkg/registry).

kube-apiserver serves each resource through a registry: the generic store with the kind's
strategy (pods' ``pkg/registry/core/pod/storage``, deployments' and their ``scale``). Here every
registry reads and writes the one store the simulated cluster runs on
(:class:`~genericserver.cluster.store.Store`), so what kubectl changes, the kubelet and the
controllers see at once, and what they do, kubectl's watches show:

* :class:`ClusterStorage` is the generic store's interface (get, list, update, watch) for one
  kind, on the cluster's store, through an :class:`~genericserver.cluster.apiview.APIView`;
* :meth:`ClusterStorage.delete` is the pods' graceful delete: ``DeleteOptions`` as
  kube-apiserver reads them, then the store's ``BeforeDelete`` and finalizers; the answer is the
  pod (the pod registry's ``ReturnDeletedObject``), still there and Terminating or gone;
* an update keeps what the kind's strategy keeps: a pod's status on the pod, its spec on
  ``pods/status``; a Deployment's status, and its generation bumped when its spec changes
  (``PrepareForUpdate``); ``deployments/scale`` changes only ``spec.replicas``.

The resource version is the store's: one counter for every kind, as etcd's revision is.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional

from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.field import errors as field
from genericserver.cluster.apiview import APIView
from genericserver.cluster.store import DeleteOptions, Preconditions, Store
from genericserver.cluster.store import new_already_exists as cluster_store_already_exists
from genericserver.registry.rest.rest import Resource
from genericserver.registry.rest.update import take_client_metadata, take_spec
from genericserver.registry.generic.registry import store as generic_store
from genericserver.storage import interfaces
from genericserver.storage.errors import StorageError

ToAPI = Callable[[dict], dict]
# (stored object, the client's object, the stored object as the API showed it) -> new stored object
Merge = Callable[[dict, dict, dict], dict]


class ClusterStorage:
    """One resource of the cluster's store, as the REST handlers use a generic store."""

    def __init__(self, store: Store, kind: str, resource: Resource, to_api: ToAPI, *, merge: Optional[Merge] = None,
                 prepare_for_create: Optional[Callable[[dict], dict]] = None):
        self.store, self.kind, self.resource = store, kind, resource
        self.to_api = to_api
        self.merge = merge
        self.prepare_for_create = prepare_for_create

    def _api(self, obj: dict) -> dict:
        return self.to_api(obj)

    def get(self, namespace: str, name: str, resource_version: str = "") -> dict:
        interfaces.parse_resource_version(resource_version)  # as the generic store's get
        return self._api(self.store.get(self.kind, name, namespace))

    def list(self, namespace: Optional[str] = None) -> tuple[list[dict], int]:
        items, rv = self.store.list_at(self.kind, namespace)
        return [self._api(o) for o in items], rv

    def resource_version(self) -> int:
        return self.store.resource_version()

    def create(self, namespace: str, obj: dict, *, dry_run: bool = False) -> dict:
        """A client's new object, as the kind's ``PrepareForCreate`` leaves it (only kinds a
        client makes have one: the others are the controllers')."""
        if self.prepare_for_create is None:
            raise errors.new_method_not_supported(self.resource.group_resource, "create")
        new = self.prepare_for_create(obj)
        new["kind"] = self.kind
        new.pop("apiVersion", None)
        new["metadata"]["namespace"] = namespace
        for k in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            new["metadata"].pop(k, None)  # the server's to set (rest.WipeObjectMetaSystemFields)
        if dry_run:  # the checks without the write
            if any(o["metadata"]["name"] == new["metadata"]["name"] for o in self.store.list(self.kind, namespace)):
                raise cluster_store_already_exists(self.kind, new["metadata"]["name"])
            return self._api(new)
        return self._api(self.store.create(new))

    def delete(self, namespace: str, name: str, *, uid: Optional[str] = None, resource_version: Optional[str] = None,
               dry_run: bool = False) -> dict:
        """The delete of a kind without graceful deletion: gone at once (preconditions checked)."""
        if dry_run:
            return self.get(namespace, name)
        pre = Preconditions(uid, resource_version) if uid or resource_version else None
        obj, _ = self.store.delete(self.kind, name, DeleteOptions(grace_period_seconds=0, preconditions=pre), namespace)
        return self._api(obj)

    def update(self, namespace: str, name: str, obj: dict, *, dry_run: bool = False, preconditions: Optional[dict] = None) -> dict:
        """A client's new version of the object: a uid in ``preconditions`` (a PUT's) that is
        not the object's, or a stale ``resourceVersion``, is 409, as the generic store's; the
        kind's rule (``merge``) says what of it is taken."""
        if self.merge is None:
            raise errors.new_method_not_supported(self.resource.group_resource, "update")
        if preconditions:  # on the object as stored, once found (404 first)
            key = f"{generic_store.key_root(self.resource, namespace or None)}/{name}"
            try:
                interfaces.check_preconditions(preconditions, key.removeprefix("/registry") if dry_run else key,
                                               self.get(namespace, name))
            except StorageError as err:
                raise errors.new_conflict(self.resource.group_resource, name, str(err)) from None
        want = (obj.get("metadata") or {}).get("resourceVersion")
        conflict = errors.new_conflict(self.resource.group_resource, name,
                                       "the object has been modified; please apply your changes to the latest version and try again")
        current = self.store.get(self.kind, name, namespace)
        if want and want != current["metadata"]["resourceVersion"]:
            raise conflict
        new = self.merge(current, obj, self._api(current))
        if dry_run:
            return self._api(new)

        def replace(cur: dict) -> Optional[dict]:
            if cur["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]:
                raise conflict  # changed since it was read: the client must read it again
            return new

        return self._api(self.store.guaranteed_update(self.kind, name, replace, namespace))

    # -- the pods' graceful delete ----------------------------------------------------------------
    def delete_with_options(self, namespace: str, name: str, opts: dict) -> tuple[dict, bool]:
        """``DELETE`` with the request's ``DeleteOptions`` (already checked by the handler):
        the object as it is after the delete, and whether it is gone. A dry run changes nothing
        and answers the object as it is."""
        pre = opts.get("preconditions") or {}
        options = DeleteOptions(grace_period_seconds=opts.get("gracePeriodSeconds"),
                                preconditions=Preconditions(pre.get("uid"), pre.get("resourceVersion")) if pre else None,
                                propagation_policy=opts.get("propagationPolicy"), orphan_dependents=opts.get("orphanDependents"))
        if opts.get("dryRun"):
            return self.get(namespace, name), False
        obj, deleted = self.store.delete(self.kind, name, options, namespace)
        return self._api(obj), deleted

    def update_for_graceful_deletion_and_finalizers(self, namespace: str, name: str, opts: dict) -> tuple[dict, str]:
        """The generic store's delete of an object its finalizers hold
        (:func:`genericserver.registry.generic.registry.store.delete`): the cluster's store does
        it (``Store.delete`` keeps such an object, or removes it when none is left)."""
        obj, deleted = self.delete_with_options(namespace, name, opts)
        return obj, "gone" if deleted else "kept"

    # -- watch --------------------------------------------------------------------------------------
    def watch_start(self, namespace: Optional[str], resource_version: str) -> tuple[list[dict], int]:
        """Where a watch begins: the objects to send as ADDED and the version to follow from."""
        if resource_version in ("", "0"):
            return self.list(namespace)
        if not resource_version.isdigit():
            raise errors.new_bad_request(f"invalid resource version {errors._q(resource_version)}")
        rv = int(resource_version)
        if rv < self.store.oldest_version():
            raise errors.new_resource_expired(f"too old resource version: {rv} ({self.store.oldest_version()})")
        return [], rv

    def events_after(self, rv: int, namespace: Optional[str]) -> tuple[list[tuple[str, dict]], int, rt.Event]:
        if rv < self.store.oldest_version():
            raise errors.new_resource_expired(f"too old resource version: {rv} ({self.store.oldest_version()})")
        changes, latest, changed = self.store.changes_after(rv, self.kind)
        return [(typ, self._api(obj)) for typ, obj in changes
                if namespace is None or obj["metadata"].get("namespace") == namespace], latest, changed


# -- the kinds' update rules ------------------------------------------------------------------------


def pod_merge(view: APIView) -> Merge:
    """A pod's update: its labels, annotations, finalizers and images (``ValidatePodUpdate``);
    the status stays the kubelet's."""
    return lambda current, new, old_api: view.pod_update(current, new, old_api)


def pod_status_merge(view: APIView) -> Merge:
    """``pods/status``: the client's status conditions and phase; the spec and metadata stay."""
    return lambda current, new, old_api: view.pod_status_update(current, new)


def deployment_merge(current: dict, new: dict, old_api: dict) -> dict:
    """A Deployment's update: its spec and the metadata a client owns; the status stays the
    controller's, and a changed spec bumps the generation the controller will observe."""
    return take_spec(current, new)


def node_merge(current: dict, new: dict, old_api: dict) -> dict:
    """A Node's update (``kubectl cordon`` patches ``spec.unschedulable``): its spec and the
    metadata a client owns; the status stays the kubelet's."""
    out = take_client_metadata(current, new, ("labels", "annotations"))
    out["spec"] = {k: copy.deepcopy(v) for k, v in (new.get("spec") or {}).items() if v not in (None, False)}
    return out


# why a Service's spec takes only a new selector here
SERVICE_SPEC_FIXED = ("the simulated cluster's Service takes a new selector only: its ports, type and addresses are "
                      "kube-proxy's model (walkthrough.md 9.3)")


def service_merge(current: dict, new: dict, old_api: dict) -> dict:
    """A Service's update: the metadata a client owns and the selector, which the endpoints
    controller follows (a selector that matches no pod empties the slice, as in a cluster). The
    rest of its spec is the model's one ClusterIP service on a nominal address: a change to it is
    refused (422) rather than taken and never acted on."""
    old_spec, new_spec = old_api.get("spec") or {}, new.get("spec") or {}
    errs = [field.forbidden(f"spec.{k}", SERVICE_SPEC_FIXED) for k in sorted(set(old_spec) | set(new_spec))
            if k != "selector" and old_spec.get(k) != new_spec.get(k)]
    if errs:
        raise errors.new_invalid("Service", current["metadata"]["name"], field.to_causes(errs))
    out = take_client_metadata(current, new)
    out["spec"]["selector"] = dict(new_spec.get("selector") or {})
    return out


def scale_of(view: APIView, deployment: dict) -> dict:
    """The ``Scale`` a Deployment shows at ``deployments/scale``."""
    api = view.deployment(deployment)
    meta = {k: api["metadata"][k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in api["metadata"]}
    labels = ((api["spec"].get("selector") or {}).get("matchLabels") or {})
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": meta,
            "spec": {"replicas": api["spec"].get("replicas", 0)},
            "status": {"replicas": (api.get("status") or {}).get("replicas", 0),
                       "selector": ",".join(f"{k}={labels[k]}" for k in sorted(labels))}}


def scale_merge(current: dict, new: dict, old_api: dict) -> dict:
    """``deployments/scale``: only the replicas change (and with them the generation)."""
    replicas = (new.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or replicas < 0:
        raise errors.new_invalid("Scale.autoscaling", current["metadata"]["name"], [
            {"reason": "FieldValueInvalid", "message": f"Invalid value: {replicas}: must be greater than or equal to 0",
             "field": "spec.replicas"}])
    out = copy.deepcopy(current)
    if out["spec"].get("replicas") != replicas:
        out["spec"]["replicas"] = replicas
        out["metadata"]["generation"] = current["metadata"].get("generation", 1) + 1
    return out


def graceful_delete(storage: ClusterStorage) -> Callable[[str, str, dict], tuple[dict, bool]]:
    """The handler hook (``scope.extra["delete"]``) of a storage with graceful deletion."""
    return storage.delete_with_options


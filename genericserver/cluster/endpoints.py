"""An endpoints controller: a service's EndpointSlice from its pods, after a processing lag (no Go twin: models k8s.io/kubernetes pkg/controller/endpointslice).

It watches pods and services. A pod change is queued for every service whose selector matches
the pod's labels and handled ``lag`` cluster seconds later (informer delivery, the work queue and
the API write of a busy cluster, all in one number). The slice lists each pod that has an address
(started by the kubelet) with the three endpoint conditions:

* ``ready``: the pod is Ready and not terminating - only these get new connections;
* ``serving``: the pod is Ready, terminating or not (its readiness probe still passes);
* ``terminating``: the pod's ``deletionTimestamp`` is set.

So a pod leaves the ready set ``lag`` after its deletion was recorded, whatever its own server
is doing meanwhile - the reason for preStop sleeps and the apiserver's ShutdownDelayDuration.
(The old Endpoints controller of seed 001 drops a terminating pod outright; EndpointSlices keep it
with ``ready=false`` so proxies can still fall back to it when nothing else is left.)
"""

from __future__ import annotations

from typing import Hashable, Iterable, Optional

from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.store import ENDPOINT_SLICE, POD, SERVICE, Store, is_terminating
from genericserver.cluster.workqueue import Controller


def new_service(name: str, selector: dict, *, namespace: str = "default", port: str = "http") -> dict:
    return {"kind": SERVICE, "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": dict(selector), "ports": [{"name": port, "targetPort": port}]}}


def selects(service: dict, pod: dict) -> bool:
    sel = service["spec"]["selector"]
    labels = pod["metadata"].get("labels", {})
    return bool(sel) and all(labels.get(k) == v for k, v in sel.items())


def pod_is_ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in pod.get("status", {}).get("conditions", []))


def endpoint_for(pod: dict, target_port: str) -> Optional[dict]:
    """The slice's entry for ``pod``, or None while it has no address yet."""
    st = pod.get("status", {})
    port = st.get("ports", {}).get(target_port)
    if not st.get("podIP") or port is None or st.get("phase") in ("Succeeded", "Failed"):
        return None
    ready, terminating = pod_is_ready(pod), is_terminating(pod)
    # the port the pod's spec declares by that name (a manifest's), which the API shows
    declared = next((p["containerPort"] for c in pod["spec"].get("containers", []) for p in (c.get("written") or {}).get("ports") or []
                     if p.get("name") == target_port), None)
    return {
        "addresses": [st["podIP"]], "port": port, "nodeName": pod["spec"].get("nodeName", "node-1"),
        **({"declaredPort": declared} if declared is not None else {}),
        "targetRef": {"kind": "Pod", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]},
        "conditions": {"ready": ready and not terminating, "serving": ready, "terminating": terminating},
    }


class EndpointsController(Controller):
    """``run()`` starts it, ``stop()`` ends it; ``lag`` is in cluster seconds."""

    watch_name = "endpoints-watch"
    worker_name = "endpoints-worker"

    def __init__(self, store: Store, *, lag: float = 0.0, clock: Optional[ClusterClock] = None):
        self.store = store
        super().__init__(clock if clock is not None else store.clock, store.watch(), lag)

    def initial_keys(self) -> Iterable[Hashable]:
        return [svc["metadata"]["name"] for svc in self.store.list(SERVICE)]

    def keys_for(self, typ: str, obj: dict) -> Iterable[Hashable]:
        if obj["kind"] == SERVICE:
            return [obj["metadata"]["name"]]
        if obj["kind"] == POD:
            return [svc["metadata"]["name"] for svc in self.store.list(SERVICE, obj["metadata"]["namespace"]) if selects(svc, obj)]
        return []

    def sync_key(self, key: Hashable) -> None:
        self.sync(str(key))

    def sync(self, name: str, namespace: str = "default") -> None:
        """Write the service's slice from the pods as they are now."""
        try:
            svc = self.store.get(SERVICE, name, namespace)
        except Exception:
            return
        port = svc["spec"]["ports"][0]["targetPort"]
        endpoints = [ep for p in self.store.list(POD, namespace) if selects(svc, p) and (ep := endpoint_for(p, port))]
        try:
            old = self.store.get(ENDPOINT_SLICE, name, namespace).get("endpoints", [])
        except Exception:
            old = []
        if old == endpoints and old:
            return
        self.store.apply({"kind": ENDPOINT_SLICE, "metadata": {"name": name, "namespace": namespace,
                                                               "labels": {"kubernetes.io/service-name": name}},
                          "endpoints": endpoints})
        for line, (pod, conditions) in zip(describe_changes(old, endpoints), changed_pods(old, endpoints)):
            self.store.events.record("endpoints", f"{name}: {line}", at=self.acting_at, pod=pod,
                                     ready=bool(conditions and conditions["ready"]))


def _by_pod(eps: list[dict]) -> dict[str, dict]:
    return {e["targetRef"]["name"]: e["conditions"] for e in eps}


def describe_changes(old: list[dict], new: list[dict]) -> list[str]:
    before, after = _by_pod(old), _by_pod(new)
    lines = []
    for pod in sorted(set(before) | set(after)):
        a, b = before.get(pod), after.get(pod)
        if a == b:
            continue
        if b is None:
            lines.append(f"{pod} removed from the slice")
            continue
        conds = " ".join(f"{k}={str(v).lower()}" for k, v in b.items())
        if a is None:
            lines.append(f"{pod} added ({conds})")
        elif a["ready"] and not b["ready"]:
            lines.append(f"{pod} leaves the ready endpoints ({conds})")
        else:
            lines.append(f"{pod} now {conds}")
    return lines



def changed_pods(old: list[dict], new: list[dict]) -> list[tuple[str, Optional[dict]]]:
    """The pods :func:`describe_changes` has a line for, in its order: (pod, new conditions or None)."""
    before, after = _by_pod(old), _by_pod(new)
    return [(pod, after.get(pod)) for pod in sorted(set(before) | set(after)) if before.get(pod) != after.get(pod)]

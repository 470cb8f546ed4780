"""The scheduler's one decision here: the node, unless it is cordoned (no Go twin: stands for kube-scheduler's NodeUnschedulable filter and its binding).

The cluster has one node, so scheduling is a yes or a no. ``kubectl cordon`` (or a drain's first
step) sets the node's ``spec.unschedulable``; from then on a new pod (a replacement the
ReplicaSet makes for an evicted one) is not bound: it stays Pending, with no node, the
condition ``PodScheduled=False`` (``Unschedulable``) and a ``FailedScheduling`` event in the
scheduler's words. ``kubectl uncordon`` makes the node schedulable again and the waiting pods are
bound (a ``Scheduled`` event each), so the kubelet starts them. A pod created while the node is
schedulable is bound as it is created (``nodeName`` in the template; its ``Scheduled`` event
recorded as the scheduler sees it), so the simulated runs, which never cordon, keep their timings.
"""

from __future__ import annotations

from typing import Callable, Optional

from genericserver.apimachinery.api.errors import StatusError
from genericserver.cluster.store import ADDED, NODE, POD, Store, is_not_found
from genericserver.cluster.workqueue import WatchLoop
from genericserver.registry.core.eviction import update_pod_condition

SCHEDULER = "default-scheduler"
# what the scheduler reports with one node and that node cordoned (the preemption part: no pod
# it could evict would make room, the node is not taking pods at all)
UNSCHEDULABLE = ("0/1 nodes are available: 1 node(s) were unschedulable. "
                 "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def node_is_schedulable(node: Optional[dict]) -> bool:
    return node is not None and not (node.get("spec") or {}).get("unschedulable")


class Scheduler(WatchLoop):
    """Binds the pods of ``store`` to ``node_name`` while it is schedulable."""

    name = "scheduler"

    def __init__(self, store: Store, node_name: str = "node-1"):
        super().__init__(store)
        self.node_name = node_name
        self._schedulable = True  # as the node registers

    def node_for_new_pod(self) -> str:
        """The ``nodeName`` a pod being made now gets: the node, or none (Pending) if cordoned."""
        return self.node_name if node_is_schedulable(self._node()) else ""

    def _node(self) -> Optional[dict]:
        try:
            return self.store.get(NODE, self.node_name, namespace="")
        except StatusError as err:
            if is_not_found(err):
                return None
            raise

    def handle(self, typ: str, obj: dict) -> None:
        """One change the watch reported: a new pod to place, or the node's schedulability."""
        if obj["kind"] == POD and typ == ADDED and obj["spec"].get("nodeName") == self.node_name:
            self._scheduled(obj)  # bound as it was made (the node was schedulable)
        elif obj["kind"] == POD and typ == ADDED and not obj["spec"].get("nodeName"):
            if node_is_schedulable(self._node()):
                self._bind(obj)
            else:
                self._unschedulable(obj)
        elif obj["kind"] == NODE and obj["metadata"]["name"] == self.node_name:
            schedulable = node_is_schedulable(obj)
            if schedulable != self._schedulable:
                self._schedulable = schedulable
                how = "schedulable again (uncordoned)" if schedulable else "cordoned: new pods stay Pending"
                self.store.events.record("scheduler", f"{self.node_name} {how}")
            if schedulable:
                for pod in self.store.list(POD):
                    if not pod["spec"].get("nodeName") and pod["metadata"].get("deletionTimestamp") is None:
                        self._bind(pod)

    def _ref(self, pod: dict) -> dict:
        m = pod["metadata"]
        return {"kind": POD, "namespace": m["namespace"], "name": m["name"], "uid": m["uid"], "apiVersion": "v1"}

    def _update(self, pod: dict, change: Callable[[dict], Optional[dict]]) -> bool:
        """Change the pod (the same one: its uid) if it is still there; whether it changed."""
        uid, changed = pod["metadata"]["uid"], False

        def apply(p: dict) -> Optional[dict]:
            nonlocal changed
            out = change(p) if p["metadata"]["uid"] == uid else None
            changed = out is not None
            return out

        try:
            self.store.guaranteed_update(POD, pod["metadata"]["name"], apply, pod["metadata"]["namespace"])
        except StatusError as err:
            if not is_not_found(err):
                raise
        return changed

    def _unschedulable(self, pod: dict) -> None:
        def mark(p: dict) -> dict:
            update_pod_condition(p, {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": UNSCHEDULABLE},
                                 self.store.clock.now())
            return p

        if self._update(pod, mark):
            self.store.events.record("scheduler", f"{pod['metadata']['name']}: unschedulable, stays Pending", pod=pod["metadata"]["name"])
            self.store.record_event(self._ref(pod), "Warning", "FailedScheduling", UNSCHEDULABLE, component=SCHEDULER)

    def _bind(self, pod: dict) -> None:
        def bind(p: dict) -> Optional[dict]:
            if p["spec"].get("nodeName"):
                return None  # bound already
            p["spec"]["nodeName"] = self.node_name
            update_pod_condition(p, {"type": "PodScheduled", "status": "True"}, self.store.clock.now())
            for c in p["status"].get("conditions", []):
                if c["type"] == "PodScheduled":
                    c.pop("reason", None)
                    c.pop("message", None)
            return p

        if self._update(pod, bind):
            self._scheduled(pod)
            self.store.events.record("scheduler", f"{pod['metadata']['name']}: bound to {self.node_name}", pod=pod["metadata"]["name"])

    def _scheduled(self, pod: dict) -> None:
        m = pod["metadata"]
        self.store.record_event(self._ref(pod), "Normal", "Scheduled", f"Successfully assigned {m['namespace']}/{m['name']} to {self.node_name}",
                                component=SCHEDULER)

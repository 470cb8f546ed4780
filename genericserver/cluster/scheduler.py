"""The scheduler's decision here: a node that is not cordoned (no Go twin: stands for kube-scheduler's NodeUnschedulable filter, its spreading and its binding).

The cluster has one node (or a few, ``--nodes``): a new pod goes to the schedulable node running
the fewest pods. ``kubectl cordon`` (or a drain's first step) sets a node's
``spec.unschedulable``; from then on no new pod goes there, and with no node left a new pod (a
replacement the ReplicaSet makes for an evicted one) is not bound: it stays Pending, with no
node, the condition ``PodScheduled=False`` (``Unschedulable``) and a ``FailedScheduling`` event
in the scheduler's words. ``kubectl uncordon`` makes the node schedulable again and the waiting
pods are bound (a ``Scheduled`` event each), so the kubelet starts them. A pod created while a
node is schedulable is bound as it is created (``nodeName`` in the template; its ``Scheduled``
event recorded as the scheduler sees it), so the simulated runs, which never cordon, keep their
timings.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from genericserver.apimachinery.api.errors import StatusError
from genericserver.cluster.store import ADDED, NODE, POD, Store, is_not_found
from genericserver.cluster.workqueue import WatchLoop
from genericserver.registry.core.eviction import update_pod_condition

SCHEDULER = "default-scheduler"


def unschedulable_message(nodes: int) -> str:
    """What the scheduler reports when every node is cordoned (the preemption part: no pod it
    could evict would make room, the nodes are not taking pods at all)."""
    return (f"0/{nodes} nodes are available: {nodes} node(s) were unschedulable. "
            f"preemption: 0/{nodes} nodes are available: {nodes} Preemption is not helpful for scheduling.")


UNSCHEDULABLE = unschedulable_message(1)


def node_is_schedulable(node: Optional[dict]) -> bool:
    return node is not None and not (node.get("spec") or {}).get("unschedulable")


class Scheduler(WatchLoop):
    """Binds the pods of ``store`` to one of ``nodes`` that is schedulable: the one running the
    fewest pods (the default scheduler's spreading, in its simplest form), the first on a tie."""

    name = "scheduler"

    def __init__(self, store: Store, nodes: Sequence[str] = ("node-1",)):
        super().__init__(store)
        self.nodes = list(nodes)
        self._schedulable = {n: True for n in self.nodes}  # as the nodes register

    def node_for_new_pod(self) -> str:
        """The ``nodeName`` a pod being made now gets: a schedulable node, or none (Pending)."""
        schedulable = [n for n in self.nodes if node_is_schedulable(self._node(n))]
        if not schedulable:
            return ""
        running = {n: 0 for n in schedulable}
        for pod in self.store.list(POD):
            if pod["spec"].get("nodeName") in running and pod["metadata"].get("deletionTimestamp") is None:
                running[pod["spec"]["nodeName"]] += 1
        return min(schedulable, key=lambda n: (running[n], self.nodes.index(n)))

    def _node(self, name: str) -> Optional[dict]:
        try:
            return self.store.get(NODE, name, namespace="")
        except StatusError as err:
            if is_not_found(err):
                return None
            raise

    def handle(self, typ: str, obj: dict) -> None:
        """One change the watch reported: a new pod to place, or a node's schedulability."""
        if obj["kind"] == POD and typ == ADDED and obj["spec"].get("nodeName") in self.nodes:
            self._scheduled(obj, obj["spec"]["nodeName"])  # bound as it was made
        elif obj["kind"] == POD and typ == ADDED and not obj["spec"].get("nodeName"):
            node = self.node_for_new_pod()
            if node:
                self._bind(obj, node)
            else:
                self._unschedulable(obj)
        elif obj["kind"] == NODE and obj["metadata"]["name"] in self.nodes:
            name, schedulable = obj["metadata"]["name"], node_is_schedulable(obj)
            if schedulable != self._schedulable[name]:
                self._schedulable[name] = schedulable
                how = "schedulable again (uncordoned)" if schedulable else "cordoned: no new pod goes there"
                self.store.events.record("scheduler", f"{name} {how}")
            if schedulable:
                for pod in self.store.list(POD):
                    if not pod["spec"].get("nodeName") and pod["metadata"].get("deletionTimestamp") is None:
                        self._bind(pod, self.node_for_new_pod() or name)

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
        message = unschedulable_message(len(self.nodes))

        def mark(p: dict) -> dict:
            update_pod_condition(p, {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message},
                                 self.store.clock.now())
            return p

        if self._update(pod, mark):
            self.store.events.record("scheduler", f"{pod['metadata']['name']}: unschedulable, stays Pending", pod=pod["metadata"]["name"])
            self.store.record_event(self._ref(pod), "Warning", "FailedScheduling", message, component=SCHEDULER)

    def _bind(self, pod: dict, node: str) -> None:
        def bind(p: dict) -> Optional[dict]:
            if p["spec"].get("nodeName"):
                return None  # bound already
            p["spec"]["nodeName"] = node
            update_pod_condition(p, {"type": "PodScheduled", "status": "True"}, self.store.clock.now())
            for c in p["status"].get("conditions", []):
                if c["type"] == "PodScheduled":
                    c.pop("reason", None)
                    c.pop("message", None)
            return p

        if self._update(pod, bind):
            self._scheduled(pod, node)
            self.store.events.record("scheduler", f"{pod['metadata']['name']}: bound to {node}", pod=pod["metadata"]["name"])

    def _scheduled(self, pod: dict, node: str) -> None:
        m = pod["metadata"]
        self.store.record_event(self._ref(pod), "Normal", "Scheduled", f"Successfully assigned {m['namespace']}/{m['name']} to {node}",
                                component=SCHEDULER)

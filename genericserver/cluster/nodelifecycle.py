"""Port of k8s.io/kubernetes/pkg/controller/nodelifecycle/node_lifecycle_controller.go (v1.36.0): a cordoned node's taint.

Of the node lifecycle controller, the part a cordon shows: ``doNoScheduleTaintingPass`` keeps
the taint ``node.kubernetes.io/unschedulable:NoSchedule`` on a node exactly while its
``spec.unschedulable`` is set (``kubectl describe node`` lists it under ``Taints``; a pod that
tolerates it could still be scheduled there, none here does). The taint carries the time it
was added, as ``SwapNodeControllerTaint`` sets it. The rest of the controller (the Ready
condition's taints, evictions of pods from an unreachable node) is left out: the simulated
node never fails.
"""

from __future__ import annotations

from typing import Optional

from genericserver.cluster.store import NODE, Store
from genericserver.cluster.workqueue import WatchLoop

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def is_unschedulable_taint(taint: dict) -> bool:
    return taint.get("key") == UNSCHEDULABLE_TAINT["key"] and taint.get("effect") == UNSCHEDULABLE_TAINT["effect"]


def tainted(node: dict, now: float) -> Optional[dict]:
    """The node with its taints as its ``spec.unschedulable`` asks, or None if they are so."""
    spec = node.setdefault("spec", {})
    taints = spec.get("taints") or []
    has = any(is_unschedulable_taint(t) for t in taints)
    want = bool(spec.get("unschedulable"))
    if has == want:
        return None
    if want:
        spec["taints"] = taints + [{**UNSCHEDULABLE_TAINT, "timeAdded": now}]
    else:
        spec["taints"] = [t for t in taints if not is_unschedulable_taint(t)]
        if not spec["taints"]:
            del spec["taints"]
    return node


class NodeLifecycleController(WatchLoop):
    """Keeps the unschedulable taint of every node in ``store`` in step with its spec."""

    name = "node-lifecycle-controller"

    def __init__(self, store: Store):
        super().__init__(store, NODE)

    def handle(self, typ: str, node: dict) -> None:
        self.store.guaranteed_update(NODE, node["metadata"]["name"], lambda n: tainted(n, self.store.clock.now()), namespace="")

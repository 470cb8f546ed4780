"""The scheduler's decisions here: a node that is not cordoned and has room (no Go twin: stands for kube-scheduler's NodeUnschedulable and NodeResourcesFit filters, its spreading and its binding).

The cluster has one node (or a few, ``--nodes``): a new pod goes to a node it fits, the one
running the fewest pods. A node does not fit (the filters in the default profile's order, the
first that fails giving the node's reasons):

* ``kubectl cordon`` (or a drain's first step) set its ``spec.unschedulable``:
  ``node(s) were unschedulable`` (NodeUnschedulable);
* it has room for no more pods, or not for the pod's requests (NodeResourcesFit's
  ``fitsRequest``): ``Too many pods`` when it holds its allocatable 110 (the kubelet's
  ``--max-pods``), ``Insufficient cpu``/``Insufficient memory`` when the requests of the pods
  bound to it (terminating ones included, until they are gone) and the new pod's exceed its
  allocatable 2 CPUs and 8Gi. A pod's requests are its containers' (a limit stands for a missing
  request, as the API defaults it); a pod that requests nothing needs only a pod slot.

With no node left a new pod (a replacement the ReplicaSet makes for an evicted one, a replica
``kubectl scale`` adds) is not bound: it stays Pending, with no node, the condition
``PodScheduled=False`` (``Unschedulable``) and a ``FailedScheduling`` event in the scheduler's
words (``FitError``: the reasons counted over the nodes, then what preemption found: no pod of
lower priority to evict where room is short, nothing to gain on a cordoned node). When a node
changes (``kubectl uncordon``) or a bound pod is gone, the waiting pods are tried again, oldest
first: bound (a ``Scheduled`` event each), so the kubelet starts them, or given the new reasons.
A pod created while a node fits is bound as it is created (``nodeName`` in the template; its
``Scheduled`` event recorded as the scheduler sees it), so the simulated runs, which never
cordon, keep their timings.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Optional, Sequence

from genericserver import runtime as rt
from genericserver.apimachinery.api.errors import StatusError
from genericserver.apimachinery.api.quantity import milli_value, value
from genericserver.cluster.store import ADDED, DELETED, NODE, POD, Store, is_not_found
from genericserver.cluster.workqueue import WatchLoop
from genericserver.registry.core.eviction import update_pod_condition

SCHEDULER = "default-scheduler"
# what each node offers pods (its status's allocatable, as the kubelet reports it)
ALLOCATABLE = {"cpu": "2", "memory": "8Gi", "pods": "110"}
CORDONED = "node(s) were unschedulable"
TOO_MANY_PODS, NO_CPU, NO_MEMORY = "Too many pods", "Insufficient cpu", "Insufficient memory"
# what the default preemption answers per node: room could be made only by evicting pods of a
# lower priority (here every pod has the same), and a cordoned node takes none whatever it evicts
NO_VICTIMS, NOT_HELPFUL = "No preemption victims found for incoming pod", "Preemption is not helpful for scheduling"


def fit_error(reasons: Sequence[Sequence[str]], resolvable: Sequence[bool]) -> str:
    """``FitError.Error()`` with the default preemption's message after it: each node's reasons
    counted over the nodes, sorted, then the same for what preemption found on each node."""
    def histogram(items: list[str]) -> str:
        return ", ".join(sorted(f"{n} {reason}" for reason, n in Counter(items).items()))

    nodes = len(reasons)
    preemption = [NO_VICTIMS if can else NOT_HELPFUL for can in resolvable]
    return (f"0/{nodes} nodes are available: {histogram([r for rs in reasons for r in rs])}. "
            f"preemption: 0/{nodes} nodes are available: {histogram(preemption)}.")


UNSCHEDULABLE = fit_error([[CORDONED]], [False])


def node_is_schedulable(node: Optional[dict]) -> bool:
    return node is not None and not (node.get("spec") or {}).get("unschedulable")


def pod_requests(pod: dict) -> tuple[int, int]:
    """(milli-CPUs, bytes of memory) the pod's containers request (``computePodResourceRequest``),
    a limit standing for a request not written."""
    cpu = memory = 0
    for c in pod["spec"].get("containers") or []:
        resources = (c.get("written") or c).get("resources") or {}
        asked = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        cpu += milli_value(str(asked["cpu"])) if "cpu" in asked else 0
        memory += value(str(asked["memory"])) if "memory" in asked else 0
    return cpu, memory


def fits_request(pod: dict, bound: list[dict]) -> tuple[list[str], bool]:
    """``fitsRequest`` on a node holding ``bound``: the reasons ``pod`` does not fit (none if it
    does), and whether evicting pods could make room (not if it asks more than the whole node)."""
    reasons = [TOO_MANY_PODS] if len(bound) + 1 > int(ALLOCATABLE["pods"]) else []
    cpu, memory = pod_requests(pod)
    if cpu == 0 and memory == 0:
        return reasons, True
    used = [pod_requests(p) for p in bound]
    room_cpu, room_memory = milli_value(ALLOCATABLE["cpu"]), value(ALLOCATABLE["memory"])
    if cpu > 0 and cpu > room_cpu - sum(c for c, _ in used):
        reasons.append(NO_CPU)
    if memory > 0 and memory > room_memory - sum(m for _, m in used):
        reasons.append(NO_MEMORY)
    return reasons, cpu <= room_cpu and memory <= room_memory


class Scheduler(WatchLoop):
    """Binds the pods of ``store`` to one of ``nodes`` the pod fits: the one running the fewest
    pods (the default scheduler's spreading, in its simplest form), the first on a tie."""

    name = "scheduler"

    def __init__(self, store: Store, nodes: Sequence[str] = ("node-1",)):
        super().__init__(store)
        self.nodes = list(nodes)
        self._schedulable = {n: True for n in self.nodes}  # as the nodes register
        # one decision at a time, as kube-scheduler's loop takes one pod at a time; a pod given a
        # node as it is made counts on that node until the store has it (the scheduler's
        # "assumed" pods), so two decisions never both take the node's last room
        self._deciding = rt.lock()
        self._assumed: dict[tuple[str, str], tuple[str, dict]] = {}

    def node_for(self, pod: dict) -> str:
        """The ``nodeName`` a pod about to be made gets: a node it fits (assumed on it from now
        on), or none (it stays Pending and the scheduler says why once it is stored)."""
        with self._deciding:
            node = self.place(pod)[0]
            if node:
                self._assumed[(pod["metadata"].get("namespace", "default"), pod["metadata"]["name"])] = (node, pod)
            return node

    def place(self, pod: dict) -> tuple[str, str]:
        """(the node ``pod`` goes to, "") or ("", why no node fits, in the scheduler's words)."""
        uid = pod["metadata"].get("uid")
        bound: dict[str, list[dict]] = {n: [] for n in self.nodes}
        stored = set()
        for p in self.store.list(POD):
            stored.add((p["metadata"]["namespace"], p["metadata"]["name"]))
            if p["spec"].get("nodeName") in bound and p["metadata"].get("uid") != uid:
                bound[p["spec"]["nodeName"]].append(p)
        for key, (node, assumed) in list(self._assumed.items()):
            if key in stored:
                del self._assumed[key]  # the store has it now, counted above
            elif node in bound and assumed is not pod:
                bound[node].append(assumed)
        fit, reasons, resolvable = [], [], []
        for n in self.nodes:
            if not node_is_schedulable(self._node(n)):
                reasons.append([CORDONED])
                resolvable.append(False)
                continue
            why, can = fits_request(pod, bound[n])
            if not why:
                fit.append(n)
            reasons.append(why)
            resolvable.append(can)
        if not fit:
            return "", fit_error(reasons, resolvable)  # (every node failed, each with its reasons)

        def running(n: str) -> int:
            return sum(1 for p in bound[n] if p["metadata"].get("deletionTimestamp") is None)
        return min(fit, key=lambda n: (running(n), self.nodes.index(n))), ""

    def _node(self, name: str) -> Optional[dict]:
        try:
            return self.store.get(NODE, name, namespace="")
        except StatusError as err:
            if is_not_found(err):
                return None
            raise

    def handle(self, typ: str, obj: dict) -> None:
        """One change the watch reported: a new pod to place, a node's schedulability, a pod gone."""
        if obj["kind"] == POD and typ == ADDED and obj["spec"].get("nodeName") in self.nodes:
            self._scheduled(obj, obj["spec"]["nodeName"])  # bound as it was made
        elif obj["kind"] == POD and typ == ADDED and not obj["spec"].get("nodeName"):
            self._schedule(obj)
        elif obj["kind"] == POD and typ == DELETED and obj["spec"].get("nodeName"):
            self._retry_pending()  # its slot and its requests are free again
        elif obj["kind"] == NODE and obj["metadata"]["name"] in self.nodes:
            name, schedulable = obj["metadata"]["name"], node_is_schedulable(obj)
            if schedulable != self._schedulable[name]:
                self._schedulable[name] = schedulable
                how = "schedulable again (uncordoned)" if schedulable else "cordoned: no new pod goes there"
                self.store.events.record("scheduler", f"{name} {how}")
            self._retry_pending()

    def _schedule(self, pod: dict) -> None:
        """One scheduling attempt: bound, or Pending with why (said again only when it changed).
        The pod is read again first: a watch event's copy can be older than an attempt already
        made (a retry after another pod's deletion reached it before its own ADDED event did)."""
        with self._deciding:
            try:
                pod = self.store.get(POD, pod["metadata"]["name"], pod["metadata"]["namespace"])
            except StatusError as err:
                if is_not_found(err):
                    return
                raise
            if pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp") is not None:
                return
            node, why = self.place(pod)
            if node:
                self._bind(pod, node)
                return
            said = next((c.get("message") for c in pod["status"].get("conditions") or [] if c["type"] == "PodScheduled"), None)
            if why != said:
                self._unschedulable(pod, why)

    def _retry_pending(self) -> None:
        pending = [p for p in self.store.list(POD) if not p["spec"].get("nodeName") and p["metadata"].get("deletionTimestamp") is None]
        for pod in sorted(pending, key=lambda p: (p["metadata"].get("creationTimestamp") or 0, p["metadata"]["name"])):
            self._schedule(pod)

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

    def _unschedulable(self, pod: dict, message: str) -> None:
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

"""Port of k8s.io/kubernetes/pkg/controller/disruption/disruption.go (v1.36.0): a PodDisruptionBudget's status.

The eviction subresource does not count pods: it trusts the budget's status, which this
controller keeps. On every change of a pod, a budget, a ReplicaSet or a Deployment it recounts
each budget of the namespace (``trySync``):

* the pods it guards: those of its namespace its selector matches;
* ``expectedPods`` and ``desiredHealthy`` (``getExpectedPodCount``): with ``minAvailable`` as a
  count, the pods found and that count; with a percentage, or with ``maxUnavailable``, the
  replicas their controllers want (a Deployment's ``spec.replicas``, through its ReplicaSet:
  ``getExpectedScale``), the percentage rounded up; ``desiredHealthy`` is then the scale minus
  ``maxUnavailable`` (never below 0), or ``minAvailable``;
* ``currentHealthy`` (``countHealthyPods``): the guarded pods that are Ready, not being deleted,
  and not in ``disruptedPods`` (evicted less than two minutes ago: the eviction counted them
  gone already);
* ``disruptionsAllowed``: healthy minus desired, never below 0 (0 with no expected pods);
* ``disruptedPods`` keeps (``buildDisruptedPodMap``) the evicted pods not yet being deleted
  whose two minutes have not passed;
* the ``DisruptionAllowed`` condition, True (``SufficientPods``) or False (``InsufficientPods``).

The status is written only when it changed (``updatePdbStatus``), with ``observedGeneration``
set to the budget's generation, which is what lets the eviction trust it (a budget whose spec
changed and was not recounted yet answers 429). A budget that selects no pod gets a ``NoPods``
event at every recount. Left out: the events about pods with no controller, and the recheck
timer for an entry of ``disruptedPods`` that expires with no other change (any change recounts
it).
"""

from __future__ import annotations

from typing import Optional

from genericserver.apimachinery.api.errors import StatusError
from genericserver.cluster.deployment import scaled_value
from genericserver.cluster.store import DEPLOYMENT, POD, REPLICA_SET, is_not_found
from genericserver.cluster.workqueue import WatchLoop
from genericserver.registry.core.eviction import PDB, is_pod_ready, selector_matches, set_disruption_allowed_condition

DELETION_TIMEOUT = 120.0  # how long an evicted pod may take to start its deletion, in cluster seconds
WATCHED = {POD, PDB, REPLICA_SET, DEPLOYMENT}
RECORDER = "controllermanager"  # the event source the disruption controller's recorder names


class DisruptionController(WatchLoop):
    """Keeps the status of every PodDisruptionBudget in ``store``."""

    name = "disruption-controller"

    def handle(self, typ: str, obj: dict) -> None:
        if obj["kind"] in WATCHED:
            for pdb in self.store.list(PDB, obj["metadata"]["namespace"]):
                self.sync(pdb)

    def sync(self, pdb: dict) -> None:
        """``trySync`` for one budget, as read a moment ago."""
        namespace, now = pdb["metadata"]["namespace"], self.store.clock.now()
        spec = pdb.get("spec") or {}
        pods = [p for p in self.store.list(POD, namespace) if selector_matches(spec.get("selector"), p["metadata"].get("labels") or {})]
        if not pods:  # (describe pdb shows it, counted up at every recount)
            ref = {"kind": PDB, "namespace": namespace, "name": pdb["metadata"]["name"], "uid": pdb["metadata"].get("uid", ""),
                   "apiVersion": "policy/v1"}
            self.store.record_event(ref, "Normal", "NoPods", "No matching pods found", component=RECORDER)
        expected, desired = self.expected_pod_count(spec, pods)
        disrupted = self.disrupted_pod_map(pods, pdb, now)
        healthy = count_healthy_pods(pods, disrupted, now)
        allowed = healthy - desired if expected > 0 and healthy - desired > 0 else 0
        generation = pdb["metadata"].get("generation", 1)
        status = {"observedGeneration": generation, "disruptedPods": disrupted, "disruptionsAllowed": allowed,
                  "currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected}

        def update(cur: dict) -> Optional[dict]:
            if cur["metadata"].get("uid") != pdb["metadata"].get("uid"):
                return None
            old = cur.get("status") or {}
            if all(old.get(k, {} if k == "disruptedPods" else 0) == v for k, v in status.items()):
                return None  # nothing changed: no write
            new_status = {**status, "conditions": list(old.get("conditions") or [])}
            if not new_status["disruptedPods"]:
                del new_status["disruptedPods"]
            set_disruption_allowed_condition(new_status, now)
            cur["status"] = new_status
            return cur

        try:
            self.store.guaranteed_update(PDB, pdb["metadata"]["name"], update, namespace)
        except StatusError as err:
            if not is_not_found(err):
                raise

    def expected_pod_count(self, spec: dict, pods: list[dict]) -> tuple[int, int]:
        """``getExpectedPodCount``: (expectedPods, desiredHealthy)."""
        if spec.get("maxUnavailable") is not None:
            expected = self.expected_scale(pods)
            return expected, max(0, expected - scaled_value(spec["maxUnavailable"], expected, True))
        minimum = spec.get("minAvailable")
        if isinstance(minimum, int):
            return len(pods), minimum
        if minimum is not None:
            expected = self.expected_scale(pods)
            return expected, scaled_value(minimum, expected, True)
        return 0, 0

    def expected_scale(self, pods: list[dict]) -> int:
        """``getExpectedScale``: the replicas each pod's controller wants, each controller once
        (a ReplicaSet owned by a Deployment counts as the Deployment)."""
        scales: dict[str, int] = {}
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None or ref.get("kind") != REPLICA_SET:
                continue  # unmanaged (the controller would report it)
            try:
                rs = self.store.get(REPLICA_SET, ref["name"], pod["metadata"]["namespace"])
            except StatusError as err:
                if is_not_found(err):
                    continue
                raise
            owner = controller_ref(rs)
            if owner is not None and owner.get("kind") == DEPLOYMENT:
                try:
                    d = self.store.get(DEPLOYMENT, owner["name"], pod["metadata"]["namespace"])
                except StatusError as err:
                    if is_not_found(err):
                        continue
                    raise
                scales[d["metadata"]["uid"]] = d["spec"].get("replicas", 1)
            else:
                scales[rs["metadata"]["uid"]] = rs["spec"].get("replicas", 1)
        return sum(scales.values())

    def disrupted_pod_map(self, pods: list[dict], pdb: dict, now: float) -> dict:
        """``buildDisruptedPodMap``: the evictions still expected to take effect."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        out = {}
        for pod in pods:
            name = pod["metadata"]["name"]
            if pod["metadata"].get("deletionTimestamp") is not None or name not in recorded:
                continue
            if recorded[name] + DELETION_TIMEOUT >= now:
                out[name] = recorded[name]
        return out


def controller_ref(obj: dict) -> Optional[dict]:
    return next((r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")), None)


def count_healthy_pods(pods: list[dict], disrupted: dict, now: float) -> int:
    """``countHealthyPods``: Ready, not going, not just evicted."""
    return sum(1 for p in pods if p["metadata"].get("deletionTimestamp") is None
               and not (p["metadata"]["name"] in disrupted and disrupted[p["metadata"]["name"]] + DELETION_TIMEOUT > now)
               and is_pod_ready(p))

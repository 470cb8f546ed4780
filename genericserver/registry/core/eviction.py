"""Port of k8s.io/kubernetes/pkg/registry/core/pod/storage/eviction.go (v1.36.0): ``pods/eviction``.

``kubectl drain`` does not delete pods: it *evicts* them, a ``POST`` of a policy/v1
``Eviction`` to the pod's ``eviction`` subresource, and the API server deletes the pod only if
the PodDisruptionBudget guarding it allows one more disruption. :meth:`EvictionREST.create`
decides as Go's ``EvictionREST.Create`` does:

* a pod that is already no disruption (Succeeded, Failed, Pending, or being deleted) is deleted
  at once, without looking at budgets;
* no budget selects the pod: it is deleted; more than one: a Status with code 500 (the eviction
  subresource supports one budget per pod), in a 201 answer, as Go's create handler writes it;
* the pod is not ready (so not counted as healthy) and the budget is met, or the budget's
  ``unhealthyPodEvictionPolicy`` is ``AlwaysAllow``: deleted without spending the budget, on
  the condition (a ``resourceVersion`` precondition) that it did not turn ready meanwhile;
* otherwise the budget is spent (``checkAndDecrement``): a budget the disruption controller has
  not counted since its last change, or with no disruption left, is a 429 (``Cannot evict pod as
  it would violate the pod's disruption budget.``), which kubectl drain retries every 5 s; else
  ``disruptionsAllowed`` goes down by one and the pod joins ``disruptedPods`` (so the controller
  does not count it healthy while it goes), then the pod gets the ``DisruptionTarget`` condition
  and is deleted with the eviction's ``deleteOptions`` (its grace, as a ``kubectl delete``).

Objects are the cluster store's (:class:`~genericserver.cluster.store.Store`); Go's retries on
a conflicting budget update are not needed here, where the store's lock makes the check and the
decrement one step. A conflicting pod (it changed between the read and the delete) is retried
as Go's ``EvictionsRetry`` does, every half second, 20 times.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.api.errors import StatusError
from genericserver.apimachinery.apis.meta.v1.helpers import label_selector_as_selector

POD, PDB = "Pod", "PodDisruptionBudget"
# more approved evictions than this, not yet seen by the disruption controller, and the API
# refuses more: the controller has fallen behind
MAX_DISRUPTED_POD_SIZE = 2000
RETRY_STEPS, RETRY_PERIOD = 20, 0.5  # Go's EvictionsRetry (its 10% jitter left out)
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"  # policyv1.DisruptionBudgetCause
CANNOT_EVICT = "Cannot evict pod as it would violate the pod's disruption budget."

# (namespace, name, the API's DeleteOptions) -> the pod's delete (the pods' graceful delete)
Delete = Callable[[str, str, dict], Any]


def success() -> dict:
    """The Status an eviction answers with when the pod was deleted (201 fills its code)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def is_pod_ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or [])


def can_ignore_pdb(pod: dict) -> bool:
    """A pod that is no disruption to evict: finished, never started, or already going."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed", "Pending") or \
        pod["metadata"].get("deletionTimestamp") is not None


def should_enforce_resource_version(pod: dict) -> bool:
    """Whether the delete must be of the version read: a running pod could turn ready (and
    count for a budget) between the read and the delete."""
    finished = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    return not finished and pod["metadata"].get("deletionTimestamp") is None


def resource_version_is_unset(options: dict) -> bool:
    return (options.get("preconditions") or {}).get("resourceVersion") is None


def with_resource_version(options: dict, rv: str) -> dict:
    out = dict(options)
    out["preconditions"] = {**(options.get("preconditions") or {}), "resourceVersion": rv}
    return out


def too_many_requests(message: str, retry_after: int, cause: str) -> StatusError:
    """Go's ``NewTooManyRequests`` with a ``DisruptionBudget`` cause (the causes come before the
    delay in the details, Go's field order)."""
    details: dict[str, Any] = {"causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return StatusError(errors.status(429, "TooManyRequests", message, details))


def still_processing(pdb_name: str) -> StatusError:
    """``createTooManyRequestsError``: the budget changed and the controller has not counted it."""
    return too_many_requests(CANNOT_EVICT, 10, f"The disruption budget {pdb_name} is still being processed by the server.")


def propagate_dry_run(eviction: dict, dry_run: list[str]) -> dict:
    """``propagateDryRun``: the request's ``dryRun`` and the eviction's own must agree."""
    options = dict(eviction.get("deleteOptions") or {})
    own = options.get("dryRun") or []
    if not own:
        if dry_run:
            options["dryRun"] = list(dry_run)
        return options
    if dry_run and list(dry_run) != list(own):
        raise errors.new_internal_error(f"Non-matching dry-run options in request and content: [{' '.join(dry_run)}] and [{' '.join(own)}]")
    return options


def selector_matches(selector: Optional[dict], pod_labels: dict) -> bool:
    """``LabelSelectorAsSelector`` then ``Matches``; a missing or empty selector (or one that
    does not parse) matches nothing, not everything."""
    try:
        parsed = label_selector_as_selector(selector)
    except ValueError:
        return False
    return parsed is not None and not parsed.empty() and parsed.matches(pod_labels)


class EvictionREST:
    """The ``pods/eviction`` storage: ``create`` evicts (Go's ``NamedCreater``)."""

    def __init__(self, store: Any, delete: Delete, *, retry_period: float = RETRY_PERIOD):
        self.store, self.delete = store, delete
        self.retry_period = retry_period

    def create(self, namespace: str, name: str, eviction: dict, dry_run: list[str]) -> dict:
        if name != (eviction.get("metadata") or {}).get("name"):
            raise errors.new_bad_request("name in URL does not match name in Eviction object")
        options = propagate_dry_run(eviction, dry_run)
        # a pod that can be deleted without asking a budget is deleted here; a conflict (it
        # changed meanwhile) is read again, unless the client itself named the version
        pod = None
        for attempt in range(RETRY_STEPS):
            pod = self.store.get(POD, name, namespace)
            if not can_ignore_pdb(pod):
                break
            opts = options
            if should_enforce_resource_version(pod) and resource_version_is_unset(options):
                opts = with_resource_version(options, pod["metadata"]["resourceVersion"])
            try:
                self._add_condition_and_delete(namespace, name, opts)
                self._record(name, "evicted (no disruption: no budget asked)", bool(options.get("dryRun")))
                return success()
            except StatusError as err:
                if not errors.is_conflict(err) or not resource_version_is_unset(options) or attempt == RETRY_STEPS - 1:
                    raise
            rt.sleep(self.retry_period)
        assert pod is not None

        pdbs = [p for p in self.store.list(PDB, namespace) if selector_matches((p.get("spec") or {}).get("selector"), pod["metadata"].get("labels") or {})]
        if len(pdbs) > 1:
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                    "code": 500}
        pdb_name, spend = "", False
        if pdbs:
            pdb = pdbs[0]
            pdb_name = pdb["metadata"]["name"]
            spend = True
            if not is_pod_ready(pod):  # not healthy: it does not count, so deleting it costs nothing...
                st = pdb.get("status") or {}
                if (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow" or \
                        (st.get("currentHealthy", 0) >= st.get("desiredHealthy", 0) and st.get("desiredHealthy", 0) > 0):
                    spend = False  # ...as long as it does not turn ready before the delete
            if spend:
                try:
                    self.store.guaranteed_update(PDB, pdb_name, lambda cur: self._check_and_decrement(cur, name, bool(options.get("dryRun"))),
                                                 namespace)
                except StatusError as err:
                    causes = (err.status.get("details") or {}).get("causes") or [{}]
                    self._record(name, f"eviction refused ({err.status['code']}): {causes[0].get('message') or err.status.get('message')}")
                    raise
        opts = options
        unready_delete = bool(pdbs) and not spend
        if unready_delete:
            opts = with_resource_version(options, pod["metadata"]["resourceVersion"])
        try:
            self._add_condition_and_delete(namespace, name, opts)
        except StatusError as err:
            if errors.is_conflict(err) and unready_delete and resource_version_is_unset(options):
                raise still_processing(pdb_name) from None  # it changed: the client tries again
            raise
        self._record(name, f"evicted ({f'budget {pdb_name}: one disruption spent' if spend else 'no budget spent'})", bool(options.get("dryRun")))
        return success()

    def _record(self, pod: str, what: str, dry_run: bool = False) -> None:
        """A line of the cluster's timeline (the store's event stream), when there is one."""
        events = getattr(self.store, "events", None)
        if events is not None:
            events.record("eviction", f"{pod}: {what}{' (dry run: nothing changed)' if dry_run else ''}", pod=pod)

    def _check_and_decrement(self, pdb: dict, pod_name: str, dry_run: bool) -> Optional[dict]:
        """``checkAndDecrement``: refuse, or spend one disruption and note the pod as going."""
        st = pdb.setdefault("status", {})
        name = pdb["metadata"]["name"]
        if st.get("observedGeneration", 0) < pdb["metadata"].get("generation", 1):
            raise still_processing(name)
        allowed = st.get("disruptionsAllowed", 0)
        if allowed < 0:
            raise errors.new_forbidden("poddisruptionbudget.policy", name, "pdb disruptions allowed is negative")
        if len(st.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
            raise errors.new_forbidden("poddisruptionbudget.policy", name,
                                       "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
        if allowed == 0:
            raise too_many_requests(CANNOT_EVICT, 0, f"The disruption budget {name} needs {st.get('desiredHealthy', 0)} "
                                                    f"healthy pods and has {st.get('currentHealthy', 0)} currently")
        if dry_run:
            return None  # checked, nothing written
        st["disruptionsAllowed"] = allowed - 1
        if st["disruptionsAllowed"] == 0:
            set_disruption_allowed_condition(st, self.store.clock.now())
        st.setdefault("disruptedPods", {})[pod_name] = self.store.clock.now()
        return pdb

    def _add_condition_and_delete(self, namespace: str, name: str, options: dict) -> None:
        """``addConditionAndDeletePod``: the pod is marked ``DisruptionTarget`` (the kubelet and
        the controllers see why it goes), then deleted; the delete's version precondition, if
        any, moves to the version the mark made."""
        if not options.get("dryRun"):
            pre = options.get("preconditions") or {}

            def mark(pod: dict) -> dict:
                meta = pod["metadata"]
                if pre.get("uid") and pre["uid"] != meta.get("uid"):
                    raise errors.new_conflict("Pod", name, f"the UID in the precondition ({pre['uid']}) does not match the UID in record "
                                                           f"({meta.get('uid')}). The object might have been deleted and then recreated")
                if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
                    raise errors.new_conflict("Pod", name, f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not "
                                                           f"match the ResourceVersion in record ({meta.get('resourceVersion')}). The object might have been modified")
                update_pod_condition(pod, {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                                           "message": "Eviction API: evicting"}, self.store.clock.now())
                return pod

            marked = self.store.guaranteed_update(POD, name, mark, namespace)
            if not resource_version_is_unset(options):
                options = with_resource_version(options, marked["metadata"]["resourceVersion"])
        self.delete(namespace, name, options)


def update_pod_condition(pod: dict, condition: dict, now: float) -> None:
    """``podutil.UpdatePodCondition``: add the condition, or update it in place (its transition
    time changes only with its status)."""
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    for c in conditions:
        if c.get("type") == condition["type"]:
            if c.get("status") != condition["status"]:
                c["lastTransitionTime"] = now
            c.update({k: v for k, v in condition.items() if k != "lastTransitionTime"})
            return
    conditions.append({**condition, "lastTransitionTime": now})


def set_disruption_allowed_condition(status: dict, now: float) -> None:
    """component-helpers' ``UpdateDisruptionAllowedCondition``: True (SufficientPods) while a
    disruption is allowed, else False (InsufficientPods); the time moves with the status."""
    allowed = status.get("disruptionsAllowed", 0) > 0
    condition = {"type": "DisruptionAllowed", "status": "True" if allowed else "False",
                 "observedGeneration": status.get("observedGeneration", 0),
                 "reason": "SufficientPods" if allowed else "InsufficientPods", "message": ""}
    conditions = status.setdefault("conditions", [])
    for c in conditions:
        if c.get("type") == "DisruptionAllowed":
            if c.get("status") != condition["status"]:
                c["lastTransitionTime"] = now
            c.update(condition)
            return
    conditions.append({**condition, "lastTransitionTime": now})

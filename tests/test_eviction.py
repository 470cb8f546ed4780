"""The eviction subresource, the disruption controller and the budget's validation, in process (no Go twin: eviction_test.go and disruption_test.go's cases that apply here).

A store with a hand-moved clock, pods as the Deployment makes them (owned by a ReplicaSet owned
by a Deployment), a budget created as the API would store it; the disruption controller's
``sync`` is called by hand where Go's informers would call it, so each step is visible.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver.apimachinery.api.errors import StatusError
from genericserver.cluster.apistorage import ClusterStorage
from genericserver.cluster.disruption import DELETION_TIMEOUT, DisruptionController, scaled_value
from genericserver.cluster.nodelifecycle import tainted
from genericserver.cluster.scheduler import UNSCHEDULABLE, Scheduler
from genericserver.cluster.store import DEPLOYMENT, EVENT, NODE, PDB, POD, REPLICA_SET, Store, new_pod
from genericserver.registry.core.eviction import EvictionREST
from genericserver.registry.policy import poddisruptionbudget
from genericserver.registry.rest.rest import Resource
from genericserver.api.core.v1.types import POD as POD_STRUCT
from tests.test_cluster_store import FakeClock


def owner(kind: str, name: str, uid: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid, "controller": True}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def deployment_store(clock, ready: list[bool]) -> Store:
    """A Deployment of ``len(ready)`` replicas through its ReplicaSet, each pod Running and Ready or not."""
    s = Store(clock)  # type: ignore[arg-type]
    d = s.create({"kind": DEPLOYMENT, "metadata": {"name": "web"}, "spec": {"replicas": len(ready)}})
    s.create({"kind": REPLICA_SET, "metadata": {"name": "web-v1", "ownerReferences": [owner(DEPLOYMENT, "web", d["metadata"]["uid"])]},
              "spec": {"replicas": len(ready)}})
    rs_uid = s.get(REPLICA_SET, "web-v1")["metadata"]["uid"]
    for i, is_ready in enumerate(ready):
        pod = new_pod(f"web-{i}", labels={"app": "web"}, termination_grace_period_seconds=30)
        pod["metadata"]["ownerReferences"] = [owner(REPLICA_SET, "web-v1", rs_uid)]
        pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if is_ready else "False"}]}
        s.create(pod)
    return s


@pytest.fixture
def store(clock) -> Store:
    return deployment_store(clock, [True, True, True])


def evict(store: Store, name: str, dry_run: list[str] = (), **delete_options) -> dict:
    pods = ClusterStorage(store, POD, Resource("", "v1", "pods", "Pod", POD_STRUCT), lambda o: o)
    body = {"metadata": {"name": name, "namespace": "default"}, "deleteOptions": delete_options}
    return EvictionREST(store, pods.delete_with_options).create("default", name, body, list(dry_run))


def budget(store: Store, **spec) -> dict:
    """A budget as ``kubectl create pdb`` stores it, counted once by the controller."""
    obj = poddisruptionbudget.prepare_for_create({"kind": PDB, "metadata": {"name": "web"},
                                                  "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}})
    created = store.create(obj)
    DisruptionController(store).sync(created)
    return store.get(PDB, "web")


def status(store: Store) -> dict:
    return store.get(PDB, "web")["status"]


def test_without_a_budget_the_pod_is_deleted_gracefully_and_marked_as_evicted(store):
    assert evict(store, "web-0") == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    pod = store.get(POD, "web-0")
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 30  # the pod's own grace: an eviction is a delete
    evict(store, "web-1", gracePeriodSeconds=5)  # kubectl drain --grace-period=5
    assert store.get(POD, "web-1")["metadata"]["deletionGracePeriodSeconds"] == 5
    target = [c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert target == [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                       "message": "Eviction API: evicting", "lastTransitionTime": 1000.0}]


def test_a_budget_is_spent_one_eviction_at_a_time_then_refuses_with_429(store, clock):
    assert budget(store, maxUnavailable=1)["status"] | {"conditions": None} == {
        "observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3,
        "conditions": None}
    evict(store, "web-0")
    st = status(store)
    assert st["disruptionsAllowed"] == 0 and st["disruptedPods"] == {"web-0": 1000.0}
    assert [(c["type"], c["status"], c["reason"]) for c in st["conditions"]] == [("DisruptionAllowed", "False", "InsufficientPods")]
    with pytest.raises(StatusError) as refused:
        evict(store, "web-1")
    assert refused.value.status["code"] == 429
    assert refused.value.status["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    # no delay: kubectl drain retries on its own clock (5 s)
    assert refused.value.status["details"] == {"causes": [{"reason": "DisruptionBudget",
                                                           "message": "The disruption budget web needs 2 healthy pods and has 3 currently"}]}
    assert "deletionTimestamp" not in store.get(POD, "web-1")["metadata"]
    # the controller recounts: web-0 is going, so 2 healthy of 2 desired, still nothing to spare
    DisruptionController(store).sync(store.get(PDB, "web"))
    assert status(store)["currentHealthy"] == 2 and status(store)["disruptionsAllowed"] == 0


def test_a_budget_not_counted_since_its_change_is_still_being_processed(store):
    pdb = budget(store, maxUnavailable=1)
    store.guaranteed_update(PDB, "web", lambda p: {**p, "metadata": {**p["metadata"], "generation": 2}})
    with pytest.raises(StatusError) as refused:
        evict(store, "web-0")
    assert refused.value.status["code"] == 429
    assert refused.value.status["details"] == {
        "causes": [{"reason": "DisruptionBudget", "message": "The disruption budget web is still being processed by the server."}],
        "retryAfterSeconds": 10}
    assert pdb["status"]["disruptionsAllowed"] == status(store)["disruptionsAllowed"] == 1


def test_two_budgets_for_one_pod_are_a_500_status_and_the_pod_stays(store):
    budget(store, maxUnavailable=1)
    store.create({"kind": PDB, "metadata": {"name": "other", "generation": 1}, "spec": {"selector": {"matchLabels": {"app": "web"}}}})
    answer = evict(store, "web-0")
    assert answer["code"] == 500 and answer["status"] == "Failure"
    assert answer["message"] == "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    assert "deletionTimestamp" not in store.get(POD, "web-0")["metadata"]


def test_pods_that_are_no_disruption_go_without_asking_the_budget(store):
    budget(store, minAvailable=3)  # nothing may go...
    store.guaranteed_update(POD, "web-1", lambda p: {**p, "status": {"phase": "Pending", "conditions": []}})
    assert evict(store, "web-1")["status"] == "Success"  # ...but a Pending pod is no disruption
    assert status(store)["disruptionsAllowed"] == 0


def test_an_unready_pod_goes_for_free_while_the_budget_is_met_else_it_is_refused(store):
    budget(store, minAvailable=2)
    store.guaranteed_update(POD, "web-2", lambda p: {**p, "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}})
    DisruptionController(store).sync(store.get(PDB, "web"))
    assert status(store)["currentHealthy"] == 2 and status(store)["disruptionsAllowed"] == 0
    assert evict(store, "web-2")["status"] == "Success"  # 2 healthy of 2: deleting the unready one costs nothing
    assert "disruptedPods" not in status(store)
    with pytest.raises(StatusError) as refused:  # a ready one would break the budget
        evict(store, "web-0")
    assert refused.value.status["code"] == 429


def test_a_name_that_is_not_the_paths_is_a_400_and_a_dry_run_changes_nothing(store):
    pods = ClusterStorage(store, POD, Resource("", "v1", "pods", "Pod", POD_STRUCT), lambda o: o)
    with pytest.raises(StatusError) as bad:
        EvictionREST(store, pods.delete_with_options).create("default", "web-0", {"metadata": {"name": "web-1"}}, [])
    assert (bad.value.status["code"], bad.value.status["message"]) == (400, "name in URL does not match name in Eviction object")
    budget(store, maxUnavailable=1)
    before = store.resource_version()
    assert evict(store, "web-0", dry_run=["All"])["status"] == "Success"
    assert store.resource_version() == before
    # and the timeline does not say it happened
    assert [e.name for e in store.events.events() if e.kind == "eviction"] == [
        "web-0: evicted (budget web: one disruption spent) (dry run: nothing changed)"]


def test_the_controller_counts_as_go_does(store, clock):
    c = DisruptionController(store)
    spec = {"selector": {"matchLabels": {"app": "web"}}}
    pods = store.list(POD)
    assert c.expected_pod_count({**spec, "minAvailable": 2}, pods) == (3, 2)  # a count: the pods found
    assert c.expected_pod_count({**spec, "minAvailable": "50%"}, pods) == (3, 2)  # 1.5 rounded up, of the Deployment's 3
    assert c.expected_pod_count({**spec, "maxUnavailable": "50%"}, pods) == (3, 1)  # 3 - ceil(1.5)
    assert c.expected_pod_count({**spec, "maxUnavailable": 5}, pods) == (3, 0)  # never below 0
    assert scaled_value("10%", 3, True) == 1 and scaled_value(4, 3, True) == 4
    pdb = {"metadata": {"name": "web"}, "status": {"disruptedPods": {"web-0": 1000.0, "gone": 1000.0}}}
    assert c.disrupted_pod_map(pods, pdb, 1000.0 + DELETION_TIMEOUT) == {"web-0": 1000.0}  # the gone pod is dropped
    assert c.disrupted_pod_map(pods, pdb, 1000.0 + DELETION_TIMEOUT + 1) == {}  # two minutes and not deleted: counted again


@pytest.mark.parametrize("spec, message", [
    ({"minAvailable": 1, "maxUnavailable": 1},
     'spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":1,'
     '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set'),
    ({"minAvailable": -1}, "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
    ({"maxUnavailable": "150%"}, 'spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%'),
    ({"maxUnavailable": "half"}, "spec.maxUnavailable: Invalid value: \"half\": a valid percent string must be a numeric string "
                                 "followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"),
    ({"minAvailable": 1, "unhealthyPodEvictionPolicy": "Never"},
     'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"'),
])
def test_a_budget_is_validated_as_go_validates_it(spec, message):
    obj = {"metadata": {"name": "web"}, "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}
    assert [str(e) for e in poddisruptionbudget.validate(obj, None)] == [message]


def test_a_changed_spec_is_a_new_generation_and_the_status_stays_the_controllers():
    current = {"metadata": {"name": "web", "generation": 1}, "spec": {"maxUnavailable": 1}, "status": {"disruptionsAllowed": 1}}
    same = poddisruptionbudget.prepare_for_update(current, {"metadata": {}, "spec": {"maxUnavailable": 1}, "status": {}}, current)
    changed = poddisruptionbudget.prepare_for_update(current, {"metadata": {}, "spec": {"maxUnavailable": 2}, "status": {}}, current)
    assert (same["metadata"]["generation"], changed["metadata"]["generation"]) == (1, 2)
    assert changed["status"] == {"disruptionsAllowed": 1}


def test_a_cordoned_node_leaves_new_pods_pending_until_uncordoned(store):
    store.create({"kind": NODE, "metadata": {"name": "node-1", "namespace": ""}, "spec": {}})
    scheduler = Scheduler(store)
    try:
        cordoned = store.guaranteed_update(NODE, "node-1", lambda n: {**n, "spec": {"unschedulable": True}}, namespace="")
        scheduler.handle("MODIFIED", cordoned)
        assert scheduler.node_for(new_pod("next", node_name="")) == ""
        pod = store.create(new_pod("web-3", labels={"app": "web"}, node_name=""))
        scheduler.handle("ADDED", pod)
        pending = store.get(POD, "web-3")
        assert pending["status"]["conditions"] == [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                                    "message": UNSCHEDULABLE, "lastTransitionTime": 1000.0}]
        uncordoned = store.guaranteed_update(NODE, "node-1", lambda n: {**n, "spec": {}}, namespace="")
        scheduler.handle("MODIFIED", uncordoned)
        bound = store.get(POD, "web-3")
        assert bound["spec"]["nodeName"] == "node-1"
        assert [(c["type"], c["status"]) for c in bound["status"]["conditions"]] == [("PodScheduled", "True")]
        events = [(e["type"], e["reason"], e["message"]) for e in store.list(EVENT) if e["involvedObject"]["name"] == "web-3"]
        assert events == [("Warning", "FailedScheduling", UNSCHEDULABLE), ("Normal", "Scheduled", "Successfully assigned default/web-3 to node-1")]
    finally:
        scheduler.stop()


def test_the_unschedulable_taint_follows_the_cordon():
    node = {"metadata": {"name": "node-1"}, "spec": {"unschedulable": True, "taints": [{"key": "other", "effect": "NoExecute"}]}}
    cordoned = tainted(node, 5.0)
    assert cordoned["spec"]["taints"] == [{"key": "other", "effect": "NoExecute"},
                                          {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": 5.0}]
    assert tainted(cordoned, 6.0) is None  # already so: no write
    cordoned["spec"].pop("unschedulable")
    assert tainted(cordoned, 7.0)["spec"]["taints"] == [{"key": "other", "effect": "NoExecute"}]


def healthy(store: Store) -> int:
    return sum(1 for p in store.list(POD) if "deletionTimestamp" not in p["metadata"]
               and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"]))


BOUNDS = st.one_of(st.tuples(st.just("minAvailable"), st.one_of(st.integers(0, 7), st.sampled_from(["0%", "34%", "50%", "100%"]))),
                   st.tuples(st.just("maxUnavailable"), st.one_of(st.integers(0, 7), st.sampled_from(["0%", "25%", "50%", "100%"]))))


@given(ready=st.lists(st.booleans(), min_size=1, max_size=6), bound=BOUNDS,
       steps=st.lists(st.one_of(st.integers(0, 5), st.just("sync")), max_size=12))
def test_property_evictions_never_take_the_healthy_pods_below_the_budget(ready, bound, steps):
    """Whatever the budget, the pods' readiness and the order of evictions and recounts: the
    evictions leave at least as many healthy pods as the budget wants (or as there were, if
    fewer), a refusal is a 429 while the budget had nothing to spare, and the controller's count
    after the evictions is what is left."""
    store = deployment_store(FakeClock(), ready)
    budget(store, **{bound[0]: bound[1]})
    desired, before = status(store)["desiredHealthy"], healthy(store)
    controller = DisruptionController(store)
    for step in steps:
        if step == "sync":
            controller.sync(store.get(PDB, "web"))
            continue
        name = f"web-{step % len(ready)}"
        allowed = status(store)["disruptionsAllowed"]
        try:
            evict(store, name)
        except StatusError as refused:
            assert refused.status["code"] == 429 and allowed == 0, refused.status
        assert healthy(store) >= min(before, desired)
    controller.sync(store.get(PDB, "web"))
    assert status(store)["currentHealthy"] == healthy(store)


def test_a_budget_that_selects_no_pod_says_so_in_an_event(store):
    obj = poddisruptionbudget.prepare_for_create({"kind": PDB, "metadata": {"name": "none"},
                                                  "spec": {"selector": {"matchLabels": {"app": "nothing"}}, "minAvailable": 1}})
    created = store.create(obj)
    controller = DisruptionController(store)
    controller.sync(created)
    controller.sync(store.get(PDB, "none"))
    events = [(e["reason"], e["message"], e["source"]["component"], e["count"]) for e in store.list(EVENT)
              if e["involvedObject"]["kind"] == PDB]
    assert events == [("NoPods", "No matching pods found", "controllermanager", 2)]
    assert store.get(PDB, "none")["status"] | {"conditions": None} == {
        "observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 1, "expectedPods": 0, "conditions": None}


def test_the_scheduler_spreads_new_pods_and_with_every_node_cordoned_says_so(store):
    for n in ("node-1", "node-2"):
        store.create({"kind": NODE, "metadata": {"name": n, "namespace": ""}, "spec": {}})
    scheduler = Scheduler(store, ["node-1", "node-2"])
    try:
        assert scheduler.node_for(new_pod("next", node_name="")) == "node-2"  # the fixture's three pods are on node-1
        store.create(new_pod("a", node_name="node-2"))
        store.create(new_pod("b", node_name="node-2"))
        store.create(new_pod("c", node_name="node-2"))
        assert scheduler.node_for(new_pod("next", node_name="")) == "node-1"  # three each: the first on a tie
        for n in ("node-1", "node-2"):
            scheduler.handle("MODIFIED", store.guaranteed_update(NODE, n, lambda o: {**o, "spec": {"unschedulable": True}}, namespace=""))
        assert scheduler.node_for(new_pod("next", node_name="")) == ""
        scheduler.handle("ADDED", store.create(new_pod("d", node_name="")))
        (event,) = [e for e in store.list(EVENT) if e["involvedObject"]["name"] == "d"]
        assert event["message"] == ("0/2 nodes are available: 2 node(s) were unschedulable. preemption: 0/2 nodes are available: "
                                    "2 Preemption is not helpful for scheduling.")
    finally:
        scheduler.stop()

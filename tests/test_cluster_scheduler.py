"""Tests for genericserver.cluster.scheduler's fit: a pod slot and the requests' room on each node, in kube-scheduler's words (no Go twin)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver.apimachinery.api.quantity import milli_value, value
from genericserver.cluster.scheduler import ALLOCATABLE, Scheduler, pod_requests
from genericserver.cluster.store import DELETED, EVENT, NODE, POD, Store, new_pod
from genericserver.registry.core.eviction import update_pod_condition
from tests.test_cluster_store import FakeClock

FULL_OF_PODS = ("0/1 nodes are available: 1 Too many pods. "
                "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def asking(name: str, node: str = "", cpu: str = "", memory: str = "", limits: dict | None = None) -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    resources = {**({"requests": requests} if requests else {}), **({"limits": limits} if limits else {})}
    return new_pod(name, node_name=node, containers=[{"name": "app", "image": "fake", "resources": resources}])


def cluster(*nodes: str, cordoned: tuple[str, ...] = ()) -> tuple[Store, Scheduler]:
    store = Store(FakeClock())  # type: ignore[arg-type]
    for n in nodes:
        store.create({"kind": NODE, "metadata": {"name": n, "namespace": ""}, "spec": {"unschedulable": n in cordoned}})
    return store, Scheduler(store, list(nodes))


@pytest.fixture
def one_node():
    store, scheduler = cluster("node-1")
    yield store, scheduler
    scheduler.stop()


def test_a_node_holding_its_110_pods_takes_no_other(one_node):
    store, scheduler = one_node
    for i in range(int(ALLOCATABLE["pods"]) - 1):
        store.create(asking(f"p-{i}", "node-1"))
    assert scheduler.place(asking("fits")) == ("node-1", "")
    store.create(asking("the-110th", "node-1"))
    assert scheduler.place(asking("one-too-many")) == ("", FULL_OF_PODS)


def test_requests_add_up_to_the_nodes_two_cpus_and_a_limit_stands_for_a_missing_request(one_node):
    store, scheduler = one_node
    for i in range(39):
        store.create(asking(f"p-{i}", "node-1", cpu="50m", memory="64Mi"))
    assert scheduler.node_for(asking("40th", cpu="50m")) == "node-1"
    store.create(asking("half-a-cpu", "node-1", limits={"cpu": "0.05"}))  # requests 50m as the API defaults it
    assert scheduler.place(asking("41st", cpu="50m")) == ("", "0/1 nodes are available: 1 Insufficient cpu. preemption: "
                                                           "0/1 nodes are available: 1 No preemption victims found for incoming pod.")
    assert scheduler.node_for(asking("asks-nothing")) == "node-1"  # a pod that requests nothing needs only a slot
    assert scheduler.node_for(asking("memory-only", memory="1Gi")) == "node-1"


def test_a_pod_bigger_than_the_node_is_not_helped_by_preemption(one_node):
    _, scheduler = one_node
    assert scheduler.place(asking("huge", cpu="3", memory="9Gi"))[1] == (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_the_reasons_are_counted_over_the_nodes_and_sorted():
    store, scheduler = cluster("node-1", "node-2", "node-3", cordoned=("node-2",))
    try:
        for n in ("node-1", "node-3"):
            for i in range(110):
                store.create(asking(f"{n}-{i}", n))
        assert scheduler.place(asking("late"))[1] == (
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 Too many pods. preemption: 0/3 nodes are available: "
            "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.")
    finally:
        scheduler.stop()


def test_a_pending_pod_is_bound_when_a_bound_pod_is_gone_and_its_reasons_are_said_once(one_node):
    store, scheduler = one_node
    for i in range(40):
        store.create(asking(f"p-{i}", "node-1", cpu="50m"))
    pending = store.create(asking("web-40", cpu="50m"))
    scheduler.handle("ADDED", pending)
    scheduler.handle("MODIFIED", store.get(NODE, "node-1", namespace=""))  # tried again: the same reasons
    failed = [e["message"] for e in store.list(EVENT) if e["reason"] == "FailedScheduling"]
    assert len(failed) == 1 and failed[0].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert store.get(POD, "web-40")["spec"]["nodeName"] == ""
    gone = store.get(POD, "p-7")
    store.delete(POD, "p-7", None)
    scheduler.handle(DELETED, gone)
    bound = store.get(POD, "web-40")
    assert bound["spec"]["nodeName"] == "node-1"
    assert [(c["type"], c["status"]) for c in bound["status"]["conditions"]] == [("PodScheduled", "True")]


def test_a_watch_events_old_copy_does_not_schedule_a_pod_twice(one_node):
    # two suites at once: a retry after another pod's deletion reached the new pod before its own
    # ADDED event, whose copy, older, had no condition yet: FailedScheduling was said twice (x2)
    store, scheduler = one_node
    for i in range(40):
        store.create(asking(f"p-{i}", "node-1", cpu="50m"))
    stale = store.create(asking("web-40", cpu="50m"))
    scheduler.handle(DELETED, {**store.get(POD, "p-0"), "kind": POD})  # (nothing freed: p-0 is still there)
    scheduler.handle("ADDED", stale)
    (event,) = [e for e in store.list(EVENT) if e["reason"] == "FailedScheduling"]
    assert event["count"] == 1 and event["involvedObject"]["name"] == "web-40"


def test_a_pod_given_a_node_as_it_is_made_counts_there_before_it_is_stored(one_node):
    # the deployment controller asks, then creates: meanwhile the scheduler must not give the
    # node's last room to a pending pod too (kube-scheduler's assumed pods)
    store, scheduler = one_node
    for i in range(39):
        store.create(asking(f"p-{i}", "node-1", cpu="50m"))
    made = asking("web-39", cpu="50m")
    assert scheduler.node_for(made) == "node-1"
    assert scheduler.place(asking("web-40", cpu="50m"))[1].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    made["spec"]["nodeName"] = "node-1"
    store.create(made)
    assert scheduler.place(asking("web-41", cpu="50m"))[1].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert scheduler._assumed == {}  # the store has it now


def test_pod_requests_add_the_containers_and_read_quantities_as_go_does():
    pod = new_pod("two", containers=[{"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}},
                                     {"name": "b", "resources": {"limits": {"cpu": "1.5", "memory": "100M"}}},
                                     {"name": "c", "written": {"resources": {"requests": {"cpu": 1}}}}])
    assert pod_requests(pod) == (250 + 1500 + 1000, 1024 ** 3 + 100_000_000)


PODS = st.lists(st.tuples(st.sampled_from(["", "100m", "500m", "1", "1500m", "2500m"]),
                          st.sampled_from(["", "1Gi", "3Gi", "6Gi", "9Gi"])), max_size=12)


@given(pods=PODS, nodes=st.integers(1, 3), cordoned=st.sets(st.integers(1, 3)))
def test_property_no_node_is_given_more_than_it_has_and_a_pending_pod_has_a_reason_per_node(pods, nodes, cordoned):
    names = [f"node-{i}" for i in range(1, nodes + 1)]
    store, scheduler = cluster(*names, cordoned=tuple(f"node-{i}" for i in cordoned))
    try:
        for i, (cpu, memory) in enumerate(pods):
            pod = asking(f"p-{i}", cpu=cpu, memory=memory)
            node, why = scheduler.place(pod)
            if node:
                assert node not in {f"node-{c}" for c in cordoned}
                pod["spec"]["nodeName"] = node
            else:
                assert why.startswith(f"0/{nodes} nodes are available: ")
                counted = why.split(". preemption: ")[0].split(": ", 1)[1]
                # each node gives at least one reason (a full node may give two)
                assert sum(int(part.split(" ", 1)[0]) for part in counted.split(", ")) >= nodes
                update_pod_condition(pod, {"type": "PodScheduled", "status": "False", "message": why}, 0.0)
            store.create(pod)
        for n in names:
            on_it = [p for p in store.list(POD) if p["spec"]["nodeName"] == n]
            assert sum(pod_requests(p)[0] for p in on_it) <= milli_value(ALLOCATABLE["cpu"])
            assert sum(pod_requests(p)[1] for p in on_it) <= value(ALLOCATABLE["memory"])
    finally:
        scheduler.stop()

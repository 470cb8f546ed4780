"""Tests for genericserver.cluster.store: graceful deletion (rest/delete.go's BeforeDelete) and watch."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver.cluster.store import (
    ADDED,
    DELETED,
    MODIFIED,
    POD,
    DeleteOptions,
    Preconditions,
    Store,
    new_delete_options,
    new_pod,
)
from genericserver.cluster.kubectl import pod_status
from genericserver.sampleapi import StatusError


class FakeClock:
    """Cluster time the test moves by hand."""

    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock: FakeClock) -> Store:
    return Store(clock)  # type: ignore[arg-type]


def meta(store: Store, name: str = "p") -> dict:
    return store.get(POD, name)["metadata"]


def test_graceful_delete_uses_the_pods_own_grace_period_and_keeps_the_object(store, clock):
    store.create(new_pod("p"))
    w = store.watch(POD)
    obj, deleted = store.delete(POD, "p", DeleteOptions())
    assert not deleted
    m = meta(store)
    assert m["deletionGracePeriodSeconds"] == 30
    assert m["deletionTimestamp"] == clock.t + 30
    assert pod_status(store.get(POD, "p")) == "Terminating"
    typ, ev = w.next(timeout=1)
    assert typ == MODIFIED and ev["metadata"]["deletionGracePeriodSeconds"] == 30
    w.stop()


@pytest.mark.parametrize(
    "pod_grace,request_grace,want",
    [(30, None, 30), (30, 10, 10), (5, 60, 60), (None, None, 0), (30, -3, 1)],
    ids=["pod-default", "request-shorter", "request-longer-than-pod-wins", "no-grace-anywhere-deletes-now", "negative-is-one"],
)
def test_the_request_grace_else_the_pods(store, pod_grace, request_grace, want):
    store.create(new_pod("p", termination_grace_period_seconds=pod_grace))
    _, deleted = store.delete(POD, "p", DeleteOptions(grace_period_seconds=request_grace))
    if want == 0:
        assert deleted
        with pytest.raises(StatusError, match='pods "p" not found'):
            store.get(POD, "p")
    else:
        assert not deleted
        assert meta(store)["deletionGracePeriodSeconds"] == want


def test_unscheduled_or_finished_pods_are_deleted_at_once(store):
    store.create(new_pod("unscheduled", node_name=""))
    assert store.delete(POD, "unscheduled", DeleteOptions())[1]
    done = new_pod("done")
    done["status"]["phase"] = "Succeeded"
    store.create(done)
    assert store.delete(POD, "done", DeleteOptions(grace_period_seconds=30))[1]


def test_delete_with_grace_zero_removes_and_watchers_see_deleted(store):
    store.create(new_pod("p"))
    w = store.watch(POD)
    store.delete(POD, "p", DeleteOptions())
    obj, deleted = store.delete(POD, "p", new_delete_options(0))
    assert deleted
    # as in Go, the grace-0 delete first writes the shortened grace, then removes the object
    assert [w.next(timeout=1)[0] for _ in range(3)] == [MODIFIED, MODIFIED, DELETED]
    with pytest.raises(StatusError) as e:
        store.get(POD, "p")
    assert e.value.status["code"] == 404
    w.stop()


def test_nil_options_delete_immediately(store):
    store.create(new_pod("p"))
    assert store.delete(POD, "p", None)[1]


def test_a_longer_or_equal_grace_changes_nothing(store, clock):
    store.create(new_pod("p"))
    store.delete(POD, "p", DeleteOptions(grace_period_seconds=10))
    before = meta(store)
    clock.t += 3
    for grace in (10, 20, None):
        obj, deleted = store.delete(POD, "p", DeleteOptions(grace_period_seconds=grace))
        assert not deleted
        assert meta(store) == before


def test_a_shorter_grace_moves_the_timestamp_back(store, clock):
    store.create(new_pod("p"))
    store.delete(POD, "p", DeleteOptions(grace_period_seconds=30))
    t0 = clock.t
    clock.t += 5
    store.delete(POD, "p", DeleteOptions(grace_period_seconds=10))
    m = meta(store)
    assert (m["deletionGracePeriodSeconds"], m["deletionTimestamp"]) == (10, t0 + 10)


def test_shortening_never_moves_the_timestamp_into_the_past(store, clock):
    store.create(new_pod("p"))
    store.delete(POD, "p", DeleteOptions(grace_period_seconds=30))
    clock.t += 20
    store.delete(POD, "p", DeleteOptions(grace_period_seconds=5))  # t0+5 is in the past
    m = meta(store)
    # a graceful request that is already overdue becomes the shortest graceful one: 1 s
    assert (m["deletionGracePeriodSeconds"], m["deletionTimestamp"]) == (1, clock.t)


def test_uid_precondition_mismatch_is_a_conflict(store):
    created = store.create(new_pod("p"))
    with pytest.raises(StatusError) as e:
        store.delete(POD, "p", DeleteOptions(grace_period_seconds=0, preconditions=Preconditions(uid="other")))
    assert e.value.status["code"] == 409
    assert e.value.status["message"] == (
        'Operation cannot be fulfilled on pods "p": the UID in the precondition (other) does not match the UID in '
        f"record ({created['metadata']['uid']}). The object might have been deleted and then recreated"
    )
    assert store.delete(POD, "p", DeleteOptions(0, Preconditions(uid=created["metadata"]["uid"])))[1]


def test_create_assigns_uid_and_resource_version_and_watch_sees_added(store):
    w = store.watch()
    a = store.create(new_pod("a"))
    b = store.create(new_pod("b"))
    assert a["metadata"]["uid"] != b["metadata"]["uid"]
    assert int(b["metadata"]["resourceVersion"]) > int(a["metadata"]["resourceVersion"])
    assert [w.next(timeout=1)[0] for _ in range(2)] == [ADDED, ADDED]
    with pytest.raises(StatusError, match='pods "a" already exists'):
        store.create(new_pod("a"))
    w.stop()
    assert w.next() is None


@given(st.lists(st.tuples(st.integers(0, 40), st.one_of(st.none(), st.integers(-2, 60))), min_size=1, max_size=8))
def test_grace_only_shrinks_and_the_timestamp_never_grows_or_goes_back_in_time(ops):
    clock = FakeClock()
    store = Store(clock)  # type: ignore[arg-type]
    store.create(new_pod("p"))
    prev = None
    for advance, grace in ops:
        clock.t += advance
        try:
            _, deleted = store.delete(POD, "p", DeleteOptions(grace_period_seconds=grace))
        except StatusError:
            return  # already gone (a NotFound)
        if deleted:
            # only a request for 0 (or a pending 0) removes the object
            assert grace == 0
            return
        m = meta(store)
        cur = (m["deletionGracePeriodSeconds"], m["deletionTimestamp"])
        assert cur[0] > 0
        if prev is not None:
            assert cur[0] <= prev[0], "the grace period grew"
            # later only when the old deadline had passed: then it is now, never earlier
            assert cur[1] <= max(prev[1], clock.t), "the deletion timestamp moved later"
            if cur != prev:
                assert cur[1] >= clock.t, "the deletion timestamp moved into the past"
        prev = cur


def test_the_same_event_again_counts_up_on_the_first_and_another_message_is_a_new_one(store, clock):
    ref = {"kind": "Pod", "namespace": "default", "name": "web-0", "uid": "u1", "apiVersion": "v1", "fieldPath": "spec.containers{app}"}
    failed = "Readiness probe failed: HTTP probe failed with statuscode: 500"
    first = store.record_event(ref, "Warning", "Unhealthy", failed, component="kubelet", host="node-1")
    clock.t += 2
    store.record_event(ref, "Warning", "Unhealthy", failed, component="kubelet", host="node-1")
    clock.t += 3
    again = store.record_event(ref, "Warning", "Unhealthy", failed, component="kubelet", host="node-1")
    assert again["metadata"]["name"] == first["metadata"]["name"]
    assert (again["count"], again["firstTimestamp"], again["lastTimestamp"]) == (3, 1000.0, 1005.0)
    # the key is the whole event: another message, or the same about another pod, is an event of its own
    other = store.record_event(ref, "Normal", "Killing", "Stopping container app", component="kubelet", host="node-1")
    elsewhere = store.record_event({**ref, "name": "web-1", "uid": "u2"}, "Warning", "Unhealthy", failed, component="kubelet", host="node-1")
    assert other["count"] == elsewhere["count"] == 1
    assert len({e["metadata"]["name"] for e in store.list("Event")}) == 3

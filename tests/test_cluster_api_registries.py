"""The cluster's registries without a server: finalizers, the pod printer, the API's view, IntOrString, subresource routes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver.apimachinery.api.errors import StatusError
from genericserver.apimachinery.runtime.serializer import protobuf
from genericserver.cluster.apiview import APIView
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.handlers import SleepAction
from genericserver.cluster.store import (
    FOREGROUND_FINALIZER,
    ORPHAN_FINALIZER,
    POD,
    DeleteOptions,
    Store,
    deletion_finalizers,
    new_pod,
)
from genericserver.printers.internalversion.printers import POD_TABLE


def stored_pod(store: Store, name: str = "p", finalizers: list[str] | None = None) -> dict:
    pod = new_pod(name)
    if finalizers:
        pod["metadata"]["finalizers"] = list(finalizers)
    return store.create(pod)


# -- finalizers (store.go) --------------------------------------------------------------------------


@pytest.mark.parametrize("options,want", [
    (DeleteOptions(), []),
    (DeleteOptions(propagation_policy="Background"), []),
    (DeleteOptions(propagation_policy="Orphan"), [ORPHAN_FINALIZER]),
    (DeleteOptions(propagation_policy="Foreground"), [FOREGROUND_FINALIZER]),
    (DeleteOptions(orphan_dependents=True), [ORPHAN_FINALIZER]),
    (DeleteOptions(orphan_dependents=False), []),
])
def test_the_propagation_policy_sets_the_garbage_collectors_finalizers(options, want):
    changed, finalizers = deletion_finalizers({"finalizers": ["x"]}, options)
    assert finalizers == ["x", *want] and changed == bool(want)


def test_a_foreground_delete_replaces_an_orphan_finalizer():
    changed, finalizers = deletion_finalizers({"finalizers": [ORPHAN_FINALIZER]}, DeleteOptions(propagation_policy="Foreground"))
    assert changed and finalizers == [FOREGROUND_FINALIZER]


@given(finalizers=st.lists(st.sampled_from(["a/x", "b/y", "c/z"]), min_size=1, unique=True),
       grace=st.one_of(st.none(), st.integers(-3, 40)), final=st.booleans())
def test_finalizers_hold_any_deletion_until_the_last_one_goes(finalizers, grace, final):
    store = Store()
    stored_pod(store, finalizers=finalizers)
    obj, deleted = store.delete(POD, "p", DeleteOptions(grace_period_seconds=grace))
    assert not deleted and obj["metadata"]["deletionTimestamp"] is not None
    if final:  # the kubelet's last word: grace 0
        obj, deleted = store.delete(POD, "p", DeleteOptions(grace_period_seconds=0))
        assert not deleted and obj["metadata"]["deletionGracePeriodSeconds"] == 0
    due = store.get(POD, "p")["metadata"]["deletionGracePeriodSeconds"] == 0
    for i in range(len(finalizers)):
        remaining = finalizers[i + 1:]
        store.guaranteed_update(POD, "p", lambda p, r=remaining: {**p, "metadata": {**p["metadata"], "finalizers": r}})
        still_there = any(p["metadata"]["name"] == "p" for p in store.list(POD))
        # the object goes with the last finalizer, and only if its deletion was due
        assert still_there == (bool(remaining) or not due)


def test_removing_the_last_finalizer_is_seen_as_deleted_by_a_watch():
    store = Store()
    stored_pod(store, finalizers=["a/x"])
    store.delete(POD, "p", DeleteOptions(grace_period_seconds=0))
    w = store.watch(POD)
    store.guaranteed_update(POD, "p", lambda p: {**p, "metadata": {**p["metadata"], "finalizers": []}})
    assert w.next(1.0)[0] == "DELETED"
    w.stop()


def test_every_change_gets_the_next_version_a_deletion_too():
    store = Store()
    created = stored_pod(store)
    gone, deleted = store.delete(POD, "p", DeleteOptions(grace_period_seconds=0))
    assert deleted and int(gone["metadata"]["resourceVersion"]) == int(created["metadata"]["resourceVersion"]) + 2
    changes, latest, _ = store.changes_after(int(created["metadata"]["resourceVersion"]), POD)
    assert [t for t, _ in changes] == ["MODIFIED", "DELETED"] and latest == int(gone["metadata"]["resourceVersion"])


# -- the pod printer (printPod) ------------------------------------------------------------------------


def api_pod(phase="Running", statuses=None, deleting=False, conditions=None):
    pod = {"metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n"},
           "status": {"phase": phase, "containerStatuses": statuses or [], "conditions": conditions or []}}
    if deleting:
        pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:30Z"
    return pod


RUNNING = {"name": "a", "ready": True, "state": {"running": {}}}


@pytest.mark.parametrize("pod,ready,status", [
    (api_pod(statuses=[RUNNING, {**RUNNING, "name": "b"}]), "2/2", "Running"),
    (api_pod(statuses=[RUNNING, {**RUNNING, "name": "b"}], deleting=True), "2/2", "Terminating"),
    (api_pod(phase="Succeeded", deleting=True,
             statuses=[{"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]), "0/2", "Completed"),
    (api_pod(statuses=[{"name": "a", "state": {"terminated": {"exitCode": 137}}}]), "0/2", "ExitCode:137"),
    (api_pod(statuses=[{"name": "a", "state": {"terminated": {"exitCode": 0, "signal": 9}}}]), "0/2", "Signal:9"),
    (api_pod(phase="Pending", statuses=[{"name": "a", "state": {"waiting": {"reason": "ContainerCreating"}}}]), "0/2", "ContainerCreating"),
    # a finished container beside a running one reads Running only with the Ready condition
    (api_pod(statuses=[RUNNING, {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]), "1/2", "NotReady"),
])
def test_the_pod_printer_derives_ready_and_status(pod, ready, status):
    cells = POD_TABLE.cells(pod, 0.0)
    assert cells[1:3] == [ready, status]


def test_the_pod_printers_wide_cells():
    pod = api_pod(statuses=[RUNNING])
    pod["status"]["podIPs"] = [{"ip": "10.244.0.7"}]
    assert POD_TABLE.cells(pod, 0.0)[5:] == ["10.244.0.7", "n", "<none>", "<none>"]
    assert [c["name"] for c in POD_TABLE.columns if c["priority"] == 1] == ["IP", "Node", "Nominated Node", "Readiness Gates"]


# -- the API's view and a pod's update --------------------------------------------------------------


def test_a_pod_shows_its_prestop_hook_its_ip_and_its_containers_state():
    store, view = Store(), APIView(ClusterClock())
    pod = new_pod("p", containers=[{"name": "app", "image": "genericserver", "portName": "http", "lifecycle": {"preStop": SleepAction(5)}}])
    created = store.create(pod)
    created["status"] = {"phase": "Running", "podIP": "127.0.0.1", "conditions": [{"type": "Ready", "status": "True"}],
                         "containerStatuses": [{"name": "app", "ready": False, "state": "terminated", "exitCode": 137}]}
    api = view.pod(created)
    container = api["spec"]["containers"][0]
    assert container["lifecycle"] == {"preStop": {"sleep": {"seconds": 5}}}
    assert container["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    assert api["status"]["podIP"] == "10.244.0.2" and api["status"]["containerStatuses"][0]["state"] == {
        "terminated": {"exitCode": 137, "reason": "Error"}}


def test_a_pod_update_may_change_images_and_labels_not_the_rest_of_the_spec():
    store, view = Store(), APIView(ClusterClock())
    current = store.create(new_pod("p"))
    old = view.pod(current)
    new = view.pod(current)
    new["metadata"]["labels"] = {"x": "y"}
    new["spec"]["containers"][0]["image"] = "fake:v2"
    merged = view.pod_update(current, new, old)
    assert merged["metadata"]["labels"] == {"x": "y"} and merged["spec"]["containers"][0]["image"] == "fake:v2"
    new["spec"]["nodeName"] = "elsewhere"
    with pytest.raises(StatusError) as err:
        view.pod_update(current, new, old)
    st_ = err.value.status
    assert st_["code"] == 422 and st_["details"]["causes"][0]["field"] == "spec"
    assert st_["message"].startswith('Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than')
    assert 'spec.nodeName: "node-1" -> "elsewhere"' in st_["message"]


def test_a_pod_puts_uid_is_a_precondition_of_the_write():
    from genericserver.cluster import apistorage
    from genericserver.cluster.apiserver import PODS

    store, view = Store(), APIView(ClusterClock())
    pods = apistorage.ClusterStorage(store, POD, PODS, view.pod, merge=apistorage.pod_merge(view))
    api = view.pod(store.create(new_pod("p")))
    with pytest.raises(StatusError) as err:
        pods.update("default", "p", api, preconditions={"uid": "wrong"})
    assert err.value.status["code"] == 409 and err.value.status["message"] == (
        'Operation cannot be fulfilled on pods "p": StorageError: invalid object, Code: 4, Key: /registry/pods/default/p, '
        f'ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: wrong, UID in object meta: {api["metadata"]["uid"]}')
    assert pods.update("default", "p", api, preconditions={"uid": api["metadata"]["uid"]})["metadata"]["name"] == "p"


# -- IntOrString --------------------------------------------------------------------------------------


@given(value=st.one_of(st.integers(0, 2**31 - 1), st.from_regex(r"[0-9]{1,3}%|[a-z]{1,8}", fullmatch=True)))
def test_int_or_string_round_trips_through_protobuf(value):
    obj = {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d"},
           "spec": {"strategy": {"rollingUpdate": {"maxSurge": value}}}}
    back = protobuf.decode(protobuf.encode(obj))
    assert back["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == value

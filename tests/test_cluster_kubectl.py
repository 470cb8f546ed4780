"""Tests for genericserver.cluster.kubectl: kubectl delete's flag rules and the Terminating status."""

from __future__ import annotations

import pytest

from genericserver.cluster.kubectl import (
    FORCE_WARNING,
    DeleteFlags,
    KubectlError,
    complete_delete_flags,
    delete_pod,
    get_pods,
)
from genericserver.cluster.store import POD, Store, new_pod
from genericserver.sampleapi import StatusError

@pytest.mark.parametrize(
    "flags,message",
    [
        (DeleteFlags(grace_period=5, now=True), "--now and --grace-period cannot be specified together"),
        (DeleteFlags(grace_period=5, force=True), "--force and --grace-period greater than 0 cannot be specified together"),
        (DeleteFlags(now=True, force=True), "--force and --grace-period greater than 0 cannot be specified together"),
    ],
    ids=["now-with-grace", "force-with-positive-grace", "force-with-now"],
)
def test_flag_errors(flags, message):
    with pytest.raises(KubectlError) as e:
        complete_delete_flags(flags)
    assert str(e.value) == message


def test_force_deletes_at_once_and_warns():
    store = Store()
    store.create(new_pod("p"))
    store.create(new_pod("q"))
    lines = delete_pod(store, "p", DeleteFlags(force=True))
    assert lines == [FORCE_WARNING, 'pod "p" force deleted']
    with pytest.raises(StatusError):
        store.get(POD, "p")
    assert [name for name, _, _ in get_pods(store)] == ["q"]


def test_a_running_pod_shows_its_phase():
    store = Store()
    pod = new_pod("p")
    pod["status"]["phase"] = "Running"
    pod["status"]["containerStatuses"] = [{"name": "app", "ready": True}]
    store.create(pod)
    assert get_pods(store) == [("p", "1/1", "Running")]

"""kubectl delete's flag rules (delete.go's DeleteOptions.Complete) and what each sends.

Kept apart from tests/test_cluster_kubectl.py, which the kubectl-grace-zero-forces lab points
students to for the API: these tables are that lab's answer.
"""

from __future__ import annotations

import pytest

from genericserver.cluster.kubectl import FORCE_WARNING, DeleteFlags, complete_delete_flags, delete_pod, get_pods
from genericserver.cluster.store import POD, Store, new_pod

CASES = [
    # (flags, effective grace sent (-1: none), warnings)
    (DeleteFlags(), -1, []),
    (DeleteFlags(grace_period=10), 10, []),
    (DeleteFlags(grace_period=0), 1, []),
    (DeleteFlags(now=True), 1, []),
    (DeleteFlags(force=True), 0, [FORCE_WARNING]),
    (DeleteFlags(grace_period=0, force=True), 0, [FORCE_WARNING]),
]


@pytest.mark.parametrize(
    "flags,grace,warnings",
    CASES,
    ids=["default-uses-pods-own", "explicit", "zero-without-force-becomes-one", "now-is-one", "force-is-zero", "force-zero"],
)
def test_flag_rules(flags, grace, warnings):
    assert complete_delete_flags(flags) == (grace, warnings)


@pytest.mark.parametrize(
    "flags,want_grace,lines",
    [
        (DeleteFlags(), 45, ['pod "p" deleted']),
        (DeleteFlags(grace_period=0), 1, ['pod "p" deleted']),
        (DeleteFlags(now=True), 1, ['pod "p" deleted']),
        (DeleteFlags(grace_period=7), 7, ['pod "p" deleted']),
    ],
    ids=["pods-own-grace", "zero-becomes-one", "now", "explicit"],
)
def test_delete_sends_what_the_rules_say_and_the_pod_shows_terminating(flags, want_grace, lines):
    store = Store()
    store.create(new_pod("p", termination_grace_period_seconds=45))
    printed: list[str] = []
    assert delete_pod(store, "p", flags, out=printed.append) == lines == printed
    pod = store.get(POD, "p")
    assert pod["metadata"]["deletionGracePeriodSeconds"] == want_grace
    assert get_pods(store) == [("p", "0/1", "Terminating")]

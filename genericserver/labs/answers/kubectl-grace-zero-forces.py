"""Answer to the lab kubectl-grace-zero-forces: --grace-period=0 without --force is a graceful delete (no Go twin).

kubectl turns a bare --grace-period=0 into 1, so nobody force-deletes by accident: the pod stays
in the API, Terminating, until the kubelet has stopped it (kubernetes/kubernetes#35484, #37263).
"""

from genericserver.cluster.kubectl import DeleteFlags, delete_pod, get_pods
from genericserver.cluster.store import POD, Store, new_pod


def test_grace_period_zero_without_force_stays_graceful():
    store = Store()
    store.create(new_pod("p", termination_grace_period_seconds=30))
    lines = delete_pod(store, "p", DeleteFlags(grace_period=0))
    assert lines == ['pod "p" deleted']
    assert store.get(POD, "p")["metadata"]["deletionGracePeriodSeconds"] == 1
    assert get_pods(store) == [("p", "0/1", "Terminating")]

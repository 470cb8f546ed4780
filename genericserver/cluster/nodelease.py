"""The kubelet's node lease: a Lease named after the node, renewed every quarter of its duration (no Go twin: models k8s.io/component-helpers/apimachinery/lease's controller as the kubelet runs it).

Besides its Node's status, a kubelet proves it is alive with a Lease in ``kube-node-lease``: it
holds it (``holderIdentity``, the node's name) for ``leaseDurationSeconds`` (40, the kubelet's
``--node-lease-duration-seconds``) and renews it every quarter of that (10 s), so the node
controller can tell a silent node from a busy one by the last ``renewTime``. ``kubectl describe
node`` shows the holder and the renewal. The lease is owned by its Node. Times are cluster seconds.
"""

from __future__ import annotations

from typing import Optional

from genericserver import runtime as rt
from genericserver.apimachinery.api.errors import StatusError, is_already_exists
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.store import LEASE, NODE, Store

LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION_SECONDS = 40
RENEW_INTERVAL_FRACTION = 0.25  # of the duration: 10 s


class NodeLease:
    """``start()`` creates the node's lease and renews it until ``stop()``."""

    def __init__(self, store: Store, node_name: str, clock: Optional[ClusterClock] = None):
        self.store, self.node_name = store, node_name
        self.clock = clock if clock is not None else store.clock
        self.interval = LEASE_DURATION_SECONDS * RENEW_INTERVAL_FRACTION
        self._stopped = rt.event(f"{node_name}-lease-stopped")
        self._loop: Optional[rt.Goroutine] = None

    def start(self) -> None:
        node = self.store.get(NODE, self.node_name, namespace="")
        owner = {"apiVersion": "v1", "kind": NODE, "name": self.node_name, "uid": node["metadata"]["uid"]}
        now = self.clock.now()
        try:
            self.store.create({"kind": LEASE, "metadata": {"name": self.node_name, "namespace": LEASE_NAMESPACE,
                                                            "ownerReferences": [owner]},
                               "spec": {"holderIdentity": self.node_name, "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                                        "renewTime": now}}, record=False)
        except StatusError as err:
            if not is_already_exists(err):  # a kubelet started again on the same node renews the lease it had
                raise
        self._loop = rt.go(self._renew_loop, name=f"{self.node_name}-lease-renewer")

    def _renew_loop(self) -> None:
        while self.clock.select(self._stopped, timeout=self.interval) is None:
            self.renew()

    def renew(self) -> None:
        now = self.clock.now()

        def renewed(lease: dict) -> dict:
            lease["spec"]["renewTime"] = now
            return lease

        self.store.guaranteed_update(LEASE, self.node_name, renewed, namespace=LEASE_NAMESPACE)

    def stop(self) -> None:
        self._stopped.set()
        if self._loop is not None:
            self._loop.join()

"""kube-proxy: a service's routing table from its EndpointSlice, after a sync lag; DNAT on connect (no Go twin: models k8s.io/kubernetes pkg/proxy, iptables mode).

In iptables mode the kernel picks a backend when a connection is set up (DNAT) and conntrack
keeps that choice for the connection's life; rule changes only affect *new* connections. Here
:meth:`KubeProxy.dial` is that connect-time choice: it picks an endpoint from the table kube-proxy
last installed and opens a real loopback TCP connection straight to the pod. A pod whose
listener is closed answers with a real ``ECONNREFUSED``; a connection already established keeps
going to its pod whatever the table says later.

* The table is rebuilt ``lag`` cluster seconds after the slice changed (kube-proxy's own sync
  period and the time to write the rules), on top of the endpoints controller's lag.
* New connections go to ``ready`` endpoints, round robin. When none is ready, to endpoints that
  are serving and terminating (KEP-1669, "ProxyTerminatingEndpoints"); when there is none at all,
  the service's REJECT rule refuses the connection.
"""

from __future__ import annotations

import errno
import itertools
import socket
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, Optional

from genericserver import runtime as rt
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.store import ENDPOINT_SLICE, Store
from genericserver.cluster.workqueue import Controller


@dataclass(frozen=True)
class Endpoint:
    pod: str
    host: str
    port: int
    ready: bool
    serving: bool
    terminating: bool


def table_from_slice(slice_obj: Optional[dict]) -> tuple[Endpoint, ...]:
    if slice_obj is None:
        return ()
    return tuple(Endpoint(e["targetRef"]["name"], e["addresses"][0], e["port"], **e["conditions"]) for e in slice_obj.get("endpoints", []))


def usable(table: tuple[Endpoint, ...]) -> tuple[Endpoint, ...]:
    """Where new connections may go: the ready ones, else the serving terminating ones."""
    ready = tuple(e for e in table if e.ready)
    return ready or tuple(e for e in table if e.serving and e.terminating)


class KubeProxy(Controller):
    """Routes connections to service ``service``; ``run()``/``stop()``; ``lag`` in cluster seconds."""

    watch_name = "kube-proxy-watch"
    worker_name = "kube-proxy-sync"

    def __init__(self, store: Store, service: str, *, lag: float = 0.0, namespace: str = "default",
                 clock: Optional[ClusterClock] = None):
        self.store, self.service, self.namespace = store, service, namespace
        super().__init__(clock if clock is not None else store.clock, store.watch(ENDPOINT_SLICE), lag)
        self._cond = rt.condition(rt.lock())
        self.table: tuple[Endpoint, ...] = ()
        self._rr = itertools.count()

    def initial_keys(self) -> Iterable[Hashable]:
        return ["sync"]

    def keys_for(self, typ: str, obj: dict) -> Iterable[Hashable]:
        # one routing table for the service: every change to its slice resyncs it
        return ["sync"] if obj["metadata"]["name"] == self.service else []

    def sync_key(self, key: Hashable) -> None:
        self.sync()

    def sync(self) -> None:
        """Install the rules for the slice as it is now."""
        try:
            current = self.store.get(ENDPOINT_SLICE, self.service, self.namespace)
        except Exception:
            current = None
        table = table_from_slice(current)
        with self._cond:
            old, self.table = self.table, table
            self._cond.notify_all()
        if table != old:
            go = usable(table)
            routed = ", ".join(e.pod for e in go) or "nothing (REJECT)"
            rest = ", ".join(f"{e.pod} ({'terminating' if e.terminating else 'not ready'})" for e in table if e not in go)
            self.store.events.record("kube-proxy", f"{self.service}: rules synced: new connections go to {routed}"
                                     + (f"; not to {rest}" if rest else ""), at=self.acting_at, routed=[e.pod for e in go])

    def wait_for(self, predicate: Callable[[tuple[Endpoint, ...]], bool], timeout: Optional[float] = None) -> bool:
        """Wait (runtime seconds) until the installed table satisfies ``predicate``."""
        deadline = None if timeout is None else rt.now() + timeout
        with self._cond:
            while not predicate(self.table):
                left = None if deadline is None else deadline - rt.now()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def pick(self) -> Optional[Endpoint]:
        with self._cond:
            choices = usable(self.table)
        if not choices:
            return None
        return choices[next(self._rr) % len(choices)]

    def dial(self, timeout: Optional[float] = None) -> tuple[socket.socket, str]:
        """Connect to the service: (socket to the chosen pod, pod name)."""
        ep = self.pick()
        if ep is None:
            raise ConnectionRefusedError(errno.ECONNREFUSED, f"Connection refused (service {self.service} has no endpoints)")
        try:
            return socket.create_connection((ep.host, ep.port), timeout=timeout), ep.pod
        except OSError as err:
            err.pod = ep.pod  # type: ignore[attr-defined]  # for the client's tally
            raise

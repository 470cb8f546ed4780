"""The health-check metrics (no Go twin in apiserver: mirrors k8s.io/component-base/metrics/prometheus/slis v0.36.0).

Every check a ``/healthz``, ``/livez`` or ``/readyz`` request runs is observed (Go's
``slis.ObserveHealthcheck``, called by pkg/server/healthz/healthz.go):

* ``kubernetes_healthcheck{name,type}``: 1 if the check last passed, 0 if it failed;
* ``kubernetes_healthchecks_total{name,type,status}``: every result, ``success`` or ``error``;

``type`` is the endpoint (``healthz``, ``livez``, ``readyz``), so during a shutdown
``kubernetes_healthcheck{name="shutdown",type="readyz"}`` turns 0 with the first failed probe.
Go serves these at ``/metrics/slis`` from a registry of their own, not at ``/metrics``
(:mod:`genericserver.routes`), together with ``process_start_time_seconds``. As with the other
metrics, each server has its own registry here (Go: one for the process), and :data:`LEGACY`
is the process-wide one for handlers installed without a server.
"""

from __future__ import annotations

from typing import Optional

from prometheus_client import CollectorRegistry, Counter, Gauge

SUCCESS = "success"
ERROR = "error"


class SLIMetrics:
    """The health-check metrics of one server, and its process start time, in ``registry``."""

    def __init__(self, registry: Optional[CollectorRegistry] = None, process_start_time: Optional[float] = None):
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.healthcheck = Gauge(
            "kubernetes_healthcheck", "[STABLE] This metric records the result of a single healthcheck.", ["name", "type"], registry=r
        )
        self.healthchecks_total = Counter(
            "kubernetes_healthchecks_total", "[STABLE] This metric records the results of all healthcheck.", ["name", "type", "status"], registry=r
        )
        # component-base's RegisterProcessStartTime: seconds since the epoch
        self.process_start_time = Gauge(
            "process_start_time_seconds", "[ALPHA] Start time of the process since unix epoch in seconds.", registry=r
        )
        if process_start_time is not None:
            self.process_start_time.set(process_start_time)

    def observe_healthcheck(self, name: str, healthcheck_type: str, status: str) -> None:
        self.healthcheck.labels(name, healthcheck_type).set(1 if status == SUCCESS else 0)
        self.healthchecks_total.labels(name, healthcheck_type, status).inc()


LEGACY = SLIMetrics(CollectorRegistry())

"""Port of k8s.io/apiserver/pkg/audit/metrics.go (v1.36.0): the audit counters and the plugin error report.

Go's four ALPHA counters, with Go's names, labels and help texts, on ``prometheus_client``:

* ``apiserver_audit_event_total``: events sent to the backend (one per stage), counted by
  ``AuditContext.process_event_stage`` (Go's ``ObserveEvent``);
* ``apiserver_audit_error_total{plugin}``: events a backend failed to handle (:meth:`handle_plugin_error`);
* ``apiserver_audit_level_total{level}``: the policy level of each request (``ObservePolicyLevel``);
* ``apiserver_audit_requests_rejected_total``: requests failed with 500 because the backend
  refused their RequestReceived event (Go's ``ApiserverAuditDroppedCounter``).

As with :mod:`genericserver.metrics`, Go's package variables live in the process-wide
``legacyregistry``; here :class:`AuditMetrics` is registered in the registry it is given, one per
server (the server's config hands it to its audit filter and its backends), and :data:`LEGACY`
is the process-wide one for what runs without a server. :func:`handle_plugin_error` logs Go's
message, one line per impacted event, with klog's ``Error``.
"""

from __future__ import annotations

from typing import Any, Optional

from prometheus_client import CollectorRegistry, Counter

from genericserver import klog
from genericserver.audit.event import Event, Level
from genericserver.audit.format import event_string

SUBSYSTEM = "apiserver_audit"


class AuditMetrics:
    """The audit counters of one server (see the module docstring)."""

    def __init__(self, registry: Optional[CollectorRegistry] = None):
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.event_counter = Counter(
            f"{SUBSYSTEM}_event_total", "[ALPHA] Counter of audit events generated and sent to the audit backend.", registry=r
        )
        self.error_counter = Counter(
            f"{SUBSYSTEM}_error_total",
            "[ALPHA] Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.",
            ["plugin"],
            registry=r,
        )
        self.level_counter = Counter(
            f"{SUBSYSTEM}_level_total", "[ALPHA] Counter of policy levels for audit events (1 per request).", ["level"], registry=r
        )
        self.apiserver_audit_dropped_counter = Counter(
            f"{SUBSYSTEM}_requests_rejected_total",
            "[ALPHA] Counter of apiserver requests rejected due to an error in audit logging backend.",
            registry=r,
        )

    def observe_event(self) -> None:
        """One audit event generated and sent to the backend."""
        self.event_counter.inc()

    def observe_policy_level(self, level: Level | str) -> None:
        self.level_counter.labels(str(getattr(level, "value", level))).inc()

    def observe_request_rejected(self) -> None:
        self.apiserver_audit_dropped_counter.inc()

    def handle_plugin_error(self, plugin: str, err: BaseException | str, *impacted: Event) -> None:
        """Count and log events a backend could not handle (Go's text, then one line per event)."""
        self.error_counter.labels(plugin).inc(len(impacted))
        msg = f"Error in audit plugin '{plugin}' affecting {len(impacted)} audit events: {err}\nImpacted events:\n"
        for ev in impacted:
            msg += event_string(ev) + "\n"
        klog.error(msg)


# Go's legacyregistry, for backends and filters made without a server's metrics
LEGACY = AuditMetrics(CollectorRegistry())


def handle_plugin_error(plugin: str, err: BaseException | str, *impacted: Event, metrics: Any = None) -> None:
    """``HandlePluginError``, counted in ``metrics`` (an :class:`AuditMetrics`; :data:`LEGACY` if None)."""
    (metrics if metrics is not None else LEGACY).handle_plugin_error(plugin, err, *impacted)

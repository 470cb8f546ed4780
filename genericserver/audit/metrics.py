"""Port of k8s.io/apiserver/pkg/audit/metrics.go (v1.36.0): counters and the plugin error report.

Go keeps Prometheus counters; here they are plain counts (``Counters``), enough for tests and
the demo to see how many events were generated, failed or dropped. ``handle_plugin_error`` logs
Go's message, one line per impacted event.
"""

from __future__ import annotations

import logging
from collections import Counter

from genericserver import runtime as rt
from genericserver.audit.event import Event, Level
from genericserver.audit.format import event_string

log = logging.getLogger("genericserver.audit")


class Counters:
    """``apiserver_audit_event_total``, ``_error_total{plugin}``, ``_level_total{level}``, ``_requests_rejected_total``."""

    def __init__(self) -> None:
        self._lock = rt.lock()
        self.events = 0
        self.errors: Counter[str] = Counter()
        self.levels: Counter[str] = Counter()
        self.requests_rejected = 0

    def observe_event(self) -> None:
        with self._lock:
            self.events += 1

    def observe_policy_level(self, level: Level | str) -> None:
        with self._lock:
            self.levels[str(level)] += 1

    def observe_error(self, plugin: str, n: int) -> None:
        with self._lock:
            self.errors[plugin] += n

    def observe_request_rejected(self) -> None:
        with self._lock:
            self.requests_rejected += 1


COUNTERS = Counters()


def handle_plugin_error(plugin: str, err: BaseException | str, *impacted: Event) -> None:
    """Count and log events a backend could not handle (Go's text, then one line per event)."""
    COUNTERS.observe_error(plugin, len(impacted))
    msg = f"Error in audit plugin '{plugin}' affecting {len(impacted)} audit events: {err}\nImpacted events:\n"
    for ev in impacted:
        msg += event_string(ev) + "\n"
    log.error("%s", msg)

"""An in-memory audit backend for tests (no Go twin; Go's tests use plugin/pkg/audit/fake and fakeAudit).

:class:`MemoryBackend` records a copy of every event it is given, answers ``audited(audit_id)``
and ``shutdown_completed()`` like the graceful-termination test's ``fakeAudit``, and doubles as a
policy evaluator with one fixed level (Metadata by default). Its ``shutdown`` blocks until the
``stop`` event given to ``run`` is set, as the Go fake does; ``on_request`` is called with each
batch (Go's ``fake.Backend.OnRequest``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from genericserver import runtime as rt
from genericserver.audit.event import Event, Level, Stage
from genericserver.audit.policy import RequestAuditConfig


class MemoryBackend:
    def __init__(self, level: Level = Level.METADATA, on_request: Optional[Callable[[list[Event]], Any]] = None, name: str = "fake-audit"):
        self._lock = rt.lock()
        self._events: list[Event] = []
        self._completed = False
        self._stop: Optional[rt.Event] = None
        self._level = level
        self._name = name
        self.on_request = on_request

    def process_events(self, *events: Event) -> bool:
        copies = [e.deep_copy() for e in events]
        with self._lock:
            self._events.extend(copies)
        if self.on_request is not None:
            self.on_request(copies)
        return True

    def run(self, stop: rt.Event) -> None:
        self._stop = stop

    def shutdown(self) -> None:
        if self._stop is None:
            raise RuntimeError("audit backend shut down before it was run")
        self._stop.wait()
        with self._lock:
            self._completed = True

    def name(self) -> str:
        return self._name

    __str__ = name

    def evaluate_policy_rule(self, attrs: Any) -> RequestAuditConfig:
        return RequestAuditConfig(level=self._level)

    # -- what tests ask -----------------------------------------------------------------
    def events(self) -> list[Event]:
        with self._lock:
            return list(self._events)

    def audited(self, audit_id: str) -> bool:
        with self._lock:
            return any(e.audit_id == audit_id for e in self._events)

    def stages(self, audit_id: str) -> list[Stage | str]:
        """The stages recorded for one request, in the order they arrived."""
        with self._lock:
            return [e.stage for e in self._events if e.audit_id == audit_id]

    def shutdown_completed(self) -> bool:
        with self._lock:
            return self._completed

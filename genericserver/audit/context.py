"""Port of k8s.io/apiserver/pkg/audit/context.go (v1.36.0): the per-request audit context.

``WithAuditInit`` gives every request an :class:`AuditContext` (in the WSGI environ, under
``request.AUDIT_KEY``) carrying the audit ID. ``WithAudit`` later evaluates the policy and calls
:meth:`AuditContext.init`; from then on :meth:`AuditContext.process_event_stage` hands the event
to the sink at each stage. Annotations may be added before the policy is evaluated (an
uninitialised context counts as enabled) and are kept.

Go hands the sink a pointer to the event it keeps mutating; sinks must copy, as in Go
(:meth:`genericserver.audit.event.Event.deep_copy`). The lock guards the event; the sink is called
under it, as in Go, so a sink must not call back into the context.
"""

from __future__ import annotations

import copy
import logging
from typing import Any, Callable, Optional

from genericserver import request
from genericserver import runtime as rt
from genericserver.audit.event import Event, Level, Stage, Status, UserInfo, ord_level
from genericserver.audit.metrics import LEGACY, AuditMetrics
from genericserver.audit.policy import RequestAuditConfig

log = logging.getLogger("genericserver.audit")

_MAX_AUDIT_ID_LENGTH = 64


# the config of a context the policy was not evaluated for yet (Go's zero RequestAuditConfig);
# frozen, so every request can share it (a new one cost each request ~1 us)
_NO_POLICY_YET = RequestAuditConfig()


class AuditContext:
    """What the audit filters know about one request: the evaluated policy, the sink, the event."""

    def __init__(self) -> None:
        self._initialized = False
        self._config = _NO_POLICY_YET
        self._sink: Any = None
        self._lock = rt.lock()
        # a fresh context's stage is ResponseStarted, as Go's WithAuditContext sets it
        self._event = Event(stage=Stage.RESPONSE_STARTED)
        self._audit_id = ""
        self._metrics = LEGACY

    def enabled(self) -> bool:
        """True until a policy said level None: annotations made before evaluation are kept."""
        if not self._initialized:
            return True
        return self._config.level != Level.NONE

    def init(self, config: RequestAuditConfig, sink: Any, metrics: Optional[AuditMetrics] = None) -> None:
        """Go's ``Init(rac, sink)``; ``metrics`` are the server's audit counters (Go: package globals)."""
        with self._lock:
            if self._initialized:
                raise RuntimeError("audit context was already initialized")
            self._config = config
            self._sink = sink
            self._metrics = metrics if metrics is not None else LEGACY
            self._event.level = config.level
            self._initialized = True

    def audit_id(self) -> str:
        return self._audit_id

    def visit_event(self, fn: Callable[[Event], Any]) -> Any:
        with self._lock:
            return fn(self._event)

    def process_event_stage(self, stage: Stage) -> bool:
        """Send the event at ``stage`` to the sink; False if the sink failed to take it."""
        if not self._initialized or self._sink is None:
            return True
        if stage in self._config.omit_stages:
            return True
        with self._lock:
            ev = self._event
            ev.stage = stage
            if stage == Stage.REQUEST_RECEIVED:
                ev.stage_timestamp = ev.request_received_timestamp
            else:
                ev.stage_timestamp = rt.wall()
            self._metrics.observe_event()
            return bool(self._sink.process_events(ev))

    def log_impersonated_user(self, user: request.UserInfo, constraint: str = "") -> None:
        def record(ev: Event) -> None:
            if ord_level(ev.level) < ord_level(Level.METADATA):
                return
            ev.impersonated_user = UserInfo(
                username=user.name,
                uid=user.uid,
                groups=list(user.groups) if user.groups is not None else None,
                extra={k: list(v) for k, v in (user.extra or {}).items()},
            )
            # the constraint (constrained impersonation) is not ported: only legacy impersonation is

        self.visit_event(record)

    def get_event_user(self) -> UserInfo:
        return self.visit_event(lambda ev: copy.deepcopy(ev.user))

    def get_event_impersonated_user(self) -> Optional[UserInfo]:
        return self.visit_event(lambda ev: copy.deepcopy(ev.impersonated_user))

    def get_event_annotation(self, key: str) -> tuple[str, bool]:
        def get(ev: Event) -> tuple[str, bool]:
            anns = ev.annotations or {}
            return (anns[key], True) if key in anns else ("", False)

        return self.visit_event(get)

    def get_event_annotations(self) -> Optional[dict[str, str]]:
        return self.visit_event(lambda ev: dict(ev.annotations) if ev.annotations is not None else None)

    def get_event_level(self) -> Level | str:
        return self.visit_event(lambda ev: ev.level)

    def set_event_stage(self, stage: Stage) -> None:
        self.visit_event(lambda ev: setattr(ev, "stage", stage))

    def get_event_stage(self) -> Stage | str:
        return self.visit_event(lambda ev: ev.stage)

    def set_event_stage_timestamp(self, ts: Optional[float]) -> None:
        self.visit_event(lambda ev: setattr(ev, "stage_timestamp", ts))

    def get_event_stage_timestamp(self) -> Optional[float]:
        return self.visit_event(lambda ev: ev.stage_timestamp)

    def get_event_request_received_timestamp(self) -> Optional[float]:
        return self.visit_event(lambda ev: ev.request_received_timestamp)

    def get_event_response_status(self) -> Optional[Status]:
        return self.visit_event(lambda ev: ev.response_status)

    def set_event_response_status(self, status: Optional[Status]) -> None:
        self.visit_event(lambda ev: setattr(ev, "response_status", status))

    def set_event_response_status_code(self, code: int) -> None:
        def set_code(ev: Event) -> None:
            if ev.response_status is None:
                ev.response_status = Status()
            ev.response_status.code = code

        self.visit_event(set_code)

    def event_copy(self) -> Event:
        """A snapshot of the event as it stands (Go's tests read the private field directly)."""
        return self.visit_event(lambda ev: ev.deep_copy())

    def _add_annotation_locked(self, key: str, value: str) -> None:
        ev = self._event
        if ev.annotations is None:
            ev.annotations = {}
        old = ev.annotations.get(key)
        if old is not None and old != value:
            log.warning("Failed to set annotations[%r] to %r for audit:%r, it has already been set to %r", key, value, ev.audit_id, old)
            return
        ev.annotations[key] = value


def _enabled(ac: Optional[AuditContext]) -> bool:
    return ac is not None and ac.enabled()


def add_audit_annotation(environ: dict, key: str, value: str) -> None:
    """Record an annotation; the first value set for a key wins (later different ones are logged)."""
    ac = audit_context_from(environ)
    if not _enabled(ac):
        return
    assert ac is not None
    with ac._lock:
        ac._add_annotation_locked(key, value)


def add_audit_annotations(environ: dict, *keys_and_values: str) -> None:
    ac = audit_context_from(environ)
    if not _enabled(ac):
        return
    assert ac is not None
    with ac._lock:
        if len(keys_and_values) % 2 != 0:
            log.error("Dropping mismatched audit annotation %r", keys_and_values[-1])
        for i in range(0, len(keys_and_values) - 1, 2):
            ac._add_annotation_locked(keys_and_values[i], keys_and_values[i + 1])


def add_audit_annotations_map(environ: dict, annotations: dict[str, str]) -> None:
    ac = audit_context_from(environ)
    if not _enabled(ac):
        return
    assert ac is not None
    with ac._lock:
        for k, v in annotations.items():
            ac._add_annotation_locked(k, v)


def with_audit_context(environ: dict) -> AuditContext:
    """Attach a new audit context unless one is there already; return the request's context."""
    ac = audit_context_from(environ)
    if ac is None:
        ac = AuditContext()
        request.with_audit_context(environ, ac)
    return ac


def audit_context_from(environ: dict) -> Optional[AuditContext]:
    ac = request.audit_context_from(environ)
    return ac if isinstance(ac, AuditContext) else None


def with_audit_id(environ: dict, audit_id: str) -> None:
    """Set the audit ID on the request's audit context (which must exist); empty IDs are ignored."""
    if not audit_id:
        return
    ac = audit_context_from(environ)
    if ac is not None:
        def set_id(ev: Event) -> None:
            ac._audit_id = audit_id
            ev.audit_id = audit_id

        ac.visit_event(set_id)


def audit_id_from(environ: dict) -> tuple[str, bool]:
    """The audit ID, and whether the request has an audit context at all."""
    ac = audit_context_from(environ)
    if ac is not None:
        return ac.audit_id(), True
    return "", False


def get_audit_id_truncated(environ: dict) -> str:
    """The audit ID cut to 64 characters, for log lines (a client may send a huge one)."""
    audit_id, ok = audit_id_from(environ)
    if not ok:
        return ""
    return audit_id[:_MAX_AUDIT_ID_LENGTH]

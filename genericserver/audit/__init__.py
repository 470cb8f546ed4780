"""Audit events, policy and backends: k8s.io/apiserver/pkg/audit and plugin/pkg/audit/{log,buffered} (package).

Modules, one per Go file: :mod:`.event` (the audit.k8s.io/v1 Event), :mod:`.context` (the
per-request AuditContext), :mod:`.request` (filling an event from a request), :mod:`.policy`
(levels and rules), :mod:`.types` (Sink and Backend), :mod:`.union`, :mod:`.format`,
:mod:`.metrics`, :mod:`.log_backend`, :mod:`.buffered`, and :mod:`.memory` for tests.
The names below are the ones the filters and the server use.
"""

from genericserver.audit.context import (
    AuditContext,
    add_audit_annotation,
    add_audit_annotations,
    add_audit_annotations_map,
    audit_context_from,
    audit_id_from,
    get_audit_id_truncated,
    with_audit_context,
    with_audit_id,
)
from genericserver.audit.event import HEADER_AUDIT_ID, Event, Level, ObjectReference, Stage, Status, UserInfo
from genericserver.audit.policy import (
    GroupResources,
    Policy,
    PolicyRule,
    RequestAuditConfig,
    default_policy,
    new_fake_policy_rule_evaluator,
    new_policy_rule_evaluator,
)
from genericserver.audit.request import log_impersonated_user, log_request_metadata
from genericserver.audit.types import Backend, Sink
from genericserver.audit.union import union

__all__ = [
    "AuditContext", "Backend", "Event", "GroupResources", "HEADER_AUDIT_ID", "Level", "ObjectReference",
    "Policy", "PolicyRule", "RequestAuditConfig", "Sink", "Stage", "Status", "UserInfo",
    "add_audit_annotation", "add_audit_annotations", "add_audit_annotations_map", "audit_context_from",
    "audit_id_from", "default_policy", "get_audit_id_truncated", "log_impersonated_user",
    "log_request_metadata", "new_fake_policy_rule_evaluator", "new_policy_rule_evaluator", "union",
    "with_audit_context", "with_audit_id",
]

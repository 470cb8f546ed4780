"""Ports of k8s.io/apiserver/pkg/audit/policy/{checker,util}.go, pkg/audit/evaluator.go and the Policy types of pkg/apis/audit/v1/types.go (v1.36.0).

A :class:`Policy` is a list of :class:`PolicyRule`; the first rule that matches a request's
authorizer attributes decides its level and the stages to omit. A request no rule matches is
not audited (Go's ``DefaultAuditLevel`` is ``None``). Because an apiserver started with audit
logging on but no policy file would otherwise log nothing, :func:`default_policy` is the
"audit everything at Metadata" policy a server here uses when none is given (no Go twin: in
kube-apiserver a policy file is required).

Rule matching (users, groups, verbs, namespaces, resources with ``*``/``*/sub``/``res/*``
wildcards and resource names, non-resource URLs with a trailing ``*``) is Go's, case for case.

Four Go files in one module: the Policy types, the checker, its rule matching (util.go) and the
evaluator interface are one decision, the level and stages of one request.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional, Protocol, Sequence

from genericserver.audit.event import Level, Stage

DEFAULT_AUDIT_LEVEL = Level.NONE


@dataclass(frozen=True)
class RequestAuditConfig:
    """The policy's verdict for one request: level, stages to omit, whether to drop managed fields."""

    level: Level = Level.NONE
    omit_stages: tuple[Stage, ...] = ()
    omit_managed_fields: bool = False


class PolicyRuleEvaluator(Protocol):
    def evaluate_policy_rule(self, attrs: Any) -> RequestAuditConfig: ...


@dataclass(frozen=True)
class GroupResources:
    group: str = ""
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class PolicyRule:
    level: Level
    users: tuple[str, ...] = ()
    user_groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resources: tuple[GroupResources, ...] = ()
    namespaces: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: tuple[Stage, ...] = ()
    omit_managed_fields: Optional[bool] = None


@dataclass(frozen=True)
class Policy:
    rules: tuple[PolicyRule, ...] = ()
    omit_stages: tuple[Stage, ...] = ()
    omit_managed_fields: bool = False


def default_policy() -> Policy:
    """Every request at level Metadata (the server's choice when no policy is configured)."""
    return Policy(rules=(PolicyRule(level=Level.METADATA),))


def union_stages(*stage_lists: Optional[Sequence[Stage]]) -> tuple[Stage, ...]:
    seen: dict[Stage, None] = {}
    for stages in stage_lists:
        for s in stages or ():
            seen[s] = None
    return tuple(seen)


class _PolicyRuleEvaluator:
    def __init__(self, policy: Policy):
        self.policy = policy

    def evaluate_policy_rule(self, attrs: Any) -> RequestAuditConfig:
        for rule in self.policy.rules:
            if rule_matches(rule, attrs):
                return RequestAuditConfig(
                    level=rule.level,
                    omit_stages=rule.omit_stages,
                    omit_managed_fields=_is_omit_managed_fields(rule, self.policy.omit_managed_fields),
                )
        return RequestAuditConfig(
            level=DEFAULT_AUDIT_LEVEL,
            omit_stages=self.policy.omit_stages,
            omit_managed_fields=self.policy.omit_managed_fields,
        )


def new_policy_rule_evaluator(policy: Policy) -> PolicyRuleEvaluator:
    """The evaluator of ``policy``; each rule's omitted stages get the policy-wide ones added."""
    rules = tuple(replace(r, omit_stages=union_stages(policy.omit_stages, r.omit_stages)) for r in policy.rules)
    return _PolicyRuleEvaluator(replace(policy, rules=rules))


@dataclass(frozen=True)
class _FakePolicyRuleEvaluator:
    level: Level
    stages: tuple[Stage, ...] = field(default=())

    def evaluate_policy_rule(self, attrs: Any) -> RequestAuditConfig:
        return RequestAuditConfig(level=self.level, omit_stages=self.stages)


def new_fake_policy_rule_evaluator(level: Level, stages: Optional[Sequence[Stage]] = None) -> PolicyRuleEvaluator:
    """One level for every request (for tests, as in Go)."""
    return _FakePolicyRuleEvaluator(level, tuple(stages or ()))


def _is_omit_managed_fields(rule: PolicyRule, policy_default: bool) -> bool:
    return policy_default if rule.omit_managed_fields is None else rule.omit_managed_fields


def rule_matches(r: PolicyRule, attrs: Any) -> bool:
    user = attrs.user
    if r.users and (user is None or user.name not in r.users):
        return False
    if r.user_groups:
        if user is None or not any(g in r.user_groups for g in user.groups or ()):
            return False
    if r.verbs and attrs.verb not in r.verbs:
        return False
    if r.namespaces or r.resources:
        return _rule_matches_resource(r, attrs)
    if r.non_resource_urls:
        return _rule_matches_non_resource(r, attrs)
    return True


def _rule_matches_non_resource(r: PolicyRule, attrs: Any) -> bool:
    if attrs.resource_request:
        return False
    return any(path_matches(attrs.path, spec) for spec in r.non_resource_urls)


def path_matches(path: str, spec: str) -> bool:
    if spec == "*" or spec == path:
        return True
    return spec.endswith("*") and path.startswith(spec.rstrip("*"))


def _rule_matches_resource(r: PolicyRule, attrs: Any) -> bool:
    if not attrs.resource_request:
        return False
    # non-namespaced resources match the empty namespace
    if r.namespaces and attrs.namespace not in r.namespaces:
        return False
    if not r.resources:
        return True
    resource, sub = attrs.resource, attrs.subresource
    combined = f"{resource}/{sub}" if sub else resource
    for gr in r.resources:
        if gr.group != attrs.api_group and gr.group != "*":
            continue
        if not gr.resources:
            return True
        for res in gr.resources:
            if gr.resource_names and attrs.name not in gr.resource_names:
                continue
            if res == combined or res == "*":
                return True
            if sub and res.startswith("*/") and sub == res[2:]:
                return True
            if res.endswith("/*") and resource == res[:-2]:
                return True
    return False


ALL_STAGES = frozenset(Stage)
ALL_LEVELS = frozenset(Level)


def invert_stages(stages: Sequence[Stage]) -> list[Stage]:
    """Every stage not in ``stages``, sorted by name (Go returns a sorted set's list)."""
    return sorted(ALL_STAGES - set(stages), key=lambda s: s.value)

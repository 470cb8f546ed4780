"""Ports of k8s.io/apiserver/pkg/authorization/{authorizerfactory/builtin.go, authorizer/interfaces.go, authorizer/rule.go, union/union.go} (v1.36.0).

An authorizer looks at a request's :class:`AttributesRecord` (who, which verb, on what) and
answers ``(decision, reason, error)``, Go's triple. :data:`ALWAYS_ALLOW` says yes to everything;
:data:`ALWAYS_DENY` has no opinion, with the reason ``Everything is forbidden.`` (so the
authorization filter answers 403); :func:`new_privileged_groups` allows members of given groups
(``system:masters`` on the loopback connection); :func:`union` asks several in turn.
The rule-resolver half (``RulesFor``: what may this user do in a namespace, for ``kubectl auth
can-i --list``) is ported for the built-in modes and their union; an authorizer without it
(a plain function, the privileged groups) lists nothing.

Four Go files in one module: the interfaces, the rules a resolver lists, the built-in authorizers
and their union are a few lines each, used together by the authorization filter and ``auth can-i``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol

from genericserver.apimachinery import errors
from genericserver.request import UserInfo


class Decision(enum.IntEnum):
    DENY = 0
    ALLOW = 1
    NO_OPINION = 2

    def __str__(self) -> str:
        return {Decision.DENY: "Deny", Decision.ALLOW: "Allow", Decision.NO_OPINION: "NoOpinion"}[self]


@dataclass(frozen=True)
class AttributesRecord:
    """``authorizer.AttributesRecord``: the facts an authorizer decides on."""

    user: Optional[UserInfo] = None
    verb: str = ""
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    resource_request: bool = False
    path: str = ""

    def is_read_only(self) -> bool:
        return self.verb in ("get", "list", "watch")


AuthorizeResult = tuple[Decision, str, Optional[BaseException]]


class Authorizer(Protocol):
    def authorize(self, ctx: Any, a: AttributesRecord) -> AuthorizeResult: ...


class AuthorizerFunc:
    """A plain function as an Authorizer (Go's ``AuthorizerFunc``)."""

    def __init__(self, fn: Callable[[Any, AttributesRecord], AuthorizeResult]):
        self._fn = fn

    def authorize(self, ctx: Any, a: AttributesRecord) -> AuthorizeResult:
        return self._fn(ctx, a)


@dataclass(frozen=True)
class ResourceRuleInfo:
    """``authorizer.DefaultResourceRuleInfo``: verbs allowed on resources of API groups (``*``: any)."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class NonResourceRuleInfo:
    """``authorizer.DefaultNonResourceRuleInfo``: verbs allowed on URL paths (``*``: any)."""

    verbs: tuple[str, ...]
    non_resource_urls: tuple[str, ...] = ()


# RulesFor's answer: resource rules, non-resource rules, whether the list is incomplete, an error
RulesResult = tuple[list[ResourceRuleInfo], list[NonResourceRuleInfo], bool, Optional[BaseException]]


class _AlwaysAllow:
    def authorize(self, ctx: Any, a: Any) -> AuthorizeResult:
        return Decision.ALLOW, "", None

    def rules_for(self, ctx: Any, user: Any, namespace: str) -> RulesResult:
        return [ResourceRuleInfo(("*",), ("*",), ("*",))], [NonResourceRuleInfo(("*",), ("*",))], False, None


class _AlwaysDeny:
    def authorize(self, ctx: Any, a: Any) -> AuthorizeResult:
        return Decision.NO_OPINION, "Everything is forbidden.", None

    def rules_for(self, ctx: Any, user: Any, namespace: str) -> RulesResult:
        return [], [], False, None


ALWAYS_ALLOW: Authorizer = _AlwaysAllow()
ALWAYS_DENY: Authorizer = _AlwaysDeny()


def new_always_allow_authorizer() -> Authorizer:
    return _AlwaysAllow()


def new_always_deny_authorizer() -> Authorizer:
    return _AlwaysDeny()


class _PrivilegedGroups:
    def __init__(self, groups: tuple[str, ...]):
        self.groups = groups

    def authorize(self, ctx: Any, a: AttributesRecord) -> AuthorizeResult:
        if a.user is None:
            return Decision.NO_OPINION, "Error", Exception("no user on request.")
        if any(g in self.groups for g in a.user.groups):
            return Decision.ALLOW, "", None
        return Decision.NO_OPINION, "", None


def new_privileged_groups(*groups: str) -> Authorizer:
    """Allow every request from a member of one of ``groups``; no opinion otherwise."""
    return _PrivilegedGroups(groups)


class _Union:
    def __init__(self, authorizers: tuple[Authorizer, ...]):
        self.authorizers = authorizers

    def authorize(self, ctx: Any, a: AttributesRecord) -> AuthorizeResult:
        errs: list[BaseException] = []
        reasons: list[str] = []
        for authz in self.authorizers:
            decision, reason, err = authz.authorize(ctx, a)
            if err is not None:
                errs.append(err)
            if reason:
                reasons.append(reason)
            if decision in (Decision.ALLOW, Decision.DENY):
                return decision, reason, err
        return Decision.NO_OPINION, "\n".join(reasons), errors.new_aggregate(errs)

    def rules_for(self, ctx: Any, user: Any, namespace: str) -> RulesResult:
        """``unionAuthzRulesHandler``: every member's rules together; incomplete if one's is."""
        resource: list[ResourceRuleInfo] = []
        non_resource: list[NonResourceRuleInfo] = []
        incomplete, errs = False, []
        for authz in self.authorizers:
            rules_for = getattr(authz, "rules_for", None)
            if rules_for is None:
                continue
            r, n, partial, err = rules_for(ctx, user, namespace)
            incomplete = incomplete or partial
            if err is not None:
                errs.append(err)
            resource.extend(r)
            non_resource.extend(n)
        return resource, non_resource, incomplete, errors.new_aggregate(errs)


def union(*authorizers: Authorizer) -> Authorizer:
    """The first Allow or Deny wins; no opinion from all of them is no opinion."""
    return _Union(authorizers)

"""Tests of genericserver.audit.policy: Go's checker_test.go (TestChecker and friends) and util."""

from __future__ import annotations

import pytest

from genericserver.audit.event import Level, Stage
from genericserver.audit.policy import (
    GroupResources,
    Policy,
    PolicyRule,
    RequestAuditConfig,
    default_policy,
    invert_stages,
    new_fake_policy_rule_evaluator,
    new_policy_rule_evaluator,
    union_stages,
)
from genericserver.authz import AttributesRecord
from genericserver.request import UserInfo

TIM = UserInfo("tim@k8s.io", groups=("humans", "developers"))
ATTRS = {
    "namespaced": AttributesRecord(user=TIM, verb="get", namespace="default", api_version="v1", resource="pods",
                                   name="busybox", resource_request=True, path="/api/v1/namespaces/default/pods/busybox"),
    "cluster": AttributesRecord(user=TIM, verb="get", api_group="rbac.authorization.k8s.io", api_version="v1beta1",
                                resource="clusterroles", name="edit", resource_request=True,
                                path="/apis/rbac.authorization.k8s.io/v1beta1/clusterroles/edit"),
    "nonResource": AttributesRecord(user=TIM, verb="get", path="/logs/kubelet.log"),
    "subresource": AttributesRecord(user=TIM, verb="get", namespace="default", api_version="v1", resource="pods",
                                    subresource="log", name="busybox", resource_request=True,
                                    path="/api/v1/namespaces/default/pods/busybox"),
    "Unauthorized": AttributesRecord(verb="get", namespace="default", api_version="v1", resource="pods", name="busybox",
                                     resource_request=True, path="/api/v1/namespaces/default/pods/busybox"),
    "ClusterRoleUpdate": AttributesRecord(user=TIM, verb="update", api_group="rbac.authorization.k8s.io", api_version="v1beta1",
                                          resource="clusterroles", subresource="status", name="somerole", resource_request=True,
                                          path="/apis/rbac.authorization.k8s.io/v1beta1/clusterroles/somerole"),
}
RULES = {
    "default": PolicyRule(Level.METADATA),
    "create": PolicyRule(Level.REQUEST, verbs=("create",)),
    "tims": PolicyRule(Level.METADATA, users=("tim@k8s.io",)),
    "humans": PolicyRule(Level.METADATA, user_groups=("humans",)),
    "serviceAccounts": PolicyRule(Level.REQUEST, user_groups=("system:serviceaccounts",)),
    "getPods": PolicyRule(Level.REQUEST_RESPONSE, verbs=("get",), resources=(GroupResources(resources=("pods",)),)),
    "getPodLogs": PolicyRule(Level.REQUEST, verbs=("get",), resources=(GroupResources(resources=("pods/log",)),)),
    "getPodWildcardMatching": PolicyRule(Level.REQUEST, verbs=("get",), resources=(GroupResources(resources=("*",)),)),
    "getPodResourceWildcardMatching": PolicyRule(Level.REQUEST, verbs=("get",), resources=(GroupResources(resources=("*/log",)),)),
    "getPodSubResourceWildcardMatching": PolicyRule(Level.REQUEST, verbs=("get",), resources=(GroupResources(resources=("pods/*",)),)),
    "getClusterRoles": PolicyRule(Level.REQUEST_RESPONSE, verbs=("get",),
                                  resources=(GroupResources(group="rbac.authorization.k8s.io", resources=("clusterroles",)),), namespaces=("",)),
    "getGroupWildCardMatchingWithSubresourceWildcardMatching": PolicyRule(
        Level.REQUEST_RESPONSE, verbs=("update",), resources=(GroupResources(group="*", resources=("*/status",)),)),
    "getLogs": PolicyRule(Level.REQUEST_RESPONSE, verbs=("get",), non_resource_urls=("/logs*",)),
    "getMetrics": PolicyRule(Level.REQUEST, verbs=("get",), non_resource_urls=("/metrics",)),
    "clusterRoleEdit": PolicyRule(Level.REQUEST, resources=(GroupResources(group="rbac.authorization.k8s.io",
                                                                           resources=("clusterroles",), resource_names=("edit",)),)),
    "omit RequestReceived": PolicyRule(Level.REQUEST, omit_stages=(Stage.REQUEST_RECEIVED,)),
    "only audit panic": PolicyRule(Level.REQUEST, omit_stages=(Stage.REQUEST_RECEIVED, Stage.RESPONSE_STARTED, Stage.RESPONSE_COMPLETE)),
}
N, M, R, RR = Level.NONE, Level.METADATA, Level.REQUEST, Level.REQUEST_RESPONSE

LEVEL_CASES = [
    ("namespaced", M, ["default"]), ("namespaced", N, ["create"]), ("namespaced", M, ["tims"]),
    ("namespaced", M, ["humans"]), ("namespaced", N, ["serviceAccounts"]), ("namespaced", RR, ["getPods"]),
    ("namespaced", N, ["getClusterRoles"]), ("namespaced", N, ["getLogs"]), ("namespaced", N, ["getMetrics"]),
    ("namespaced", M, ["getMetrics", "serviceAccounts", "default"]), ("namespaced", RR, ["getMetrics", "getPods", "default"]),
    ("namespaced", RR, ["getPodLogs", "getPods"]),
    ("cluster", M, ["default"]), ("cluster", N, ["create"]), ("cluster", M, ["tims"]), ("cluster", M, ["humans"]),
    ("cluster", N, ["serviceAccounts"]), ("cluster", N, ["getPods"]), ("cluster", RR, ["getClusterRoles"]),
    ("cluster", R, ["clusterRoleEdit", "getClusterRoles"]), ("cluster", N, ["getLogs"]), ("cluster", N, ["getMetrics"]),
    ("cluster", M, ["getMetrics", "serviceAccounts", "default"]), ("cluster", RR, ["getMetrics", "getClusterRoles", "default"]),
    ("cluster", N, ["getPodLogs", "getPods"]),
    ("nonResource", M, ["default"]), ("nonResource", N, ["create"]), ("nonResource", M, ["tims"]),
    ("nonResource", M, ["humans"]), ("nonResource", N, ["serviceAccounts"]), ("nonResource", N, ["getPods"]),
    ("nonResource", N, ["getClusterRoles"]), ("nonResource", RR, ["getLogs"]), ("nonResource", N, ["getMetrics"]),
    ("nonResource", M, ["getMetrics", "serviceAccounts", "default"]), ("nonResource", RR, ["getLogs", "getClusterRoles", "default"]),
    ("nonResource", N, ["getPodLogs", "getPods"]),
    ("subresource", R, ["getPodLogs", "getPods"]), ("subresource", R, ["getPodWildcardMatching"]),
    ("subresource", R, ["getPodResourceWildcardMatching"]), ("subresource", R, ["getPodSubResourceWildcardMatching"]),
    ("Unauthorized", N, ["tims"]), ("Unauthorized", M, ["tims", "default"]), ("Unauthorized", N, ["humans"]),
    ("Unauthorized", M, ["humans", "default"]),
    ("ClusterRoleUpdate", RR, ["getGroupWildCardMatchingWithSubresourceWildcardMatching"]),
]


def check(req, level, policy_stages, expected_stages, rule_names):
    policy = Policy(rules=tuple(RULES[r] for r in rule_names), omit_stages=tuple(policy_stages or ()))
    cfg = new_policy_rule_evaluator(policy).evaluate_policy_rule(ATTRS[req])
    assert cfg.level == level
    assert set(cfg.omit_stages) == set(expected_stages or ())


def ids(cases):
    return [f"{c[0]}:{','.join(c[2])}" for c in cases]


@pytest.mark.parametrize("req,level,rules", LEVEL_CASES, ids=ids(LEVEL_CASES))
def test_checker(req, level, rules):
    check(req, level, None, None, rules)


POLICY_STAGES = [Stage.REQUEST_RECEIVED, Stage.RESPONSE_STARTED]


@pytest.mark.parametrize("req,level,rules", LEVEL_CASES, ids=ids(LEVEL_CASES))
def test_checker_policy_omit_stages(req, level, rules):
    check(req, level, POLICY_STAGES, POLICY_STAGES, rules)


RR_, RS, RC = Stage.REQUEST_RECEIVED, Stage.RESPONSE_STARTED, Stage.RESPONSE_COMPLETE
OMIT_CASES = [
    ("namespaced", R, None, [RR_], ["omit RequestReceived", "getPods", "default"]),
    ("namespaced", R, None, [RR_, RS, RC], ["only audit panic", "getPods", "default"]),
    ("cluster", R, None, [RR_], ["omit RequestReceived", "getPods", "default"]),
    ("cluster", R, None, [RR_, RS, RC], ["only audit panic", "getPods", "default"]),
    ("nonResource", R, None, [RR_], ["omit RequestReceived", "getPods", "default"]),
    ("nonResource", R, None, [RR_, RS, RC], ["only audit panic", "getPods", "default"]),
    ("namespaced", R, POLICY_STAGES, [RR_, RS], ["omit RequestReceived", "getPods", "default"]),
    ("namespaced", R, POLICY_STAGES, [RR_, RS, RC], ["only audit panic", "getPods", "default"]),
    ("cluster", R, POLICY_STAGES, [RR_, RS], ["omit RequestReceived", "getPods", "default"]),
    ("cluster", R, POLICY_STAGES, [RR_, RS, RC], ["only audit panic", "getPods", "default"]),
    ("nonResource", M, POLICY_STAGES, [RR_, RS], ["default", "omit RequestReceived", "getPods"]),
    ("nonResource", R, POLICY_STAGES, [RR_, RS, RC], ["only audit panic", "getPods", "default"]),
]


@pytest.mark.parametrize("req,level,policy_stages,want,rules", OMIT_CASES,
                         ids=[f"{c[0]}:{','.join(c[4])}:{'policy' if c[2] else 'rule'}" for c in OMIT_CASES])
def test_checker_omit_stages(req, level, policy_stages, want, rules):
    check(req, level, policy_stages, want, rules)


UNION = [
    ([], [], []), ([RR_], [], [RR_]), ([RR_], [RR_], [RR_]), ([RR_], [RS], [RR_, RS]),
    ([RR_, RR_], [RR_, RR_], [RR_]), ([RR_, RS], [Stage.PANIC, RR_], [RR_, RS, Stage.PANIC]), (None, [RR_], [RR_]),
]


@pytest.mark.parametrize("s1,s2,want", UNION, ids=[str(i) for i in range(len(UNION))])
def test_union_stages(s1, s2, want):
    got = union_stages(s1, s2)
    assert len(got) == len(want) and set(got) == set(want)


MATCHING = PolicyRule(Level.REQUEST_RESPONSE, verbs=("get",))


@pytest.mark.parametrize(
    "policy,want",
    [
        (Policy(rules=(MATCHING,), omit_managed_fields=False), False),
        (Policy(rules=(MATCHING,), omit_managed_fields=True), True),
        (Policy(rules=(PolicyRule(Level.REQUEST_RESPONSE, verbs=("get",), omit_managed_fields=False),), omit_managed_fields=True), False),
        (Policy(rules=(PolicyRule(Level.REQUEST_RESPONSE, verbs=("get",), omit_managed_fields=True),), omit_managed_fields=False), True),
    ],
    ids=["global policy default is false, rule does not override", "global policy default is true, rule does not override",
         "global policy default is true, rule overrides to false", "global policy default is false, rule overrides to true"],
)
def test_omit_managed_fields(policy, want):
    assert new_policy_rule_evaluator(policy).evaluate_policy_rule(AttributesRecord(verb="get")).omit_managed_fields is want


def test_no_rule_matches_is_level_none_with_policy_stages():
    cfg = new_policy_rule_evaluator(Policy(omit_stages=(RR_,))).evaluate_policy_rule(ATTRS["namespaced"])
    assert cfg == RequestAuditConfig(level=Level.NONE, omit_stages=(RR_,))


def test_default_policy_is_metadata_for_everything():
    ev = new_policy_rule_evaluator(default_policy())
    assert {ev.evaluate_policy_rule(a).level for a in ATTRS.values()} == {Level.METADATA}


def test_fake_evaluator():
    cfg = new_fake_policy_rule_evaluator(Level.REQUEST, [RR_]).evaluate_policy_rule(None)
    assert cfg == RequestAuditConfig(level=Level.REQUEST, omit_stages=(RR_,))


def test_invert_stages():
    assert invert_stages([RR_, RC]) == [Stage.PANIC, RS]

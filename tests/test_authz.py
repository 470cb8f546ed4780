"""Tests of genericserver.authz: Go's builtin_test.go and the union authorizer."""

from __future__ import annotations

from genericserver.authz import (
    ALWAYS_ALLOW,
    ALWAYS_DENY,
    AttributesRecord,
    AuthorizerFunc,
    Decision,
    new_always_allow_authorizer,
    new_always_deny_authorizer,
    new_privileged_groups,
    union,
)
from genericserver.apimachinery.errors import Aggregate
from genericserver.request import UserInfo


def test_new_always_allow_authorizer():
    assert new_always_allow_authorizer().authorize(None, None) == (Decision.ALLOW, "", None)
    assert ALWAYS_ALLOW.authorize(None, AttributesRecord()) == (Decision.ALLOW, "", None)


def test_new_always_deny_authorizer():
    decision, reason, err = new_always_deny_authorizer().authorize(None, None)
    assert decision != Decision.ALLOW
    assert (decision, reason, err) == (Decision.NO_OPINION, "Everything is forbidden.", None)
    assert ALWAYS_DENY.authorize(None, AttributesRecord())[0] == Decision.NO_OPINION


def test_privileged_group_authorizer():
    auth = new_privileged_groups("allow-01", "allow-01")
    yes = AttributesRecord(user=UserInfo("", groups=("no", "allow-01")))
    no = AttributesRecord(user=UserInfo("", groups=("no", "deny-01")))
    assert auth.authorize(None, yes)[0] == Decision.ALLOW
    assert auth.authorize(None, no)[0] != Decision.ALLOW


def test_privileged_group_authorizer_without_user():
    decision, reason, err = new_privileged_groups("system:masters").authorize(None, AttributesRecord())
    assert (decision, reason, str(err)) == (Decision.NO_OPINION, "Error", "no user on request.")


def fixed(decision, reason="", err=None):
    return AuthorizerFunc(lambda ctx, a: (decision, reason, err))


def test_union_first_allow_or_deny_wins():
    assert union(fixed(Decision.NO_OPINION, "a"), fixed(Decision.ALLOW, "b"), fixed(Decision.DENY)).authorize(None, AttributesRecord()) == (Decision.ALLOW, "b", None)
    assert union(fixed(Decision.DENY, "no"), fixed(Decision.ALLOW)).authorize(None, AttributesRecord()) == (Decision.DENY, "no", None)


def test_union_no_opinion_joins_reasons_and_errors():
    e1, e2 = Exception("x"), Exception("y")
    decision, reason, err = union(fixed(Decision.NO_OPINION, "a", e1), fixed(Decision.NO_OPINION, "b", e2)).authorize(None, AttributesRecord())
    assert (decision, reason) == (Decision.NO_OPINION, "a\nb")
    assert isinstance(err, Aggregate) and err.errors() == [e1, e2]


def test_union_masters_then_deny():
    authz = union(new_privileged_groups("system:masters"), ALWAYS_DENY)
    admin = AttributesRecord(user=UserInfo("admin", groups=("system:masters",)))
    other = AttributesRecord(user=UserInfo("dev", groups=("devs",)))
    assert authz.authorize(None, admin) == (Decision.ALLOW, "", None)
    assert authz.authorize(None, other) == (Decision.NO_OPINION, "Everything is forbidden.", None)


def test_decision_strings():
    assert [str(d) for d in Decision] == ["Deny", "Allow", "NoOpinion"]
    assert AttributesRecord(verb="watch").is_read_only() and not AttributesRecord(verb="create").is_read_only()

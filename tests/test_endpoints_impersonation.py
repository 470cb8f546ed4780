"""Tests of genericserver.endpoints.filters.impersonation: Go's impersonation_test.go (TestImpersonationFilter)."""

from __future__ import annotations

import pytest
from werkzeug.test import Client

from genericserver import request
from genericserver.audit.context import audit_context_from, with_audit_context
from genericserver.audit.event import Level, UserInfo as EventUser
from genericserver.audit.policy import RequestAuditConfig
from genericserver.authz import Decision
from genericserver.endpoints.filters.impersonation import build_impersonation_requests, split_username, with_impersonation
from genericserver.request import UserInfo
from genericserver.requestinfo import RequestInfo


class ImpersonateAuthorizer:
    def authorize(self, ctx, a):
        user = a.user
        groups = user.groups
        if user.name == "system:admin":
            return Decision.ALLOW, "", None
        if user.name == "tester":
            return Decision.NO_OPINION, "", Exception("works on my machine")
        if user.name == "deny-me":
            return Decision.NO_OPINION, "denied", None
        imp = a.verb == "impersonate"
        if len(groups) > 0 and groups[0] == "wheel" and imp and a.resource == "users":
            return Decision.ALLOW, "", None
        if len(groups) > 0 and groups[0] == "sa-impersonater" and imp and a.resource == "serviceaccounts":
            return Decision.ALLOW, "", None
        if len(groups) > 0 and groups[0] == "regular-impersonater" and imp and a.resource == "users":
            return Decision.ALLOW, "", None
        if len(groups) > 1 and groups[1] == "group-impersonater" and imp and a.resource == "groups":
            return Decision.ALLOW, "", None
        if len(groups) > 1 and groups[1] == "extra-setter-scopes" and imp and a.resource == "userextras" and a.subresource == "scopes":
            return Decision.ALLOW, "", None
        if len(groups) > 1 and groups[1] in ("escaped-scopes", "almost-escaped-scopes"):
            return Decision.ALLOW, "", None
        if (len(groups) > 1 and groups[1] == "extra-setter-particular-scopes" and imp and a.resource == "userextras"
                and a.subresource == "scopes" and a.name == "scope-a" and a.api_group == "authentication.k8s.io"):
            return Decision.ALLOW, "", None
        if (len(groups) > 1 and groups[1] == "extra-setter-project" and imp and a.resource == "userextras"
                and a.subresource == "project" and a.api_group == "authentication.k8s.io"):
            return Decision.ALLOW, "", None
        if len(groups) > 0 and groups[0] == "everything-impersonater" and imp:
            if a.resource == "users" and a.api_group == "":
                return Decision.ALLOW, "", None
            if a.resource == "uids" and a.name == "some-uid" and a.api_group == "authentication.k8s.io":
                return Decision.ALLOW, "", None
            if a.resource == "groups" and a.api_group == "":
                return Decision.ALLOW, "", None
            if a.resource == "userextras" and a.subresource == "scopes" and a.api_group == "authentication.k8s.io":
                return Decision.ALLOW, "", None
        return Decision.NO_OPINION, "deny by default", None


U = UserInfo
AUTH = "system:authenticated"
CASES = [
    ("not-impersonating", U("tester"), "", [], {}, "", U("tester"), 200),
    ("impersonating-error", U("tester"), "anyone", [], {}, "", U("tester"), 403),
    ("impersonating-group-without-user", U("tester"), "", ["some-group"], {}, "", U("tester"), 400),
    ("impersonating-extra-without-user", U("tester"), "", [], {"scopes": ["scope-a"]}, "", U("tester"), 400),
    ("impersonating-uid-without-user", U("tester"), "", [], {}, "some-uid", U("tester"), 400),
    ("disallowed-group", U("dev", groups=("wheel",)), "system:admin", ["some-group"], {}, "", U("dev", groups=("wheel",)), 403),
    ("allowed-group", U("dev", groups=("wheel", "group-impersonater")), "system:admin", ["some-group"], {}, "",
     U("system:admin", groups=("some-group", AUTH)), 200),
    ("disallowed-userextra-1", U("dev", groups=("wheel",)), "system:admin", ["some-group"], {"scopes": ["scope-a"]}, "",
     U("dev", groups=("wheel",)), 403),
    ("disallowed-userextra-2", U("dev", groups=("wheel", "extra-setter-project")), "system:admin", ["some-group"], {"scopes": ["scope-a"]}, "",
     U("dev", groups=("wheel", "extra-setter-project")), 403),
    ("disallowed-userextra-3", U("dev", groups=("wheel", "extra-setter-particular-scopes")), "system:admin", ["some-group"],
     {"scopes": ["scope-a", "scope-b"]}, "", U("dev", groups=("wheel", "extra-setter-particular-scopes")), 403),
    ("allowed-userextras", U("dev", groups=("wheel", "extra-setter-scopes")), "system:admin", [], {"scopes": ["scope-a", "scope-b"]}, "",
     U("system:admin", groups=(AUTH,), extra={"scopes": ("scope-a", "scope-b")}), 200),
    ("percent-escaped-userextras", U("dev", groups=("wheel", "escaped-scopes")), "system:admin", [],
     {"example.com%2fescaped%e1%9b%84scopes": ["scope-a", "scope-b"]}, "",
     U("system:admin", groups=(AUTH,), extra={"example.com/escaped\u16c4scopes": ("scope-a", "scope-b")}), 200),
    ("almost-percent-escaped-userextras", U("dev", groups=("wheel", "almost-escaped-scopes")), "system:admin", [],
     {"almost%zzpercent%xxencoded": ["scope-a", "scope-b"]}, "",
     U("system:admin", groups=(AUTH,), extra={"almost%zzpercent%xxencoded": ("scope-a", "scope-b")}), 200),
    ("allowed-users-impersonation", U("dev", groups=("regular-impersonater",)), "tester", [], {}, "", U("tester", groups=(AUTH,)), 200),
    ("disallowed-impersonating", U("dev", groups=("sa-impersonater",)), "tester", [], {}, "", U("dev", groups=("sa-impersonater",)), 403),
    ("allowed-sa-impersonating", U("dev", groups=("sa-impersonater",)), "system:serviceaccount:foo:default", [], {}, "",
     U("system:serviceaccount:foo:default", groups=("system:serviceaccounts", "system:serviceaccounts:foo", AUTH)), 200),
    ("anonymous-username-prevents-adding-authenticated-group", U("system:admin"), "system:anonymous", [], {}, "",
     U("system:anonymous", groups=("system:unauthenticated",)), 200),
    ("unauthenticated-group-prevents-adding-authenticated-group", U("system:admin"), "unknown", ["system:unauthenticated"], {}, "",
     U("unknown", groups=("system:unauthenticated",)), 200),
    ("unauthenticated-group-prevents-double-adding-authenticated-group", U("system:admin"), "unknown", [AUTH], {}, "",
     U("unknown", groups=(AUTH,)), 200),
    ("specified-authenticated-group-prevents-double-adding-authenticated-group", U("dev", groups=("wheel", "group-impersonater")),
     "system:admin", ["some-group", AUTH], {}, "", U("system:admin", groups=("some-group", AUTH)), 200),
    ("anonymous-user-should-include-unauthenticated-group", U("system:admin"), "system:anonymous", [], {}, "",
     U("system:anonymous", groups=("system:unauthenticated",)), 200),
    ("anonymous-user-prevents-double-adding-unauthenticated-group", U("system:admin"), "system:anonymous", ["system:unauthenticated"], {}, "",
     U("system:anonymous", groups=("system:unauthenticated",)), 200),
    ("allowed-user-impersonation-with-uid", U("dev", groups=("everything-impersonater",)), "tester", [], {}, "some-uid",
     U("tester", uid="some-uid", groups=(AUTH,)), 200),
    ("disallowed-user-impersonation-with-uid", U("dev", groups=("everything-impersonater",)), "tester", [], {}, "disallowed-uid",
     U("dev", groups=("everything-impersonater",)), 403),
    ("allowed-impersonation-with-all-headers", U("dev", groups=("everything-impersonater",)), "tester", [AUTH],
     {"scopes": ["scope-a", "scope-b"]}, "some-uid", U("tester", uid="some-uid", groups=(AUTH,), extra={"scopes": ("scope-a", "scope-b")}), 200),
]


def headers_for(user, groups, extras, uid):
    hs = []
    if user:
        hs.append(("Impersonate-User", user))
    hs += [("Impersonate-Group", g) for g in groups]
    for key, values in extras.items():
        hs += [("Impersonate-Extra-" + key, v) for v in values]
    if uid:
        hs.append(("Impersonate-Uid", uid))
    return hs


@pytest.mark.parametrize("user,imp_user,groups,extras,uid,expected_user,code", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_impersonation_filter(user, imp_user, groups, extras, uid, expected_user, code):
    seen = []

    def do_nothing(environ, start_response):
        seen.append(request.user_from(environ))
        leftover = [k for k in environ if k.startswith("HTTP_IMPERSONATE_")]
        assert leftover == [], f"impersonation headers still present: {leftover}"
        start_response("200 OK", [])
        return []

    filt = with_impersonation(do_nothing, ImpersonateAuthorizer())

    def delegate(environ, start_response):
        request.with_user(environ, user)
        request.with_request_info(environ, RequestInfo(is_resource_request=True, verb="get", api_version="v1", resource="pods"))
        return filt(environ, start_response)

    resp = Client(delegate).get("/", headers=headers_for(imp_user, groups, extras, uid))
    assert resp.status_code == code
    assert (seen[0] if seen else user) == expected_user


def test_bad_request_body():
    resp = Client(with_impersonation(lambda e, s: [], ImpersonateAuthorizer())).get("/", headers=[("Impersonate-Group", "some-group"), ("Impersonate-Uid", "u")])
    assert resp.status_code == 400
    assert resp.headers["Content-Type"] == "application/json"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.get_data() == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"requested '
        b'[{Group  some-group    } {UID  u  authentication.k8s.io/v1  }] without impersonating a user",'
        b'"reason":"BadRequest","code":400}\n'
    )


def serve_as(user, headers, audited=True):
    seen = []

    def app(environ, start_response):
        seen.append(environ)
        start_response("200 OK", [])
        return []

    filt = with_impersonation(app, ImpersonateAuthorizer())
    envs = []

    def delegate(environ, start_response):
        envs.append(environ)
        if audited:
            with_audit_context(environ).init(RequestAuditConfig(level=Level.METADATA), None)
        if user is not None:
            request.with_user(environ, user)
        return filt(environ, start_response)

    return Client(delegate).get("/api/v1/pods", headers=headers), envs[0], seen


def test_forbidden_body():
    resp, _, seen = serve_as(U("dev", groups=("sa-impersonater",)), [("Impersonate-User", "tester")])
    assert seen == []
    assert resp.status_code == 403
    assert resp.get_data() == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"users \\"tester\\" is forbidden: '
        b'User \\"dev\\" cannot impersonate resource \\"users\\" in API group \\"\\" at the cluster scope: deny by default",'
        b'"reason":"Forbidden","details":{"name":"tester","kind":"users"},"code":403}\n'
    )


def test_no_user_is_500():
    resp, _, _ = serve_as(None, [("Impersonate-User", "tester")])
    assert resp.status_code == 500
    assert resp.get_data() == b'Internal Server Error: "/api/v1/pods": no user found for request\n'


def test_impersonated_user_is_audited():
    resp, env, _ = serve_as(U("system:admin"), [("Impersonate-User", "bob"), ("Impersonate-Group", "devs")])
    assert resp.status_code == 200
    assert audit_context_from(env).get_event_impersonated_user() == EventUser("bob", groups=["devs", AUTH], extra={})


def test_split_username():
    assert split_username("system:serviceaccount:foo:default") == ("foo", "default")
    for bad in ("system:serviceaccount:foo", "system:serviceaccount:Foo:default", "system:serviceaccount:foo:a:b", "bob",
                "system:serviceaccount:foo:-bad"):
        assert split_username(bad) is None


def test_build_requests_nothing_to_do():
    assert build_impersonation_requests({}) == ([], None)

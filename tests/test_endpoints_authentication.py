"""Tests of genericserver.endpoints.filters.authentication: Go's authentication_test.go, and the 401."""

from __future__ import annotations

import pytest
from werkzeug.test import Client, EnvironBuilder

from genericserver import request
from genericserver.authn import RequestFunc, Response, TokenAuthenticator, new_request_authenticator
from genericserver.endpoints.filters.authentication import (
    RequestHeaderConfig,
    _with_authentication,
    unauthorized,
    with_authentication,
)
from genericserver.request import UserInfo
from genericserver.requestinfo import RequestInfo

UNAUTHORIZED_BODY = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}\n'


def ok_app(calls):
    def app(environ, start_response):
        calls.append(environ)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    return app


def something(resp_auds=()):
    def auth(environ):
        if environ.get("HTTP_AUTHORIZATION") == "Something":
            return Response(UserInfo("user"), tuple(resp_auds)), True, None
        return None, False, Exception("Authorization header is missing.")

    return RequestFunc(auth)


def serve(app, headers=None, path="/"):
    env = EnvironBuilder(path=path, headers=headers or {}).get_environ()
    got = []
    body = app(env, lambda status, hs, exc_info=None: got.append((status, hs)))
    data = b"".join(body)
    getattr(body, "close", lambda: None)()
    return env, got, data


AUD_CASES = [
    ("no api audience and no audience in response", (), (), True),
    ("audience in response", (), ("other",), True),
    ("with api audience", ("other",), (), True),
    ("api audience matching response audience", ("other",), ("other",), True),
    ("api audience non-matching response audience", ("other",), ("some",), False),
]


@pytest.mark.parametrize("api_auds,resp_auds,success", [c[1:] for c in AUD_CASES], ids=[c[0] for c in AUD_CASES])
def test_authenticate_request_with_aud(api_auds, resp_auds, success):
    calls, failed = [], []
    failed_app = ok_app(failed)
    serve(with_authentication(ok_app(calls), something(resp_auds), failed_app, api_auds), {"Authorization": "Something"})
    assert (len(calls), len(failed)) == ((1, 0) if success else (0, 1))


METRIC_CASES = [
    ("no api audience and no audience in response", True, (), (), True, False),
    ("api audience matching response audience", True, ("other",), ("other",), True, False),
    ("no intersection results in error", True, ("other",), ("some",), True, True),
    ("no header results in error", False, ("other",), ("some",), False, True),
]


@pytest.mark.parametrize("header,api_auds,resp_auds,expect_ok,expect_err", [c[1:] for c in METRIC_CASES], ids=[c[0] for c in METRIC_CASES])
def test_authenticate_metrics(header, api_auds, resp_auds, expect_ok, expect_err):
    recorded = []

    def metrics(environ, resp, ok, err, auds, start, finish):
        recorded.append((ok, err is not None, start <= finish))

    app = _with_authentication(ok_app([]), something(resp_auds), ok_app([]), api_auds, None, metrics)
    serve(app, {"Authorization": "Something"} if header else {})
    assert recorded == [(expect_ok, expect_err, True)]


def test_authenticate_request():
    calls = []
    env, got, data = serve(with_authentication(ok_app(calls), something(), ok_app([])), {"Authorization": "Something"})
    assert len(calls) == 1
    assert request.user_from(calls[0]) == UserInfo("user")
    assert "HTTP_AUTHORIZATION" not in calls[0]  # removed once authentication succeeded


def test_authenticate_request_failed():
    calls, failed = [], []
    serve(with_authentication(ok_app(calls), RequestFunc(lambda env: (None, False, None)), ok_app(failed)))
    assert (len(calls), len(failed)) == (0, 1)


def test_authenticate_request_error():
    calls, failed = [], []
    serve(with_authentication(ok_app(calls), RequestFunc(lambda env: (None, False, Exception("failure"))), ok_app(failed)))
    assert (len(calls), len(failed)) == (0, 1)


CLEAR = {
    "user match": (["X-Remote-User"], [], [], [], {"X-Remote-User": "Bob"}, {}),
    "user first match": (["X-Remote-User", "A-Second-X-Remote-User", "Another-X-Remote-User"], [], [], [],
                         {"X-Remote-User": "First header, second value", "A-Second-X-Remote-User": "Second header",
                          "Another-X-Remote-User": "Third header"}, {}),
    "user case-insensitive": (["x-REMOTE-user"], [], [], [], {"X-Remote-User": "Bob"}, {}),
    "groups none": (["X-Remote-User"], [], ["X-Remote-Group"], [], {"X-Remote-User": "Bob"}, {}),
    "groups all matches": (["X-Remote-User"], [], ["X-Remote-Group-1", "X-Remote-Group-2"], [],
                           {"X-Remote-User": "Bob", "X-Remote-Group-1": "one-a", "X-Remote-Group-2": "two-a"}, {}),
    "groups case-insensitive": (["X-REMOTE-User"], [], ["X-REMOTE-Group"], [], {"X-Remote-User": "Bob", "X-Remote-Group": "Users"}, {}),
    "uid none": (["X-Remote-User"], ["X-Remote-Uid"], [], [], {"X-Remote-User": "Alice"}, {}),
    "uid all matches": (["X-Remote-User"], ["X-Remote-Uid-1", "X-Remote-Uid-2"], [], [],
                        {"X-Remote-User": "Alice", "X-Remote-Uid-1": "one", "X-Remote-Uid-2": "two"}, {}),
    "uid case-insensitive": (["X-Remote-USER"], ["X-REMOTE-UID-1"], [], [], {"X-Remote-User": "Alice", "X-Remote-Uid-1": "one"}, {}),
    "extra prefix matches case-insensitive": (
        ["X-Remote-User"], ["X-Remote-Uid-1"], ["X-Remote-Group-1", "X-Remote-Group-2"], ["X-Remote-Extra-1-", "X-Remote-Extra-2-"],
        {"X-Remote-User": "Bob", "X-Remote-Uid-1": "bobs-uid", "X-Remote-Group-1": "one-a", "X-Remote-Group-2": "two-a",
         "X-Remote-extra-1-key1": "alfa", "X-Remote-Extra-1-Key2": "charlie", "X-Remote-Extra-1-": "india",
         "X-Remote-extra-2-": "kilo", "X-Remote-extra-2-Key1": "echo", "X-Remote-Extra-2-key2": "golf"}, {}),
    "extra prefix matches case-insensitive with unrelated headers": (
        ["X-Remote-User"], ["X-Remote-Uid"], ["X-Remote-Group-1", "X-Remote-Group-2"], ["X-Remote-Extra-1-", "X-Remote-Extra-2-"],
        {"X-Group-Remote": "snorlax", "X-Group-Bear": "panda", "X-Uid-Remote": "bobs-unrelated-uid", "X-Remote-User": "Bob",
         "X-Remote-Uid": "bobs-uid", "X-Remote-Group-1": "one-a", "X-Remote-Group-2": "two-a", "X-Remote-extra-1-key1": "alfa",
         "X-Remote-Extra-1-Key2": "charlie", "X-Remote-Extra-1-": "india", "X-Remote-extra-2-": "kilo",
         "X-Remote-extra-2-Key1": "echo", "X-Remote-Extra-2-key2": "golf"},
        {"X-Group-Remote": "snorlax", "X-Group-Bear": "panda", "X-Uid-Remote": "bobs-unrelated-uid"}),
    "custom config but request contains standard headers": (
        ["foo"], ["footoo"], ["bar"], ["baz"],
        {"X-Remote-User": "Bob", "X-Remote-Uid": "bobs-uid", "X-Remote-Group-1": "one-a", "X-Remote-Group-2": "two-a",
         "X-Remote-extra-1-key1": "alfa", "X-Remote-Extra-1-Key2": "charlie", "X-Remote-Extra-1-": "india",
         "X-Remote-extra-2-": "kilo", "X-Remote-extra-2-Key1": "echo", "X-Remote-Extra-2-key2": "golf"},
        {"X-Remote-Group-1": "one-a", "X-Remote-Group-2": "two-a"}),
    "custom config but request contains standard and custom headers": (
        ["one"], ["onetoo"], ["two"], ["three-"],
        {"X-Remote-User": "Bob", "X-Remote-Uid": "bobs-uid", "X-Remote-Group-3": "one-a", "X-Remote-Group-4": "two-a",
         "X-Remote-extra-1-key1": "alfa", "X-Remote-Extra-1-Key2": "charlie", "X-Remote-Extra-1-": "india",
         "X-Remote-extra-2-": "kilo", "X-Remote-extra-2-Key1": "echo", "X-Remote-Extra-2-key2": "golf",
         "One": "echo", "Two": "golf", "Three-Four": "india"},
        {"X-Remote-Group-3": "one-a", "X-Remote-Group-4": "two-a"}),
    "escaped extra keys": (
        ["X-Remote-User"], ["X-Remote-Uid"], ["X-Remote-Group"], ["X-Remote-Extra-"],
        {"X-Remote-User": "Bob", "X-Remote-Uid": "bobs-uid", "X-Remote-Group": "one-a", "X-Remote-Extra-Alpha": "alphabetical",
         "X-Remote-Extra-Alph4num3r1c": "alphanumeric", "X-Remote-Extra-Percent%20encoded": "percent encoded",
         "X-Remote-Extra-Almost%zzpercent%xxencoded": "not quite percent encoded",
         "X-Remote-Extra-Example.com%2fpercent%2520encoded": "url with double percent encoding",
         "X-Remote-Extra-Example.com%2F%E4%BB%8A%E6%97%A5%E3%81%AF": "url with unicode",
         "X-Remote-Extra-Abc123!#$+.-_*\\^`~|'": "header key legal characters"}, {}),
}


@pytest.mark.parametrize("case", list(CLEAR.values()), ids=list(CLEAR))
def test_authenticate_request_clear_headers(case):
    names, uids, groups, extras, headers, final = case
    calls, authn_calls = [], []

    def auth(environ):
        authn_calls.append(1)
        return Response(UserInfo("panda")), True, None

    cfg = RequestHeaderConfig(tuple(names), tuple(uids), tuple(groups), tuple(extras))
    env, _, _ = serve(with_authentication(ok_app(calls), RequestFunc(auth), ok_app([]), (), cfg), headers)
    assert (len(calls), len(authn_calls)) == (1, 1)
    remaining = {k for k in env if k.startswith("HTTP_") and k != "HTTP_HOST"}
    assert remaining == {"HTTP_" + h.upper().replace("-", "_") for h in final}


def test_no_authenticator_means_no_filter():
    app = ok_app([])
    assert with_authentication(app, None, ok_app([])) is app


def with_info(app, info=None):
    def wrapped(environ, start_response):
        request.with_request_info(environ, info or RequestInfo(path=environ["PATH_INFO"], verb="get"))
        return app(environ, start_response)

    return wrapped


def test_unauthorized_handler():
    resp = Client(with_info(unauthorized())).get("/api/v1/pods")
    assert resp.status_code == 401
    assert resp.headers["Content-Type"] == "application/json"
    assert "X-Content-Type-Options" not in resp.headers  # ErrorNegotiated does not add it
    assert resp.get_data() == UNAUTHORIZED_BODY


def test_unauthorized_handler_answers_a_protobuf_client_in_protobuf():
    # Unauthorized(s) calls ErrorNegotiated with the server's serializers (apiserver
    # pkg/endpoints/filters/authentication.go:Unauthorized, responsewriters/writers.go:ErrorNegotiated):
    # kubectl, which prefers protobuf, gets a protobuf Status: these are kube-apiserver v1.36.0's bytes
    # for a GET with a wrong token and kubectl's Accept
    pb = "application/vnd.kubernetes.protobuf"
    resp = Client(with_info(unauthorized())).get("/api/v1/pods", headers={"Accept": pb + ",application/json"})
    assert (resp.status_code, resp.headers["Content-Type"]) == (401, pb)
    assert resp.get_data().hex() == ("6b3873000a0c0a027631120653746174757312300a060a0012001a0012074661696c7572651a0c556e61"
                                     "7574686f72697a6564220c556e617574686f72697a65643091031a002200")
    assert "X-Content-Type-Options" not in resp.headers


def test_unauthorized_handler_without_request_info():
    resp = Client(unauthorized()).get("/api/v1/pods")
    assert resp.status_code == 500
    assert resp.get_data() == b'Internal Server Error: "/api/v1/pods": no RequestInfo found in the context\n'


@pytest.fixture
def token_chain():
    tokens = TokenAuthenticator({"admin-token": UserInfo("admin", "1", ("system:masters",)), "dev-token": UserInfo("dev", "2")})

    def build(anonymous):
        auth, err = new_request_authenticator(tokens, anonymous=anonymous)
        assert err is None
        seen = []

        def app(environ, start_response):
            u = request.user_from(environ)
            seen.append((u, environ.get("HTTP_AUTHORIZATION")))
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [u.name.encode()]

        return Client(with_info(with_authentication(app, auth, unauthorized()))), seen

    return build


TOKEN_CASES = [
    ("admin token", False, "Bearer admin-token", 200, UserInfo("admin", "1", ("system:masters", "system:authenticated"))),
    ("dev token", False, "Bearer dev-token", 200, UserInfo("dev", "2", ("system:authenticated",))),
    ("bad token", False, "Bearer nope", 401, None),
    ("bad token with anonymous on", True, "Bearer nope", 401, None),
    ("no credentials", False, None, 401, None),
    ("no credentials with anonymous on", True, None, 200, UserInfo("system:anonymous", groups=("system:unauthenticated",))),
]


@pytest.mark.parametrize("anonymous,header,status,user", [c[1:] for c in TOKEN_CASES], ids=[c[0] for c in TOKEN_CASES])
def test_token_file_users(token_chain, anonymous, header, status, user):
    client, seen = token_chain(anonymous)
    resp = client.get("/api/v1/pods", headers={"Authorization": header} if header else {})
    assert resp.status_code == status
    if status == 401:
        assert resp.get_data() == UNAUTHORIZED_BODY and seen == []
    else:
        assert seen == [(user, None)]
        assert resp.get_data() == user.name.encode()


# -- TestUnauthenticatedHTTP2ClientConnectionClose ----------------------------------------------
@pytest.mark.parametrize("authorization, want_conns", [
    ("known", 1), ("error", 4), ("anonymous", 4), ("anonymous_group", 4), ("other", 4),
])
def test_unauthenticated_http2_client_connection_close(tls_cert, authorization, want_conns):
    # the UnauthenticatedHTTP2DOSMitigation gate is on (its default since 1.29): four requests by
    # a client nobody authenticated take four connections, each ended by a GOAWAY
    import h2.events

    from genericserver.authn import ALL_UNAUTHENTICATED, AnonymousAuthenticator
    from genericserver.requestinfo import RequestInfo
    from h2client import h2_pool

    def auth(environ):
        header = environ.get("HTTP_AUTHORIZATION")
        if header == "known":
            return Response(UserInfo("panda")), True, None
        if header == "error":
            return None, False, Exception("authn err")
        if header == "anonymous":
            return AnonymousAuthenticator().authenticate_request(environ)
        if header == "anonymous_group":
            return Response(UserInfo("", groups=(ALL_UNAUTHENTICATED,))), True, None
        return None, False, None

    def failed(environ, start_response):
        request.with_request_info(environ, RequestInfo())
        return unauthorized()(environ, start_response)

    app = with_authentication(lambda environ, start_response: (start_response("200 OK", []), [b"ok"])[1], RequestFunc(auth), failed)
    with h2_pool(app, tls_cert) as pool:
        for _ in range(4):
            c, sid = pool.request("/", headers=(("authorization", authorization),))
            c.response(sid)
            if want_conns > 1:
                c.goaway()  # Go's transport reads it before its next request goes out
        assert len(pool.conns) == want_conns
        assert all(not c.of(h2.events.ConnectionTerminated) for c in pool.conns) is (want_conns == 1)

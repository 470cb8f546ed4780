"""Tests of genericserver.authn: Go's tokenfile, bearertoken, anonymous, group adder and union tests."""

from __future__ import annotations

import pytest
from werkzeug.test import EnvironBuilder

from genericserver.authn import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS,
    AnonymousAuthenticator,
    AuthenticatedGroupAdder,
    BearerTokenAuthenticator,
    RequestFunc,
    Response,
    TokenAuthenticator,
    UnionAuthenticator,
    new_csv,
    new_request_authenticator,
    union,
    union_fail_on_error,
    with_audiences,
)
from genericserver.apimachinery.errors import Aggregate
from genericserver.request import UserInfo


def environ(path="/", headers=None):
    return EnvironBuilder(path=path, headers=headers or {}).get_environ()


def write(tmp_path, contents):
    p = tmp_path / "tokens.csv"
    p.write_text(contents)
    return str(p)


# -- tokenfile_test.go ---------------------------------------------------------------------

TOKEN_FILE = """
token1,user1,uid1
token2,user2,uid2
token3,user3,uid3,"group1,group2"
token4,user4,uid4,"group2"
token5,user5,uid5,group5
token6,user6,uid6,group5,otherdata
token7,user7,uid7,"group1,group2",otherdata
"""

TOKEN_CASES = [
    ("token1", UserInfo("user1", "uid1")),
    ("token2", UserInfo("user2", "uid2")),
    ("token3", UserInfo("user3", "uid3", ("group1", "group2"))),
    ("token4", UserInfo("user4", "uid4", ("group2",))),
    ("token5", UserInfo("user5", "uid5", ("group5",))),
    ("token6", UserInfo("user6", "uid6", ("group5",))),
    ("token7", UserInfo("user7", "uid7", ("group1", "group2"))),
    ("token8", None),
]


@pytest.mark.parametrize("token,user", TOKEN_CASES, ids=[c[0] for c in TOKEN_CASES])
def test_token_file(tmp_path, token, user):
    auth, err = new_csv(write(tmp_path, TOKEN_FILE))
    assert err is None
    resp, ok, err = auth.authenticate_token(None, token)
    assert err is None
    if user is None:
        assert (resp, ok) == (None, False)
    else:
        assert ok and resp.user == user


def test_bad_token_file(tmp_path):
    path = write(tmp_path, "\ntoken1,user1,uid1\ntoken2,user2,uid2\ntoken3,user3\ntoken4\n")
    auth, err = new_csv(path)
    assert auth is None
    assert str(err) == f"token file '{path}' must have at least 3 columns (token, user name, user uid), found 2"


def test_insufficient_columns_token_file(tmp_path):
    path = write(tmp_path, "token4\n")
    auth, err = new_csv(path)
    assert auth is None
    assert str(err) == f"token file '{path}' must have at least 3 columns (token, user name, user uid), found 1"


def test_empty_token_token_file(tmp_path):
    auth, err = new_csv(write(tmp_path, ",user5,uid5\n"))
    assert err is None
    assert auth.tokens == {}


def test_missing_token_file(tmp_path):
    path = str(tmp_path / "nope.csv")
    auth, err = new_csv(path)
    assert auth is None
    assert str(err) == f"open {path}: no such file or directory"


# -- bearertoken_test.go -------------------------------------------------------------------

def token_auth(tokens):
    return TokenAuthenticator({t: UserInfo(name=n) for t, n in tokens.items()})


def test_authenticate_request():
    auth = BearerTokenAuthenticator(token_auth({"token": "user"}))
    env = environ(headers={"Authorization": "Bearer token"})
    resp, ok, err = auth.authenticate_request(env)
    assert ok and err is None and resp.user.name == "user"
    assert "HTTP_AUTHORIZATION" not in env  # removed once it served its purpose


def test_authenticate_request_token_invalid():
    auth = BearerTokenAuthenticator(token_auth({}))
    env = environ(headers={"Authorization": "Bearer token"})
    resp, ok, err = auth.authenticate_request(env)
    assert (resp, ok, str(err)) == (None, False, "invalid bearer token")
    assert env["HTTP_AUTHORIZATION"] == "Bearer token"


def test_authenticate_request_token_error():
    class Failing:
        def authenticate_token(self, ctx, token):
            return None, False, Exception("error")

    env = environ(headers={"Authorization": "Bearer token"})
    resp, ok, err = BearerTokenAuthenticator(Failing()).authenticate_request(env)
    assert (resp, ok, str(err)) == (None, False, "error")
    assert "HTTP_AUTHORIZATION" in env


@pytest.mark.parametrize(
    "header",
    ["", "Bearer", "Bearer ", "Bearer  token", "Basic abc", "bearer", "Token token"],
    ids=["empty", "bare bearer", "trailing space", "space before the token", "basic", "lowercase bare", "other scheme"],
)
def test_request_headers_with_nothing_to_say(header):
    called = []

    class Recording:
        def authenticate_token(self, ctx, token):
            called.append(token)
            return None, False, None

    resp, ok, err = BearerTokenAuthenticator(Recording()).authenticate_request(environ(headers={"Authorization": header} if header else {}))
    assert (resp, ok, err) == (None, False, None)
    assert called == []


def test_bearer_scheme_is_case_insensitive():
    resp, ok, err = BearerTokenAuthenticator(token_auth({"t": "u"})).authenticate_request(environ(headers={"Authorization": "  bEaReR t  "}))
    assert ok and resp.user.name == "u"


# -- anonymous_test.go ---------------------------------------------------------------------

def test_anonymous():
    env = environ()
    with_audiences(env, ["aud"])
    resp, ok, err = AnonymousAuthenticator().authenticate_request(env)
    assert ok and err is None
    assert resp.user == UserInfo(name=ANONYMOUS, groups=(ALL_UNAUTHENTICATED,))
    assert resp.audiences == ("aud",)


@pytest.mark.parametrize("path,ok", [("/livez", True), ("/readyz", True), ("/healthz", False), ("/livez/x", False)],
                         ids=["allowed livez", "allowed readyz", "not listed", "no prefix match"])
def test_anonymous_with_conditions(path, ok):
    resp, got, err = AnonymousAuthenticator(["/livez", "/readyz"]).authenticate_request(environ(path))
    assert got is ok and err is None
    assert (resp is not None) is ok


# -- group/authenticated_group_adder -------------------------------------------------------

def fixed(user):
    return RequestFunc(lambda env: (Response(user), True, None))


@pytest.mark.parametrize(
    "user,groups",
    [
        (UserInfo("user", groups=("a",)), ("a", ALL_AUTHENTICATED)),
        (UserInfo("user"), (ALL_AUTHENTICATED,)),
        (UserInfo("user", groups=(ALL_AUTHENTICATED,)), (ALL_AUTHENTICATED,)),
        (UserInfo("user", groups=(ALL_UNAUTHENTICATED,)), (ALL_UNAUTHENTICATED,)),
        (UserInfo(ANONYMOUS, groups=(ALL_UNAUTHENTICATED,)), (ALL_UNAUTHENTICATED,)),
        (UserInfo(ANONYMOUS), ()),
    ],
    ids=["adds", "adds to none", "already authenticated", "unauthenticated kept", "anonymous", "anonymous without groups"],
)
def test_authenticated_group_adder(user, groups):
    resp, ok, err = AuthenticatedGroupAdder(fixed(user)).authenticate_request(environ())
    assert ok and err is None
    assert resp.user.groups == groups
    assert resp.user.name == user.name


def test_authenticated_group_adder_passes_failures_on():
    failing = RequestFunc(lambda env: (None, False, Exception("boom")))
    resp, ok, err = AuthenticatedGroupAdder(failing).authenticate_request(environ())
    assert (resp, ok, str(err)) == (None, False, "boom")


# -- union/unionauth_test.go ----------------------------------------------------------------

def nothing():
    return RequestFunc(lambda env: (None, False, None))


def failing(msg):
    return RequestFunc(lambda env: (None, False, Exception(msg)))


def test_union_first_success_wins():
    resp, ok, err = union(nothing(), fixed(UserInfo("a")), fixed(UserInfo("b"))).authenticate_request(environ())
    assert ok and resp.user.name == "a"


def test_union_errors_aggregated():
    resp, ok, err = union(failing("x"), failing("y")).authenticate_request(environ())
    assert (resp, ok) == (None, False)
    assert isinstance(err, Aggregate) and str(err) == "[x, y]"


def test_union_error_then_success():
    resp, ok, err = union(failing("x"), fixed(UserInfo("a"))).authenticate_request(environ())
    assert ok and err is None and resp.user.name == "a"


def test_union_fail_on_error_stops():
    resp, ok, err = union_fail_on_error(failing("x"), fixed(UserInfo("a"))).authenticate_request(environ())
    assert (resp, ok, str(err)) == (None, False, "x")


def test_union_nothing_is_no_error():
    resp, ok, err = UnionAuthenticator([nothing(), nothing()]).authenticate_request(environ())
    assert (resp, ok, err) == (None, False, None)


def test_union_of_one_is_itself():
    a = nothing()
    assert union(a) is a and union_fail_on_error(a) is a


# -- the apiserver's chain ------------------------------------------------------------------

TOKENS = "admin-token,admin,uid-admin,\"system:masters\"\nuser-token,user,uid-user\n"


@pytest.fixture
def tokens(tmp_path):
    auth, err = new_csv(write(tmp_path, TOKENS))
    assert err is None
    return auth


CHAIN = [
    ("token user gets system:authenticated", True, {"Authorization": "Bearer user-token"}, (True, "user", ("system:authenticated",), None)),
    ("token groups kept", True, {"Authorization": "Bearer admin-token"}, (True, "admin", ("system:masters", "system:authenticated"), None)),
    ("no credentials, anonymous allowed", True, {}, (True, ANONYMOUS, (ALL_UNAUTHENTICATED,), None)),
    ("no credentials, anonymous off", False, {}, (False, None, None, None)),
    ("bad token is an error, not anonymous", True, {"Authorization": "Bearer nope"}, (False, None, None, "invalid bearer token")),
    ("bad token, anonymous off", False, {"Authorization": "Bearer nope"}, (False, None, None, "invalid bearer token")),
    ("other scheme counts as no credentials", True, {"Authorization": "Basic dTpw"}, (True, ANONYMOUS, (ALL_UNAUTHENTICATED,), None)),
]


@pytest.mark.parametrize("anonymous,headers,want", [c[1:] for c in CHAIN], ids=[c[0] for c in CHAIN])
def test_request_authenticator_chain(tokens, anonymous, headers, want):
    auth, err = new_request_authenticator(tokens, anonymous=anonymous)
    assert err is None
    resp, ok, err = auth.authenticate_request(environ(headers=headers))
    ok_want, name, groups, err_text = want
    assert ok is ok_want
    assert (str(err) if err is not None else None) == err_text
    if ok:
        assert (resp.user.name, resp.user.groups) == (name, groups)


def test_request_authenticator_needs_a_method():
    auth, err = new_request_authenticator()
    assert auth is None and str(err) == "no authentication method configured"
    auth, err = new_request_authenticator(anonymous=True)
    assert isinstance(auth, AnonymousAuthenticator) and err is None

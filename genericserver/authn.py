"""Ports of k8s.io/apiserver/pkg/authentication/{token/tokenfile/tokenfile.go, request/anonymous/anonymous.go, request/bearertoken/bearertoken.go, group/authenticated_group_adder.go, request/union/union.go, authenticatorfactory/delegating.go, authenticator/interfaces.go, authenticator/audiences.go, user/user.go} (v1.36.0).

How a request becomes a user, the way kube-apiserver's ``--token-auth-file`` and
``--anonymous-auth`` set it up:

* :func:`new_csv` reads a token file: one ``token,user,uid[,"group1,group2"]`` record a line;
  :class:`TokenAuthenticator` looks a bearer token up in it.
* :class:`BearerTokenAuthenticator` takes ``Authorization: Bearer <token>`` (removing the header
  on success); an unknown token is an error, ``invalid bearer token``.
* :class:`AuthenticatedGroupAdder` adds ``system:authenticated`` to every authenticated user
  who is not anonymous and has neither that group nor ``system:unauthenticated``.
* :class:`AnonymousAuthenticator` makes anyone ``system:anonymous`` in ``system:unauthenticated``.
* :func:`new_request_authenticator` chains them as ``DelegatingAuthenticatorConfig.New`` does:
  anonymous only when every other authenticator had *nothing to say*; a bad token is an error,
  never an anonymous request (``union.NewFailOnError``).

Go returns ``(response, ok, error)`` from authenticators; so do these. The Go context argument
is the WSGI environ here (request-scoped values live there). Go's CSV reader rejects a stray
quote inside an unquoted field; Python's ``csv`` accepts it.

Nine Go files in one module: each holds one small authenticator (or the user and audience types
they pass around), and kube-apiserver only ever uses them chained, as
:func:`new_request_authenticator` chains them; apart, each module would be a dozen lines.
"""

from __future__ import annotations

import csv
import logging
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, Sequence

from genericserver import patherror
from genericserver.apimachinery import errors
from genericserver.request import UserInfo

log = logging.getLogger("genericserver.authn")

# well-known user and group names (pkg/authentication/user/user.go)
SYSTEM_PRIVILEGED_GROUP = "system:masters"
ALL_UNAUTHENTICATED = "system:unauthenticated"
ALL_AUTHENTICATED = "system:authenticated"
ANONYMOUS = "system:anonymous"
APISERVER_USER = "system:apiserver"

AUDIENCES_KEY = "genericserver.audiences"


@dataclass(frozen=True)
class Response:
    """``authenticator.Response``: the user, and the audiences the credential was meant for."""

    user: UserInfo
    audiences: tuple[str, ...] = ()


AuthResult = tuple[Optional[Response], bool, Optional[BaseException]]


class RequestAuthenticator(Protocol):
    def authenticate_request(self, environ: dict) -> AuthResult: ...


class TokenAuthenticatorProtocol(Protocol):
    def authenticate_token(self, ctx: Any, token: str) -> AuthResult: ...


class RequestFunc:
    """A plain function as a request authenticator (Go's ``authenticator.RequestFunc``)."""

    def __init__(self, fn: Callable[[dict], AuthResult]):
        self._fn = fn

    def authenticate_request(self, environ: dict) -> AuthResult:
        return self._fn(environ)


# -- audiences (pkg/authentication/authenticator/audiences.go) ---------------------------

def with_audiences(environ: dict, auds: Sequence[str]) -> None:
    environ[AUDIENCES_KEY] = tuple(auds)


def audiences_from(environ: dict) -> tuple[tuple[str, ...], bool]:
    auds = environ.get(AUDIENCES_KEY)
    return (auds, True) if auds is not None else ((), False)


def audiences_intersect(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """The members of ``b`` that are in ``a``, in ``b``'s order."""
    return [x for x in b if x in a]


# -- token file ---------------------------------------------------------------------------

class TokenAuthenticator:
    """Static tokens: ``authenticate_token`` finds the user a token belongs to, or no one."""

    def __init__(self, tokens: dict[str, UserInfo]):
        self.tokens = tokens

    def authenticate_token(self, ctx: Any, value: str) -> AuthResult:
        user = self.tokens.get(value)
        if user is None:
            return None, False, None
        return Response(user), True, None


def new(tokens: dict[str, UserInfo]) -> TokenAuthenticator:
    return TokenAuthenticator(tokens)


def new_csv(path: str) -> tuple[Optional[TokenAuthenticator], Optional[Exception]]:
    """Read a token file; ``(authenticator, None)`` or ``(None, error)`` as Go returns them."""
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as err:
        return None, Exception(patherror.text("open", path, err))
    tokens: dict[str, UserInfo] = {}
    record_num = 0
    with f:
        try:
            rows = list(csv.reader(f))
        except csv.Error as err:
            return None, Exception(str(err))
    for record in rows:
        if not record:
            continue  # Go's reader skips empty lines
        if len(record) < 3:
            return None, Exception(
                f"token file '{path}' must have at least 3 columns (token, user name, user uid), found {len(record)}"
            )
        record_num += 1
        if record[0] == "":
            log.warning("empty token has been found in token file '%s', record number '%d'", path, record_num)
            continue
        if record[0] in tokens:
            log.warning("duplicate token has been found in token file '%s', record number '%d'", path, record_num)
        groups: tuple[str, ...] = tuple(record[3].split(",")) if len(record) >= 4 else ()
        tokens[record[0]] = UserInfo(name=record[1], uid=record[2], groups=groups)
    return TokenAuthenticator(tokens), None


# -- bearer token -------------------------------------------------------------------------

INVALID_TOKEN = "invalid bearer token"


class BearerTokenAuthenticator:
    def __init__(self, auth: TokenAuthenticatorProtocol):
        self.auth = auth

    def authenticate_request(self, environ: dict) -> AuthResult:
        auth = environ.get("HTTP_AUTHORIZATION", "").strip()
        if not auth:
            return None, False, None
        parts = auth.split(" ", 2)
        if len(parts) < 2 or parts[0].lower() != "bearer":
            return None, False, None
        token = parts[1]
        if not token:
            # "Bearer  x" (two spaces): Go adds a warning header; no warnings here
            return None, False, None
        resp, ok, err = self.auth.authenticate_token(environ, token)
        if ok:
            # nobody further in the server should ever be tempted to reuse the token
            environ.pop("HTTP_AUTHORIZATION", None)
        if not ok and err is None:
            err = Exception(INVALID_TOKEN)
        return resp, ok, err


# -- group adder, anonymous, union --------------------------------------------------------

class AuthenticatedGroupAdder:
    def __init__(self, auth: RequestAuthenticator):
        self.authenticator = auth

    def authenticate_request(self, environ: dict) -> AuthResult:
        r, ok, err = self.authenticator.authenticate_request(environ)
        if err is not None or not ok:
            return None, ok, err
        assert r is not None
        if r.user.name == ANONYMOUS:
            return r, True, None
        if any(g in (ALL_AUTHENTICATED, ALL_UNAUTHENTICATED) for g in r.user.groups):
            return r, True, None
        user = UserInfo(name=r.user.name, uid=r.user.uid, groups=tuple(r.user.groups) + (ALL_AUTHENTICATED,), extra=r.user.extra)
        return Response(user, r.audiences), True, None


class AnonymousAuthenticator:
    """Everyone is ``system:anonymous``; with ``allowed_paths``, only on those exact paths."""

    def __init__(self, allowed_paths: Sequence[str] = ()):
        self.allowed_paths = frozenset(allowed_paths)

    def authenticate_request(self, environ: dict) -> AuthResult:
        path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        if self.allowed_paths and path not in self.allowed_paths:
            return None, False, None
        auds, _ = audiences_from(environ)
        return Response(UserInfo(name=ANONYMOUS, groups=(ALL_UNAUTHENTICATED,)), tuple(auds)), True, None


class UnionAuthenticator:
    """Try each authenticator; the first success wins. With ``fail_on_error`` an error stops the chain."""

    def __init__(self, handlers: Sequence[RequestAuthenticator], fail_on_error: bool = False):
        self.handlers = list(handlers)
        self.fail_on_error = fail_on_error

    def authenticate_request(self, environ: dict) -> AuthResult:
        errs: list[BaseException] = []
        for h in self.handlers:
            resp, ok, err = h.authenticate_request(environ)
            if err is not None:
                if self.fail_on_error:
                    return resp, ok, err
                errs.append(err)
                continue
            if ok:
                return resp, ok, err
        return None, False, errors.new_aggregate(errs)


def union(*handlers: RequestAuthenticator) -> RequestAuthenticator:
    return handlers[0] if len(handlers) == 1 else UnionAuthenticator(handlers)


def union_fail_on_error(*handlers: RequestAuthenticator) -> RequestAuthenticator:
    return handlers[0] if len(handlers) == 1 else UnionAuthenticator(handlers, fail_on_error=True)


def new_request_authenticator(
    token_auth: Optional[TokenAuthenticatorProtocol] = None,
    anonymous: bool = False,
    anonymous_paths: Sequence[str] = (),
) -> tuple[Optional[RequestAuthenticator], Optional[Exception]]:
    """The apiserver's authenticator chain: bearer tokens, the group adder, then anonymous."""
    authenticators: list[RequestAuthenticator] = []
    if token_auth is not None:
        authenticators.append(BearerTokenAuthenticator(token_auth))
    if not authenticators:
        if anonymous:
            return AnonymousAuthenticator(anonymous_paths), None
        return None, Exception("no authentication method configured")
    auth: RequestAuthenticator = AuthenticatedGroupAdder(union(*authenticators))
    if anonymous:
        # an error (a bad token) must stay an error, never turn into an anonymous request
        auth = union_fail_on_error(auth, AnonymousAuthenticator(anonymous_paths))
    return auth, None

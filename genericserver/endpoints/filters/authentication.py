"""Port of k8s.io/apiserver/pkg/endpoints/filters/authentication.go (v1.36.0), with pkg/authentication/request/headerrequest/requestheader.go's ``ClearAuthenticationHeaders`` and pkg/authentication/authenticatorfactory/requestheader.go's ``RequestHeaderConfig``: who is asking.

:func:`with_authentication` asks the authenticator (see :mod:`genericserver.authn`) about each
request. On success the user goes into the environ (``request.with_user``), the
``Authorization`` header and the front-proxy identity headers (``X-Remote-User``,
``X-Remote-Uid``, ``X-Remote-Group``, ``X-Remote-Extra-*`` and any configured ones) are
removed, and the request goes on. Otherwise ``failed`` answers; :func:`unauthorized` makes Go's
failed handler, a 401 with Go's Status, as JSON (or protobuf or YAML, as the Accept header negotiates)::

    {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}

Over HTTP/2, an anonymous user's answer and every 401 carry ``Connection: close``, which the
HTTP/2 server turns into a GOAWAY: Go's mitigation of CVE-2023-44487 and CVE-2023-39325 (the
``UnauthenticatedHTTP2DOSMitigation`` gate, on by default since 1.29) keeps clients nobody
authenticated from holding a multiplexed connection open. The latency trackers are left out.

The two requestheader.go parts are the front proxy's identity headers the filter removes once a user
is known: the headers' names and their removal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence

from genericserver import klog
from genericserver import request, responsewriters
from genericserver import runtime as rt
from genericserver.apimachinery.api import errors as apierrors
from genericserver.authn import ALL_UNAUTHENTICATED, ANONYMOUS, RequestAuthenticator, Response, audiences_intersect, with_audiences
from genericserver.responsewriters import error_negotiated
from genericserver.wsgi import header_set


RecordAuthenticationMetrics = Callable[[dict, Optional[Response], bool, Optional[BaseException], Sequence[str], float, float], None]


@dataclass(frozen=True)
class RequestHeaderConfig:
    """Which headers a front proxy uses to pass on the identity it authenticated."""

    username_headers: tuple[str, ...] = ()
    uid_headers: tuple[str, ...] = ()
    group_headers: tuple[str, ...] = ()
    extra_header_prefixes: tuple[str, ...] = ()


STANDARD_REQUEST_HEADER_CONFIG = RequestHeaderConfig(
    username_headers=("X-Remote-User",),
    uid_headers=("X-Remote-Uid",),
    group_headers=("X-Remote-Group",),
    extra_header_prefixes=("X-Remote-Extra-",),
)


def _environ_key(header: str) -> str:
    return "HTTP_" + header.upper().replace("-", "_")


def clear_authentication_headers(environ: dict, config: RequestHeaderConfig) -> None:
    """Delete the configured identity headers, and every header starting with an extra prefix."""
    for name in (*config.username_headers, *config.uid_headers, *config.group_headers):
        environ.pop(_environ_key(name), None)
    for prefix in config.extra_header_prefixes:
        key_prefix = _environ_key(prefix)
        for key in [k for k in environ if k.startswith(key_prefix)]:
            del environ[key]


def with_authentication(
    app: Callable,
    auth: Optional[RequestAuthenticator],
    failed: Callable,
    api_auds: Sequence[str] = (),
    request_header_config: Optional[RequestHeaderConfig] = None,
) -> Callable:
    return _with_authentication(app, auth, failed, api_auds, request_header_config, lambda *args: None)


def _with_authentication(
    app: Callable,
    auth: Optional[RequestAuthenticator],
    failed: Callable,
    api_auds: Sequence[str],
    request_header_config: Optional[RequestHeaderConfig],
    metrics: RecordAuthenticationMetrics,
) -> Callable:
    if auth is None:
        klog.warning("Authentication is disabled")
        return app

    def authentication(environ: dict, start_response: Callable) -> Iterable[bytes]:
        start = rt.now()
        if api_auds:
            with_audiences(environ, api_auds)
        resp, ok, err = auth.authenticate_request(environ)
        finish = rt.now()
        try:
            if err is not None or not ok:
                if err is not None:
                    klog.error_s(err, "Unable to authenticate the request")
                return failed(environ, start_response)
            assert resp is not None
            if not audiences_are_acceptable(api_auds, resp.audiences):
                err = Exception(f"unable to match the audience: {list(resp.audiences)} , accepted: {list(api_auds)}")
                klog.error(str(err))
                return failed(environ, start_response)
            # the credentials are not needed any more: keep them from reaching anything further in
            environ.pop("HTTP_AUTHORIZATION", None)
            clear_authentication_headers(environ, STANDARD_REQUEST_HEADER_CONFIG)
            if request_header_config is not None:
                clear_authentication_headers(environ, request_header_config)
            if environ.get("SERVER_PROTOCOL") == "HTTP/2.0" and is_anonymous_user(resp.user):
                start_response = header_set(start_response, "Connection", "close")  # one request, then GOAWAY
            request.with_user(environ, resp.user)
            return app(environ, start_response)
        finally:
            metrics(environ, resp, ok, err, api_auds, start, finish)

    return authentication


def audiences_are_acceptable(api_auds: Sequence[str], response_auds: Sequence[str]) -> bool:
    if not api_auds or not response_auds:
        return True
    return len(audiences_intersect(api_auds, response_auds)) > 0


def unauthorized() -> Callable:
    """Go's ``Unauthorized(s)`` failed handler: a 401 Status, negotiated (500 if the chain set no RequestInfo)."""

    def unauthorized_app(environ: dict, start_response: Callable) -> Iterable[bytes]:
        if environ.get("SERVER_PROTOCOL") == "HTTP/2.0":
            start_response = header_set(start_response, "Connection", "close")  # the DoS mitigation
        if request.request_info_from(environ) is None:
            return responsewriters.internal_error(start_response, environ, "no RequestInfo found in the context")
        return error_negotiated(start_response, apierrors.new_unauthorized("Unauthorized").status, environ=environ)

    return unauthorized_app


def is_anonymous_user(user: Any) -> bool:
    """Go's ``isAnonymousUser``: ``system:anonymous``, or in ``system:unauthenticated``."""
    return user.name == ANONYMOUS or ALL_UNAUTHENTICATED in user.groups

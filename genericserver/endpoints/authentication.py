"""Port of k8s.io/apiserver/pkg/endpoints/filters/authentication.go (v1.36.0): who is asking.

:func:`with_authentication` asks the authenticator (see :mod:`genericserver.authn`) about each
request. On success the user goes into the environ (``request.with_user``), the
``Authorization`` header and the front-proxy identity headers (``X-Remote-User``,
``X-Remote-Uid``, ``X-Remote-Group``, ``X-Remote-Extra-*`` and any configured ones) are
removed, and the request goes on. Otherwise ``failed`` answers; :func:`unauthorized` makes Go's
failed handler, a 401 with Go's Status JSON::

    {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}

Go's HTTP/2 denial-of-service mitigation (closing connections of unauthenticated HTTP/2
clients) is left out: there is no HTTP/2 here. Nor are the latency trackers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from genericserver import klog
from genericserver import request, responsewriters
from genericserver import runtime as rt
from genericserver.authn import RequestAuthenticator, Response, audiences_intersect, with_audiences
from genericserver.endpoints.authorization import error_negotiated


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
    """Go's ``Unauthorized(s)`` failed handler: 401 Status JSON (500 if the chain set no RequestInfo)."""

    def unauthorized_app(environ: dict, start_response: Callable) -> Iterable[bytes]:
        if request.request_info_from(environ) is None:
            return responsewriters.internal_error(start_response, environ, "no RequestInfo found in the context")
        return error_negotiated(start_response, new_unauthorized("Unauthorized"))

    return unauthorized_app


def new_unauthorized(reason: str) -> dict:
    """``apierrors.NewUnauthorized``."""
    return responsewriters.status(401, "Unauthorized", reason or "not authorized")

"""Port of k8s.io/apiserver/pkg/server/filters/with_retry_after.go (v1.36.0).

In retry-after mode (``ShutdownSendRetryAfter``) the chain answers every new request with a 429
once the server stops accepting new requests, so that clients go to another apiserver while
this one drains. Health probes and metric scrapes (path prefixes) and the server's own loopback
client (User-Agent prefix) are exempt.

:func:`is_request_exempt_from_retry_after` is also what ``with_wait_group`` uses: if the two
filters disagreed, a request this filter let through could be refused by the wait group, or
one the wait group tracks could keep the drain waiting forever.

The 429 carries ``Connection: close``: on HTTP/1.1 the server closes the connection after the
response; on HTTP/2 the header is not sent but starts a graceful GOAWAY
(:mod:`genericserver.net.http.internal.http2.server`), so the client's next request opens a new connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from genericserver import runtime as rt
from genericserver.requestinfo import url_path
from genericserver.responsewriters import http_error

# probes and scrapes keep working after the server stops accepting requests
PATH_PREFIXES_EXEMPT_FROM_RETRY_AFTER = ("/readyz", "/livez", "/healthz", "/metrics")
# the loopback client's User-Agent; authentication has not run yet here, so the header is all we have
KUBE_APISERVER_USER_AGENT_PREFIX = "kube-apiserver/"

SHUTDOWN_MESSAGE = "The apiserver is shutting down, please try again later."

IsRequestExemptFunc = Callable[[dict], bool]


@dataclass(frozen=True)
class RetryAfterParams:
    """How to build the Retry-After response."""

    tear_down_connection: bool  # send ``Connection: close``
    message: str


ShouldRespondWithRetryAfterFunc = Callable[[], tuple[Optional[RetryAfterParams], bool]]


def with_retry_after(app: Callable, should_send: Optional[rt.Event]) -> Callable:
    """429 every non-exempt request once ``should_send`` is set (``None`` never counts as set).

    The chain passes ``NotAcceptingNewRequest``: the shutdown delay is over *and* the
    pre-shutdown hooks have finished.
    """
    params = RetryAfterParams(tear_down_connection=True, message=SHUTDOWN_MESSAGE)

    def should_respond() -> tuple[Optional[RetryAfterParams], bool]:
        if should_send is not None and should_send.is_set():
            return params, True
        return None, False

    return _with_retry_after(app, is_request_exempt_from_retry_after, should_respond)


def _with_retry_after(app: Callable, is_request_exempt: IsRequestExemptFunc, should_respond: ShouldRespondWithRetryAfterFunc) -> Callable:
    def retry_after_filter(environ: dict, start_response: Callable) -> Iterable[bytes]:
        params, send = should_respond()
        if not send or params is None or is_request_exempt(environ):
            return app(environ, start_response)
        headers = []
        if params.tear_down_connection:
            headers.append(("Connection", "close"))
        headers.append(("Retry-After", "5"))
        return http_error(start_response, params.message, 429, headers)

    return retry_after_filter


def is_request_exempt_from_retry_after(environ: dict) -> bool:
    """The one exemption rule of ``with_retry_after`` and ``with_wait_group``."""
    return _is_kube_apiserver_user_agent(environ) or _has_exempt_path_prefix(environ)


def _is_kube_apiserver_user_agent(environ: dict) -> bool:
    return environ.get("HTTP_USER_AGENT", "").startswith(KUBE_APISERVER_USER_AGENT_PREFIX)


def _has_exempt_path_prefix(environ: dict) -> bool:
    # a raw string prefix, as in Go: /healthzfoo and /metrics/slis are exempt too
    return url_path(environ).startswith(PATH_PREFIXES_EXEMPT_FROM_RETRY_AFTER)

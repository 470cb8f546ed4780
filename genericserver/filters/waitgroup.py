"""Port of k8s.io/apiserver/pkg/server/filters/waitgroup.go (v1.36.0).

``with_wait_group`` counts every non-long-running request in the server's wait group, so that
the shutdown can wait until they have all been answered. Once the shutdown has called ``wait()``
the group refuses new members: the request is then either exempt (served, untracked, by the
same rule as ``with_retry_after``) or refused with a 503 that asks the client to retry in 1 s,
most likely against another apiserver.

A request holds its slot until its response iterable is *closed*, not until the app callable
returns: a WSGI body is produced after the app returns, and its close is where the handler has
returned in Go's sense (the deferred ``Done``). What Go's handler left in its buffer is written by
net/http after that (``finishRequest``), and so is an answer the server holds until the close
(:mod:`genericserver.net.http.response`): a client that stalls its body, which net/http reads to its
end before it writes the header, holds its connection, not this slot.
"""

from __future__ import annotations

from typing import Callable, Iterable, Protocol

from genericserver import request, responsewriters, wsgi
from genericserver.filters.with_retry_after import IsRequestExemptFunc, is_request_exempt_from_retry_after
from genericserver.requestinfo import LongRunningRequestCheck

SHUTTING_DOWN_MESSAGE = "apiserver is shutting down"


class RequestWaitGroup(Protocol):
    """What the filters need of a wait group; must be safe to call from many threads."""

    def add(self, delta: int) -> None:
        """Raises once ``wait()`` has been called and ``delta`` is positive."""

    def done(self) -> None: ...


def with_wait_group(app: Callable, long_running: LongRunningRequestCheck, wg: RequestWaitGroup) -> Callable:
    """Track non-long-running requests in ``wg``; exemptions are exactly ``with_retry_after``'s."""
    return _with_wait_group(app, long_running, wg, is_request_exempt_from_retry_after)


def _with_wait_group(app: Callable, long_running: LongRunningRequestCheck, wg: RequestWaitGroup, is_request_exempt: IsRequestExemptFunc) -> Callable:
    def wait_group_filter(environ: dict, start_response: Callable) -> Iterable[bytes]:
        info = request.request_info_from(environ)
        if info is None:
            # the chain is built wrong: request info must sit outside this filter
            return responsewriters.internal_error(start_response, environ, "no RequestInfo found in the context")
        if long_running(environ, info):
            return app(environ, start_response)
        try:
            wg.add(1)
        except Exception:
            # wait() has begun. with_retry_after (if installed) already refused the non-exempt
            # requests; exempt ones are served but not tracked, so they cannot hold up the drain
            if is_request_exempt(environ):
                return app(environ, start_response)
            return wait_group_write_retry_after_to_response(start_response)
        return wsgi.call_app(app, environ, start_response, wg.done)

    return wait_group_filter


def wait_group_write_retry_after_to_response(start_response: Callable) -> Iterable[bytes]:
    """503, ``Retry-After: 1`` and a v1 Status; Go prints the encoded JSON with Println: two newlines."""
    st = responsewriters.status(503, "ServiceUnavailable", SHUTTING_DOWN_MESSAGE)
    return responsewriters.write_status(start_response, st, [("Retry-After", "1")], trailer=b"\n")

"""Port of k8s.io/apiserver/pkg/util/notfoundhandler/not_found_handler.go (v1.36.0).

The app at the very end of the delegation chain, for paths no mux knows. Before all HTTP paths
are installed (the MuxAndDiscoveryComplete signal) an unknown path may only be unknown *yet*,
so the client gets a 503 with ``Retry-After: 5`` and a Status asking it to try again; afterwards
it is a plain 404.

The Status is always written as JSON: there is no content negotiation here (Go negotiates the
serializer; JSON is what it picks for clients that do not ask for something else).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from genericserver.mux import not_found
from genericserver.responsewriters import status, write_status

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict, StartResponse], Iterable[bytes]]

NOT_READY_MESSAGE = "the request has been made before all known HTTP paths have been installed, please try again"
RETRY_AFTER_SECONDS = 5


def not_found_handler(is_mux_and_discovery_complete: Callable[[dict], bool]) -> WSGIApp:
    """Go's ``notfoundhandler.New``: 503 until ``is_mux_and_discovery_complete(environ)``, then 404."""

    def app(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        if not is_mux_and_discovery_complete(environ):
            st = status(503, "ServiceUnavailable", NOT_READY_MESSAGE, {"retryAfterSeconds": RETRY_AFTER_SECONDS})
            # ErrorNegotiated: Retry-After from the details, and no nosniff header
            return write_status(start_response, st, [("Retry-After", str(RETRY_AFTER_SECONDS))], nosniff=False)
        return not_found(environ, start_response)

    return app

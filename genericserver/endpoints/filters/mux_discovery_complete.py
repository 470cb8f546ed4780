"""Port of k8s.io/apiserver/pkg/endpoints/filters/mux_discovery_complete.go (v1.36.0): marking requests that came too early.

Controllers such as the garbage collector act on 404s, so a 404 for a path that simply is not
installed *yet* would do harm. :func:`with_mux_and_discovery_complete` marks every request that
arrives while the ``MuxAndDiscoveryComplete`` signal is still open, and the not-found handler at
the end of the chain (:mod:`genericserver.notfoundhandler`, given
:func:`no_mux_and_discovery_incomplete_key`) answers such requests with a 503 and
``Retry-After: 5`` instead of a 404::

    {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the request has
     been made before all known HTTP paths have been installed, please try again",
     "reason":"ServiceUnavailable","details":{"retryAfterSeconds":5},"code":503}

The mark is ``request.MUX_INCOMPLETE_KEY`` in the environ.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from genericserver import request
from genericserver import runtime as rt


def no_mux_and_discovery_incomplete_key(environ: dict) -> bool:
    """True unless the request was marked as arriving before all paths were installed."""
    return not environ.get(request.MUX_INCOMPLETE_KEY)


def with_mux_and_discovery_complete(app: Callable, signal: Optional[rt.Event]) -> Callable:
    def mux_and_discovery_complete(environ: dict, start_response: Callable) -> Iterable[bytes]:
        if signal is not None and not signal.is_set():
            environ[request.MUX_INCOMPLETE_KEY] = True
        return app(environ, start_response)

    return mux_and_discovery_complete

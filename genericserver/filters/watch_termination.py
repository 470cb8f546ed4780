"""Port of k8s.io/apiserver/pkg/server/filters/watch_termination.go (v1.36.0).

Watches are long-running, so the ordinary wait group ignores them. When the shutdown has a
watch grace period, this filter counts each watch in the *watch* wait group and hands it the
server's shutdown signal, so the watch loop can end as soon as the server shuts down; the
rate-limited ``done()`` of that group then spreads the clients' re-watches over time.

A watch keeps its slot until its response stream is closed (the iterable's ``close``).
Unlike ``with_wait_group`` nothing is exempt here: a refused watch gets the 503 whatever its path
or User-Agent.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, Optional

from genericserver import request, responsewriters, wsgi
from genericserver.filters.maxinflight import WATCH_VERBS
from genericserver.filters.waitgroup import RequestWaitGroup, wait_group_write_retry_after_to_response

log = logging.getLogger("genericserver.filters.watch_termination")


def with_watch_termination_during_shutdown(app: Callable, termination: Optional[Any], wg: Optional[RequestWaitGroup]) -> Callable:
    """Track watches in ``wg`` and attach ``termination`` (``shutting_down() -> Event``) to them.

    Either dependency ``None`` leaves the chain without this filter, as Go does with nil
    (Go's typed-nil pointers, non-nil as interfaces, have no Python counterpart).
    """
    if termination is None or wg is None:
        log.warning("watch termination during shutdown not attached to the handler chain")
        return app

    def watch_termination_filter(environ: dict, start_response: Callable) -> Iterable[bytes]:
        info = request.request_info_from(environ)
        if info is None:
            return responsewriters.internal_error(start_response, environ, "no RequestInfo found in the context")
        if info.verb not in WATCH_VERBS:
            return app(environ, start_response)
        try:
            wg.add(1)
        except Exception:
            return wait_group_write_retry_after_to_response(start_response)
        # lets the watch loop return as soon as the server says it is shutting down
        request.with_server_shutdown_signal(environ, termination)
        return wsgi.call_app(app, environ, start_response, wg.done)

    return watch_termination_filter

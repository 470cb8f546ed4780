"""Port of k8s.io/apiserver/pkg/endpoints/filters/cachecontrol.go (v1.36.0).

Every response is behind authentication and authorization, so no shared cache may keep it:
``Cache-Control: no-cache, private`` unless the response already says otherwise. Go sets the
header on the writer before the inner handler runs (an inner handler may replace it); a WSGI
filter sees the headers when the inner app calls ``start_response``, so the header is added
there when the app did not set one itself.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

CACHE_CONTROL = "no-cache, private"


def with_cache_control(app: Callable) -> Callable:
    """Add ``Cache-Control: no-cache, private`` to responses that have no Cache-Control."""

    def cache_control_filter(environ: dict, start_response: Callable) -> Iterable[bytes]:
        def cache_control_start_response(status: str, headers: list, exc_info: Any = None) -> Callable:
            if not any(name.lower() == "cache-control" for name, _ in headers):
                headers = list(headers) + [("Cache-Control", CACHE_CONTROL)]
            return start_response(status, headers, exc_info)

        return app(environ, cache_control_start_response)

    return cache_control_filter

"""Port of k8s.io/apiserver/pkg/server/filters/cors.go (v1.36.0): cross-origin requests.

:func:`with_cors` answers browsers: when the ``Origin`` header matches one of the allowed origin
regular expressions (searched, not anchored: ``example.com`` also matches
``http://example.com.hacker.org``; pin with ``//example.com(:|$)``), the response gets the
``Access-Control-*`` headers, and a preflight ``OPTIONS`` is answered at once with 204. No
allowed origins: no filter. Headers the app sets itself win over the filter's (Go sets them
before the app runs, so a later ``Set`` in the app replaces them).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Optional, Sequence

from genericserver import responsewriters

DEFAULT_ALLOWED_METHODS = ("POST", "GET", "OPTIONS", "PUT", "DELETE", "PATCH")
DEFAULT_ALLOWED_HEADERS = ("Content-Type", "Content-Length", "Accept-Encoding", "X-CSRF-Token", "Authorization", "X-Requested-With", "If-Modified-Since")
DEFAULT_EXPOSED_HEADERS = ("Date",)


def compile_regexps(patterns: Sequence[str]) -> list[re.Pattern]:
    """Compile every pattern; a bad one raises ``re.error`` (Go exits with ``klog.Fatalf``)."""
    return [re.compile(p) for p in patterns]


def is_origin_allowed(origin: str, allowed: Sequence[re.Pattern]) -> bool:
    return any(r.search(origin) for r in allowed)


def with_cors(
    app: Callable,
    allowed_origin_patterns: Optional[Sequence[str]],
    allowed_methods: Optional[Sequence[str]] = None,
    allowed_headers: Optional[Sequence[str]] = None,
    exposed_headers: Optional[Sequence[str]] = None,
    allow_credentials: str = "true",
) -> Callable:
    if not allowed_origin_patterns:
        return app
    try:
        allowed = compile_regexps(allowed_origin_patterns)
    except re.error as err:
        raise ValueError(
            f"Invalid CORS allowed origin, --cors-allowed-origins flag was set to {','.join(allowed_origin_patterns)} - {err}"
        ) from err
    methods = ", ".join(DEFAULT_ALLOWED_METHODS if allowed_methods is None else allowed_methods)
    headers_allowed = ", ".join(DEFAULT_ALLOWED_HEADERS if allowed_headers is None else allowed_headers)
    exposed = ", ".join(DEFAULT_EXPOSED_HEADERS if exposed_headers is None else exposed_headers)

    def cors(environ: dict, start_response: Callable) -> Iterable[bytes]:
        origin = environ.get("HTTP_ORIGIN", "")
        if not origin or not is_origin_allowed(origin, allowed):
            return app(environ, start_response)
        cors_headers = [
            ("Access-Control-Allow-Origin", origin),
            ("Access-Control-Allow-Methods", methods),
            ("Access-Control-Allow-Headers", headers_allowed),
            ("Access-Control-Expose-Headers", exposed),
            ("Access-Control-Allow-Credentials", allow_credentials),
        ]
        if environ.get("REQUEST_METHOD") == "OPTIONS":
            start_response(responsewriters.status_line(204), cors_headers)
            return []

        def with_cors_headers(status: str, headers: list, exc_info: Any = None) -> Any:
            present = {k.lower() for k, _ in headers}
            headers = [*[(k, v) for k, v in cors_headers if k.lower() not in present], *headers]
            if exc_info is not None:
                return start_response(status, headers, exc_info)
            return start_response(status, headers)

        return app(environ, with_cors_headers)

    return cors

"""Port of k8s.io/apiserver/pkg/endpoints/filters/requestinfo.go (v1.36.0).

``with_request_info`` resolves the request once, near the outside of the chain, and stores the
:class:`~genericserver.requestinfo.RequestInfo` in the environ, so that every filter inside it
(logging, retry-after, wait groups, timeout, max-in-flight, audit) decides on the same answer.
"""

from __future__ import annotations

from typing import Callable, Iterable

from genericserver import request, responsewriters
from genericserver.requestinfo import RequestInfoResolver


def with_request_info(app: Callable, resolver: RequestInfoResolver) -> Callable:
    """Attach the resolved RequestInfo; a resolver error is a 500 (``InternalError``)."""

    def request_info_filter(environ: dict, start_response: Callable) -> Iterable[bytes]:
        info, err = resolver.new_request_info(environ)
        if err is not None:
            return responsewriters.internal_error(start_response, environ, f"failed to create RequestInfo: {err}")
        request.with_request_info(environ, info)
        return app(environ, start_response)

    return request_info_filter

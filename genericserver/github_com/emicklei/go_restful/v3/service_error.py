"""Port of Go's github.com/emicklei/go-restful/v3 package (service_error.go at v3.13.0): the error route selection refuses with.

A :class:`ServiceError` carries the HTTP code, go-restful's own text (``406: Not Acceptable...``)
and headers (``Allow`` with a 405). The container hands it to its service error handler, which
k8s.io/apiserver replaces with one that writes a Status (pkg/server/handler.go). Go returns it as
an ``error``; here it is raised.
"""

from __future__ import annotations

from typing import Optional


class ServiceError(Exception):
    """Go's ``ServiceError``: ``code``, ``message`` and ``header`` (name -> values)."""

    def __init__(self, code: int, message: str, header: Optional[dict[str, list[str]]] = None):
        super().__init__(f"[ServiceError:{code}] {message}")  # Go's Error() text
        self.code = code
        self.message = message
        self.header = header or {}


def new_error(code: int, message: str) -> ServiceError:
    return ServiceError(code, message)


def new_error_with_header(code: int, message: str, header: dict[str, list[str]]) -> ServiceError:
    return ServiceError(code, message, header)

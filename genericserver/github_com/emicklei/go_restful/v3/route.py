"""Port of Go's github.com/emicklei/go-restful/v3 package (route.go at v3.13.0): a route, and whether a request's media types fit it.

A :class:`Route` is a method, a full path (the web service's root and the route's own, e.g.
``/api/v1/namespaces/{namespace}/configmaps/{name}``), the media types it ``produces`` and
``consumes``, and the function that serves it. :meth:`Route.matches_accept` and
:meth:`Route.matches_content_type` are go-restful's own comparisons, simpler than content
negotiation: each comma-separated type of the header, its parameters cut off, must equal one the
route lists, and only ``*/*`` is a wildcard (``application/*`` fits nothing). A request without a
Content-Type fits a route of GET, HEAD, OPTIONS, DELETE or TRACE; any other method is taken to
send ``application/octet-stream``.

``TRIM_RIGHT_SLASH_ENABLED`` is go-restful's default (true): a path is split at slashes with both
ends trimmed, so ``/api/v1/`` is the route ``/api/v1``. Custom verbs (``/x:verb``) are not ported:
no k8s.io/apiserver route has one.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

MIME_OCTET = "application/octet-stream"
TRIM_RIGHT_SLASH_ENABLED = True

# a route's function: (environ, start_response, path parameters) -> the WSGI body
RouteFunction = Callable[[dict, Callable[..., Any], dict], Any]
# a condition a route may add to its selection (go-restful's If): the request's environ -> bool
RouteSelectionCondition = Callable[[dict], bool]

_WITHOUT_CONTENT_TYPE = ("GET", "HEAD", "OPTIONS", "DELETE", "TRACE")


def _media_types(header: str) -> Sequence[str]:
    """Each comma-separated type of a header, its parameters cut off and its spaces trimmed, in
    order (go-restful's loop, which stops at the last part: ``"a,"`` holds ``a`` and ``""``)."""
    return [part.partition(";")[0].strip(" ") for part in header.split(",")]


class Route:
    """Go's ``Route``: what route selection reads of it, and its function."""

    def __init__(self, method: str, path: str, function: RouteFunction, *, produces: Sequence[str] = (),
                 consumes: Sequence[str] = (), conditions: Sequence[RouteSelectionCondition] = (),
                 allowed_methods_without_content_type: Sequence[str] = (), operation: str = ""):
        self.method = method
        self.path = path
        self.function = function
        self.produces = list(produces)
        self.consumes = list(consumes)
        self.conditions = list(conditions)
        self.allowed_methods_without_content_type = list(allowed_methods_without_content_type)
        self.operation = operation
        self.path_parts = tokenize_path(path)  # postBuild

    def matches_accept(self, mime_types_with_quality: str) -> bool:
        """``matchesAccept``: a type of the Accept header is ``*/*`` or one the route produces
        (or the route produces ``*/*``)."""
        for mime_type in _media_types(mime_types_with_quality):
            if mime_type == "*/*":
                return True
            if any(p == "*/*" or p == mime_type for p in self.produces):
                return True
        return False

    def matches_content_type(self, mime_types: str) -> bool:
        """``matchesContentType``: a route that lists nothing consumes anything; a request with
        no Content-Type fits the methods that send no body (see the module docstring)."""
        if not self.consumes:
            return True
        if not mime_types:
            allowed = self.allowed_methods_without_content_type or _WITHOUT_CONTENT_TYPE
            if self.method in allowed:
                return True
            mime_types = MIME_OCTET
        for mime_type in _media_types(mime_types):
            if any(c == "*/*" or c == mime_type for c in self.consumes):
                return True
        return False

    def __repr__(self) -> str:
        return f"{self.method} {self.path}"


def tokenize_path(path: str) -> list[str]:
    """``tokenizePath``: the path's parts between slashes (``/`` alone has none)."""
    if path == "/":
        return []
    if TRIM_RIGHT_SLASH_ENABLED:
        return path.strip("/").split("/")
    return path.lstrip("/").split("/")

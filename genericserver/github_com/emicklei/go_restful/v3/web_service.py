"""Port of Go's github.com/emicklei/go-restful/v3 package (web_service.go, route_builder.go at v3.13.0): a root path and its routes.

A :class:`WebService` is a root path (``/api/v1``, ``/apis/apps``) with the media types its routes
produce and consume unless a route says otherwise (``RouteBuilder.copyDefaults``), and its routes.
:meth:`WebService.route` is the builder's chain (``ws.GET(path).To(fn).Produces(...)``) in one
call: the route's path is the root and its own joined by one slash (``concatPath``), ``/``
being the root itself. The routes are an immutable tuple swapped on each addition, so reading
them takes no lock (Go guards them with a mutex).
"""

from __future__ import annotations

from typing import Optional, Sequence

from genericserver.github_com.emicklei.go_restful.v3.route import TRIM_RIGHT_SLASH_ENABLED, Route, RouteFunction, tokenize_path


def concat_path(root_path: str, route_path: str) -> str:
    """``concatPath`` with go-restful's default ``TrimRightSlashEnabled``."""
    assert TRIM_RIGHT_SLASH_ENABLED  # path.Join's form is not ported
    return root_path.rstrip("/") + "/" + route_path.lstrip("/")


class WebService:
    """Go's ``WebService``: ``root_path``, default ``produces``/``consumes``, and the routes."""

    def __init__(self, root_path: str, *, produces: Sequence[str] = (), consumes: Sequence[str] = ()):
        self.root_path = root_path or "/"  # Path("") is the root
        self.root_tokens = tokenize_path(self.root_path)  # compilePathExpression's tokens
        self.produces = list(produces)
        self.consumes = list(consumes)
        self._routes: tuple[Route, ...] = ()

    def route(self, method: str, sub_path: str, function: RouteFunction, *, produces: Optional[Sequence[str]] = None,
              consumes: Optional[Sequence[str]] = None, operation: str = "") -> Route:
        """A route of ``method`` at ``sub_path`` under the root, added (``ws.Route(ws.METHOD(sub_path)...)``);
        an empty ``produces`` or ``consumes`` takes the web service's."""
        r = Route(method, concat_path(self.root_path, sub_path), function,
                  produces=produces or self.produces, consumes=consumes or self.consumes, operation=operation)
        self._routes = self._routes + (r,)
        return r

    def routes(self) -> tuple[Route, ...]:
        return self._routes

    def __repr__(self) -> str:
        return f"WebService({self.root_path!r}, {len(self._routes)} routes)"

"""Port of Go's github.com/emicklei/go-restful/v3 package (curly.go, curly_route.go at v3.13.0): the router k8s.io/apiserver sets.

``CurlyRouter.SelectRoute`` (:meth:`CurlyRouter.select_route`) chooses in three steps, each on the
path's slash-separated tokens:

1. the web service: each whose root's tokens all match the path's first ones scores 10 per
   token for a literal, weighted by how early it stands, 1 for a ``{parameter}`` (and 1 more when
   its ``{name:regexp}`` matches); the highest score wins, the first registered on a tie. None:
   404 ``404: Page Not Found``;
2. its routes whose every token matches (a literal equal, a parameter anything but empty, a
   ``{name:*}`` the rest of the path), as many tokens as the path has: none, 404
   ``404: Page Not Found``. They are sorted with the most literal tokens first, then the most
   parameters, then the path in reverse order (curly_route.go's ``sortableCurlyRoutes``);
3. among them, :func:`~.jsr311.detect_route`: the method, the Content-Type, the Accept.

Go caches each compiled ``{name:regexp}``; here Python's ``re`` module caches them.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple, Optional, Sequence

from genericserver.github_com.emicklei.go_restful.v3.jsr311 import detect_route
from genericserver.github_com.emicklei.go_restful.v3.route import Route, tokenize_path
from genericserver.github_com.emicklei.go_restful.v3.service_error import new_error
from genericserver.github_com.emicklei.go_restful.v3.web_service import WebService


class CurlyRoute(NamedTuple):
    """curly_route.go's ``curlyRoute``: a route that matched, and how."""

    route: Route
    param_count: int
    static_count: int


def _curly_order(a: CurlyRoute, b: CurlyRoute) -> int:
    # sortableCurlyRoutes.Less: more literal tokens first, then more parameters, then the greater path
    if a.static_count != b.static_count:
        return -1 if a.static_count > b.static_count else 1
    if a.param_count != b.param_count:
        return -1 if a.param_count > b.param_count else 1
    return -1 if a.route.path > b.route.path else (1 if a.route.path < b.route.path else 0)


class CurlyRouter:
    """Go's ``CurlyRouter`` (stateless)."""

    def select_route(self, web_services: Sequence[WebService], environ: dict) -> tuple[WebService, Route]:
        """``SelectRoute``: the web service and the route that serve the request; raises the
        :class:`~.service_error.ServiceError` of the step that finds none."""
        request_tokens = tokenize_path(environ.get("PATH_INFO", ""))
        detected = self.detect_web_service(request_tokens, web_services)
        if detected is None:
            raise new_error(404, "404: Page Not Found")
        candidates = self.select_routes(detected, request_tokens)
        if not candidates:
            raise new_error(404, "404: Page Not Found")
        return detected, detect_route([c.route for c in candidates], environ)

    def select_routes(self, ws: WebService, request_tokens: list[str]) -> list[CurlyRoute]:
        """``selectRoutes``: the web service's routes whose path matches, sorted."""
        candidates = []
        for route in ws.routes():
            matches, param_count, static_count = self.matches_route_by_path_tokens(route.path_parts, request_tokens)
            if matches:
                candidates.append(CurlyRoute(route, param_count, static_count))
        # Go's sort.Sort of so few routes is an insertion sort, stable as Python's
        candidates.sort(key=functools.cmp_to_key(_curly_order))
        return candidates

    def matches_route_by_path_tokens(self, route_tokens: list[str], request_tokens: list[str]) -> tuple[bool, int, int]:
        """``matchesRouteByPathTokens``: whether the route's tokens match the path's, with how
        many parameters and how many literal tokens."""
        if len(route_tokens) < len(request_tokens):
            # a longer path fits only a route that ends in a {name:*}
            if not route_tokens or not route_tokens[-1].endswith("*}"):
                return False, 0, 0
        param_count = static_count = 0
        for i, route_token in enumerate(route_tokens):
            if i == len(request_tokens):  # the path ended first
                return False, 0, 0
            request_token = request_tokens[i]
            if route_token.startswith("{"):
                param_count += 1
                colon = route_token.find(":")
                if colon != -1:
                    matches_token, matches_remainder = self.regular_matches_path_token(route_token, colon, request_token)
                    if not matches_token:
                        return False, 0, 0
                    if matches_remainder:
                        break
            else:
                if request_token != route_token:
                    return False, 0, 0
                static_count += 1
        return True, param_count, static_count

    def regular_matches_path_token(self, route_token: str, colon: int, request_token: str) -> tuple[bool, bool]:
        """``regularMatchesPathToken``: whether ``{name:regexp}`` matches the token, and whether
        it takes the rest of the path (``{name:*}``). A regexp that does not compile matches nothing."""
        reg_part = route_token[colon + 1:-1]
        if reg_part == "*":
            return True, True
        try:
            return re.search(reg_part, request_token) is not None, False  # Go's MatchString: anywhere
        except re.error:
            return False, False

    def detect_web_service(self, request_tokens: list[str], web_services: Sequence[WebService]) -> Optional[WebService]:
        """``detectWebService``: the web service whose root scores highest (the first on a tie)."""
        best, score = None, -1
        for ws in web_services:
            matches, each_score = self.compute_webservice_score(request_tokens, ws.root_tokens)
            if matches and each_score > score:
                best, score = ws, each_score
        return best

    def compute_webservice_score(self, request_tokens: list[str], route_tokens: list[str]) -> tuple[bool, int]:
        """``computeWebserviceScore``: whether the root's tokens match the path's first ones, and
        the score (see the module docstring)."""
        if len(route_tokens) > len(request_tokens):
            return False, 0
        score = 0
        for i, route_token in enumerate(route_tokens):
            request_token = request_tokens[i]
            if not request_token and not route_token:
                score += 1
                continue
            if route_token.startswith("{"):
                if not request_token:  # a parameter matches no empty token
                    return False, score
                score += 1
                colon = route_token.find(":")
                if colon != -1 and self.regular_matches_path_token(route_token, colon, request_token)[0]:
                    score += 1
            else:
                if request_token != route_token:
                    return False, score
                score += (len(route_tokens) - i) * 10
        return True, score

"""Port of Go's github.com/emicklei/go-restful/v3 package (jsr311.go at v3.13.0): which of the routes a path matched serves the request.

:func:`detect_route` is ``RouterJSR311.detectRoute``, which the :class:`~.curly.CurlyRouter`
hands the routes whose path matches, best first. It narrows them in JAX-RS's order, and the
first step that leaves none refuses the request, before any handler runs:

1. the routes' own conditions (go-restful's ``If``): none pass, 404 ``404: Not Found``;
2. the method: none has it, 405 ``405: Method Not Allowed`` (with ``Allow``: the methods there are);
3. the Content-Type (:meth:`~.route.Route.matches_content_type`): 415 ``415: Unsupported Media Type``;
4. the Accept header, ``*/*`` when there is none (:meth:`~.route.Route.matches_accept`): 406
   ``406: Not Acceptable`` and, after a blank line, ``Available representations:`` and what the
   routes left after step 3 produce.

The first route left serves. (The rest of jsr311.go, the router go-restful uses by default, is
not ported: k8s.io/apiserver sets the CurlyRouter.)
"""

from __future__ import annotations

from typing import Sequence

from genericserver.github_com.emicklei.go_restful.v3.route import Route
from genericserver.github_com.emicklei.go_restful.v3.service_error import new_error, new_error_with_header


def detect_route(routes: Sequence[Route], environ: dict) -> Route:
    """The route that serves the request; raises the :class:`~.service_error.ServiceError` of the
    first step that leaves none (see the module docstring)."""
    candidates = [r for r in routes if all(condition(environ) for condition in r.conditions)]
    if not candidates:
        raise new_error(404, "404: Not Found")

    method = environ.get("REQUEST_METHOD", "")
    previous, candidates = candidates, [r for r in candidates if r.method == method]
    if not candidates:
        allowed: list[str] = []
        for r in previous:
            if r.method not in allowed:
                allowed.append(r.method)
        raise new_error_with_header(405, "405: Method Not Allowed", {"Allow": [", ".join(allowed)]})

    content_type = environ.get("CONTENT_TYPE", "")
    previous, candidates = candidates, [r for r in candidates if r.matches_content_type(content_type)]
    if not candidates:
        raise new_error(415, "415: Unsupported Media Type")

    accept = environ.get("HTTP_ACCEPT", "") or "*/*"
    previous, candidates = candidates, [r for r in candidates if r.matches_accept(accept)]
    if not candidates:
        available = [t for r in previous for t in r.produces]
        raise new_error(406, "406: Not Acceptable\n\nAvailable representations: " + ", ".join(available))
    return candidates[0]

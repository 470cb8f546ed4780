"""Port of Go's github.com/emicklei/go-restful/v3 package (container.go at v3.13.0): web services, and the dispatch to their routes.

:meth:`Container.dispatch` is ``Container.Dispatch``: the router (the :class:`~.curly.CurlyRouter`,
what k8s.io/apiserver sets) selects the web service and the route first; a request it refuses
goes to the service error handler (go-restful's own writes the code and its text as plain text;
k8s.io/apiserver sets one that writes a Status, pkg/server/handler.go), and no route function
runs. Else the route's function serves the request with the path parameters
(:func:`~.path_processor.extract_parameters`).

Left out: container filters, content encoding (the apiserver sets none), the panic recovery
(the apiserver's handler chain recovers panics before this does), and ``ServeMux`` (the
apiserver calls ``Dispatch`` from its director). The web services are an immutable tuple
swapped on each addition, so a dispatch takes no lock (Go's read lock).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any, Callable, Iterable

from genericserver.github_com.emicklei.go_restful.v3.curly import CurlyRouter
from genericserver.github_com.emicklei.go_restful.v3.path_processor import extract_parameters
from genericserver.github_com.emicklei.go_restful.v3.service_error import ServiceError
from genericserver.github_com.emicklei.go_restful.v3.web_service import WebService

StartResponse = Callable[..., Any]
# (the error, the request's environ, start_response) -> the WSGI body
ServiceErrorHandleFunction = Callable[[ServiceError, dict, StartResponse], Iterable[bytes]]


def write_service_error(err: ServiceError, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
    """``writeServiceError``, go-restful's default: the error's headers, its code and its text
    (``Response.WriteErrorString``: the text as it is, which net/http sniffs as plain text)."""
    body = err.message.encode()
    headers = [(name, value) for name, values in err.header.items() for value in values]
    start_response(f"{err.code} {HTTPStatus(err.code).phrase}",
                   headers + [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
    return [body]


class Container:
    """Go's ``Container``: the web services, the router, the service error handler."""

    def __init__(self) -> None:
        self._web_services: tuple[WebService, ...] = ()
        self.router = CurlyRouter()
        self.service_error_handle_func: ServiceErrorHandleFunction = write_service_error

    def service_error_handler(self, handler: ServiceErrorHandleFunction) -> None:
        """``ServiceErrorHandler``: what writes a request the router refuses."""
        self.service_error_handle_func = handler

    def add(self, ws: WebService) -> "Container":
        """``Add``: one more web service (Go refuses a second at the same root path)."""
        if any(w.root_path == ws.root_path for w in self._web_services):
            raise ValueError(f"WebService with duplicate root path detected:['{ws.root_path}']")
        self._web_services = self._web_services + (ws,)
        return self

    def registered_web_services(self) -> tuple[WebService, ...]:
        return self._web_services

    def dispatch(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        """``Dispatch``: route selection, then the route's function (see the module docstring)."""
        try:
            ws, route = self.router.select_route(self._web_services, environ)
        except ServiceError as err:
            return self.service_error_handle_func(err, environ, start_response)
        params = extract_parameters(route, environ.get("PATH_INFO", ""))
        return route.function(environ, start_response, params)

    __call__ = dispatch  # a WSGI app, as the director calls it

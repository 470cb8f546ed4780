"""Port of k8s.io/apiserver/pkg/server/handler.go (v1.36.0): the handler a server serves.

``APIServerHandler`` holds the full handler chain (the filters around the director), the
director itself (what delegates reach, bypassing this server's filters), and the mux every
non-REST path registers on. The director is the mux: where Go's handler holds one go-restful
container, here the API groups (:class:`~genericserver.apigroups.APIGroups`) hold one for their
web services and ``/version`` one of its own (routes.py), and each registers it on the mux for
every path a web service's root claims, which is the rule Go's director applies before its mux
(the root and what is under it; ``/apis`` only as itself and ``/apis/``). No path is claimed by
two, so the split changes no answer.

:func:`service_error_handler` is what the container is given for a request its router refuses
(404, 405, 406, 415): go-restful's code and text as ``NewGenericServerResponse`` makes them a
Status (``the server could not find the requested resource`` for a 404, go-restful's
``406: Not Acceptable`` text kept), written as the client asked (``ErrorNegotiated``). Go
leaves go-restful's headers (a 405's ``Allow``) out, and so does this.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from genericserver.apimachinery.api import errors
from genericserver.endpoints.handlers import response
from genericserver.github_com.emicklei.go_restful.v3.service_error import ServiceError
from genericserver.mux import PathRecorderMux

WSGIApp = Callable[..., Iterable[bytes]]
HandlerChainBuilder = Callable[[WSGIApp], WSGIApp]


class APIServerHandler:
    """``full_handler_chain`` is what serving calls; ``director`` skips this server's filters."""

    def __init__(self, name: str, handler_chain_builder: HandlerChainBuilder, not_found_handler: Optional[WSGIApp] = None):
        self.name = name
        self.non_go_restful_mux = PathRecorderMux(name)
        if not_found_handler is not None:
            self.non_go_restful_mux.not_found_handler(not_found_handler)
        self.director: WSGIApp = self.non_go_restful_mux
        self.full_handler_chain: WSGIApp = handler_chain_builder(self.director)

    def listed_paths(self) -> list[str]:
        return sorted(self.non_go_restful_mux.listed_paths())

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        return self.full_handler_chain(environ, start_response)


def service_error_handler(service_err: ServiceError, environ: dict, start_response: Callable) -> Iterable[bytes]:
    """``serviceErrorHandler``: go-restful's refusal as a Status (see the module docstring)."""
    err = errors.new_generic_server_response(service_err.code, "", "", "", service_err.message, 0, False)
    return response.write_error(None, environ, start_response, err)

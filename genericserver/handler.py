"""Port of k8s.io/apiserver/pkg/server/handler.go (v1.36.0): the handler a server serves.

``APIServerHandler`` holds the full handler chain (the filters around the director), the
director itself (what delegates reach, bypassing this server's filters), and the mux every
non-REST path registers on. There is no go-restful container here: every path, the sample
API's included, registers on the ``PathRecorderMux``, so the director is the mux.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

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

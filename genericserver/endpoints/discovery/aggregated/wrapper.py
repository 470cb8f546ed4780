"""Port of k8s.io/apiserver/pkg/endpoints/discovery/aggregated/wrapper.go (v1.36.0): one path, two discovery documents.

``/api`` and ``/apis`` serve two documents on one path, chosen by the Accept header: the
aggregated ``APIGroupDiscoveryList`` for a client that asks for it (``as=APIGroupDiscoveryList``,
``g=apidiscovery.k8s.io``, ``v=v2``; the v2beta1 type is removed in v1.36), the legacy one
otherwise. The media ranges are tried in the client's order (highest q first), as Go's
negotiation does, and the first one the server can answer decides. The kind the aggregated
document may be asked for is :mod:`.negotiation`'s.
"""

from __future__ import annotations

from typing import Callable, Iterable

from genericserver.endpoints.discovery import util


def wants_aggregated(accept: str) -> bool:
    """The first acceptable media range of ``accept`` asks for the aggregated document."""
    ranges = []
    for i, part in enumerate(accept.split(",")):
        fields = [f.strip() for f in part.split(";")]
        mime, params = fields[0].lower(), {}
        for f in fields[1:]:
            k, _, v = f.partition("=")
            params[k.strip().lower()] = v.strip()
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 1.0
        if q > 0:
            ranges.append((-q, i, mime, params))
    for _, _, mime, params in sorted(ranges):
        if mime not in ("application/json", "application/*", "*/*", "application/yaml", "application/vnd.kubernetes.protobuf"):
            continue
        if "as" not in params:
            return False
        # Go negotiates over the codecs' JSON, YAML and protobuf alike (apidiscovery/v2 has a
        # protobuf message): kube-apiserver writes the document in protobuf to a client that asks
        return (params.get("as"), params.get("g"), params.get("v")) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io", "v2")
    return False


class WrappedHandler:
    def __init__(self, handler: Callable[..., Iterable[bytes]], agg_handler: Callable[..., Iterable[bytes]]):
        self.handler = handler
        self.agg_handler = agg_handler

    def __call__(self, environ: dict, start_response: util.StartResponse) -> Iterable[bytes]:
        if wants_aggregated(environ.get("HTTP_ACCEPT", "")):
            return self.agg_handler(environ, start_response)
        return self.handler(environ, start_response)

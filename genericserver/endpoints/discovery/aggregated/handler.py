"""Port of k8s.io/apiserver/pkg/endpoints/discovery/aggregated/handler.go and etag.go (v1.36.0): one document for all groups.

Aggregated discovery (``apidiscovery.k8s.io/v2``) answers in one request what the legacy
documents answer in one per group version: an ``APIGroupDiscoveryList`` whose items are the
groups (the legacy group, unnamed, alone at ``/api``; the named ones at ``/apis``), each with its
versions, each version with its resources (resource, response kind, scope, singular resource,
verbs, short names, categories) and ``freshness: Current``. kubectl asks for it first
(``Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,...``).

As etag.go serves it: an ``ETag`` (the SHA-512 of the groups' JSON, in upper-case hex, quoted),
``Vary: Accept``, ``Cache-Control: public``, and 304 with no body when ``If-None-Match`` is that
ETag; the Content-Type names the kind (``application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList``).
The two files are one module because etag.go is the handler's way of answering, called from
handler.go alone; what the document may be negotiated into is :mod:`.negotiation`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable, Optional

from genericserver import runtime as rt
from genericserver.api.apidiscovery.v2 import types as _apidiscovery  # noqa: F401 - registers the document's kind (protobuf)
from genericserver.endpoints.discovery import util
from genericserver.endpoints.discovery.aggregated.negotiation import DISCOVERY_RESTRICTIONS

CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


class ResourceDiscoveryManager:
    """The groups of one discovery document (``/api``'s or ``/apis``'s) and its ETag."""

    def __init__(self):
        self._lock = rt.lock()
        self._groups: dict[str, dict[str, list[dict]]] = {}  # group -> version -> resources

    def add_group_version(self, group: str, version: str, resources: list[dict]) -> None:
        """``AddGroupVersion``: the version's resources, as installer.go's
        ``ConvertGroupVersionIntoToDiscovery`` made them."""
        with self._lock:
            self._groups.setdefault(group, {})[version] = resources

    def document(self) -> tuple[dict, str]:
        with self._lock:
            items = []
            for group, versions in self._groups.items():
                item: dict[str, Any] = {"metadata": {"name": group} if group else {},
                                        "versions": [{"version": v, "resources": rs, "freshness": "Current"} for v, rs in versions.items()]}
                items.append(item)
        etag = hashlib.sha512(json.dumps(items, separators=(",", ":")).encode()).hexdigest().upper()
        return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}, etag

    def __call__(self, environ: dict, start_response: util.StartResponse) -> Iterable[bytes]:
        doc, etag = self.document()
        quoted = json.dumps(etag)
        headers = [("ETag", quoted), ("Vary", "Accept"), ("Cache-Control", "public")]
        if environ.get("HTTP_IF_NONE_MATCH") == quoted:
            start_response("304 Not Modified", headers)
            return [b""]
        return util.write(environ, start_response, doc, headers, DISCOVERY_RESTRICTIONS, CONTENT_TYPE)

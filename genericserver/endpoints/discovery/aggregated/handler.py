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
from genericserver.endpoints.discovery import util
from genericserver.endpoints.discovery.aggregated.negotiation import DISCOVERY_RESTRICTIONS

CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def resource_discovery(group: str, version: str, resources: list[dict]) -> list[dict]:
    """Go's ``ConvertGroupVersionIntoToDiscovery``: each resource, its subresources listed
    under it (``pods/status`` as the subresource ``status`` of ``pods``)."""
    out = []
    by_name: dict[str, dict] = {}
    for r in resources:
        if "/" in r["name"]:
            parent, sub = r["name"].split("/", 1)
            kind = {"group": r.get("group", group), "version": r.get("version", version), "kind": r["kind"]}
            by_name[parent].setdefault("subresources", []).append({"subresource": sub, "responseKind": kind, "verbs": r["verbs"]})
            continue
        d: dict[str, Any] = {"resource": r["name"], "responseKind": {"group": group, "version": version, "kind": r["kind"]},
                             "scope": "Namespaced" if r["namespaced"] else "Cluster", "singularResource": r["singularName"],
                             "verbs": r["verbs"]}
        if r.get("shortNames"):
            d["shortNames"] = r["shortNames"]
        if r.get("categories"):
            d["categories"] = r["categories"]
        out.append(d)
        by_name[r["name"]] = d
    return out


class ResourceDiscoveryManager:
    """The groups of one discovery document (``/api``'s or ``/apis``'s) and its ETag."""

    def __init__(self):
        self._lock = rt.lock()
        self._groups: dict[str, dict[str, list[dict]]] = {}  # group -> version -> resources

    def add_group_version(self, group: str, version: str, resources: list[dict]) -> None:
        with self._lock:
            self._groups.setdefault(group, {})[version] = resource_discovery(group, version, resources)

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

"""Port of k8s.io/kube-openapi/pkg/handler/handler.go (v0.0.0-20260317180543-43fb72c5454a, as Kubernetes v1.36.0 pins it): ``/openapi/v2``.

The Swagger 2.0 document of everything served (:mod:`genericserver.openapi.builder`), with
its ``ETag`` (the document's SHA-512, quoted) and ``Last-Modified``; ``If-None-Match`` with the
ETag is 304. Go also serves it as gnostic protobuf (``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``,
what client-go's ``OpenAPISchema`` asks for); that form is not built here, so a client that
accepts only it gets 406, and kubectl v1.36, which reads the v3 documents, never asks.
"""

from __future__ import annotations

import hashlib
import json
from email.utils import formatdate
from typing import Any, Callable, Iterable

from genericserver import runtime as rt
from genericserver.endpoints.handlers.negotiation.negotiate import parse_accept
from genericserver.openapi.builder import document
from genericserver.registry.rest.rest import Resource

StartResponse = Callable[..., Any]


class OpenAPIV2:
    def __init__(self, resources: Callable[[], list[Resource]]):
        self.resources = resources
        self._lock = rt.lock()
        self._cached: tuple = ((), b"", "", 0.0)

    def __call__(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        accept = environ.get("HTTP_ACCEPT", "")
        if accept and not any((a.type, a.subtype) in (("application", "json"), ("application", "*"), ("*", "*")) for a in parse_accept(accept)):
            body = b"406: Not Acceptable"
            start_response("406 Not Acceptable", [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
            return [body]
        resources = self.resources()
        key = tuple(id(r) for r in resources)
        with self._lock:
            if self._cached[0] != key:
                data = json.dumps(document(resources), separators=(",", ":")).encode()
                self._cached = (key, data, hashlib.sha512(data).hexdigest().upper(), rt.wall())
            _, data, etag, modified = self._cached
        headers = [("Content-Type", "application/json"), ("ETag", f'"{etag}"'), ("Last-Modified", formatdate(modified, usegmt=True))]
        if environ.get("HTTP_IF_NONE_MATCH") == f'"{etag}"':
            start_response("304 Not Modified", headers)
            return [b""]
        start_response("200 OK", headers + [("Content-Length", str(len(data)))])
        return [data]

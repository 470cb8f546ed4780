"""Port of k8s.io/kube-openapi/pkg/handler3/handler.go (v0.0.0-20260317180543-43fb72c5454a, as Kubernetes v1.36.0 pins it): ``/openapi/v3``, as k8s.io/apiserver serves it.

* ``GET /openapi/v3``: the index, ``{"paths": {"api/v1": {"serverRelativeURL":
  "/openapi/v3/api/v1?hash=HASH"}, ...}}``, one entry per served group version;
* ``GET /openapi/v3/api/v1`` (or ``/apis/G/V``): that group version's document, with its
  ``ETag`` (the SHA-512 of the document, upper-case hex, quoted) and ``Last-Modified``;
  ``If-None-Match`` with the ETag is 304. With ``?hash=`` equal to the ETag the answer may be
  cached for good (``Cache-Control: public, immutable``, ``Expires`` a year on, ``Vary:
  Accept``); with a stale hash, a 301 to the current URL; an unknown group version is 404.

The documents are built when first asked for and kept until the served resources change.
Only JSON is served (kube-openapi also offers the gnostic protobuf form; kubectl v1.36 reads
the JSON).
"""

from __future__ import annotations

import hashlib
import json
from email.utils import formatdate
from typing import Any, Callable, Iterable

from genericserver import request, responsewriters
from genericserver import runtime as rt
from genericserver.openapi.builder3 import document
from genericserver.registry.rest.rest import Resource

StartResponse = Callable[..., Any]
PREFIX = "/openapi/v3"


def _etag(data: bytes) -> str:
    return hashlib.sha512(data).hexdigest().upper()


class OpenAPIService:
    """The index and the documents of ``groups()`` (group-version path -> its resources)."""

    def __init__(self, groups: Callable[[], dict[str, list[Resource]]]):
        self.groups = groups
        self._lock = rt.lock()
        self._cache: dict[str, tuple[tuple, bytes, str, float]] = {}

    def _document(self, path: str, resources: list[Resource]) -> tuple[bytes, str, float]:
        key = tuple(id(r) for r in resources)
        with self._lock:
            cached = self._cache.get(path)
            if cached is None or cached[0] != key:
                data = json.dumps(document(resources), separators=(",", ":")).encode()
                cached = (key, data, _etag(data), rt.wall())
                self._cache[path] = cached
            return cached[1], cached[2], cached[3]

    def index(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        paths = {}
        for path, resources in self.groups().items():
            _, etag, _ = self._document(path, resources)
            paths[path] = {"serverRelativeURL": f"{PREFIX}/{path}?hash={etag}"}
        body = json.dumps({"paths": paths}, separators=(",", ":")).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    def group_version(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")[len(PREFIX) + 1:]
        resources = self.groups().get(path)
        if resources is None:
            return responsewriters.http_error(start_response, "404 page not found", 404)
        data, etag, modified = self._document(path, resources)
        headers = [("Content-Type", "application/json"), ("ETag", f'"{etag}"'),
                   ("Last-Modified", formatdate(modified, usegmt=True))]
        given = request.query(environ).get("hash", [""])[0]
        if given:
            if given != etag:
                start_response("301 Moved Permanently", [("Location", f"{PREFIX}/{path}?hash={etag}"), ("Content-Length", "0")])
                return [b""]
            headers += [("Vary", "Accept"), ("Cache-Control", "public, immutable"),
                        ("Expires", formatdate(rt.wall() + 365 * 24 * 3600, usegmt=True))]
        if environ.get("HTTP_IF_NONE_MATCH") == f'"{etag}"':
            start_response("304 Not Modified", headers)
            return [b""]
        start_response("200 OK", headers + [("Content-Length", str(len(data)))])
        return [data]

"""Port of k8s.io/apiserver/pkg/endpoints/discovery/version.go (v1.36.0): ``/api/v1``, ``/apis/G/V``: the resources.

An ``APIResourceList``: ``groupVersion`` and each resource's name, singular name, scope, kind,
verbs, short names, categories and storage version hash, as the installer lists them. The
legacy group's list is written unversioned (no ``apiVersion``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from genericserver.endpoints.discovery import util


class APIVersionHandler:
    def __init__(self, group_version: str, lister: Callable[[], list[dict]]):
        self.group_version = group_version
        self.lister = lister

    def __call__(self, environ: dict, start_response: util.StartResponse) -> Iterable[bytes]:
        doc: dict = {"kind": "APIResourceList"}
        if "/" in self.group_version:
            doc["apiVersion"] = "v1"
        doc.update(groupVersion=self.group_version, resources=self.lister())
        return util.write(environ, start_response, doc)

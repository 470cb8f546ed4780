"""Port of k8s.io/apiserver/pkg/endpoints/discovery/group.go (v1.36.0): ``/apis/GROUP``, one group's versions."""

from __future__ import annotations

from typing import Any, Iterable, Optional

from genericserver.endpoints.discovery import util


class APIGroupHandler:
    def __init__(self, group: dict):
        self.group = group

    def __call__(self, environ: dict, start_response: util.StartResponse) -> Iterable[bytes]:
        return util.write(environ, start_response, {"kind": "APIGroup", "apiVersion": "v1", **self.group})

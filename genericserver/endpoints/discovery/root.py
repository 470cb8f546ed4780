"""Port of k8s.io/apiserver/pkg/endpoints/discovery/root.go (v1.36.0): ``/apis``, the named groups.

An ``APIGroupList``: each group with its versions (``groupVersion``, ``version``) and its
preferred version, in the order the groups were added.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from genericserver import runtime as rt
from genericserver.endpoints.discovery import util


def api_group(name: str, versions: list[str]) -> dict:
    """``metav1.APIGroup`` of a group whose first version is the preferred one."""
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": gvs, "preferredVersion": gvs[0]}


class RootAPIsHandler:
    def __init__(self):
        self._lock = rt.lock()
        self._groups: dict[str, dict] = {}

    def add_group(self, group: dict) -> None:
        with self._lock:
            self._groups[group["name"]] = group

    def groups(self) -> list[dict]:
        with self._lock:
            return list(self._groups.values())

    def __call__(self, environ: dict, start_response: util.StartResponse) -> Iterable[bytes]:
        doc = {"kind": "APIGroupList", "apiVersion": "v1", "groups": self.groups()}
        return util.write(environ, start_response, doc)

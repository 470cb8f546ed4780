"""Port of k8s.io/apiserver/pkg/endpoints/discovery/legacy.go (v1.36.0): ``/api``, the legacy group's versions.

``{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":ADDR}]}``
(no ``apiVersion``: the legacy documents are written unversioned). ``ADDR`` is the server's
external address (Go's ``DefaultAddresses``).
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from genericserver.endpoints.discovery import util


class LegacyRootAPIHandler:
    def __init__(self, external_address: str):
        self.external_address = external_address

    def __call__(self, environ: dict, start_response: util.StartResponse) -> Iterable[bytes]:
        versions = {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.external_address}]}
        return util.write(environ, start_response, versions)

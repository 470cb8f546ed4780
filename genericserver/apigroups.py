"""Port of k8s.io/apiserver/pkg/server/genericapiserver.go's API group installation, with pkg/server/routes/openapi.go's OpenAPI routes (v1.36.0).

``InstallLegacyAPIGroup`` and ``InstallAPIGroups``, split from genericapiserver.py to keep each
readable: each group version's REST routes (:class:`~genericserver.endpoints.installer.APIGroupVersion`)
and its discovery documents go on the server's mux:

* ``/api`` (APIVersions, or aggregated discovery of the legacy group, by Accept) and ``/api/v1``
  (its APIResourceList), the resources under ``/api/v1/``;
* ``/apis`` (APIGroupList, or aggregated discovery of the named groups), ``/apis/G`` (APIGroup),
  ``/apis/G/V`` (APIResourceList), the resources under ``/apis/G/V/``.

A discovery path answers with or without a trailing slash (``/api/``), as go-restful matches.

routes/openapi.go's part is the three OpenAPI routes the installed groups are described on.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from genericserver.endpoints.discovery.aggregated.handler import ResourceDiscoveryManager
from genericserver.endpoints.discovery.aggregated.wrapper import WrappedHandler
from genericserver.endpoints.discovery.group import APIGroupHandler
from genericserver.endpoints.discovery.legacy import LegacyRootAPIHandler
from genericserver.endpoints.discovery.root import RootAPIsHandler, api_group
from genericserver.endpoints.discovery.storageversionhash import storage_version_hash
from genericserver.endpoints.discovery.version import APIVersionHandler
from genericserver.endpoints.handlers.rest import RequestScope
from genericserver.endpoints.installer import APIGroupVersion, convert_group_version_into_to_discovery
from genericserver.mux import not_found
from genericserver.openapi.handler import OpenAPIV2
from genericserver.openapi.handler3 import OpenAPIService

WSGIApp = Callable[..., Iterable[bytes]]


class _DiscoveryOrREST:
    """``PREFIX/`` and below: the version's discovery for the prefix itself (``/api/v1/``), the
    REST routes for the rest."""

    def __init__(self, prefix: str, discovery: WSGIApp, rest: WSGIApp):
        self.prefix, self.discovery, self.rest = prefix, discovery, rest

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if environ.get("PATH_INFO", "").rstrip("/") == self.prefix:
            return self.discovery(environ, start_response)
        return self.rest(environ, start_response)


class APIGroups:
    """The server's API groups: the discovery handlers and what installs a group on ``mux``."""

    def __init__(self, mux: Any, *, external_address: str = "", not_found_app: WSGIApp = not_found):
        self.mux = mux
        self.not_found_app = not_found_app
        self.legacy_aggregated = ResourceDiscoveryManager()
        self.aggregated = ResourceDiscoveryManager()
        self.root = RootAPIsHandler()
        self.installed: dict[str, APIGroupVersion] = {}
        legacy = WrappedHandler(LegacyRootAPIHandler(external_address), self.legacy_aggregated)
        apis = WrappedHandler(self.root, self.aggregated)
        # listed as Go's root listing shows go-restful's web services; the slash forms unlisted
        mux.handle("/api", legacy)
        mux.handle("/apis", apis)
        mux.unlisted_handle("/api/", legacy)
        mux.unlisted_handle("/apis/", apis)
        # the OpenAPI documents of what is installed (routes/openapi.go: v3 per group version, v2 whole)
        self.openapi = OpenAPIService(self.served)
        mux.handle("/openapi/v3", self.openapi.index)
        mux.unlisted_handle_prefix("/openapi/v3/", self.openapi.group_version)
        mux.handle("/openapi/v2", OpenAPIV2(lambda: [r for rs in self.served().values() for r in rs]))

    def _install_version(self, prefix: str, group: str, version: str, scopes: list[RequestScope]) -> APIGroupVersion:
        gv = APIGroupVersion(prefix, scopes, not_found_app=self.not_found_app)
        self.installed[prefix] = gv

        def resources() -> list[dict]:
            out = gv.discovery()
            for scope, r in zip(gv.scopes.values(), out):
                # Go hashes a storage that names a storage version (a registry Store: installer.go:489);
                # a subresource has none of its own, nor do the reviews, which store nothing
                if "/" not in r["name"] and scope.store is not None:
                    r["storageVersionHash"] = storage_version_hash(group, version, r["kind"])
            return out

        discovery = APIVersionHandler(f"{group}/{version}" if group else version, resources)
        self.mux.handle(prefix, discovery)
        self.mux.unlisted_handle_prefix(prefix + "/", _DiscoveryOrREST(prefix, discovery, gv))
        manager = self.aggregated if group else self.legacy_aggregated
        manager.add_group_version(group, version, convert_group_version_into_to_discovery(gv.discovery()))
        return gv

    def served(self) -> dict:
        """Each installed group version's path (``api/v1``, ``apis/G/V``) and its resources (the
        OpenAPI documents': the paths of subresources are left out of them)."""
        return {prefix.lstrip("/"): [s.resource for s in gv.scopes.values() if not s.resource.subresource]
                for prefix, gv in self.installed.items()}

    def install_legacy_api_group(self, scopes: list[RequestScope]) -> APIGroupVersion:
        """``InstallLegacyAPIGroup("/api", ...)``: the core group's v1."""
        return self._install_version("/api/v1", "", "v1", scopes)

    def install_api_group(self, group: str, versions: dict[str, list[RequestScope]]) -> None:
        """``InstallAPIGroups`` for one group: its versions (the first preferred) and discovery."""
        for version, scopes in versions.items():
            self._install_version(f"/apis/{group}/{version}", group, version, scopes)
        info = api_group(group, list(versions))
        self.root.add_group(info)
        handler = APIGroupHandler(info)
        self.mux.handle(f"/apis/{group}", handler)
        self.mux.unlisted_handle(f"/apis/{group}/", handler)

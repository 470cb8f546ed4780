"""Port of k8s.io/apiserver/pkg/server/genericapiserver.go's API group installation, with pkg/server/routes/openapi.go's OpenAPI routes (v1.36.0).

``InstallLegacyAPIGroup`` and ``InstallAPIGroups``, split from genericapiserver.py to keep each
readable: each group version's REST routes (:class:`~genericserver.endpoints.installer.APIGroupVersion`)
and its discovery documents, as go-restful web services in the server's container
(:class:`~genericserver.github_com.emicklei.go_restful.v3.container.Container`):

* ``/api`` (APIVersions, or aggregated discovery of the legacy group, by Accept) and ``/api/v1``
  (its APIResourceList, the route ``GET /`` of the version's web service), the resources under it;
* ``/apis`` (APIGroupList, or aggregated discovery of the named groups), ``/apis/G`` (APIGroup),
  ``/apis/G/V`` (APIResourceList), the resources under ``/apis/G/V/``.

A discovery route produces and consumes JSON, YAML and protobuf (go-restful matches it with or
without a trailing slash: ``/api/``). The container takes every path a web service's root claims,
as Go's director (pkg/server/handler.go) hands it: the root itself and what is under it (``/apis``
only as itself and ``/apis/``), registered so on the mux. go-restful answers what none of its
routes serves there (``/api/v9``: 404, ``POST /api``: 405) with a Status, through the server's
service error handler.

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
from genericserver.endpoints.installer import MEDIA_TYPES, APIGroupVersion, convert_group_version_into_to_discovery
from genericserver.github_com.emicklei.go_restful.v3.container import Container
from genericserver.github_com.emicklei.go_restful.v3.web_service import WebService
from genericserver.handler import service_error_handler
from genericserver.openapi.handler import OpenAPIV2
from genericserver.openapi.handler3 import OpenAPIService

WSGIApp = Callable[..., Iterable[bytes]]


def _discovery_route(ws: WebService, handler: WSGIApp) -> None:
    """A discovery handler's ``ws.Route(ws.GET("/")...)``: JSON, YAML and protobuf, produced and consumed."""
    ws.route("GET", "/", lambda environ, start_response, _: handler(environ, start_response),
             produces=MEDIA_TYPES, consumes=MEDIA_TYPES)


class APIGroups:
    """The server's API groups: the discovery handlers and what installs a group on ``mux``."""

    def __init__(self, mux: Any, *, external_address: str = "", container: Optional[Container] = None):
        self.mux = mux
        if container is None:
            container = Container()
            container.service_error_handler(service_error_handler)
        self.container = container
        self.legacy_aggregated = ResourceDiscoveryManager()
        self.aggregated = ResourceDiscoveryManager()
        self.root = RootAPIsHandler()
        self.installed: dict[str, APIGroupVersion] = {}
        legacy = WebService("/api")
        _discovery_route(legacy, WrappedHandler(LegacyRootAPIHandler(external_address), self.legacy_aggregated))
        self.add_web_service(legacy)
        apis = WebService("/apis")
        _discovery_route(apis, WrappedHandler(self.root, self.aggregated))
        self.add_web_service(apis)
        # the OpenAPI documents of what is installed (routes/openapi.go: v3 per group version, v2 whole)
        self.openapi = OpenAPIService(self.served)
        mux.handle("/openapi/v3", self.openapi.index)
        mux.unlisted_handle_prefix("/openapi/v3/", self.openapi.group_version)
        mux.handle("/openapi/v2", OpenAPIV2(lambda: [r for rs in self.served().values() for r in rs]))

    def add_web_service(self, ws: WebService) -> None:
        """``GoRestfulContainer.Add``, and the paths its root claims routed to the container (the
        director's rule; listed as Go's root listing shows each web service's root)."""
        self.container.add(ws)
        root = ws.root_path
        self.mux.handle(root, self.container)
        if root == "/apis":  # everything under /apis is not go-restful's: only /apis and /apis/
            self.mux.unlisted_handle("/apis/", self.container)
        else:
            self.mux.unlisted_handle_prefix(root + "/", self.container)

    def _install_version(self, prefix: str, group: str, version: str, scopes: list[RequestScope]) -> APIGroupVersion:
        gv = APIGroupVersion(prefix, scopes)
        self.installed[prefix] = gv

        def resources() -> list[dict]:
            out = gv.discovery()
            for scope, r in zip(gv.scopes.values(), out):
                # Go hashes a storage that names a storage version (a registry Store: installer.go:489);
                # a subresource has none of its own, nor do the reviews, which store nothing
                if "/" not in r["name"] and scope.store is not None:
                    r["storageVersionHash"] = storage_version_hash(group, version, r["kind"])
            return out

        # InstallREST: the version's discovery is the route GET / of its web service
        _discovery_route(gv.web_service, APIVersionHandler(f"{group}/{version}" if group else version, resources))
        self.add_web_service(gv.web_service)
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
        ws = WebService(f"/apis/{group}")
        _discovery_route(ws, APIGroupHandler(info))
        self.add_web_service(ws)

"""Port of k8s.io/apiserver/pkg/endpoints/installer.go and groupversion.go (v1.36.0): the REST routes of one group version.

Go's ``APIInstaller.registerResourceHandlers`` turns each storage of an API group version into
go-restful routes: for a namespaced resource ``R`` under ``PREFIX`` (``/api/v1`` or
``/apis/GROUP/VERSION``)

* ``PREFIX/R``: GET lists (or watches) across all namespaces;
* ``PREFIX/namespaces/NS/R``: GET lists (or watches), POST creates, DELETE deletes the collection;
* ``PREFIX/namespaces/NS/R/NAME``: GET, PUT, PATCH, DELETE;

and for a cluster-scoped one the same without ``namespaces/NS``; a subresource ``R/SUB`` is
``PREFIX/namespaces/NS/R/NAME/SUB`` with the item's verbs, and POST where it creates by name
(``pods/NAME/eviction``, Go's ``NamedCreater``). A deprecated resource's routes answer
every request with its ``Warning`` (the installer's ``deprecation.WarningMessage``). Each route is instrumented as
Go's ``InstrumentRouteFunc`` does (the verb and scope in ``apiserver_request_total``), and
``discovery()`` is the ``APIResource`` list the installer hands to discovery.

The routes are go-restful's (:mod:`genericserver.github_com.emicklei.go_restful.v3`): one
:class:`WebService` per group version, rooted at its prefix, consuming ``*/*`` (a POST or PUT with
any Content-Type, or none, reaches its handler) and producing the serializer's media types, with a
route per verb the resource has. A GET of one object, a write and a delete produce JSON, YAML and
protobuf; a list adds their watch-stream forms; a GET that answers a stream adds what it writes
(``pods/log``: ``text/plain``, Go's ``ProducesMIMETypes``); a PATCH consumes the patch types
(``application/json-patch+json``, ``merge-patch``, ``strategic-merge-patch``, ``apply-patch+yaml``).
So go-restful refuses, before the handler runs, a path the group version does not have (404), a
method the path does not have (405, HEAD included), a PATCH of another Content-Type (415) and an
Accept that names none of the route's types (406; only ``*/*`` is a wildcard there), each written
as a Status by the server's service error handler (pkg/server/handler.go). The deprecated
``/watch/`` routes (``PREFIX/watch/namespaces/NS/R``, ``.../R/NAME``, ``PREFIX/watch/R``) are
the list handler made to watch, as Go's ``ListResource`` with ``forceWatch``.

go-restful matches a parameter to an empty token too, so ``PREFIX/namespaces//R`` is a route: a
list or watch there (a watch of one object too) reads every namespace (the store's key root, as
Go's), and any other verb is
the store's 400 ``Namespace parameter required.`` (Go's ``NamespaceKeyFunc``). Go gets to that
check in the store, after the media type, the body and (for a create) the object's validation,
which answers 422 first: here it is checked before the handler runs, so a request at fault
another way too may get the 400 where Go answers the other fault.

Two Go files in one module: groupversion.go's ``APIGroupVersion`` is what installer.go's
``APIInstaller`` installs, and here one class does both.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from genericserver.apimachinery.api import errors
from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.endpoints.handlers import create, delete, get, patch, response, update
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.endpoints.handlers.rest import Request, RequestScope, StartResponse
from genericserver.github_com.emicklei.go_restful.v3.route import RouteFunction
from genericserver.github_com.emicklei.go_restful.v3.web_service import WebService
from genericserver.metrics import APISERVER_COMPONENT
from genericserver.net.http import request as httprequest
from genericserver.storage import errors as storage_errors
from genericserver.warning import context as warning

WSGIApp = Callable[[dict, StartResponse], Iterable[bytes]]

# (endpoint, method) -> (handler, the verb Go's metrics name it)
_COLLECTION = {"GET": (get.list_resource, "LIST"), "POST": (create.create_resource, "POST"),
               "DELETE": (delete.delete_collection, "DELETECOLLECTION")}
_ITEM = {"GET": (get.get_resource, "GET"), "PUT": (update.update_resource, "PUT"),
         "DELETE": (delete.delete_resource, "DELETE"), "PATCH": (patch.patch_resource, "PATCH"),
         "POST": (create.create_named_resource, "POST")}  # a subresource that creates by name only
_VERB_OF = {("collection", "GET"): "list", ("collection", "POST"): "create", ("collection", "DELETE"): "deletecollection",
            ("item", "GET"): "get", ("item", "PUT"): "update", ("item", "POST"): "create", ("item", "DELETE"): "delete", ("item", "PATCH"): "patch",
            ("all", "GET"): "list"}


def _force_watch(scope: RequestScope, req: Request, start_response: StartResponse, namespace: Optional[str],
                 name: Optional[str] = None) -> Iterable[bytes]:
    """``restfulListResource(..., forceWatch=true)``: the handler of the deprecated ``/watch/`` routes."""
    return get.list_resource(scope, req, start_response, namespace, name, force_watch=True)


# the media types a route is told it produces (MediaTypesForSerializer), and what PATCH consumes
MEDIA_TYPES, STREAM_MEDIA_TYPES = negotiate.media_types(codec_factory.SUPPORTED)
# NamespaceKeyFunc's refusal of an object key with no namespace (registry/generic/registry/store.go)
NAMESPACE_REQUIRED = "Namespace parameter required."
PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json", "application/apply-patch+yaml")


def convert_group_version_into_to_discovery(resources: list[dict]) -> list[dict]:
    """``ConvertGroupVersionIntoToDiscovery``: a group version's ``APIResource`` list as aggregated
    discovery shows it, each resource with its subresources listed under it (``pods/status`` as
    the subresource ``status`` of ``pods``)."""
    out = []
    by_name: dict[str, dict] = {}
    for r in resources:
        if "/" in r["name"]:
            parent, sub = r["name"].split("/", 1)
            kind = {"group": r.get("group", ""), "version": r.get("version", ""), "kind": r["kind"]}
            by_name[parent].setdefault("subresources", []).append({"subresource": sub, "responseKind": kind, "verbs": r["verbs"]})
            continue
        # the APIResource's own group and version, empty unless it names another's (installer.go:98-101)
        d: dict[str, Any] = {"resource": r["name"], "responseKind": {"group": r.get("group", ""), "version": r.get("version", ""), "kind": r["kind"]},
                             "scope": "Namespaced" if r["namespaced"] else "Cluster", "singularResource": r["singularName"],
                             "verbs": r["verbs"]}
        if r.get("shortNames"):
            d["shortNames"] = r["shortNames"]
        if r.get("categories"):
            d["categories"] = r["categories"]
        out.append(d)
        by_name[r["name"]] = d
    return out


class APIGroupVersion:
    """The resources of one group version, served under ``prefix`` (Go's ``APIGroupVersion``
    and its ``InstallREST``). ``scopes`` maps each resource name to its :class:`RequestScope`."""

    def __init__(self, prefix: str, scopes: list[RequestScope]):
        self.prefix = prefix
        self.scopes = {s.resource.name: s for s in scopes}
        # newWebService: any Content-Type consumed unless a route says, every media type produced
        self.web_service = WebService(prefix, consumes=["*/*"], produces=MEDIA_TYPES + STREAM_MEDIA_TYPES)
        for scope in scopes:
            self._register_resource_handlers(scope)

    def _register_resource_handlers(self, scope: RequestScope) -> None:
        """``registerResourceHandlers``: the routes of one resource, for the verbs it has."""
        r = scope.resource
        ns = "/namespaces/{namespace}" if r.namespaced else ""
        if r.subresource:  # PREFIX/namespaces/NS/R/NAME/SUB: the item's verbs only
            paths = [("item", f"{ns}/{r.name.split('/')[0]}/{{name}}/{r.subresource}")]
        else:
            paths = ([("all", f"/{r.name}")] if r.namespaced else []) + [
                ("collection", f"{ns}/{r.name}"), ("item", f"{ns}/{r.name}/{{name}}")]
        for endpoint, path in paths:
            for method in ("GET", "PUT", "PATCH", "POST", "DELETE"):
                verb = _VERB_OF.get((endpoint, method))
                if verb is None or verb not in r.verbs or endpoint == "item" and method == "POST" and not r.subresource:
                    continue
                produces = list(scope.extra.get("produces_mime_types", ())) + MEDIA_TYPES
                if verb == "list":
                    produces = MEDIA_TYPES + STREAM_MEDIA_TYPES
                table = _ITEM if endpoint == "item" else _COLLECTION
                self.web_service.route(method, path, self._route_function(scope, endpoint, *table[method]), produces=produces,
                                       consumes=list(PATCH_TYPES) if method == "PATCH" else None)
        if "watch" in r.verbs and not r.subresource:
            # the watch routes deprecated in 1.11: a list handler that watches whatever the query says
            watches = ([("all", f"/watch/{r.name}", "WATCHLIST")] if r.namespaced else []) + [
                ("collection", f"/watch{ns}/{r.name}", "WATCHLIST"), ("item", f"/watch{ns}/{r.name}/{{name}}", "WATCH")]
            for endpoint, path, metric_verb in watches:
                if metric_verb == "WATCHLIST" and "list" not in r.verbs:
                    continue  # allowWatchList: a watcher that also lists
                self.web_service.route("GET", path, self._route_function(scope, endpoint, _force_watch, metric_verb),
                                       produces=MEDIA_TYPES + STREAM_MEDIA_TYPES)

    def _route_function(self, scope: RequestScope, endpoint: str, handler: Callable[..., Iterable[bytes]],
                        metric_verb: str) -> RouteFunction:
        """The route's function: the handler, with the resource's deprecation warning and Go's
        ``InstrumentRouteFunc`` around it."""
        r = scope.resource
        if scope.metrics is None:
            metric_scope = ""
        elif endpoint == "item" or metric_verb == "POST":
            metric_scope = "resource"
        else:
            metric_scope = "cluster" if endpoint == "all" or not r.namespaced else "namespace"

        def route_function(environ: dict, start_response: StartResponse, args: dict) -> Iterable[bytes]:
            req = Request(environ)
            namespace: Optional[str] = args.get("namespace") if r.namespaced else ""
            lists = handler in (get.list_resource, _force_watch)
            if endpoint == "all" or r.namespaced and not namespace and lists:
                # (go-restful lets a parameter be empty, /namespaces//R: the store's key root, every namespace's)
                namespace = None

            def serve(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
                if r.deprecation:  # every answer carries it, errors too (AddWarningsHandler)
                    warning.add_warning(environ, "", r.deprecation)
                try:
                    if r.namespaced and namespace == "":  # an object's key needs a namespace
                        raise errors.new_bad_request(NAMESPACE_REQUIRED)
                    if "name" in args:
                        return handler(scope, req, start_response, namespace, args["name"])
                    return handler(scope, req, start_response, namespace)
                except errors.StatusError as err:
                    return response.write_error(scope, environ, start_response, err)
                except httprequest.BodyError as err:  # the body was cut off or malformed on the wire
                    return response.write_error(scope, environ, start_response, err)
                except storage_errors.UnwrappedError as err:  # a storage's plain error: a 500 with its text
                    return response.write_error(scope, environ, start_response, err)

            if scope.metrics is None:
                return serve(environ, start_response)
            instrumented = scope.metrics.instrument_handler_func(
                metric_verb, r.group, r.version, r.name, "", metric_scope, APISERVER_COMPONENT, False, "", serve)
            return instrumented(environ, start_response)

        return route_function

    def discovery(self) -> list[dict]:
        """The ``APIResource`` s of this group version, as the installer lists them."""
        out = []
        for s in self.scopes.values():
            r = s.resource
            entry: dict[str, Any] = {"name": r.name, "singularName": r.singular_name, "namespaced": r.namespaced}
            if r.kind_group_version:  # a subresource of another group version names it
                group, _, version = r.kind_group_version.rpartition("/")
                entry.update(group=group, version=version)
            entry.update(kind=r.kind, verbs=list(r.verbs))
            if r.short_names:
                entry["shortNames"] = list(r.short_names)
            if r.categories:
                entry["categories"] = list(r.categories)
            out.append(entry)
        return out

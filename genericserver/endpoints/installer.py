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

The routes are a werkzeug ``Map`` (the project's WSGI toolkit) standing for go-restful: a path
it does not know falls through to the server's not-found handler; a known path with another
method is go-restful's ``405: Method Not Allowed`` (HEAD included, which werkzeug would let in
wherever GET is).

Two Go files in one module: groupversion.go's ``APIGroupVersion`` is what installer.go's
``APIInstaller`` installs, and here one class does both.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, Optional

from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule

from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.endpoints.handlers import create, delete, get, patch, response, update
from genericserver.endpoints.handlers.rest import Request, RequestScope, StartResponse
from genericserver.metrics import APISERVER_COMPONENT
from genericserver.mux import not_found
from genericserver.net.http import request as httprequest

# werkzeug compiles each routing rule through Python's ast module, and CPython 3.11 can fail when
# two threads build ASTs at once ("SystemError: AST constructor recursion depth mismatch",
# python/cpython gh-106905). The cluster starts its replicas' servers side by side, so one rule
# table is built at a time.
RULES_COMPILING = rt.lock()

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


def _method_not_allowed(start_response: StartResponse) -> Iterable[bytes]:
    body = b"405: Method Not Allowed"
    start_response("405 Method Not Allowed", [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
    return [body]


@functools.lru_cache(maxsize=None)
def _routes(prefix: str, shape: tuple[tuple[str, bool, bool], ...]) -> Map:
    """The rule table of resources shaped so, (name, a subresource?, namespaced?) each: built once
    per shape and shared (a werkzeug ``Map`` is only read once built), as every server of a test
    run, and each replica of a simulated cluster, serves the same few group versions."""
    rules = []
    for r, subresource, namespaced in shape:
        if subresource:  # PREFIX/namespaces/NS/R/NAME/SUB: the item's verbs only
            parent, sub = r.split("/", 1)
            ns = "/namespaces/<namespace>" if namespaced else ""
            rules.append(Rule(f"{prefix}{ns}/{parent}/<name>/{sub}", endpoint=("item", r)))
        elif namespaced:
            rules += [Rule(f"{prefix}/{r}", endpoint=("all", r)),
                      Rule(f"{prefix}/namespaces/<namespace>/{r}", endpoint=("collection", r)),
                      Rule(f"{prefix}/namespaces/<namespace>/{r}/<name>", endpoint=("item", r))]
        else:
            rules += [Rule(f"{prefix}/{r}", endpoint=("collection", r)),
                      Rule(f"{prefix}/{r}/<name>", endpoint=("item", r))]
    with RULES_COMPILING:  # (see the lock's comment)
        return Map(rules, merge_slashes=False)  # "a//b" is a 404, not a redirect


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

    def __init__(self, prefix: str, scopes: list[RequestScope], *, not_found_app: WSGIApp = not_found):
        self.prefix = prefix
        self.scopes = {s.resource.name: s for s in scopes}
        self.not_found_app = not_found_app
        shape = tuple((s.resource.name, bool(s.resource.subresource), s.resource.namespaced) for s in scopes)
        self.urls = _routes(prefix, shape)

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

    def __call__(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        req = Request(environ)
        try:
            (endpoint, resource), args = self.urls.bind_to_environ(environ).match(method="GET")
        except (NotFound, MethodNotAllowed):
            return self.not_found_app(environ, start_response)
        scope = self.scopes[resource]
        method = req.method
        table = _ITEM if endpoint == "item" else _COLLECTION if endpoint == "collection" else {"GET": _COLLECTION["GET"]}
        verb = _VERB_OF.get((endpoint, method))
        named_create = endpoint == "item" and method == "POST"
        if method not in table or verb not in scope.resource.verbs or named_create and not scope.resource.subresource:
            return _method_not_allowed(start_response)
        handler, metric_verb = table[method]
        namespace = args.get("namespace") if scope.resource.namespaced else ""
        if endpoint == "all":
            namespace = None

        def serve(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
            if scope.resource.deprecation:  # every answer carries it, errors too
                start_response = response.with_warnings(start_response, [scope.resource.deprecation])
            try:
                if "name" in args:
                    return handler(scope, req, start_response, namespace, args["name"])
                return handler(scope, req, start_response, namespace)
            except errors.StatusError as err:
                return response.write_error(scope, environ, start_response, err)
            except httprequest.BodyError as err:  # the body was cut off or malformed on the wire
                return response.write_error(scope, environ, start_response, err)

        if scope.metrics is None:
            return serve(environ, start_response)
        metric_scope = "resource" if endpoint == "item" or metric_verb == "POST" else (
            "cluster" if namespace is None or not scope.resource.namespaced else "namespace")
        r = scope.resource
        instrumented = scope.metrics.instrument_handler_func(
            metric_verb, r.group, r.version, r.name, "", metric_scope, APISERVER_COMPONENT, False, "", serve)
        return instrumented(environ, start_response)

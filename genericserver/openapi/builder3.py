"""Port of k8s.io/kube-openapi/pkg/builder3/openapi.go (v0.0.0-20260317180543-43fb72c5454a, as Kubernetes v1.36.0 pins it): OpenAPI v3 documents, as k8s.io/apiserver builds them.

One OpenAPI 3.0 document per group version (``/openapi/v3/api/v1``,
``/openapi/v3/apis/authentication.k8s.io/v1``), built from what is served:

* ``paths``: each route the installer registers, with Go's operation ids
  (``readCoreV1NamespacedConfigMap``, ``createAuthenticationV1SelfSubjectReview``...),
  ``x-kubernetes-action``, ``x-kubernetes-group-version-kind``, the query parameters of the
  verb (``dryRun``, ``fieldManager``, ``fieldValidation``, ``force`` for a patch, the list
  options for a list), the request body's media types and the answers' schemas;
* ``components.schemas``: every struct reachable from the served kinds
  (:mod:`genericserver.apimachinery.structs`), with its description, properties, required
  fields, ``x-kubernetes-group-version-kind`` on top-level kinds and the list and patch markers
  (``x-kubernetes-list-type``, ``x-kubernetes-list-map-keys``, ``x-kubernetes-patch-strategy``,
  ``x-kubernetes-patch-merge-key``, ``x-kubernetes-map-type``). A nested struct is
  ``allOf: [$ref]`` with the field's own description beside it, as builder3 writes it.

kubectl reads it three ways: ``explain`` (the schema of a kind and its fields), client-side
``apply`` (the patch markers, to compute a strategic merge patch), and every write
(``fieldValidation`` among a PATCH's parameters tells it the server validates fields itself,
so ``--validate=strict`` is sent to the server).
"""

from __future__ import annotations

from typing import Any

from genericserver.apimachinery.apis.meta.v1.types import STATUS
from genericserver.apimachinery.structs import ListOf, MapOf, Struct, Type
from genericserver.registry.rest.rest import Resource

_SCALARS = {"string": {"type": "string"}, "bool": {"type": "boolean"}, "int32": {"type": "integer", "format": "int32"},
            "int64": {"type": "integer", "format": "int64"}, "bytes": {"type": "string", "format": "byte"},
            "float64": {"type": "number", "format": "double"}}
JSON_TYPES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"]


def _ref(s: Struct) -> dict:
    return {"$ref": f"#/components/schemas/{s.name}"}


def schema_of(t: Type, structs: dict[str, Struct]) -> dict:
    """The schema of a field's type; structs met on the way are added to ``structs``."""
    if isinstance(t, str):
        return dict(_SCALARS[t])
    if isinstance(t, MapOf):
        return {"type": "object", "additionalProperties": schema_of(t.value, structs)}
    if isinstance(t, ListOf):
        return {"type": "array", "items": schema_of(t.item, structs)}
    structs.setdefault(t.name, t)
    return _ref(t)


def definition(s: Struct, structs: dict[str, Struct]) -> dict:
    """``components.schemas[s.name]``."""
    if s.json_form is not None:
        return {"description": s.doc, **s.json_form}
    props: dict[str, Any] = {}
    if s.type_meta:
        props["apiVersion"] = {"description": "The versioned schema of this representation of an object.", "type": "string"}
        props["kind"] = {"description": "The REST resource this object represents, in CamelCase.", "type": "string"}
    for f in s.json_fields:
        sub = schema_of(f.type, structs)
        prop: dict[str, Any]
        if "$ref" in sub:
            prop = {"allOf": [sub], "description": f.doc} if f.doc else {"allOf": [sub]}
        else:
            prop = {"description": f.doc, **sub} if f.doc else sub
        if f.default is not None:
            prop["default"] = f.default
        if f.list_type:
            prop["x-kubernetes-list-type"] = f.list_type
        if f.list_map_keys:
            prop["x-kubernetes-list-map-keys"] = list(f.list_map_keys)
        if f.map_type:
            prop["x-kubernetes-map-type"] = f.map_type
        if f.patch_merge_key:
            prop["x-kubernetes-patch-merge-key"] = f.patch_merge_key
        if f.patch_strategy:
            prop["x-kubernetes-patch-strategy"] = f.patch_strategy
        props[f.json] = prop
    out: dict[str, Any] = {"description": s.doc, "type": "object", "properties": dict(sorted(props.items()))}
    required = [f.json for f in s.json_fields if f.required]
    if required:
        out["required"] = required
    if s.gvks:
        out["x-kubernetes-group-version-kind"] = [{"group": g, "kind": k, "version": v} for g, v, k in s.gvks]
    return out


def _words(group: str, version: str) -> str:
    # operation ids name the group in CamelCase: "" -> Core, "authentication.k8s.io" -> Authentication
    name = group.split(".")[0] if group else "core"
    return "".join(p[:1].upper() + p[1:] for p in name.split("-")) + version[:1].upper() + version[1:]


def _param(name: str, where: str, description: str, schema: dict, required: bool = False) -> dict:
    p = {"name": name, "in": where, "description": description, "schema": schema}
    if required:
        p["required"] = True
    return p


_STR = {"type": "string"}
PRETTY = _param("pretty", "query", "If 'true', the output is indented.", _STR)
DRY_RUN = _param("dryRun", "query", "'All' runs every step of the request but stores nothing.", _STR)
FIELD_MANAGER = _param("fieldManager", "query", "The name of the actor making the change.", _STR)
FIELD_VALIDATION = _param("fieldValidation", "query",
                          "What the server does with unknown or duplicate fields: Ignore, Warn (the default) or Strict.", _STR)
FORCE = _param("force", "query", "Only for apply patches (not served here).", {"type": "boolean"})
LIST_PARAMS = [_param(n, "query", d, s) for n, d, s in (
    ("allowWatchBookmarks", "Ask for BOOKMARK events in a watch.", {"type": "boolean"}),
    ("continue", "The token of the previous page, to get the next.", _STR),
    ("fieldSelector", "Select by fields (metadata.name, metadata.namespace).", _STR),
    ("labelSelector", "Select by labels.", _STR),
    ("limit", "The most items to answer; the rest come with the continue token.", {"type": "integer"}),
    ("resourceVersion", "The version to list at or watch from.", _STR),
    ("resourceVersionMatch", "How resourceVersion applies to a list: Exact or NotOlderThan.", _STR),
    ("sendInitialEvents", "Start a watch with the current state as ADDED events.", {"type": "boolean"}),
    ("timeoutSeconds", "How long a watch or list may take.", {"type": "integer"}),
    ("watch", "Watch for changes instead of listing.", {"type": "boolean"}),
)]


def _content(schema: dict, types: list[str]) -> dict:
    return {t: {"schema": schema} for t in types}


def _operation(op_id: str, action: str, r: Resource, params: list[dict], answer: dict, body: dict = None, body_types: list[str] = None,
               codes: tuple[str, ...] = ("200",)) -> dict:
    op: dict[str, Any] = {"tags": [_words(r.group, r.version)[:1].lower() + _words(r.group, r.version)[1:]], "description": f"{action} {r.kind}",
                          "operationId": op_id, "parameters": params}
    if body is not None:
        op["requestBody"] = {"content": _content(body, body_types or JSON_TYPES), "required": True}
    op["responses"] = {code: {"description": "OK" if code == "200" else "Created",
                              "content": _content(answer, JSON_TYPES)} for code in codes}
    op["responses"]["401"] = {"description": "Unauthorized"}
    op["x-kubernetes-action"] = action
    op["x-kubernetes-group-version-kind"] = {"group": r.group, "kind": r.kind, "version": r.version}
    return op


def paths(resources: list[Resource], structs: dict[str, Struct]) -> dict:
    """The paths of one group version's resources."""
    out: dict[str, Any] = {}
    for r in resources:
        prefix = f"/apis/{r.group}/{r.version}" if r.group else f"/api/{r.version}"
        words = _words(r.group, r.version)
        scope = "Namespaced" if r.namespaced else ""
        collection = f"{prefix}/namespaces/{{namespace}}/{r.name}" if r.namespaced else f"{prefix}/{r.name}"
        obj, lst = schema_of(r.struct, structs), schema_of(r.list_struct, structs) if r.list_struct else None
        status = schema_of(STATUS, structs)
        common = [PRETTY]
        if r.namespaced:
            common = [_param("namespace", "path", "The object's namespace.", _STR, True), PRETTY]
        coll: dict[str, Any] = {"parameters": common}
        if "list" in r.verbs and lst:
            coll["get"] = _operation(f"list{words}{scope}{r.kind}", "list", r, LIST_PARAMS, lst)
        if "create" in r.verbs:
            coll["post"] = _operation(f"create{words}{scope}{r.kind}", "post", r, [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION], obj, obj,
                                      codes=("200", "201"))
        if "deletecollection" in r.verbs:
            coll["delete"] = _operation(f"deletecollection{words}{scope}{r.kind}", "deletecollection", r, [DRY_RUN] + LIST_PARAMS, status)
        out[collection] = coll
        if any(v in r.verbs for v in ("get", "update", "patch", "delete")):
            item: dict[str, Any] = {"parameters": [_param("name", "path", f"The {r.kind}'s name.", _STR, True)] + common}
            if "get" in r.verbs:
                item["get"] = _operation(f"read{words}{scope}{r.kind}", "get", r, [], obj)
            if "update" in r.verbs:
                item["put"] = _operation(f"replace{words}{scope}{r.kind}", "put", r, [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION], obj, obj)
            if "patch" in r.verbs:
                item["patch"] = _operation(f"patch{words}{scope}{r.kind}", "patch", r, [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE], obj,
                                           {"type": "object"}, PATCH_TYPES)
            if "delete" in r.verbs:
                item["delete"] = _operation(f"delete{words}{scope}{r.kind}", "delete", r, [DRY_RUN], status)
            out[collection + "/{name}"] = item
        if r.namespaced and "list" in r.verbs and lst:
            out[f"{prefix}/{r.name}"] = {"parameters": [PRETTY],
                                         "get": _operation(f"list{words}{r.kind}ForAllNamespaces", "list", r, LIST_PARAMS, lst)}
    return out


def document(resources: list[Resource], title: str = "Kubernetes", version: str = "v1.36.0") -> dict:
    """The OpenAPI 3.0 document of one group version's resources."""
    structs: dict[str, Struct] = {}
    doc_paths = paths(resources, structs)
    schemas: dict[str, Any] = {}
    while len(schemas) < len(structs):
        for name, s in sorted(structs.items()):
            if name not in schemas:
                schemas[name] = definition(s, structs)
    return {"openapi": "3.0.0", "info": {"title": title, "version": version}, "paths": doc_paths,
            "components": {"schemas": dict(sorted(schemas.items())),
                           "securitySchemes": {"BearerToken": {"type": "apiKey", "description": "Bearer Token authentication",
                                                               "name": "authorization", "in": "header"}}}}

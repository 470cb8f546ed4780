"""Port of k8s.io/apiserver/pkg/endpoints/handlers/create.go (v1.36.0): POST of a new object.

In Go's order: the output media type is negotiated (406 before anything is read), the
``CreateOptions`` of the query are checked (``dryRun``, ``fieldManager``, ``fieldValidation``:
422 on ``CreateOptions.meta.k8s.io``), the body is read (413 over the limit) and decoded by its
Content-Type (415 for a type the server cannot read; 400 for a body that is not the kind;
with ``fieldValidation=Strict`` also for unknown or duplicate fields, else those come back as
``Warning`` headers), then ``rest.BeforeCreate``: the namespace of the object must be the
path's, ``generateName`` is completed, and the object is validated (422 Invalid, with one cause
a field). The store refuses a name that exists (409 AlreadyExists). The answer is 201 with the
object as stored; with ``dryRun=All`` the same, stored nowhere.

A subresource that creates by name (Go's ``NamedCreater``: ``POST pods/NAME/eviction``) goes
through :func:`create_named_resource`: the name is the path's, and what the storage answers (a
Status, for an eviction) is written with 201, its own ``code`` filled in when it has none.
"""

from __future__ import annotations

import random
from typing import Iterable

from genericserver.apimachinery.api import errors
from genericserver.apimachinery.apis.meta.v1 import validation
from genericserver.endpoints.handlers import response
from genericserver.endpoints.handlers.rest import Request, RequestScope, StartResponse, decode_body, validate_new

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # generateName's alphabet: no vowels, no look-alikes


def create_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str) -> Iterable[bytes]:
    response.negotiate_output(scope, req.environ)
    dry_run = req.args.getlist("dryRun")
    validation.validate_write_options("CreateOptions", dry_run, req.args.get("fieldManager", ""), req.args.get("fieldValidation", ""))
    obj, warnings = decode_body(scope, req)
    creater = scope.extra.get("create")
    if creater is not None:  # a storage that makes its answer itself (a review: nothing is stored)
        result = creater(req.environ, namespace, obj)
        return response.write_object(scope, req.environ, response.with_warnings(start_response, warnings), 201, result, args=req.args)
    meta = obj.setdefault("metadata", {})
    if scope.resource.namespaced:
        if meta.get("namespace") and meta["namespace"] != namespace:
            raise errors.new_bad_request("the namespace of the provided object does not match the namespace sent on the request")
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"] + "".join(random.choice(_NAME_CHARS) for _ in range(5))
    validate_new(scope, obj, None)
    created = scope.store.create(namespace, obj, dry_run=bool(dry_run))
    return response.write_object(scope, req.environ, response.with_warnings(start_response, warnings), 201, created, args=req.args)


def create_named_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str, name: str) -> Iterable[bytes]:
    """``CreateNamedResource``: the body decoded as the subresource's kind, its namespace
    checked against the path's, then the storage's ``create_named(namespace, name, obj,
    dry_run)``."""
    response.negotiate_output(scope, req.environ)
    dry_run = req.args.getlist("dryRun")
    validation.validate_write_options("CreateOptions", dry_run, req.args.get("fieldManager", ""), req.args.get("fieldValidation", ""))
    obj, warnings = decode_body(scope, req)
    meta = obj.setdefault("metadata", {})
    if scope.resource.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.new_bad_request("the namespace of the provided object does not match the namespace sent on the request")
    result = scope.extra["create_named"](namespace, name, obj, dry_run)
    return response.write_object(scope, req.environ, response.with_warnings(start_response, warnings), 201, result, args=req.args)

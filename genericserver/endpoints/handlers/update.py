"""Port of k8s.io/apiserver/pkg/endpoints/handlers/update.go (v1.36.0): PUT of a whole object.

As create.go, with ``UpdateOptions``; then the name in the body must be the path's
(``the name of the object (x) does not match the name on the URL (y)``, 400) and so must the
namespace. The store refuses a stale ``metadata.resourceVersion`` (409 Conflict) and keeps what
the server owns; an object that does not exist is 404 (the resources here do not create on
update). The answer is 200 with the object as stored.
"""

from __future__ import annotations

from typing import Iterable

from genericserver.apimachinery.api import errors
from genericserver.apimachinery.apis.meta.v1 import validation
from genericserver.endpoints.handlers import response
from genericserver.endpoints.handlers.rest import Request, RequestScope, StartResponse, decode_body, validate_new


def update_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str, name: str) -> Iterable[bytes]:
    response.negotiate_output(scope, req.environ)
    dry_run = req.args.getlist("dryRun")
    validation.validate_write_options("UpdateOptions", dry_run, req.args.get("fieldManager", ""), req.args.get("fieldValidation", ""))
    obj, warnings = decode_body(scope, req)
    meta = obj.setdefault("metadata", {})
    if scope.resource.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.new_bad_request("the namespace of the provided object does not match the namespace sent on the request")
    if meta.get("name", "") != name:
        raise errors.new_bad_request(f"the name of the object ({meta.get('name', '')}) does not match the name on the URL ({name})")
    old = scope.store.get(namespace, name)
    validate_new(scope, obj, old)
    updated = scope.store.update(namespace, name, obj, dry_run=bool(dry_run))
    return response.write_object(scope, req.environ, response.with_warnings(start_response, warnings), 200, updated, args=req.args)

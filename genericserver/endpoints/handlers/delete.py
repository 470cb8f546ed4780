"""Port of k8s.io/apiserver/pkg/endpoints/handlers/delete.go (v1.36.0): DELETE of one object, and of a collection.

The ``DeleteOptions`` come from the body when there is one (JSON, any kind but
``DeleteOptions`` a 400), else from the query (``gracePeriodSeconds``, ``propagationPolicy``,
``orphanDependents``, ``dryRun``), and are checked (422 on ``DeleteOptions.meta.k8s.io``). The
preconditions (``uid``, ``resourceVersion``) must hold (409 Conflict). The generic store answers
a ``Success`` Status naming the object (its name, the resource as kind, its uid), 200. A
storage with graceful deletion (``scope.extra["delete"]``, the cluster's pods) decides itself:
it answers the object, updated (Terminating) or removed.

``delete_collection`` deletes what the list options select and answers the list of what it
deleted (the generic store's ``DeleteCollection``), 200.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional

from genericserver.apimachinery.api import errors
from genericserver.apimachinery.apis.meta.v1 import validation
from genericserver.endpoints.handlers import response
from genericserver.endpoints.handlers.rest import Request, RequestScope, StartResponse, read_body, selectors


def delete_options(req: Request) -> dict:
    """The DeleteOptions of the request, checked as Go checks them."""
    body = read_body(req)
    if body:
        try:
            opts = json.loads(body)
        except ValueError as err:
            raise errors.new_bad_request(f"couldn't get version/kind; json parse error: {err}") from None
        if not isinstance(opts, dict):
            raise errors.new_bad_request("decoded object cannot be converted to DeleteOptions")
        kind = opts.get("kind") or "DeleteOptions"
        if kind != "DeleteOptions":
            raise errors.new_bad_request("decoded object cannot be converted to DeleteOptions")
    else:
        opts = {}
        grace = req.args.get("gracePeriodSeconds")
        if grace is not None:
            try:
                opts["gracePeriodSeconds"] = int(grace)
            except ValueError:
                raise errors.new_bad_request(f"strconv.ParseInt: parsing {errors._q(grace)}: invalid syntax") from None
        for key in ("propagationPolicy",):
            if key in req.args:
                opts[key] = req.args[key]
        if "orphanDependents" in req.args:
            opts["orphanDependents"] = req.args["orphanDependents"].lower() in ("1", "t", "true")
        if "dryRun" in req.args:
            opts["dryRun"] = req.args.getlist("dryRun")
    validation.validate_delete_options(opts.get("dryRun") or [], opts.get("propagationPolicy"), opts.get("orphanDependents"))
    return opts


def _preconditions(opts: dict) -> tuple[Optional[str], Optional[str]]:
    pre: Any = opts.get("preconditions") or {}
    return pre.get("uid"), pre.get("resourceVersion")


def delete_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str, name: str) -> Iterable[bytes]:
    response.negotiate_output(scope, req.environ)
    opts = delete_options(req)
    graceful = scope.extra.get("delete")
    if graceful is not None:
        # a storage with graceful deletion: it answers the object, deleted or not (a pod's
        # store returns it either way, Go's ReturnDeletedObject); 202 when it is not gone yet
        # and the client asked for its dependents to go first
        obj, deleted = graceful(namespace, name, opts)
        code = 202 if not deleted and opts.get("orphanDependents") is False else 200
        return response.write_object(scope, req.environ, start_response, code, obj, args=req.args)
    uid, rv = _preconditions(opts)
    gone = scope.store.delete(namespace, name, uid=uid, resource_version=rv, dry_run=bool(opts.get("dryRun")))
    details = {"name": name}
    if scope.resource.group:
        details["group"] = scope.resource.group
    details.update(kind=scope.resource.name, uid=gone["metadata"]["uid"])
    result = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
    return response.write_object(scope, req.environ, start_response, 200, result, args=req.args)


def delete_collection(scope: RequestScope, req: Request, start_response: StartResponse, namespace: Optional[str]) -> Iterable[bytes]:
    response.negotiate_output(scope, req.environ)
    opts = delete_options(req)
    matches = selectors(scope, req)
    items, _ = scope.store.list(namespace)
    deleted = []
    for item in items:
        if not matches(item):
            continue
        meta = item["metadata"]
        try:
            if scope.extra.get("delete") is not None:
                gone, _ = scope.extra["delete"](meta.get("namespace", ""), meta["name"], dict(opts))
            else:
                gone = scope.store.delete(meta.get("namespace", ""), meta["name"], dry_run=bool(opts.get("dryRun")))
        except errors.StatusError as err:
            if errors.is_not_found(err):
                continue  # deleted by someone else meanwhile: not an error, as in Go
            raise
        gone.pop("kind", None)
        gone.pop("apiVersion", None)
        deleted.append(gone)
    lst = {"kind": scope.resource.list_struct.short_name if scope.resource.list_struct else scope.kind + "List",
           "apiVersion": scope.resource.group_version, "metadata": {}, "items": deleted}
    return response.write_object(scope, req.environ, start_response, 200, lst, is_list=True, args=req.args)

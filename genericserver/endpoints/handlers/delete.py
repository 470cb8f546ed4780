"""Port of k8s.io/apiserver/pkg/endpoints/handlers/delete.go (v1.36.0): DELETE of one object, and of a collection.

``DeleteResource``'s steps, in Go's order (delete.go at v1.36.0): the output media type (406,
line 80); the ``DeleteOptions`` from the body when there is one (413 over the limit; 415 for a
Content-Type the meta codecs cannot read; JSON of any kind but ``DeleteOptions`` a 400), else
from the query (``gracePeriodSeconds``, ``propagationPolicy``, ``orphanDependents``, ``dryRun``)
(86-121); the options checked (422 on ``DeleteOptions.meta.k8s.io``) (131); then the
finisher runs the storage's ``Delete`` within the 34 s upper bound (validating admission, a
no-op, has its place there). The generic store
(:func:`genericserver.registry.generic.registry.store.delete`) holds the preconditions (``uid``,
``resourceVersion``: 409 Conflict) and answers a ``Success`` Status naming the object, 200. A
storage with graceful deletion (``scope.extra["delete"]``, the cluster's pods) decides itself:
it answers the object, updated (Terminating) or removed; 202 when it is not gone yet and the
client asked for its dependents to go first.

``delete_collection`` (``DeleteCollection``): the media type (406), the list options as the
list reads them (400, 422), then the ``DeleteOptions`` as above, and the store's
``DeleteCollection``: each selected object deleted, the answer the list of them, 200. It has no
34 s bound, as a list has none.
"""

from __future__ import annotations

import functools
import json
from typing import Iterable, Optional

from genericserver import request
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.apis.meta.v1 import validation
from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.context import context as gocontext
from genericserver.endpoints.handlers import get, response
from genericserver.endpoints.handlers.finisher import finisher
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.endpoints.handlers.rest import REQUEST_TIMEOUT_UPPER_BOUND, Request, RequestScope, StartResponse, limited_read_body
from genericserver.registry.generic.registry import store as generic_store


def delete_options(req: Request) -> dict:
    """The DeleteOptions of the request (body or query), checked as Go checks them."""
    body = limited_read_body(req)
    if body:
        negotiate.negotiate_input_serializer(req.headers.get("Content-Type", ""), codec_factory.SUPPORTED)
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


def _deleter(scope: RequestScope):
    # the storage's Delete: graceful for a storage that has it, else the generic store's
    graceful = scope.extra.get("delete")
    if graceful is not None:
        return graceful
    return functools.partial(generic_store.delete, scope.store, scope.resource)


def delete_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str, name: str) -> Iterable[bytes]:
    ctx, cancel = gocontext.with_timeout(request.context_from(req.environ), REQUEST_TIMEOUT_UPPER_BOUND)
    try:
        media_type = response.negotiate_output(scope, req.environ)
        opts = delete_options(req)
        was_deleted = [True]

        def store() -> dict:
            obj, was_deleted[0] = _deleter(scope)(namespace, name, opts)
            return obj

        result = finisher.finish_request(ctx, store, metrics=scope.metrics)
        code = 202 if not was_deleted[0] and opts.get("orphanDependents") is False else 200
        return response.transform_response_object(scope, req, start_response, code, media_type, result)
    finally:
        cancel()


def delete_collection(scope: RequestScope, req: Request, start_response: StartResponse, namespace: Optional[str]) -> Iterable[bytes]:
    media_type = response.negotiate_output(scope, req.environ)
    list_options = get.decode_list_options(scope, req)
    opts = delete_options(req)
    ctx = request.context_from(req.environ)  # no upper bound: a deletecollection may take long
    deleter = _deleter(scope)
    result = finisher.finish_request(ctx, lambda: generic_store.delete_collection(
        scope.store, scope.resource, namespace, list_options.predicate(scope), opts, deleter), metrics=scope.metrics)
    return response.transform_response_object(scope, req, start_response, 200, media_type, result, is_list=True)

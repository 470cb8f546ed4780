"""Port of k8s.io/apiserver/pkg/endpoints/handlers/update.go (v1.36.0): PUT of a whole object.

``UpdateResource``'s steps, in Go's order (update.go at v1.36.0):

1. the output media type: 406 (line 72);
2. the body is read: 413 over the limit (78);
3. the ``UpdateOptions`` decoded (400) and checked: 422 on ``UpdateOptions.meta.k8s.io`` (86-96);
4. the input serializer by the Content-Type: 415 (99);
5. the body decoded as the kind (400; strict as ``fieldValidation`` asks) (104-130);
6. ``AcceptsGroupVersion`` (400 ``the API version in the data ...``) (132-136);
7. the namespace of the object must be the path's (400 ``the namespace of the provided object
   does not match the namespace sent on the request``) (145), and ``checkName``: the name
   must be the URL's (400 ``the name of the object (x) does not match the name on the URL (y)``)
   (151);
8. repeated owner references dropped with a warning, before and after mutating admission;
9. the finisher runs the storage's ``Update`` within the 34 s upper bound, with the body's uid as
   a precondition (``DefaultUpdatedObjectInfo``: 409 ``Precondition failed: UID in precondition``);
   an object that does not exist is 404 first (the resources here do not create on update), a
   resourceVersion that does not
   parse is the storage's 500 and a stale one a 409 Conflict, the strategy validates
   (``BeforeUpdate``: 422), validating admission (a no-op) has its place there, and what the
   server owns is kept.

The answer is 200 with the object as stored.
"""

from __future__ import annotations

from typing import Any, Iterable

from genericserver import request
from genericserver.apimachinery.apis.meta.v1 import conversion as metav1conversion
from genericserver.apimachinery.apis.meta.v1 import validation
from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.context import context as gocontext
from genericserver.endpoints.handlers import response
from genericserver.endpoints.handlers.finisher import finisher
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.endpoints.handlers.rest import (REQUEST_TIMEOUT_UPPER_BOUND, Request, RequestScope, StartResponse,
                                                   accepts_group_version_error, check_name, decode,
                                                   dedup_owner_references_and_add_warning, field_validation,
                                                   limited_read_body, validate_new)
from genericserver.registry.rest import meta as restmeta
from genericserver.registry.rest import update as rest_update


def update_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str, name: str) -> Iterable[bytes]:
    ctx, cancel = gocontext.with_timeout(request.context_from(req.environ), REQUEST_TIMEOUT_UPPER_BOUND)
    try:
        media_type = response.negotiate_output(scope, req.environ)
        body = limited_read_body(req)
        options = metav1conversion.convert_url_values_to_v1_update_options(request.query(req.environ))
        dry_run = options.get("dryRun") or []
        validation.validate_write_options("UpdateOptions", dry_run, options["fieldManager"], options["fieldValidation"])
        info = negotiate.negotiate_input_serializer(req.headers.get("Content-Type", ""), codec_factory.SUPPORTED)
        obj, gv = decode(scope, info, body, field_validation(options["fieldValidation"]), req.environ)
        err = accepts_group_version_error(scope, gv)
        if err is not None:
            raise err
        meta = obj.setdefault("metadata", {})
        restmeta.ensure_object_namespace_matches_request_namespace(
            restmeta.expected_namespace_for_resource(namespace, scope.resource.group, scope.resource.name), meta)
        check_name(obj, name, namespace)
        dedup_owner_references_and_add_warning(obj, req.environ, False)

        def store() -> Any:
            # the storage's Update: mutating admission (no plugin is configured) and the dedup
            # after it are its transformers; validating admission sits beside the strategy's check
            dedup_owner_references_and_add_warning(obj, req.environ, True)
            if scope.validate is not None:
                validate_new(scope, obj, scope.store.get(namespace, name))
            # DefaultUpdatedObjectInfo: the uid of the body is a precondition of the write
            return scope.store.update(namespace, name, obj, dry_run=bool(dry_run),
                                      preconditions=rest_update.default_updated_object_info_preconditions(obj))

        result = finisher.finish_request(ctx, store, metrics=scope.metrics)
        return response.transform_response_object(scope, req, start_response, 200, media_type, result)
    finally:
        cancel()

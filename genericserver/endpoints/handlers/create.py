"""Port of k8s.io/apiserver/pkg/endpoints/handlers/create.go (v1.36.0): POST of a new object.

``createHandler``'s steps, in Go's order (create.go at v1.36.0):

1. the output media type is negotiated: 406 (line 81);
2. the input serializer by the Content-Type: 415 (88);
3. the body is read: 413 over the limit (94);
4. the ``CreateOptions`` of the query are decoded (400) and checked (``dryRun``,
   ``fieldManager``, ``fieldValidation``: 422 on ``CreateOptions.meta.k8s.io``) (103-114);
5. the body is decoded as the kind, strictly as ``fieldValidation`` asks (400; unknown or
   duplicate fields are ``Warning`` headers with Warn) (116-142);
6. ``AcceptsGroupVersion``: a body in another registered version of the kind is 400 ``the API
   version in the data (...) does not match the expected API version (...)`` (144-149);
7. what the system owns of the metadata is dropped (``WipeObjectMetaSystemFields``: the uid,
   creation and deletion times, the grace), and the namespace of the object must be the path's
   (400) (165-178);
8. repeated owner references are dropped with a warning (``dedupOwnerReferencesAndAddWarning``,
   before and again after mutating admission);
9. the finisher (:mod:`.finisher.finisher`, within the 34 s upper bound) runs mutating admission
   (a no-op here: no admission plugin is configured) and the storage's ``Create``: a name is
   made from ``generateName`` (:mod:`genericserver.storage.names`), ``rest.BeforeCreate``
   validates (422 Invalid; the generic store with its kind's strategy does it itself:
   :mod:`genericserver.registry.rest.create`), validating admission (a no-op) has its place
   there, and the store refuses a resourceVersion (500) and a name that exists (409
   AlreadyExists).

The answer is 201 with the object as stored; with ``dryRun=All`` the same, stored nowhere.

A subresource that creates by name (Go's ``NamedCreater``: ``POST pods/NAME/eviction``) takes
the same steps (``CreateNamedResource``): the name is the path's, and what the storage answers
(a Status, for an eviction) is written with 201, its own ``code`` filled in when it has none.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from genericserver import request
from genericserver.apimachinery.apis.meta.v1 import conversion as metav1conversion
from genericserver.apimachinery.apis.meta.v1 import validation
from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.context import context as gocontext
from genericserver.endpoints.handlers import response
from genericserver.endpoints.handlers.finisher import finisher
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.endpoints.handlers.rest import (REQUEST_TIMEOUT_UPPER_BOUND, Request, RequestScope, StartResponse,
                                                   accepts_group_version_error, decode, dedup_owner_references_and_add_warning,
                                                   field_validation, limited_read_body, validate_new)
from genericserver.registry.rest import meta as restmeta
from genericserver.storage import names


def create_handler(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str,
                   name: Optional[str]) -> Iterable[bytes]:
    """``createHandler``: ``name`` is the path's for a named create, else None."""
    ctx, cancel = gocontext.with_timeout(request.context_from(req.environ), REQUEST_TIMEOUT_UPPER_BOUND)
    try:
        media_type = response.negotiate_output(scope, req.environ)
        info = negotiate.negotiate_input_serializer(req.headers.get("Content-Type", ""), codec_factory.SUPPORTED)
        body = limited_read_body(req)
        options = metav1conversion.convert_url_values_to_v1_create_options(request.query(req.environ))
        dry_run = options.get("dryRun") or []
        validation.validate_write_options("CreateOptions", dry_run, options["fieldManager"], options["fieldValidation"])
        obj, gv = decode(scope, info, body, field_validation(options["fieldValidation"]), req.environ)
        err = accepts_group_version_error(scope, gv)
        if err is not None:
            raise err
        meta = obj.setdefault("metadata", {})
        if name is None:
            name = meta.get("name", "")
        if not namespace and (scope.resource.group, scope.resource.name) == ("", "namespaces"):
            namespace = name
        if not scope.resource.subresource:  # what the system owns is never the client's
            restmeta.wipe_object_meta_system_fields(meta)
        restmeta.ensure_object_namespace_matches_request_namespace(
            restmeta.expected_namespace_for_resource(namespace, scope.resource.group, scope.resource.name), meta)
        dedup_owner_references_and_add_warning(obj, req.environ, False)

        def store() -> Any:
            # mutating admission would run here (no plugin is configured), then the dedup again
            dedup_owner_references_and_add_warning(obj, req.environ, True)
            return _create(scope, req, namespace, name, obj, dry_run)

        result = finisher.finish_request(ctx, store, metrics=scope.metrics)
        code = 201
        if isinstance(result, dict) and result.get("kind") == "Status" and not result.get("code"):
            result = {**result, "code": code}
        return response.transform_response_object(scope, req, start_response, code, media_type, result)
    finally:
        cancel()


def _create(scope: RequestScope, req: Request, namespace: str, name: str, obj: dict, dry_run: list[str]) -> Any:
    """The storage's ``Create`` (``rest.BeforeCreate`` and the store), or a named creater's."""
    named = scope.extra.get("create_named")
    if named is not None:
        return named(namespace, name, obj, dry_run)
    creater = scope.extra.get("create")
    if creater is not None:  # a storage that makes its answer itself (a review: nothing is stored)
        return creater(req.environ, namespace, obj)
    meta = obj["metadata"]
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = names.generate_name(meta["generateName"])
    validate_new(scope, obj, None)  # validating admission has its place here too (a no-op)
    return scope.store.create(namespace, obj, dry_run=bool(dry_run))


def create_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str) -> Iterable[bytes]:
    """``CreateResource``."""
    return create_handler(scope, req, start_response, namespace, None)


def create_named_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str, name: str) -> Iterable[bytes]:
    """``CreateNamedResource``: the storage's ``create_named(namespace, name, obj, dry_run)``."""
    return create_handler(scope, req, start_response, namespace, name)

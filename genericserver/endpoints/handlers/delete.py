"""Port of k8s.io/apiserver/pkg/endpoints/handlers/delete.go (v1.36.0): DELETE of one object, and of a collection.

``DeleteResource``'s steps, in Go's order (delete.go at v1.36.0): the output media type (406,
line 80); the ``DeleteOptions`` from the body when there is one (413 over the limit; 415 for a
Content-Type the meta codecs cannot read; a body of any kind but ``DeleteOptions`` a 400 with the
meta scheme's text, :func:`decode_delete_options_body`; JSON, YAML or protobuf as its
Content-Type says), else
from the query, as the parameter codec reads it (``gracePeriodSeconds``, ``orphanDependents``,
``propagationPolicy``, ``dryRun``, and ``uid`` and ``resourceVersion`` as preconditions:
:mod:`genericserver.apimachinery.apis.meta.v1.conversion`; a bool is true unless ``0`` or
``false``, a number that does not parse is a 400) (86-121); the options checked (422 on ``DeleteOptions.meta.k8s.io``) (131); then the
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
from typing import Iterable, Optional

from genericserver import request
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.apis.meta.v1 import conversion as metav1conversion
from genericserver.apimachinery.apis.meta.v1 import types as meta_types
from genericserver.apimachinery.apis.meta.v1 import validation
from genericserver.apimachinery.runtime import scheme
from genericserver.apimachinery.runtime.conversion import ConversionError
from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.apimachinery.runtime.serializer import json as jsonserializer
from genericserver.apimachinery.runtime.serializer import protobuf
from genericserver.context import context as gocontext
from genericserver.endpoints.handlers import get, response
from genericserver.endpoints.handlers.finisher import finisher
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.endpoints.handlers.rest import REQUEST_TIMEOUT_UPPER_BOUND, Request, RequestScope, StartResponse, limited_read_body
from genericserver.registry.generic.registry import store as generic_store


# what the meta internal version scheme (GetMetaInternalVersionCodecs) reads a DeleteOptions body
# as: the kinds it knows in any version (AddUnversionedTypes, meta/internalversion/register.go:72
# and meta/v1/register.go:75), and those of each group version (meta/v1/register.go:73,90;
# meta/v1beta1/register.go:39), each with the Go type it decodes to
_UNVERSIONED_KINDS = {"DeleteOptions", "CreateOptions", "UpdateOptions", "Status", "APIVersions", "APIGroupList",
                      "APIGroup", "APIResourceList"}
_KINDS = {
    "meta.k8s.io/v1": {k: "v1." + k for k in ("ListOptions", "GetOptions", "DeleteOptions", "CreateOptions", "UpdateOptions",
                                              "PatchOptions", "WatchEvent", "Table", "TableOptions", "PartialObjectMetadata",
                                              "PartialObjectMetadataList")},
    "meta.k8s.io/v1beta1": {"Table": "v1.Table", "TableOptions": "v1.TableOptions", "PartialObjectMetadata": "v1.PartialObjectMetadata",
                            "PartialObjectMetadataList": "v1beta1.PartialObjectMetadataList"},
}
# scope.MetaGroupVersion: what a body that names no apiVersion is read as
META_GROUP_VERSION = "meta.k8s.io/v1"


def decode_delete_options_body(body: bytes, info: negotiate.SerializerInfo = codec_factory.JSON) -> dict:
    """A DELETE's body as delete.go:96-107 decodes it, through the meta internal version codecs
    with the serializer its Content-Type chose (JSON; YAML, read as JSON; protobuf, the
    ``k8s\\x00`` envelope client-go v0.36's typed clients send by default),
    defaulting to ``DeleteOptions`` of ``meta.k8s.io/v1``: not JSON, or not an object, is the
    serializer's ``couldn't get version/kind`` text; a kind the scheme does not know in that
    version is its ``no kind ... is registered`` (in its name, ``pkg/runtime/scheme.go:111`` in the
    reference build: :mod:`genericserver.apimachinery.runtime.scheme`); a kind it knows but
    another than DeleteOptions cannot be converted to it; a field of the wrong type is
    encoding/json's text. Each is a 400."""
    if info is codec_factory.PROTOBUF:
        return _decode_protobuf_delete_options(body)
    if info is codec_factory.YAML:
        body = jsonserializer.yaml_to_json(body)
    try:
        raw, opts, _ = jsonserializer.decode(body, meta_types.DELETE_OPTIONS)
        wrong_type: Optional[str] = None
    except jsonserializer.DecodeError as err:
        if err.raw is None:  # not even apiVersion and kind could be read
            raise errors.new_bad_request(str(err)) from None
        raw, opts, wrong_type = err.raw, {}, str(err)
    api_version, kind = jsonserializer.type_meta(raw)
    _check_kind(api_version, kind)
    if wrong_type is not None:
        raise errors.new_bad_request(wrong_type)
    return opts


def _check_kind(api_version: str, kind: str) -> None:
    """The kind the body names, as the meta scheme takes it (400 for one it cannot make a
    DeleteOptions of)."""
    kind = kind or "DeleteOptions"
    # gvkWithDefaults: a body with no group and no version takes the default's
    gv = api_version or META_GROUP_VERSION
    if kind not in _UNVERSIONED_KINDS and kind not in _KINDS.get(gv, {}):
        raise errors.new_bad_request(str(scheme.NotRegisteredErr(scheme.META_INTERNAL_VERSION_SCHEME_NAME, kind, gv)))
    if kind != "DeleteOptions":
        go_type = _KINDS.get(gv, {}).get(kind, "v1." + kind)
        raise errors.new_bad_request(f"converting ({go_type}) to (v1.DeleteOptions): unknown conversion")


def _decode_protobuf_delete_options(body: bytes) -> dict:
    """A protobuf DeleteOptions body: the envelope's kind checked as a JSON body's, then the message."""
    try:
        obj = protobuf.decode(body, default_gvk=("meta.k8s.io", "v1", "DeleteOptions"), struct=meta_types.DELETE_OPTIONS)
    except protobuf.ProtobufError as err:
        if err.raw is None:
            raise errors.new_bad_request(str(err)) from None
        _check_kind(err.raw.get("apiVersion", ""), err.raw.get("kind", ""))
        raise errors.new_bad_request(str(err)) from None
    _check_kind(obj.get("apiVersion", ""), obj.get("kind", ""))
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


def delete_options(req: Request) -> dict:
    """The DeleteOptions of the request (body or query), checked as Go checks them."""
    body = limited_read_body(req)
    if body:
        info = negotiate.negotiate_input_serializer(req.headers.get("Content-Type", ""), codec_factory.SUPPORTED)
        opts = decode_delete_options_body(body, info)
    else:
        try:
            opts = metav1conversion.convert_url_values_to_v1_delete_options(request.query(req.environ))
        except ConversionError as err:
            raise errors.new_bad_request(str(err)) from None
    # (delete.go clears this one: the AllowUnsafeMalformedObjectDeletion gate is off)
    opts.pop("ignoreStoreReadErrorWithClusterBreakingPotential", None)
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

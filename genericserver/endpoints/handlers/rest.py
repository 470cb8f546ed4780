"""Port of k8s.io/apiserver/pkg/endpoints/handlers/rest.go (v1.36.0): the request scope the REST handlers share, and their common steps.

Go's installer builds one ``RequestScope`` per route: the resource and its kind, the namer that
reads the namespace and name from the path, the serializers, the table convertor, the body
limit. Every handler of that route reads it. :class:`RequestScope` is that, with the project's
own pieces: the store, the watch timeout range and the server's metrics. Its methods are the
endpoint restrictions negotiation asks about (``AllowsMediaTypeTransform``,
``AllowsServerVersion``, ``AllowsStreamSchema``) and ``AcceptsGroupVersion``, which a decoded
body's group version must pass (``the API version in the data (%s) does not match the expected
API version (%s)``, 400).

The steps the verbs share, each as rest.go has it: ``limitedReadBody`` (:func:`limited_read_body`,
413 over the limit), ``transformDecodeError`` (:func:`transform_decode_error`), ``checkName``
(:func:`check_name`), ``dedupOwnerReferencesAndAddWarning``, ``summarizeData``,
``fieldValidation``, and ``requestTimeoutUpperBound``: the 34 s a write may take at most
(:mod:`.finisher.finisher` ends it there, or earlier if the request's own deadline is).

The errors a handler raises are written by :func:`genericserver.endpoints.handlers.response.write_error`
(Go's ``scope.err``: ``ErrorNegotiated``); an exception that is not an API error becomes a 500
Status without a reason (:func:`genericserver.responsewriters.error_to_status`, Go's
``ErrorToAPIStatus``). The admission chain has its
place in each verb (a comment says where) but no plugin runs: admission is a no-op here.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Callable, Optional

import werkzeug.wrappers
from werkzeug.datastructures import MultiDict
from werkzeug.utils import cached_property

from genericserver import request
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.field import errors as field
from genericserver.apimachinery.runtime import scheme
from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.apimachinery.runtime.serializer import json as jsonserializer
from genericserver.apimachinery.runtime.serializer.json import DecodeError
from genericserver.apimachinery.runtime.serializer.protobuf import ProtobufError
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.registry.rest.rest import Resource
from genericserver.warning import context as warning

StartResponse = Callable[..., Any]
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024  # Go's default --max-request-body-bytes
# the longest a write's storage call may take, whatever the request's own timeout (34 s)
REQUEST_TIMEOUT_UPPER_BOUND = 34.0
DUPLICATE_OWNER_REFERENCES_WARNING_FORMAT = (
    ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such "
    "requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {}")
DUPLICATE_OWNER_REFERENCES_AFTER_MUTATING_ADMISSION_WARNING_FORMAT = (
    ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner "
    "references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {}")
META_GROUP_VERSION = "v1"  # scope.MetaGroupVersion: meta.k8s.io/v1

# Other versions kube-apiserver's scheme registers for the kinds served here, each converting
# to the same internal type (pkg/apis/<group>/install/install.go with k8s.io/api's
# register.go files): a body in one of them decodes, and then fails AcceptsGroupVersion.
SCHEME_OTHER_VERSIONS = {
    ("apps", "Deployment"): ("v1beta1", "v1beta2"),
    ("apps", "ReplicaSet"): ("v1beta2",),
    ("policy", "PodDisruptionBudget"): ("v1beta1",),
    ("policy", "Eviction"): ("v1beta1",),
    ("coordination.k8s.io", "Lease"): ("v1beta1",),
    ("discovery.k8s.io", "EndpointSlice"): ("v1beta1",),
}

# The kinds kube-apiserver's scheme knows in the core group's v1 (k8s.io/api core/v1
# register.go's addKnownTypes, and metav1.AddToGroupVersion's options, watch event and
# unversioned types): a body of one of them is decoded as that kind and then cannot be converted
# to the endpoint's; any other kind is not registered at all
CORE_V1_KINDS = frozenset((
    "Pod PodList PodStatusResult PodTemplate PodTemplateList ReplicationController ReplicationControllerList "
    "Service ServiceProxyOptions ServiceList Endpoints EndpointsList Node NodeList NodeProxyOptions Binding Event "
    "EventList List LimitRange LimitRangeList ResourceQuota ResourceQuotaList Namespace NamespaceList Secret "
    "SecretList ServiceAccount ServiceAccountList PersistentVolume PersistentVolumeList PersistentVolumeClaim "
    "PersistentVolumeClaimList PodAttachOptions PodLogOptions PodExecOptions PodPortForwardOptions PodProxyOptions "
    "ComponentStatus ComponentStatusList SerializedReference RangeAllocation ConfigMap ConfigMapList "
    "WatchEvent ListOptions GetOptions DeleteOptions CreateOptions UpdateOptions PatchOptions "
    "Status APIVersions APIGroupList APIGroup APIResourceList").split())


class Request(werkzeug.wrappers.Request):
    """werkzeug's request with two of the apiserver's rules: the query as Go's ``URL.Query()``
    parses it, and the body limit of Go's default ``--max-request-body-bytes``."""

    max_content_length = MAX_REQUEST_BODY_BYTES

    @cached_property
    def args(self) -> MultiDict:  # type: ignore[override]
        return MultiDict([(k, v) for k, values in request.query(self.environ).items() for v in values])


@dataclass
class RequestScope:
    """What every handler of one route needs (Go's ``handlers.RequestScope``)."""

    resource: Resource
    store: Any  # genericserver.registry.generic.registry.store.Store or one like it
    min_request_timeout: float = 1800.0
    rand: Callable[[], float] = random.random
    metrics: Any = None
    # validation of a new or changed object: (object, old or None) -> list of field errors
    validate: Optional[Callable[[dict, Optional[dict]], list]] = None
    extra: dict = dataclass_field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.resource.kind

    def accepts_group_version(self, gv: str) -> bool:
        """``AcceptsGroupVersion``: only the kind's own group version (no delegate here)."""
        return gv == self.resource.object_group_version

    def allows_media_type_transform(self, mime_type: str, mime_subtype: str, gvk: Optional[negotiate.GroupVersionKind]) -> bool:
        """``AllowsMediaTypeTransform``: no conversion is always fine (every route here has all
        the standard serializers); a Table as JSON or YAML (every route has a table convertor,
        the default one at least); the metadata alone in any type."""
        if gvk is None:
            return True
        if gvk.group == "meta.k8s.io" and gvk.version in ("v1", "v1beta1"):
            if gvk.kind == "Table":
                return mime_type == "application" and mime_subtype in ("json", "yaml")
            return gvk.kind in ("PartialObjectMetadata", "PartialObjectMetadataList")
        return False

    def allows_server_version(self, version: str) -> bool:
        """``AllowsServerVersion``: the ``sv`` of an Accept range must be meta.k8s.io's version."""
        return version == META_GROUP_VERSION

    def allows_stream_schema(self, schema: str) -> bool:
        return schema == "watch"


def limited_read_body(req: Request) -> bytes:
    """Go's ``limitedReadBody``: read one byte more than the limit, so a body over it shows.

    The body is read from ``wsgi.input`` (the server ends it at its length, or at the last chunk),
    not through werkzeug's limited stream, which would cut a chunked body at the limit without a
    word and turn a read error into its own 400.
    """
    limit = req.max_content_length or MAX_REQUEST_BODY_BYTES
    if (req.content_length or 0) > limit:
        raise errors.new_request_entity_too_large(f"limit is {limit}")
    if req.content_length is None and not req.environ.get("wsgi.input_terminated"):
        return b""  # no length and no server to end the stream: no body
    data = req.environ["wsgi.input"].read(limit + 1)
    if len(data) > limit:
        raise errors.new_request_entity_too_large(f"limit is {limit}")
    return data


def is_dry_run(req: Request) -> bool:
    """``isDryRun``: any ``dryRun`` in the query."""
    return bool(req.args.getlist("dryRun"))


def field_validation(directive: str) -> str:
    """``fieldValidation``: the directive, Warn when absent (Go's default for every write)."""
    return directive or "Warn"


def decode(scope: RequestScope, info: Any, body: bytes, directive: str, environ: dict) -> tuple[dict, str]:
    """The decoder's step of create.go and update.go: ``body`` decoded as the scope's kind by
    the negotiated serializer (``info``), strictly when ``directive`` asks (Strict: the strict
    errors are a 400 through ``transformDecodeError``; Warn: each is a warning of the request's,
    as ``addStrictDecodingWarnings`` adds them); the object and the group version it came in."""
    struct = scope.resource.struct
    group, _, version = scope.resource.object_group_version.rpartition("/")
    want_kind, want_gv = struct.short_name, f"{group}/{version}" if group else version
    try:
        raw, obj, strict = codec_factory.decode(info, body, struct)
        decode_error: Optional[str] = None
    except (DecodeError, ProtobufError) as err:
        raw = getattr(err, "raw", None)
        if raw is None:  # not even apiVersion and kind could be read
            raise transform_decode_error(want_kind, None, err, body) from None
        decode_error = str(err)
    kind, gv = _kind_and_version(raw, want_kind, want_gv)
    body_group, _, body_version = gv.rpartition("/")
    # the scheme reads the body as the endpoint's type when it names that kind in the endpoint's
    # group version or in another one registered for it
    same_type = kind == want_kind and (gv == want_gv or body_group == group and body_version in SCHEME_OTHER_VERSIONS.get((group, kind), ()))
    no_kind = str(scheme.NotRegisteredErr(scheme.LEGACY_SCHEME_NAME, kind, gv))
    if not same_type:
        registered = gv != "v1" or kind in CORE_V1_KINDS  # (other groups: as before, by gv alone)
        why = (no_kind if gv != want_gv or decode_error is not None or not registered
               else f"converting (v1.{kind}) to (core.{want_kind}): unknown conversion")
        raise transform_decode_error(want_kind, (kind, body_version), why, body)
    if decode_error is not None:
        raise transform_decode_error(want_kind, (kind, body_version), decode_error, body)
    if strict:
        if directive == "Strict":
            raise transform_decode_error(want_kind, (kind, body_version), f"strict decoding error: {', '.join(strict)}", body)
        if directive == "Warn":
            add_strict_decoding_warnings(environ, jsonserializer.strict_warnings(strict))
    obj = {"kind": want_kind, "apiVersion": gv, **{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}}
    return obj, gv


def _kind_and_version(raw: dict, kind: str, api_version: str) -> tuple[str, str]:
    # the body's own, defaulted to the endpoint's (gvkWithDefaults)
    k, av = raw.get("kind"), raw.get("apiVersion")
    return (k if isinstance(k, str) and k else kind), (av if isinstance(av, str) and av else api_version)


def transform_decode_error(into_kind: str, gvk: Optional[tuple[str, str]], base_err: Any, body: bytes) -> errors.StatusError:
    """``transformDecodeError``: a 400 naming the kind and version the body claimed, or, when
    it claimed none, the kind it had to be and the body's first bytes."""
    if gvk is not None and gvk[0]:
        return errors.new_bad_request(f"{gvk[0]} in version {errors._q(gvk[1])} cannot be handled as a {into_kind}: {base_err}")
    return errors.new_bad_request(f"the object provided is unrecognized (must be of type {into_kind}): {base_err} ({summarize_data(body, 30)})")


def accepts_group_version_error(scope: RequestScope, gv: str) -> Optional[errors.StatusError]:
    """The 400 of a body in a group version ``AcceptsGroupVersion`` turns down, else None."""
    if scope.accepts_group_version(gv):
        return None
    return errors.new_bad_request(f"the API version in the data ({gv}) does not match the expected API version "
                                  f"({scope.resource.object_group_version})")


def has_uid(obj: Optional[dict]) -> bool:
    """``hasUID``: whether the object came from storage."""
    return bool(obj and (obj.get("metadata") or {}).get("uid"))


def check_name(obj: dict, name: str, namespace: str) -> None:
    """``checkName``: the object must have a name (400 "undeterminable"), the URL's, and a
    namespace it names must be the request's."""
    meta = obj.get("metadata") or {}
    obj_name, obj_namespace = meta.get("name", ""), meta.get("namespace", "")
    if not obj_name:  # the scope's namer (namer.go's ObjectName): an empty name is errEmptyName
        raise errors.new_bad_request(f"the name of the object ({name} based on URL) was undeterminable: name must be provided")
    if obj_name != name:
        raise errors.new_bad_request(f"the name of the object ({obj_name}) does not match the name on the URL ({name})")
    if namespace and obj_namespace and obj_namespace != namespace:
        raise errors.new_bad_request(f"the namespace of the object ({obj_namespace}) does not match the namespace on the request ({namespace})")


def dedup_owner_references(refs: list[dict]) -> tuple[list[dict], list[str]]:
    """``dedupOwnerReferences``: the references without repeats (a repeat is one equal in every
    field to one kept before it), and the uids of the repeats."""
    result: list[dict] = []
    duplicates: list[str] = []
    seen: set[str] = set()
    for ref in refs:
        uid = ref.get("uid", "")
        if uid not in seen or ref not in result:  # a dict's == is apiequality.Semantic's DeepEqual here
            seen.add(uid)
            result.append(ref)
        else:
            duplicates.append(uid)
    return result, duplicates


def add_strict_decoding_warnings(environ: dict, strict: list[str]) -> None:
    """``addStrictDecodingWarnings``: each strict error a warning of the request's."""
    for e in strict:
        warning.add_warning(environ, "", e)


def dedup_owner_references_and_add_warning(obj: dict, environ: dict, after_mutating_admission: bool) -> None:
    """``dedupOwnerReferencesAndAddWarning``: drop repeated owner references, with a warning
    naming their uids (create and update dedup before and after mutating admission, patch
    after it only)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not meta.get("ownerReferences"):
        return
    deduped, duplicates = dedup_owner_references(meta["ownerReferences"])
    if duplicates:
        fmt = DUPLICATE_OWNER_REFERENCES_AFTER_MUTATING_ADMISSION_WARNING_FORMAT if after_mutating_admission else DUPLICATE_OWNER_REFERENCES_WARNING_FORMAT
        warning.add_warning(environ, "", fmt.format(", ".join(duplicates)))
        meta["ownerReferences"] = deduped


def summarize_data(data: bytes, max_length: int) -> str:
    """Go's ``summarizeData``: the body's first bytes, as text when it looks like JSON, else hex."""
    more = " ..." if len(data) > max_length else ""
    if not data:
        return "<empty>"
    if data[:1] == b"{":
        return data[:max_length].decode("utf-8", "replace") + more
    return data[:max_length].hex() + more


def validate_new(scope: RequestScope, obj: dict, old: Optional[dict]) -> None:
    """The resource strategy's ``Validate`` (``ValidateUpdate`` with ``old``): 422 Invalid with
    one cause per field error. (registry/rest's ``BeforeCreate``/``BeforeUpdate`` call it, in
    the storage call the finisher runs.)"""
    if scope.validate is None:
        return
    errs = scope.validate(obj, old)
    if errs:
        kind = f"{scope.kind}.{scope.resource.group}" if scope.resource.group else scope.kind
        raise errors.new_invalid(kind, obj.get("metadata", {}).get("name", ""), field.to_causes(errs))

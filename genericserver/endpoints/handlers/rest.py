"""Port of k8s.io/apiserver/pkg/endpoints/handlers/rest.go (v1.36.0): the request scope the REST handlers share.

Go's installer builds one ``RequestScope`` per route: the resource and its kind, the namer that
reads the namespace and name from the path, the serializers, the table convertor, the body
limit. Every handler of that route reads it. :class:`RequestScope` is that, with the project's
own pieces: the store, the watch timeout range and the server's metrics.

``scope.err`` is Go's ``scope.err``: the error written as a negotiated ``metav1.Status``
(``ErrorNegotiated``); an exception that is not an API error becomes a 500 Status without a
reason, as Go's ``ErrorToAPIStatus`` makes of it.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Callable, Iterable, Optional

import werkzeug.wrappers
from werkzeug.datastructures import MultiDict
from werkzeug.utils import cached_property

from genericserver import request
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.field import errors as field
from genericserver.apimachinery.fields import selector as field_selector
from genericserver.apimachinery.labels import selector as label_selector
from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.apimachinery.runtime.serializer.json import DecodeError
from genericserver.apimachinery.runtime.serializer.protobuf import ProtobufError
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.registry.rest.rest import Resource

log = logging.getLogger("genericserver.endpoints.handlers")
StartResponse = Callable[..., Any]
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024  # Go's default --max-request-body-bytes
FIELD_LABELS = ("metadata.name", "metadata.namespace")


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


def read_body(req: Request) -> bytes:
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


def truthy(values: list[str]) -> bool:
    """A query flag as Go's parameter codec reads a bool: absent, "0" and "false" are false."""
    return bool(values) and values[0] != "0" and values[0].lower() != "false"


def bool_param(req: Request, key: str) -> Optional[bool]:
    """A ``*bool`` query parameter as Go's ``strconv.ParseBool`` reads it; None when absent."""
    if key not in req.args:
        return None
    text = req.args[key]
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise errors.new_bad_request(f"strconv.ParseBool: parsing {errors._q(text)}: invalid syntax")


def int_param(req: Request, key: str) -> Optional[int]:
    """An ``*int64`` query parameter as Go's ``strconv.ParseInt`` reads it; None when absent or empty."""
    text = req.args.get(key, "")
    if not text:
        return None
    try:
        return int(text, 10)
    except ValueError:
        raise errors.new_bad_request(f'strconv.ParseInt: parsing {errors._q(text)}: invalid syntax') from None


def error_to_status(err: BaseException) -> dict:
    """Go's ``ErrorToAPIStatus``: an API error's Status, else a 500 without a reason."""
    if isinstance(err, errors.StatusError):
        return err.status
    log.error("apiserver received an error that is not an metav1.Status: %r: %s", err, err)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": str(err), "code": 500}


def selectors(scope: RequestScope, req: Request, name: Optional[str] = None) -> Callable[[dict], bool]:
    """The label and field selectors of the query, as get.go's ``listOpts`` reads them: each
    parsed (400 with the parser's text), the field labels converted as the resource allows
    (its ``field_labels``, else ``metadata.name`` and ``metadata.namespace``: Go's
    ``DefaultMetaV1FieldSelectorConversion``),
    and a name in the path as a ``metadata.name`` term that a given field selector must agree with."""
    try:
        labels = label_selector.parse(req.args.get("labelSelector", ""))
        fields = field_selector.parse(req.args.get("fieldSelector", ""))
    except (label_selector.SelectorError, field_selector.SelectorError) as err:
        raise errors.new_bad_request(str(err)) from None
    field_labels = scope.resource.field_labels
    known = FIELD_LABELS + tuple(field_labels({})) if field_labels else FIELD_LABELS
    for term in fields.terms:
        if term.field not in known:
            # a kind with a conversion of its own (pods, events) answers with it, the rest with metav1's
            raise errors.new_bad_request(f"field label not supported: {term.field}" if field_labels else
                                         f'"{term.field}" is not a known field selector: only "metadata.name", "metadata.namespace"')
    if name is not None:
        if not fields.empty():
            if fields.requires_exact_match("metadata.name") != name:
                raise errors.new_bad_request("fieldSelector metadata.name doesn't match requested name")
        else:
            fields = field_selector.Selector((field_selector.Term("metadata.name", name),))

    def matches(obj: dict) -> bool:
        meta = obj.get("metadata", {})
        values = {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}
        if field_labels:
            values.update(field_labels(obj))
        return labels.matches(meta.get("labels")) and fields.matches(values)
    return matches


def field_validation(req: Request) -> str:
    """``fieldValidation``, Warn when absent (Go's default for every write)."""
    return req.args.get("fieldValidation", "") or "Warn"


def decode_body(scope: RequestScope, req: Request) -> tuple[dict, list[str]]:
    """The request body as the scope's kind, and the warnings the decoding left: Go's
    ``NegotiateInputSerializer`` (415), the decoder with the strict checks ``fieldValidation``
    asks for (Strict: a 400; Warn: ``Warning`` headers; Ignore: nothing), and
    ``transformDecodeError``'s texts."""
    info = negotiate.negotiate_input_serializer(req.headers.get("Content-Type", ""), codec_factory.SUPPORTED)
    body = read_body(req)
    group, _, version = scope.resource.object_group_version.rpartition("/")
    return decode_as(scope.resource.struct, group, version, body, info, field_validation(req))


def decode_as(struct: Any, group: str, version: str, body: bytes, info: Any, validation: str) -> tuple[dict, list[str]]:
    """Decode ``body`` as ``struct`` (group/version its endpoint's); see :func:`decode_body`."""
    want_kind, want_av = struct.short_name, f"{group}/{version}" if group else version
    try:
        raw, obj, strict = codec_factory.decode(info, body, struct)
        decode_error = None
    except (DecodeError, ProtobufError) as err:
        raw = getattr(err, "raw", None)
        if raw is None:  # not even apiVersion and kind could be read
            raise errors.new_bad_request(f"the object provided is unrecognized (must be of type {want_kind}): {err} ({summarize(body)})") from None
        decode_error = err
    kind, av = _kind_and_version(raw, want_kind, want_av)
    version_of = av.rpartition("/")[2]
    if av != want_av or kind != want_kind:
        why = (f"no kind {errors._q(kind)} is registered for version {errors._q(av)} in scheme \"pkg/api/legacyscheme/scheme.go:30\""
               if av != want_av or decode_error is not None else f"converting (v1.{kind}) to (core.{want_kind}): unknown conversion")
        raise errors.new_bad_request(f"{kind} in version {errors._q(version_of)} cannot be handled as a {want_kind}: {why}")
    if decode_error is not None:
        raise errors.new_bad_request(f"{kind} in version {errors._q(version_of)} cannot be handled as a {want_kind}: {decode_error}")
    obj = {"kind": want_kind, "apiVersion": want_av, **{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}}
    if strict and validation == "Strict":
        raise errors.new_bad_request(f"{kind} in version {errors._q(version_of)} cannot be handled as a {want_kind}: "
                                     f"strict decoding error: {', '.join(strict)}")
    return obj, strict if validation == "Warn" else []


def _kind_and_version(raw: dict, kind: str, api_version: str) -> tuple[str, str]:
    # the body's own, defaulted to the endpoint's (gvkWithDefaults)
    k, av = raw.get("kind"), raw.get("apiVersion")
    return (k if isinstance(k, str) and k else kind), (av if isinstance(av, str) and av else api_version)


def summarize(body: bytes, limit: int = 30) -> str:
    """Go's ``summarizeData``: the body's first bytes, as text when it looks like JSON, else hex."""
    more = " ..." if len(body) > limit else ""
    if not body:
        return "<empty>"
    if body[:1] == b"{":
        return body[:limit].decode("utf-8", "replace") + more
    return body[:limit].hex() + more


def validate_new(scope: RequestScope, obj: dict, old: Optional[dict]) -> None:
    """The resource strategy's ``Validate`` (``ValidateUpdate`` with ``old``): 422 Invalid with
    one cause per field error."""
    if scope.validate is None:
        return
    errs = scope.validate(obj, old)
    if errs:
        kind = f"{scope.kind}.{scope.resource.group}" if scope.resource.group else scope.kind
        raise errors.new_invalid(kind, obj.get("metadata", {}).get("name", ""), field.to_causes(errs))

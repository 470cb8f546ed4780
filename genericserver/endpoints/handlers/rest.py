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
from genericserver.registry.rest.rest import Resource

log = logging.getLogger("genericserver.endpoints.handlers")
StartResponse = Callable[..., Any]
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024  # Go's default --max-request-body-bytes


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
    # the body decoder: (scope, body, content type, query) -> (object, warnings); Go's
    # scope.Serializer.DecoderToVersion with the strict checks fieldValidation asks for
    decode: Optional[Callable[..., tuple[dict, list[str]]]] = None
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


def error_to_status(err: BaseException) -> dict:
    """Go's ``ErrorToAPIStatus``: an API error's Status, else a 500 without a reason."""
    if isinstance(err, errors.StatusError):
        return err.status
    log.error("apiserver received an error that is not an metav1.Status: %r: %s", err, err)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": str(err), "code": 500}


def write_empty(start_response: StartResponse, code: int) -> Iterable[bytes]:
    start_response(f"{code} " + {204: "No Content", 304: "Not Modified"}.get(code, ""), [])
    return [b""]


def selectors(scope: RequestScope, req: Request, name: Optional[str] = None) -> Callable[[dict], bool]:
    """The label and field selectors of the query (``listOpts``): parsed, the field labels
    checked against what the resource supports, and a name in the path as a field selector."""
    select = scope.extra.get("select")
    if select is None:
        return lambda obj: obj["metadata"].get("name") == name if name else True
    return select(scope, req.args.get("labelSelector", ""), req.args.get("fieldSelector", ""), name)


def decode_body(scope: RequestScope, req: Request) -> tuple[dict, list[str]]:
    """The request body as the scope's kind, and the warnings the decoding left (Go's
    ``DecoderToVersion`` with the strict checks ``fieldValidation`` asks for)."""
    body = read_body(req)
    if scope.decode is None:
        raise errors.new_internal_error(f"no decoder for {scope.resource.group_resource}")
    return scope.decode(scope, body, req.headers.get("Content-Type", ""), req.args)


def validate_new(scope: RequestScope, obj: dict, old: Optional[dict]) -> None:
    """The resource strategy's ``Validate`` (``ValidateUpdate`` with ``old``): 422 Invalid with
    one cause per field error."""
    if scope.validate is None:
        return
    errs = scope.validate(obj, old)
    if errs:
        kind = f"{scope.kind}.{scope.resource.group}" if scope.resource.group else scope.kind
        raise errors.new_invalid(kind, obj.get("metadata", {}).get("name", ""), field.to_causes(errs))

"""Port of k8s.io/apiserver/pkg/endpoints/handlers/response.go (v1.36.0): how an object becomes the answer.

``transformResponseObject`` (:func:`transform_response_object`): each handler negotiates the
output media type first (:func:`negotiate_output`, Go's ``NegotiateOutputMediaType`` with the
scope as the endpoint's restrictions: a 406 before anything else is read), and hands the
result and that media type here. The object is transformed as asked (``as=Table``: a
meta.k8s.io/v1 Table of the printer's columns, each row carrying the object's metadata, the
object or nothing by ``includeObject``; ``as=PartialObjectMetadata[List]``: the metadata alone)
and written with the negotiated serializer (``WriteObjectNegotiated``). :func:`write_error` is
Go's ``scope.err`` (``ErrorNegotiated``): the Status as the client asked (with ``Retry-After``
when the Status carries a delay), or as raw JSON (indented, ``WriteRawJSON``) when nothing it
asked for can be written.
:func:`watch_encoder` is the encoder watch.go's ``serveWatchHandler`` frames each event with:
the stream media type, and each object transformed as for a list (the Table's column
definitions only in the first event, as Go's ``watchEmbeddedEncoder`` does).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Optional

from genericserver import request, responsewriters
from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.apimachinery.structs import kind_for
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.endpoints.handlers.rest import RequestScope, StartResponse
from genericserver.registry.rest import table
from genericserver.registry.rest.rest import ResourceStreamer


def encode_json(obj: Any) -> bytes:
    """Go's ``json.Encoder``: compact, one newline after the value."""
    return codec_factory.jsonserializer.encode(obj)


def negotiate_output(scope: RequestScope, environ: dict) -> negotiate.MediaTypeOptions:
    """``NegotiateOutputMediaType`` with the scope as the endpoint's restrictions: Go's 406."""
    return negotiate.negotiate_output_media_type(environ, codec_factory.SUPPORTED, scope)


def _table_options(environ_args: Any) -> str:
    include = environ_args.get("includeObject", "")
    if include not in ("", "Metadata", "Object", "None"):
        raise errors.new_bad_request("Unable to convert to Table as requested: includeObject: Invalid value: "
                                     f"{json.dumps(include)}: must be 'Metadata', 'Object', 'None', or empty")
    return include


def transform(scope: RequestScope, options: negotiate.MediaTypeOptions, obj: dict, args: Any, *, is_list: bool,
              no_headers: bool = False) -> dict:
    """``transformObject``: the object as the negotiated conversion asks for it."""
    target = options.convert
    if target is None or obj.get("kind") == "Status":
        return obj
    gv = f"{target.group}/{target.version}"
    if target.kind == "Table":
        include = _table_options(args)
        convertor = scope.resource.table or table.DefaultTableConvertor
        t = convertor.convert_to_table(obj, rt.wall(), no_headers=no_headers, is_list=is_list)
        t["apiVersion"] = gv
        return table.include(t, include, gv, scope.kind, scope.resource.object_group_version)
    if target.kind == "PartialObjectMetadata":
        return as_partial_object_metadata(scope, obj, gv, is_list)
    if target.kind == "PartialObjectMetadataList":
        return as_partial_object_metadata_list(scope, obj, gv, is_list)
    raise negotiate.new_not_acceptable_error(negotiate.media_types(codec_factory.SUPPORTED)[0])


META_GROUP_VERSIONS = ("meta.k8s.io/v1", "meta.k8s.io/v1beta1")


def _go_type(scope: RequestScope, is_list: bool) -> str:
    """How Go's ``%T`` names the storage's object: its internal type, in k8s.io/kubernetes's
    pkg/apis/<group> (``*core.ConfigMap``, ``*apps.DeploymentList``)."""
    package = scope.resource.group.split(".")[0] or "core"
    return f"*{package}.{scope.kind}{'List' if is_list else ''}"


def as_partial_object_metadata(scope: RequestScope, obj: dict, gv: str, is_list: bool) -> dict:
    """``asPartialObjectMetadata``: one object's metadata as a kind of its own (406 for a list, or
    a group version other than meta.k8s.io's v1 and v1beta1)."""
    if is_list:
        raise errors.new_not_acceptable(f"you requested PartialObjectMetadata, but the requested object is a list ({_go_type(scope, True)})")
    if gv not in META_GROUP_VERSIONS:
        raise errors.new_not_acceptable(f"no PartialObjectMetadataList exists in group version {gv}")
    return table.partial_object_metadata(obj, gv)


def as_partial_object_metadata_list(scope: RequestScope, obj: dict, gv: str, is_list: bool) -> dict:
    """``asPartialObjectMetadataList``: each item's metadata, each item a ``PartialObjectMetadata``
    with its kind and apiVersion (406 for what is not a list); the list's resourceVersion,
    continue and remainingItemCount. No items is Go's nil slice: ``"items": null``."""
    if not is_list:
        raise errors.new_not_acceptable(f"you requested PartialObjectMetadataList, but the requested object is not a list "
                                        f"({_go_type(scope, False)})")
    if gv not in META_GROUP_VERSIONS:
        raise errors.new_not_acceptable(f"no PartialObjectMetadataList exists in group version {gv}")
    meta = {k: v for k, v in obj.get("metadata", {}).items() if k in ("resourceVersion", "continue", "remainingItemCount")}
    items = [table.partial_object_metadata(i, gv) for i in obj.get("items", [])]
    return {"kind": "PartialObjectMetadataList", "apiVersion": gv, "metadata": meta, "items": items or None}


def write_encoded(environ: dict, start_response: StartResponse, code: int, obj: dict, options: negotiate.MediaTypeOptions,
                  headers: Optional[list] = None, content_type: Optional[str] = None) -> Iterable[bytes]:
    """``SerializeObject``: the object with the negotiated serializer (JSON when the kind has no
    protobuf message, as a type without one is not offered protobuf in Go; a Status has one).
    No Content-Length: Go's deferredResponseWriter sets none (writers.go:280-281), so net/http
    frames the body, with a length only if it fits the 2 KiB response buffer."""
    info = options.accepted or codec_factory.JSON
    if info is codec_factory.PROTOBUF and kind_for(obj.get("apiVersion", ""), obj.get("kind", "")) is None:
        info = codec_factory.JSON
    body = codec_factory.encode(info, obj, pretty=options.pretty)
    start_response(responsewriters.status_line(code), list(headers or []) + [("Content-Type", content_type or info.media_type)])
    return [body]


def transform_response_object(scope: RequestScope, req: Any, start_response: StartResponse, code: int,
                              media_type: negotiate.MediaTypeOptions, result: Any, *, is_list: bool = False) -> Iterable[bytes]:
    """``transformResponseObject``: the result as the negotiated media type asks, written
    (``WriteObjectNegotiated``, which streams a :class:`ResourceStreamer` as it is:
    :func:`stream_object`)."""
    if isinstance(result, ResourceStreamer):
        return stream_object(req.environ, start_response, code, result)
    obj = transform(scope, media_type, result, req.args, is_list=is_list)
    return write_encoded(req.environ, start_response, code, obj, media_type)


def stream_object(environ: dict, start_response: StartResponse, code: int, streamer: ResourceStreamer) -> Iterable[bytes]:
    """responsewriters' ``StreamObject``: no stream is a 204; else the streamer's content type
    (``application/octet-stream`` if it names none), the header flushed at once, then the
    stream as it comes, until it ends or the request does. (The server writes each piece a WSGI
    app yields as it comes, so the streamer's ``flush`` asks for nothing more here.)"""
    out = streamer.input_stream([request.context_from(environ).done()])
    if out is None:
        start_response(responsewriters.status_line(204), [])
        return []
    start_response(responsewriters.status_line(code), [("Content-Type", streamer.content_type or "application/octet-stream")])

    def body() -> Iterable[bytes]:
        yield b""  # the header goes out before the first line
        yield from out

    return body()


def write_error(scope: Optional[RequestScope], environ: dict, start_response: StartResponse, err: BaseException) -> Iterable[bytes]:
    """Go's ``ErrorNegotiated``: the Status, negotiated; ``Retry-After`` from its details."""
    st = responsewriters.error_to_status(err)
    headers = []
    retry = (st.get("details") or {}).get("retryAfterSeconds")
    if retry:
        headers.append(("Retry-After", str(retry)))
    options = negotiate.negotiate_media_type_options(environ.get("HTTP_ACCEPT", ""), codec_factory.SUPPORTED,
                                                     negotiate.DEFAULT_ENDPOINT_RESTRICTIONS)
    if options is None:  # WriteRawJSON: nothing the client asked for fits, json.MarshalIndent writes it
        options = negotiate.MediaTypeOptions(accepted=codec_factory.JSON, pretty=True)
    elif negotiate.is_pretty_print(environ):
        options.pretty = True
    return write_encoded(environ, start_response, st["code"], st, options, headers)


def watch_encoder(scope: RequestScope, options: negotiate.MediaTypeOptions, args: Any) -> tuple[str, Callable[[str, dict], bytes]]:
    """The watch stream's Content-Type and its event encoder (``watchEncoder`` with its
    ``watchEmbeddedEncoder``), for the media type the list handler negotiated: Go's
    ``NegotiateOutputMediaTypeStream`` turns down one without a stream serializer (406)."""
    info = options.accepted or codec_factory.JSON
    if not info.streams:
        raise negotiate.new_not_acceptable_error(negotiate.media_types(codec_factory.SUPPORTED)[1])
    sent_headers = [False]

    def encode(typ: str, obj: dict) -> bytes:
        if typ not in ("ERROR", "BOOKMARK"):
            obj = transform(scope, options, obj, args, is_list=False, no_headers=sent_headers[0])
            if options.convert is not None and options.convert.kind == "Table":
                sent_headers[0] = True
        return codec_factory.encode_watch_event(info, typ, obj)

    return codec_factory.watch_content_type(info), encode

"""Port of k8s.io/apimachinery/pkg/runtime/serializer/codec_factory.go (v1.36.0): the media types the server speaks.

The apiserver's codec factory offers, in this order (the first is the default): JSON (with a
pretty form and a watch stream, one JSON event a line), YAML (no stream) and protobuf (the
``k8s\\x00`` envelope; a watch stream of length-prefixed frames). CBOR is off by default in
v1.36, so it is not offered. :func:`encode`, :func:`decode` and :func:`encode_watch_event`
dispatch on a :class:`~genericserver.endpoints.handlers.negotiation.negotiate.SerializerInfo`.
"""

from __future__ import annotations

from typing import Any

from genericserver.apimachinery.runtime.serializer import json as jsonserializer
from genericserver.apimachinery.runtime.serializer import protobuf
from genericserver.apimachinery.structs import Struct
from genericserver.endpoints.handlers.negotiation.negotiate import SerializerInfo

JSON = SerializerInfo("application/json", streams=True, pretty=True)
YAML = SerializerInfo("application/yaml", streams=False)
PROTOBUF = SerializerInfo("application/vnd.kubernetes.protobuf", streams=True)
SUPPORTED = [JSON, YAML, PROTOBUF]


def encode(info: SerializerInfo, obj: dict, *, pretty: bool = False) -> bytes:
    if info is YAML:
        return jsonserializer.encode_yaml(obj)
    if info is PROTOBUF:
        return protobuf.encode(obj)
    return jsonserializer.encode(obj, pretty=pretty and info.pretty)


def decode(info: SerializerInfo, body: bytes, struct: Struct) -> tuple[dict, dict, list[str]]:
    """(the body's own apiVersion/kind view, the object as Go keeps it, strict errors)."""
    if info is PROTOBUF:
        obj = protobuf.decode(body)
        return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind")}, obj, []
    if info is YAML:  # YAMLToJSONStrict's duplicate keys come first among the strict errors
        body, duplicates = jsonserializer.yaml_to_json_strict(body)
        raw, obj, strict = jsonserializer.decode(body, struct)
        return raw, obj, ([jsonserializer.YAMLStrictError(duplicates)] if duplicates else []) + strict
    return jsonserializer.decode(body, struct)


def watch_content_type(info: SerializerInfo) -> str:
    """The Content-Type of a watch stream (watch.go): JSON as it is, others ``;stream=watch``."""
    return info.media_type if info is JSON else info.media_type + ";stream=watch"


def encode_watch_event(info: SerializerInfo, typ: str, obj: Any) -> bytes:
    """One ``metav1.WatchEvent`` framed for the stream: a JSON line, or a length-prefixed bare
    protobuf message (the stream's raw serializer) whose object is an encoded envelope."""
    if info is PROTOBUF:
        return protobuf.encode_watch_event(typ, obj)
    return jsonserializer.encode({"type": typ, "object": obj})

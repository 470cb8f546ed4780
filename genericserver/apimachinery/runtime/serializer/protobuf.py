"""Port of k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go (v1.36.0): application/vnd.kubernetes.protobuf.

kubectl's typed calls (``create configmap``, ``auth whoami``) send and accept protobuf. On the
wire an object is the four bytes ``k8s\\x00`` and then a ``runtime.Unknown`` message: its
``typeMeta`` (apiVersion 1, kind 2), ``raw`` (the object's own message), ``contentEncoding`` and
``contentType`` (both empty). The object's message has the field numbers of the kind's
generated.proto, which the :class:`~genericserver.apimachinery.structs.Struct` s carry; a struct
Go embeds inline (a Probe's handler) is a message of its own here, its fields read from and
written to the embedding object's own JSON keys.

The messages are built at run time from the Structs with the ``protobuf`` package's descriptor
pool (no protoc, no generated code), so the wire format is the library's. What Go's generated
marshallers decide on top of it is kept here: a field that is not a pointer in Go is always
written, even when empty; map keys are sorted; a zero ``metav1.Time`` is written as an empty
message and read back as absent.

:func:`encode` and :func:`decode` go between these bytes and the JSON-shaped dicts the server
keeps; :func:`encode_watch_event` is one frame of a protobuf watch stream (a 4-byte big-endian
length, then the bare ``WatchEvent`` message, whose object's ``raw`` is the object's own
envelope); :func:`decode_watch_events` reads such a stream back as a client does.
"""

from __future__ import annotations

import base64
import json
import struct as binary
from datetime import datetime, timezone
from typing import Any, Optional

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from genericserver.apimachinery import intstr
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.apis.meta.v1.types import WATCH_EVENT
from genericserver.apimachinery.structs import KINDS, ListOf, MapOf, Struct, Type, kind_for

PREFIX = b"k8s\x00"
_F = descriptor_pb2.FieldDescriptorProto
_SCALAR = {"string": _F.TYPE_STRING, "bool": _F.TYPE_BOOL, "int32": _F.TYPE_INT32, "int64": _F.TYPE_INT64,
           "bytes": _F.TYPE_BYTES, "float64": _F.TYPE_DOUBLE}
_ZERO = {"string": "", "bool": False, "int32": 0, "int64": 0, "bytes": b"", "float64": 0.0}


class ProtobufError(ValueError):
    """A body that is not a protobuf object of a known kind; its text is Go's. ``raw`` holds
    the envelope's apiVersion and kind when the envelope could be read."""

    raw: Optional[dict] = None


def _message_name(s: Struct) -> str:
    return s.proto.replace(".", "_")


class _Messages:
    """The message classes of every struct reachable from the registered kinds."""

    def __init__(self, roots: list[Struct]):
        self.structs: dict[str, Struct] = {}
        for s in roots:
            self._collect(s)
        fdp = descriptor_pb2.FileDescriptorProto(name="genericserver_k8s.proto", package="gs", syntax="proto2")
        unknown = fdp.message_type.add(name="Unknown")
        type_meta = unknown.nested_type.add(name="TypeMeta")
        self._add(type_meta, "apiVersion", 1, _F.TYPE_STRING)
        self._add(type_meta, "kind", 2, _F.TYPE_STRING)
        self._add(unknown, "typeMeta", 1, _F.TYPE_MESSAGE, ".gs.Unknown.TypeMeta")
        self._add(unknown, "raw", 2, _F.TYPE_BYTES)
        self._add(unknown, "contentEncoding", 3, _F.TYPE_STRING)
        self._add(unknown, "contentType", 4, _F.TYPE_STRING)
        for s in self.structs.values():
            self._describe(fdp.message_type.add(name=_message_name(s)), s)
        pool = descriptor_pool.DescriptorPool()
        pool.Add(fdp)
        self.classes = {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"gs.{_message_name(s)}"))
                        for name, s in self.structs.items()}
        self.unknown = message_factory.GetMessageClass(pool.FindMessageTypeByName("gs.Unknown"))

    def _collect(self, s: Struct) -> None:
        if s.proto in self.structs:
            return
        self.structs[s.proto] = s
        for f in s.fields:
            t = f.type
            while isinstance(t, (MapOf, ListOf)):
                t = t.value if isinstance(t, MapOf) else t.item
            if isinstance(t, Struct):
                self._collect(t)

    @staticmethod
    def _add(msg: Any, name: str, number: int, typ: int, type_name: str = "", repeated: bool = False) -> None:
        label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
        fd = msg.field.add(name=name, number=number, type=typ, label=label)
        if type_name:
            fd.type_name = type_name

    def _describe(self, msg: Any, s: Struct) -> None:
        for f in s.fields:
            t = f.type
            if isinstance(t, MapOf):
                entry = msg.nested_type.add(name=f"{f.json}_Entry")
                entry.options.map_entry = True
                self._add(entry, "key", 1, _F.TYPE_STRING)
                self._add_typed(entry, "value", 2, t.value)
                self._add(msg, f.json, f.number, _F.TYPE_MESSAGE, f".gs.{_message_name(s)}.{f.json}_Entry", repeated=True)
            elif isinstance(t, ListOf):
                self._add_typed(msg, f.json, f.number, t.item, repeated=True)
            else:
                self._add_typed(msg, f.json, f.number, t)

    def _add_typed(self, msg: Any, name: str, number: int, t: Type, repeated: bool = False) -> None:
        if isinstance(t, Struct):
            self._add(msg, name, number, _F.TYPE_MESSAGE, f".gs.{_message_name(t)}", repeated)
        elif isinstance(t, str):
            self._add(msg, name, number, _SCALAR[t], repeated=repeated)
        else:
            raise TypeError(f"protobuf: a list or map of {t!r} in field {name} is not supported")


_cache: dict[frozenset, _Messages] = {}


def _messages(*extra: Struct) -> _Messages:
    """The message classes of the registered kinds, the watch event, and `extra` (a struct decoded
    as another scheme knows it: the meta scheme's DeleteOptions)."""
    key = frozenset(s.proto for s in list(KINDS.values()) + list(extra))
    if key not in _cache:
        _cache.clear()
        _cache[key] = _Messages(list(KINDS.values()) + [WATCH_EVENT, *extra])
    return _cache[key]


# -- dict -> message --------------------------------------------------------------------------------


def _time_seconds(text: str) -> tuple[int, int]:
    when = datetime.fromisoformat(text)
    return int(when.timestamp()), when.microsecond * 1000


def _fill(msg: Any, obj: dict, s: Struct) -> None:
    for f in s.fields:
        if f.inline:  # its fields are the object's own in JSON, a message of their own here
            _fill_struct(getattr(msg, f.json), obj, f.type)
            continue
        value = obj.get(f.json) if obj else None
        t = f.type
        if isinstance(t, MapOf):
            target = getattr(msg, f.json)
            for k in sorted(value or {}):
                v = value[k]
                if isinstance(t.value, Struct):
                    _fill_struct(target[k], v, t.value)
                else:
                    target[k] = _scalar(v, t.value)
            continue
        if isinstance(t, ListOf):
            target = getattr(msg, f.json)
            for v in value or []:
                if isinstance(t.item, Struct):
                    _fill_struct(target.add(), v, t.item)
                else:
                    target.append(_scalar(v, t.item))
            continue
        if value is None and f.pointer:
            continue  # a nil pointer: not written
        if isinstance(t, Struct):
            _fill_struct(getattr(msg, f.json), value, t)
        else:
            setattr(msg, f.json, _scalar(value, t) if value is not None else _ZERO[t])


def _fill_struct(msg: Any, value: Any, t: Struct) -> None:
    msg.SetInParent()
    if t.short_name in ("Time", "MicroTime"):
        if value:  # Go writes the zero time as an empty message
            msg.seconds, msg.nanos = _time_seconds(value)
    elif t.json_form is not None and t.json_form.get("type") == "array":  # ExtraValue: a list in JSON
        msg.items.extend(value or [])
    elif t.short_name == "IntOrString":
        for name, v in intstr.to_message_fields(value).items():
            setattr(msg, name, v)
    elif t.short_name == "Quantity":  # a string in JSON, the message's one field here
        msg.string = str(value or "")
    elif t.short_name in ("RawExtension", "FieldsV1"):
        if value is not None:
            setattr(msg, t.fields[0].json, json.dumps(value, separators=(",", ":")).encode())
    else:
        _fill(msg, value or {}, t)


def _scalar(value: Any, t: str) -> Any:
    if t == "bytes":
        return base64.b64decode(value) if isinstance(value, str) else bytes(value)
    return value


# -- message -> dict --------------------------------------------------------------------------------


def _read(msg: Any, s: Struct) -> dict:
    out: dict[str, Any] = {}
    for f in s.fields:
        t = f.type
        if isinstance(t, MapOf):
            src = getattr(msg, f.json)
            if len(src):
                out[f.json] = {k: (_read_struct(src[k], t.value) if isinstance(t.value, Struct) else _json_scalar(src[k], t.value))
                               for k in src}
            continue
        if isinstance(t, ListOf):
            src = getattr(msg, f.json)
            if len(src):
                out[f.json] = [_read_struct(v, t.item) if isinstance(t.item, Struct) else _json_scalar(v, t.item) for v in src]
            elif f.required:
                out[f.json] = []
            continue
        if not msg.HasField(f.json):
            continue
        v = getattr(msg, f.json)
        if f.inline:
            out.update(_read(v, t))
            continue
        value = _read_struct(v, t) if isinstance(t, Struct) else _json_scalar(v, t)
        # an empty message stays: Go's struct field is there, and encoding/json writes it ("metadata":{})
        kept = value == {} and isinstance(t, Struct) and t.json_form is None
        if value is None or (not f.pointer and not f.required and not kept and value in ("", 0, False, {})):
            continue
        out[f.json] = value
    return out


def _read_struct(msg: Any, t: Struct) -> Any:
    if t.short_name in ("Time", "MicroTime"):
        if not msg.HasField("seconds") and not msg.HasField("nanos"):
            return None  # an empty message is Go's zero time
        return datetime.fromtimestamp(msg.seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if t.json_form is not None and t.json_form.get("type") == "array":
        return list(msg.items)
    if t.short_name == "IntOrString":
        return intstr.from_message_fields(msg.type, msg.intVal, msg.strVal)
    if t.short_name == "Quantity":
        return msg.string
    if t.short_name in ("RawExtension", "FieldsV1"):
        raw = getattr(msg, t.fields[0].json)
        return json.loads(raw) if raw else None
    return _read(msg, t)


def _json_scalar(value: Any, t: str) -> Any:
    if t == "bytes":
        return base64.b64encode(value).decode()
    return value


# -- the envelope ------------------------------------------------------------------------------------


def encode(obj: dict, struct: Optional[Struct] = None) -> bytes:
    """The ``k8s\\x00`` envelope of ``obj`` (which names its apiVersion and kind); with `struct`,
    written as that struct (a kind another scheme knows)."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    s = struct or kind_for(api_version, kind)
    if s is None:
        raise ProtobufError(f"protobuf: no kind {json.dumps(kind)} is registered for version {json.dumps(api_version)}")
    m = _messages(*([struct] if struct is not None else []))
    body = m.classes[s.proto]()
    _fill(body, obj, s)
    return _envelope(m, api_version, kind, body.SerializeToString(deterministic=True))


def _envelope(m: _Messages, api_version: str, kind: str, raw: bytes) -> bytes:
    unknown = m.unknown()
    unknown.typeMeta.apiVersion = api_version
    unknown.typeMeta.kind = kind
    unknown.raw = raw
    unknown.contentEncoding = ""
    unknown.contentType = ""
    return PREFIX + unknown.SerializeToString(deterministic=True)


def decode(data: bytes, default_gvk: Optional[tuple[str, str, str]] = None, struct: Optional[Struct] = None) -> dict:
    """The object of a ``k8s\\x00`` envelope, as a JSON-shaped dict in Go's field order. With
    `struct`, the message is read as that struct whatever kind the envelope names (the caller
    checks the kind, as a scheme of its own would)."""
    if not data.startswith(PREFIX):
        raise ProtobufError(f"provided data does not appear to be a protobuf message, expected prefix {list(PREFIX)}")
    m = _messages(*([struct] if struct is not None else []))
    unknown = m.unknown()
    try:
        unknown.ParseFromString(data[len(PREFIX):])
    except Exception as err:  # the library's DecodeError: Go's unmarshal error
        raise ProtobufError(f"unexpected EOF: {err}") from None
    api_version, kind = unknown.typeMeta.apiVersion, unknown.typeMeta.kind
    if default_gvk and not kind:
        group, version, kind = default_gvk
        api_version = api_version or (f"{group}/{version}" if group else version)
    s = struct or kind_for(api_version, kind)
    if s is None:
        err = ProtobufError(f"no kind {json.dumps(kind)} is registered for version {json.dumps(api_version)}")
        err.raw = {"apiVersion": api_version, "kind": kind}
        raise err
    body = m.classes[s.proto]()
    try:
        body.ParseFromString(unknown.raw)
    except Exception as err:
        raise ProtobufError(f"unexpected EOF: {err}") from None
    return {"kind": kind, "apiVersion": api_version, **_read(body, s)}


def encode_watch_event(typ: str, obj: dict) -> bytes:
    """One frame of a protobuf watch stream: a 4-byte big-endian length (``LengthDelimitedFramer``),
    then the ``WatchEvent`` message as the stream's serializer writes it: codec_factory.go gives
    protobuf's stream the ``RawSerializer``, which writes the message alone, with no ``k8s\\x00``
    and no ``runtime.Unknown`` around it. Only the event's object (its ``RawExtension``'s raw
    bytes) is written by the ordinary serializer, as watch.go's embedded encoder does: that one is
    an envelope."""
    m = _messages()
    event = m.classes[WATCH_EVENT.proto]()
    event.type = typ
    event.object.raw = encode(obj)
    frame = event.SerializeToString(deterministic=True)
    return binary.pack(">I", len(frame)) + frame


def decode_watch_events(stream: bytes) -> list[tuple[str, dict]]:
    """The events of a protobuf watch stream as a client reads them (client-go's
    ``streaming`` decoder with the ``RawSerializer``, then the object's envelope): each frame's
    type and object. A stream cut inside a frame raises :class:`ProtobufError`."""
    m = _messages()
    events = []
    at = 0
    while at < len(stream):
        if len(stream) - at < 4:
            raise ProtobufError("unexpected EOF: a frame's length was cut short")
        (size,) = binary.unpack(">I", stream[at:at + 4])
        frame = stream[at + 4:at + 4 + size]
        if len(frame) < size:
            raise ProtobufError("unexpected EOF: a frame was cut short")
        at += 4 + size
        event = m.classes[WATCH_EVENT.proto]()
        try:
            event.ParseFromString(frame)
        except Exception as err:  # the library's DecodeError: Go's unmarshal error
            raise ProtobufError(f"unexpected EOF: {err}") from None
        events.append((event.type, decode(event.object.raw)))
    return events


def as_status_error(err: ProtobufError) -> errors.StatusError:
    return errors.new_bad_request(str(err))

"""Port of k8s.io/apimachinery/pkg/runtime/serializer/json/json.go (v1.36.0): JSON and YAML, as the apiserver writes and reads them.

Encoding is Go's ``encoding/json``: compact with one newline after the value, HTML characters
escaped (``<`` as ``\\u003c``), or indented by two spaces with ``pretty`` (no newline then); a
struct's fields in the struct's order, a map's keys sorted (:func:`in_go_order`);
YAML is the JSON turned into YAML as sigs.k8s.io/yaml does it, through yaml.v2's encoder (keys
sorted, block style, a string double-quoted where it would not read back as one: :mod:`.goyaml`).

Decoding reads a body into a kind's :class:`~genericserver.apimachinery.structs.Struct` the way
Go's strict decoder reads it into the Go struct: a value of the wrong JSON type is an error with
``encoding/json``'s text (``json: cannot unmarshal number into Go struct field ConfigMap.data of
type string``); fields the struct does not have, and fields given twice, are *strict* errors
(``unknown field "spec"``, ``duplicate field "data.a"``: with their paths, in the order
sigs.k8s.io/json's one pass meets them: :func:`strict_errors`), which the handlers
turn into a 400 or into warnings by ``fieldValidation``. A field given twice with an object
both times merges, as Go decodes the second into what the first filled; null in a map or a list
is the element's zero value; a body of ``null`` is an empty object. The object that comes out is
what a Go round trip leaves: the struct's fields only, in its order, empty ``omitempty`` fields
dropped. A body that is not JSON at all is refused with Go's scanner's text
(:mod:`genericserver.encoding.json.scanner`). A YAML body is read as yaml.v2 reads it (YAML 1.1:
``y``, ``on`` and ``off`` are booleans) and its repeated keys are yaml.v2's strict errors
(``line 5: key true already set in map``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any, Optional

import yaml

from genericserver.apimachinery.api.quantity import parse_quantity
from genericserver.apimachinery.apis.meta.v1.types import OBJECT_META, RAW_EXTENSION
from genericserver.apimachinery.runtime.serializer import goyaml
from genericserver.apimachinery.structs import SCALARS, ListOf, MapOf, Struct, Type, kind_for
from genericserver.encoding.base64 import base64 as go_base64
from genericserver.godur import parse_rfc3339_error
from genericserver.encoding.json import decode as gojson
from genericserver.encoding.json import scanner


class DecodeError(ValueError):
    """A body that cannot be read into the kind (Go's decode error); its text is Go's. ``raw``
    is the body's JSON object when it was one (its apiVersion and kind could be read)."""

    raw: Optional[dict] = None


def encode(obj: Any, *, pretty: bool = False) -> bytes:
    """Go's ``json.Encoder.Encode`` (or ``MarshalIndent`` when pretty), a map's keys sorted."""
    obj = in_go_order(obj)
    if pretty:
        text = json.dumps(obj, indent=2, ensure_ascii=False)
    else:
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n"
    return escape_html(text).encode()


def in_go_order(obj: Any) -> Any:
    """``obj`` with the keys of each Go map sorted, as encoding/json writes a map (encode.go's
    mapEncoder sorts them; a struct's fields keep the struct's order). A dict does not say whether
    it is a struct or a map, so the kind's :class:`Struct` does: ``data``, ``labels`` and
    ``annotations`` are maps, ``metadata`` is not. A kind described nowhere (a Table, a
    PartialObjectMetadata, a watch event) has its metadata and the objects it holds ordered."""
    if not isinstance(obj, dict):
        return obj
    struct = kind_for(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if struct is not None:
        return _ordered(obj, struct)
    out = dict(obj)
    if isinstance(out.get("metadata"), dict):
        out["metadata"] = _ordered(out["metadata"], OBJECT_META)
    if isinstance(out.get("object"), dict):  # a watch event's, or a Table row's
        out["object"] = in_go_order(out["object"])
    for key in ("items", "rows"):
        if isinstance(out.get(key), list):
            out[key] = [in_go_order(x) for x in out[key]]
    return out


def _ordered(value: Any, t: Type) -> Any:
    if isinstance(t, MapOf) and isinstance(value, dict):
        return {k: _ordered(value[k], t.value) for k in sorted(value)}
    if isinstance(t, ListOf) and isinstance(value, list):
        return [_ordered(v, t.item) for v in value]
    if isinstance(t, Struct) and isinstance(value, dict):
        if t.json_form is not None:  # RawExtension: an object of its own kind; Time, FieldsV1: as they are
            return in_go_order(value) if t is RAW_EXTENSION else value
        out = {}
        for k, v in value.items():
            f = t.field(k)
            out[k] = _ordered(v, f.type) if f is not None else v
        return out
    return value


def escape_html(text: str) -> str:
    # encoding/json's default: these never appear outside strings, so a plain replace is exact
    for ch, esc in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def encode_yaml(obj: Any) -> bytes:
    """The JSON turned into YAML by sigs.k8s.io/yaml's ``JSONToYAML`` (json.go's ``doEncode`` with
    ``options.Yaml``): yaml.v2's key order and quoting (:mod:`.goyaml`)."""
    return goyaml.json_to_yaml(json.loads(json.dumps(obj))).encode()


class _GoYAMLLoader(yaml.SafeLoader):
    """YAML as gopkg.in/yaml.v2 (sigs.k8s.io/yaml's) reads it: YAML 1.1's booleans include
    ``y``, ``Y``, ``n`` and ``N`` besides yes/no/on/off (PyYAML's SafeLoader stops at those), and
    each key met again in a mapping is written down as yaml.v2's strict decoding reports it
    (``line 5: key true already set in map``), the later value kept."""

    bool_values = {**yaml.SafeLoader.bool_values, "y": True, "n": False}

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[str] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen and not isinstance(key, (list, dict)):
                self.duplicates.append(f"line {key_node.start_mark.line + 1}: key {_go_sharp_v(key)} already set in map")
            seen.add(key) if not isinstance(key, (list, dict)) else None
        return super().construct_mapping(node, deep)


_GoYAMLLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:y|Y|n|N)$"), list("yYnN"))


def _go_sharp_v(key: Any) -> str:
    """fmt's ``%#v`` of a YAML key: a string quoted, a bool or number as it is."""
    if isinstance(key, str):
        return json.dumps(key, ensure_ascii=False)
    if isinstance(key, bool):
        return "true" if key else "false"
    return "<nil>" if key is None else str(key)


class YAMLStrictError(str):
    """yaml.v2's ``*yaml.TypeError`` of a YAML body's duplicate keys: as one strict error, its
    text (``yaml: unmarshal errors:`` and a line each); as warnings, each line on its own (what
    the handlers' ``addStrictDecodingWarnings`` does with it)."""

    lines: list[str]

    def __new__(cls, lines: list[str]) -> "YAMLStrictError":
        err = super().__new__(cls, "yaml: unmarshal errors:\n  " + "\n  ".join(lines))
        err.lines = list(lines)
        return err


def strict_warnings(strict: list[str]) -> list[str]:
    """The warnings a Warn directive adds for these strict errors (a YAML error's lines each)."""
    out: list[str] = []
    for e in strict:
        out.extend(e.lines if isinstance(e, YAMLStrictError) else [e])
    return out


def yaml_to_json_strict(data: bytes) -> tuple[bytes, list[str]]:
    """sigs.k8s.io/yaml's ``YAMLToJSON`` (the JSON a YAML body stands for), and what
    ``YAMLToJSONStrict`` would refuse of it: its duplicate keys."""
    try:
        loader = _GoYAMLLoader(data.decode("utf-8"))
        try:
            doc = loader.get_single_data()
        finally:
            loader.dispose()
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise DecodeError(f"error converting YAML to JSON: {err}") from None
    return json.dumps(doc, default=str).encode(), loader.duplicates


def yaml_to_json(data: bytes) -> bytes:
    """sigs.k8s.io/yaml's ``YAMLToJSON``: a YAML body read as the JSON it stands for."""
    return yaml_to_json_strict(data)[0]


# what null leaves in a map's value or a list's item of a scalar type: Go's zero value
_ZERO = {"string": "", "bool": False, "int32": 0, "int64": 0, "float64": 0.0}

_JSON_TYPES = {bool: "bool", int: "number", float: "number", str: "string", list: "array", dict: "object"}


def _go_type(t: Type) -> str:
    if isinstance(t, str):
        return {"bytes": "[]uint8", "float64": "float64"}.get(t, t)
    if isinstance(t, MapOf):
        return f"map[string]{_go_type(t.value)}"
    if isinstance(t, ListOf):
        return f"[]{_go_type(t.item)}"
    return {"IntOrString": "intstr.", "Quantity": "resource."}.get(t.short_name, "v1.") + t.short_name


# the converter's names for what a JSON value decodes to (integers kept as int64): its type, its kind
_GO_VALUE_TYPES = {bool: "bool", int: "int64", float: "float64", str: "string", list: "[]interface {}", dict: "map[string]interface {}"}
_GO_KINDS = {bool: "bool", int: "int64", float: "float64", str: "string", list: "slice", dict: "map"}


def _inner_unmarshal(value: Any, t: Struct) -> tuple[str, str]:
    """What a type with its own UnmarshalJSON reports of a value it cannot take, and the type it
    names: IntOrString reads anything but a string into its int32 (a fraction is ``number 1.5``),
    Time its text into a string."""
    target = "int32" if t.short_name == "IntOrString" else "string"
    what = f"number {json.dumps(value)}" if target == "int32" and isinstance(value, float) else _JSON_TYPES.get(type(value), "value")
    return what, target


def _converter_error(value: Any, t: Type) -> str:
    """``fromUnstructured``'s error for ``value`` where ``t`` goes: JSON's four kinds of scalar
    never convert into each other; a type with its own UnmarshalJSON is handed the value as JSON."""
    kind = _GO_KINDS.get(type(value), "interface")
    if isinstance(t, Struct) and t.json_form is not None:
        return "json: cannot unmarshal {} into Go value of type {}".format(*_inner_unmarshal(value, t))
    if isinstance(t, Struct):
        return f"cannot restore struct from: {kind}"
    if isinstance(t, MapOf):
        return f"cannot restore map from {kind}"
    if isinstance(t, ListOf) or t == "bytes":
        return f"cannot restore slice from {kind}"
    return f"cannot convert {_GO_VALUE_TYPES.get(type(value), 'interface {}')} to {_go_type(t)}"


class _Reader:
    """One decode into a struct (the strict errors are :func:`strict_errors`'s).

    encoding/json reads the document in order; a value of the wrong type (and a []byte that is
    no base64) is kept as the decode's error, the first one met, and the reading goes on, while
    a type's own UnmarshalJSON that fails (a time, a quantity) ends it at once with its error.
    The unstructured converter stops at its first error."""

    def __init__(self, unstructured: bool = False) -> None:
        self.unstructured = unstructured
        self.saved: Optional[DecodeError] = None  # Go's savedError

    def save(self, err: DecodeError) -> None:
        if self.unstructured:
            raise err
        if self.saved is None:
            self.saved = err

    def fail(self, value: Any, struct: str, path: str, t: Type) -> DecodeError:
        if self.unstructured:
            return DecodeError(_converter_error(value, t))
        what, go_type = _JSON_TYPES.get(type(value), "value"), _go_type(t)
        if isinstance(t, Struct) and t.json_form is not None:  # the error its UnmarshalJSON met, placed by the outer decode
            what, go_type = _inner_unmarshal(value, t)
        return DecodeError(f"json: cannot unmarshal {what} into Go struct field {struct}.{path} of type {go_type}")

    def value(self, value: Any, t: Type, struct: str, path: str) -> Any:
        if value is None:
            return None
        if isinstance(t, Struct):
            if t.json_form is not None:  # Time, RawExtension, FieldsV1...: their own JSON
                if t.short_name == "IntOrString":  # a number or a string, nothing else
                    if isinstance(value, bool) or not isinstance(value, (int, str)):
                        raise self.fail(value, struct, path, t)
                elif t.short_name == "Quantity" and isinstance(value, (int, float)) and not isinstance(value, bool):
                    return str(value)  # UnmarshalJSON parses a bare number too (YAML's cpu: 1)
                elif t.short_name == "Quantity":
                    try:  # UnmarshalJSON: ParseQuantity of the text (a bool or an object too) or the body is refused
                        parse_quantity(value.strip() if isinstance(value, str) else json.dumps(value))
                    except ValueError as err:
                        raise DecodeError(str(err)) from None
                elif t.json_form.get("type") == "string" and not isinstance(value, str):
                    raise self.fail(value, struct, path, t)
                elif t.short_name == "Time":  # its UnmarshalJSON: time.Parse(time.RFC3339, ...)
                    err = parse_rfc3339_error(value)
                    if err is not None:
                        raise DecodeError(err)
                return value
            if not isinstance(value, dict):
                return self.save(self.fail(value, struct, path, t))
            return self.struct(value, t, path)
        if isinstance(t, MapOf):
            if not isinstance(value, dict):
                return self.save(self.fail(value, struct, path, t))
            return {k: self.element(v, t.value, struct, path) for k, v in value.items()}
        if isinstance(t, ListOf):
            if not isinstance(value, list):
                return self.save(self.fail(value, struct, path, t))
            return [self.element(v, t.item, struct, path) for v in value]
        return self.scalar(value, t, struct, path)

    def element(self, value: Any, t: Type, struct: str, path: str) -> Any:
        """A map's value or a list's item: null is the element type's zero value (a string's "")."""
        if value is None and t in _ZERO:
            return _ZERO[t]
        return self.value(value, t, struct, path)

    def scalar(self, value: Any, t: str, struct: str, path: str) -> Any:
        assert t in SCALARS, t
        if t == "string" and isinstance(value, str):
            return value
        if t == "bool" and isinstance(value, bool):
            return value
        if t in ("int32", "int64") and isinstance(value, int) and not isinstance(value, bool):
            return value
        if t in ("int32", "int64") and isinstance(value, float) and value.is_integer():
            return int(value)
        if t == "float64" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        if t == "bytes" and isinstance(value, str):
            # Go decodes it into a []byte (where it fails, said by the byte) and writes it back
            # as base64 again: newlines it skipped and stray low bits are gone
            offset = go_base64.corrupt_input_offset(value.encode())
            if offset is not None:
                return self.save(DecodeError(go_base64.corrupt_input_error(offset)))
            return base64.b64encode(base64.b64decode(value.replace("\n", "").replace("\r", ""))).decode()
        return self.save(self.fail(value, struct, path, t))

    def struct(self, raw: dict, s: Struct, path: str = "") -> dict:
        out: dict[str, Any] = {}
        if s.type_meta:
            for k in ("kind", "apiVersion"):
                if isinstance(raw.get(k), str) and raw[k]:
                    out[k] = raw[k]
        # read in the document's order (which error comes first), kept in the struct's
        read = {}
        for key, value in raw.items():
            f = s.field(key)
            if f is not None:
                read[key] = self.value(value, f.type, s.short_name, f"{path}.{key}" if path else key)
        for f in s.json_fields:
            if f.json not in raw:
                if f.required and isinstance(f.type, ListOf):
                    out[f.json] = []
                continue
            v = read[f.json]
            if v is None or (not f.required and not f.pointer and v in ("", 0, False, {}, [])):
                if f.required:
                    out[f.json] = [] if isinstance(f.type, ListOf) else v
                continue
            out[f.json] = v
        return out


class _Pairs(list):
    """A JSON object's (key, value) pairs in order, duplicates kept (what the decoder meets)."""


def _resolve(value: Any) -> Any:
    """The value as Go's decoder keeps it in a struct (its duplicate keys are :func:`strict_errors`'
    to report): Go decodes a later object into what the earlier one filled (a struct's fields,
    a map's keys), so two objects given for one key merge; anything else given again replaces
    the earlier value. (A map of structs would take the later value whole; no served kind has
    one where a body would repeat a key.)"""
    if isinstance(value, _Pairs):
        out: dict[str, Any] = {}
        for k, v in value:
            v = _resolve(v)
            out[k] = _merged(out[k], v) if k in out else v
        return out
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    return value


MAX_STRICT_ERRORS = 100  # sigs.k8s.io/json keeps no more


def strict_errors(value: Any, t: Optional[Type]) -> list[str]:
    """sigs.k8s.io/json's strict errors of a body read into ``t``, as its decoder meets them in
    one pass over the document: a key the struct has no field for is an unknown field (once,
    however often it comes, and nothing under it is looked at); a struct's field or a map's key
    met again is a duplicate field; each with its path (``metadata.ownerReferences[0].foo``).
    Each error once, at most :data:`MAX_STRICT_ERRORS`. ``value`` is the body as read with its
    pairs kept (:class:`_Pairs`); ``t`` None reads anything (``map[string]interface{}``)."""
    found: list[str] = []
    seen: set[str] = set()

    def save(error: str) -> None:
        if error not in seen and len(found) < MAX_STRICT_ERRORS:
            seen.add(error)
            found.append(error)

    def walk(v: Any, t: Optional[Type], path: str) -> None:
        if not isinstance(v, _Pairs):  # (an object's pairs are a list too)
            if isinstance(v, list):
                item = t.item if isinstance(t, ListOf) else None
                for i, x in enumerate(v):
                    walk(x, item, f"{path}[{i}]")
            return
        if isinstance(t, Struct) and t.json_form is not None:
            return  # its own UnmarshalJSON (a time, a raw extension): nothing strict inside
        met: set[str] = set()
        for k, x in v:
            at = f"{path}.{k}" if path else k
            if isinstance(t, Struct):
                f = t.field(k)
                if f is None and not (t.type_meta and k in ("kind", "apiVersion")):
                    save(f'unknown field "{at}"')
                    continue
                inner = f.type if f is not None else "string"
            else:
                inner = t.value if isinstance(t, MapOf) else None
            if k in met:
                save(f'duplicate field "{at}"')
            met.add(k)
            walk(x, inner, at)

    walk(value, t, "")
    return found


def _merged(earlier: Any, later: Any) -> Any:
    if not (isinstance(earlier, dict) and isinstance(later, dict)):
        return later
    out = dict(earlier)
    for k, v in later.items():
        out[k] = _merged(out[k], v) if k in out else v
    return out


def duplicate_fields(body: bytes) -> list[str]:
    """``kjson.UnmarshalStrict`` of a patch into a ``map[string]interface{}``: its duplicate
    fields, with their paths (a body that is not JSON has none here: the caller's decode says so)."""
    try:
        return strict_errors(gojson.loads(body, object_pairs_hook=_Pairs), None)
    except scanner.SyntaxError:
        return []


def decode(body: bytes, struct: Struct, *, unstructured: bool = False) -> tuple[dict, dict, list[str]]:
    """Read ``body`` into ``struct``: (the raw JSON object, the object as Go keeps it, the strict
    errors). A body that is not a JSON object, or a value of the wrong type, raises
    :class:`DecodeError` with Go's text: encoding/json's, or with ``unstructured`` the
    unstructured converter's (``FromUnstructured``: how Go reads a strategic patch's result)."""
    try:
        pairs = gojson.loads(body, object_pairs_hook=_Pairs)
    except scanner.SyntaxError as err:  # what SimpleMetaFactory.Interpret says of it (meta.go)
        raise DecodeError(f"couldn't get version/kind; json parse error: {err}") from None
    raw = _resolve(pairs)
    if raw is None:  # null read into the kind's struct leaves it empty, and names no kind either
        raw = {}
    if not isinstance(raw, dict):
        raise DecodeError("couldn't get version/kind; json parse error: json: cannot unmarshal "
                          f"{_JSON_TYPES.get(type(raw), 'value')} into Go value of type struct {{ APIVersion string "
                          '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
    reader = _Reader(unstructured)
    try:
        obj = reader.struct(raw, struct)
        if reader.saved is not None:
            raise reader.saved
    except DecodeError as err:
        err.raw = raw
        raise
    return raw, obj, strict_errors(pairs, struct)


def type_meta(raw: dict) -> tuple[Optional[str], Optional[str]]:
    """``apiVersion`` and ``kind`` as the body gives them (Go's ``SimpleMetaFactory.Interpret``)."""
    av, kind = raw.get("apiVersion"), raw.get("kind")
    return (av if isinstance(av, str) and av else None), (kind if isinstance(kind, str) and kind else None)

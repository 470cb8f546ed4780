"""The Go structs of the served types, as data (no Go twin: Go reads them by reflection).

A Go API type is a struct whose fields carry tags: ``json:"name,omitempty"`` (the JSON name),
``protobuf:"bytes,1,opt,name=name"`` (the protobuf field number), ``patchStrategy:"merge"
patchMergeKey:"uid"`` (how strategic merge patch treats a list), and comment markers such as
``+listType=map`` (what OpenAPI says of it). Go's serializers, its OpenAPI generator and its
strategic merge patch read those tags by reflection; Python has no Go structs to reflect on,
so each type is written out here once, as a :class:`Struct` of :class:`Field` s, and every one of
those consumers reads the same description:

* the protobuf codec (field numbers and wire types),
* the JSON decoder's strict field validation (which fields exist),
* the OpenAPI v2 and v3 documents (types, descriptions, ``x-kubernetes-*`` extensions),
* strategic merge patch (patch strategy and merge key of each list).

Field order is the Go struct's, which is the order Go's JSON encoder writes. A type with
``type_meta`` embeds ``metav1.TypeMeta`` (``kind`` and ``apiVersion`` in JSON and OpenAPI; in
protobuf they travel in the ``runtime.Unknown`` envelope instead, so they have no number). Any
other embedded struct is an ``inline`` field (``core/v1.Probe`` embeds ``ProbeHandler``): JSON,
OpenAPI and strategic merge patch see its fields among the embedding struct's own
(:attr:`Struct.json_fields`), protobuf a message of its own under the field's number.

A few Go types have a JSON form of their own that is not an object (``metav1.Time`` is an
RFC 3339 string, ``intstr.IntOrString`` an int or a string, ``resource.Quantity`` a string,
``runtime.RawExtension`` any JSON): those are :class:`Struct` s with a ``json_form``, whose
``fields`` are only their protobuf message.

The types themselves live in modules named after their Go packages
(``genericserver.apimachinery.apis.meta.v1.types`` and ``genericserver.api.*``), registered
by group, version and kind in :data:`KINDS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field as _field
from typing import Optional, Union

# scalar types by their Go names; their protobuf wire form follows from the name
SCALARS = ("string", "bool", "int32", "int64", "float64", "bytes")


@dataclass(frozen=True)
class MapOf:
    """``map[string]V``."""

    value: "Type"


@dataclass(frozen=True)
class ListOf:
    """``[]T``."""

    item: "Type"


@dataclass(frozen=True)
class Field:
    """One field of a Go struct, with what its tags and markers say."""

    json: str  # the JSON name in the struct tag (an inline field has none: its protobuf tag's name)
    number: int  # the protobuf field number
    type: "Type"
    doc: str = ""
    required: bool = False  # no omitempty, and OpenAPI lists it as required
    patch_strategy: str = ""  # "merge", "replace", "retainKeys" or "merge,retainKeys"
    patch_merge_key: str = ""
    list_type: str = ""  # +listType: "atomic", "set" or "map"
    list_map_keys: tuple[str, ...] = ()  # +listMapKey
    map_type: str = ""  # +mapType: "atomic" or "granular"
    pointer: bool = False  # *T in Go: absent and zero differ
    default: object = None  # +default, as OpenAPI shows it
    inline: bool = False  # an embedded struct, `json:",inline"`: its fields are the embedding struct's in JSON


@dataclass(frozen=True)
class Struct:
    """A Go struct: its OpenAPI definition name, protobuf message name, doc and fields."""

    name: str  # OpenAPI definition name, e.g. "io.k8s.api.core.v1.ConfigMap"
    proto: str  # protobuf message, e.g. "k8s.io.api.core.v1.ConfigMap"
    doc: str
    fields: tuple[Field, ...] = ()
    type_meta: bool = False  # embeds metav1.TypeMeta (kind, apiVersion)
    json_form: Optional[dict] = None  # the OpenAPI schema of a type whose JSON is not an object
    gvks: tuple[tuple[str, str, str], ...] = ()  # x-kubernetes-group-version-kind of a top-level kind
    _by_json: dict = _field(default_factory=dict, compare=False, repr=False, hash=False)

    @property
    def json_fields(self) -> tuple[Field, ...]:
        """The fields as JSON has them: an inline field's own fields in its place."""
        out: list[Field] = []
        for f in self.fields:
            out.extend(f.type.json_fields if f.inline and isinstance(f.type, Struct) else (f,))
        return tuple(out)

    def field(self, json_name: str) -> Optional[Field]:
        """The field with this JSON name, or None."""
        if not self._by_json:
            self._by_json.update((f.json, f) for f in self.json_fields)
        return self._by_json.get(json_name)

    @property
    def short_name(self) -> str:
        """The Go type name (the definition name's last part), e.g. ``ConfigMap``."""
        return self.name.rpartition(".")[2]


Type = Union[str, MapOf, ListOf, Struct]

# (group, version, kind) -> Struct, filled by the type modules as they are imported
KINDS: dict[tuple[str, str, str], Struct] = {}


def register(s: Struct) -> Struct:
    """Record a top-level kind under each of its group-version-kinds; returns it."""
    for gvk in s.gvks:
        KINDS[gvk] = s
    return s


def kind_for(api_version: str, kind: str) -> Optional[Struct]:
    """The struct of ``apiVersion``/``kind`` as a JSON body names them, or None."""
    group, _, version = api_version.rpartition("/")
    return KINDS.get((group, version, kind))

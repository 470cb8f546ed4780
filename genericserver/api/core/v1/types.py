"""Port of k8s.io/api/core/v1/types.go (v1.36.0): the core/v1 kinds this server serves, as data.

Each kind is a :class:`~genericserver.apimachinery.structs.Struct` with the Go struct's JSON
names and order, the field numbers of core/v1's generated.proto and descriptions in our words,
registered under its group-version-kind so the serializers can find it.
"""

from __future__ import annotations

from genericserver.apimachinery.apis.meta.v1.types import LIST_META, OBJECT_META
from genericserver.apimachinery.structs import Field, ListOf, MapOf, Struct, register

API = "io.k8s.api.core.v1."
PROTO = "k8s.io.api.core.v1."

CONFIG_MAP = register(Struct(
    API + "ConfigMap", PROTO + "ConfigMap",
    "Configuration data, as keys and values, for pods to read as files or environment variables.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("immutable", 4, "bool", "True keeps data and binaryData from ever changing (only the metadata may).", pointer=True),
        Field("data", 2, MapOf("string"), "The configuration data. Keys are letters, digits, '-', '_' or '.'; values are UTF-8 text."),
        Field("binaryData", 3, MapOf("bytes"), "Configuration data that need not be UTF-8, base64 in JSON. Its keys may not repeat data's."),
    ),
    type_meta=True, gvks=(("", "v1", "ConfigMap"),),
))

CONFIG_MAP_LIST = register(Struct(
    API + "ConfigMapList", PROTO + "ConfigMapList", "A list of ConfigMaps.",
    (
        Field("metadata", 1, LIST_META, "Standard list metadata."),
        Field("items", 2, ListOf(CONFIG_MAP), "The ConfigMaps.", required=True),
    ),
    type_meta=True, gvks=(("", "v1", "ConfigMapList"),),
))

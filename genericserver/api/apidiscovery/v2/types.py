"""Port of k8s.io/api/apidiscovery/v2/types.go (v1.36.0): aggregated discovery's documents, as data.

What ``/api`` and ``/apis`` answer a client that asks for ``as=APIGroupDiscoveryList`` (kubectl
does): every group, each version and each resource with its verbs and kind, in one document.
Field numbers from apidiscovery/v2's generated.proto (so that the document can be written in
protobuf, as kube-apiserver writes it to a client that asks), descriptions ours.
"""

from __future__ import annotations

from genericserver.apimachinery.apis.meta.v1.types import GROUP_VERSION_KIND, LIST_META, OBJECT_META
from genericserver.apimachinery.structs import Field, ListOf, Struct, register

API = "io.k8s.api.apidiscovery.v2."
PROTO = "k8s.io.api.apidiscovery.v2."


def _s(name: str, doc: str, *fields: Field, **kw) -> Struct:
    return Struct(API + name, PROTO + name, doc, tuple(fields), **kw)


API_SUBRESOURCE_DISCOVERY = _s(
    "APISubresourceDiscovery", "A subresource of a resource.",
    Field("subresource", 1, "string", "Its name.", required=True),
    Field("responseKind", 2, GROUP_VERSION_KIND, "The kind it answers.", pointer=True),
    Field("acceptedTypes", 3, ListOf(GROUP_VERSION_KIND), "The kinds it takes."),
    Field("verbs", 4, ListOf("string"), "Its verbs.", required=True),
)

API_RESOURCE_DISCOVERY = _s(
    "APIResourceDiscovery", "A resource of a group version.",
    Field("resource", 1, "string", "The plural name.", required=True),
    Field("responseKind", 2, GROUP_VERSION_KIND, "The kind it answers.", pointer=True),
    Field("scope", 3, "string", "Cluster or Namespaced.", required=True),
    Field("singularResource", 4, "string", "The singular name.", required=True),
    Field("verbs", 5, ListOf("string"), "Its verbs.", required=True),
    Field("shortNames", 6, ListOf("string"), "Short names kubectl takes."),
    Field("categories", 7, ListOf("string"), "Groupings such as all."),
    Field("subresources", 8, ListOf(API_SUBRESOURCE_DISCOVERY), "Its subresources."),
)

API_VERSION_DISCOVERY = _s(
    "APIVersionDiscovery", "A version of a group.",
    Field("version", 1, "string", "The version.", required=True),
    Field("resources", 2, ListOf(API_RESOURCE_DISCOVERY), "Its resources."),
    Field("freshness", 3, "string", "Current, or Stale when a peer's document could not be read."),
)

API_GROUP_DISCOVERY = _s(
    "APIGroupDiscovery", "A group, its name in metadata.name.",
    Field("metadata", 1, OBJECT_META, "The group's name."),
    Field("versions", 2, ListOf(API_VERSION_DISCOVERY), "Its versions, preferred first."),
    type_meta=True,
)

API_GROUP_DISCOVERY_LIST = register(_s(
    "APIGroupDiscoveryList", "Every group the server serves, in one document.",
    Field("metadata", 1, LIST_META, "The list's metadata."),
    Field("items", 2, ListOf(API_GROUP_DISCOVERY), "The groups.", required=True),
    type_meta=True, gvks=(("apidiscovery.k8s.io", "v2", "APIGroupDiscoveryList"),),
))

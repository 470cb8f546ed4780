"""Port of k8s.io/api/discovery/v1/types.go (v1.36.0): EndpointSlice, as data.

A service's endpoints as the endpoints controller writes them, each with its three conditions
(ready, serving, terminating); field numbers from discovery/v1's generated.proto, descriptions
ours.
"""

from __future__ import annotations

from genericserver.api.core.v1.types import OBJECT_REFERENCE
from genericserver.apimachinery.apis.meta.v1.types import LIST_META, OBJECT_META
from genericserver.apimachinery.structs import Field, ListOf, Struct, register

API = "io.k8s.api.discovery.v1."
PROTO = "k8s.io.api.discovery.v1."

ENDPOINT_CONDITIONS = Struct(
    API + "EndpointConditions", PROTO + "EndpointConditions", "The state of one endpoint.",
    (
        Field("ready", 1, "bool", "The pod is ready and not terminating: new connections may go to it.", pointer=True),
        Field("serving", 2, "bool", "The pod is ready, terminating or not.", pointer=True),
        Field("terminating", 3, "bool", "The pod is being deleted.", pointer=True),
    ),
)

ENDPOINT = Struct(
    API + "Endpoint", PROTO + "Endpoint", "One backend of the service: a pod's addresses and state.",
    (
        Field("addresses", 1, ListOf("string"), "The pod's IP addresses.", required=True, list_type="set"),
        Field("conditions", 2, ENDPOINT_CONDITIONS, "The endpoint's state."),
        Field("hostname", 3, "string", "The endpoint's hostname, for DNS."),
        Field("targetRef", 4, OBJECT_REFERENCE, "The pod behind the endpoint.", pointer=True),
        Field("nodeName", 6, "string", "The node the pod runs on.", pointer=True),
        Field("zone", 7, "string", "The zone of that node.", pointer=True),
    ),
)

ENDPOINT_PORT = Struct(
    API + "EndpointPort", PROTO + "EndpointPort", "A port every endpoint of the slice serves on.",
    (
        Field("name", 1, "string", "The service port's name.", pointer=True),
        Field("protocol", 2, "string", "TCP, UDP or SCTP.", pointer=True),
        Field("port", 3, "int32", "The port number.", pointer=True),
        Field("appProtocol", 4, "string", "The application protocol, e.g. http.", pointer=True),
    ),
)

ENDPOINT_SLICE = register(Struct(
    API + "EndpointSlice", PROTO + "EndpointSlice", "Some of a service's endpoints, with their ports and conditions.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("addressType", 4, "string", "IPv4, IPv6 or FQDN.", required=True),
        Field("endpoints", 2, ListOf(ENDPOINT), "The endpoints.", required=True, list_type="atomic"),
        Field("ports", 3, ListOf(ENDPOINT_PORT), "The ports every endpoint serves on.", list_type="atomic"),
    ),
    type_meta=True, gvks=(("discovery.k8s.io", "v1", "EndpointSlice"),),
))

ENDPOINT_SLICE_LIST = register(Struct(
    API + "EndpointSliceList", PROTO + "EndpointSliceList", "A list of EndpointSlices.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."), Field("items", 2, ListOf(ENDPOINT_SLICE), "The EndpointSlices.", required=True)),
    type_meta=True, gvks=(("discovery.k8s.io", "v1", "EndpointSliceList"),),
))

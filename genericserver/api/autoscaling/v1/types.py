"""Port of k8s.io/api/autoscaling/v1/types.go (v1.36.0): Scale, the kind of a ``/scale`` subresource, as data.

``kubectl scale`` reads and patches a Deployment's ``deployments/scale``: only its replicas,
without the rest of the object. Field numbers from autoscaling/v1's generated.proto.
"""

from __future__ import annotations

from genericserver.apimachinery.apis.meta.v1.types import OBJECT_META
from genericserver.apimachinery.structs import Field, Struct, register

API = "io.k8s.api.autoscaling.v1."
PROTO = "k8s.io.api.autoscaling.v1."

SCALE_SPEC = Struct(API + "ScaleSpec", PROTO + "ScaleSpec", "The desired number of pods.",
                    (Field("replicas", 1, "int32", "How many pods there should be."),))

SCALE_STATUS = Struct(
    API + "ScaleStatus", PROTO + "ScaleStatus", "The number of pods now.",
    (
        Field("replicas", 1, "int32", "How many pods there are.", required=True),
        Field("selector", 2, "string", "The label selector of the pods, as a string."),
    ),
)

SCALE = register(Struct(
    API + "Scale", PROTO + "Scale", "How many pods a scalable resource runs.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("spec", 2, SCALE_SPEC, "The desired number of pods."),
        Field("status", 3, SCALE_STATUS, "The number of pods now."),
    ),
    type_meta=True, gvks=(("autoscaling", "v1", "Scale"),),
))

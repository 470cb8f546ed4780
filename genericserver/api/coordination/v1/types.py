"""Port of k8s.io/api/coordination/v1/types.go (v1.36.0): Lease, as data.

A node's kubelet holds a Lease of the node's name in ``kube-node-lease`` and renews it every
quarter of its duration: the node controller reads a stale lease as a node gone silent, and
``kubectl describe node`` shows the holder and the last renewal. Field numbers from
coordination/v1's generated.proto.
"""

from __future__ import annotations

from genericserver.apimachinery.apis.meta.v1.types import LIST_META, MICRO_TIME, OBJECT_META
from genericserver.apimachinery.structs import Field, ListOf, Struct, register

API = "io.k8s.api.coordination.v1."
PROTO = "k8s.io.api.coordination.v1."

LEASE_SPEC = Struct(
    API + "LeaseSpec", PROTO + "LeaseSpec", "Who holds the lease, for how long, and when it was last renewed (every field a pointer in Go).",
    (
        Field("holderIdentity", 1, "string", "The current holder.", pointer=True),
        Field("leaseDurationSeconds", 2, "int32", "How long others wait after the last renewal before taking it.", pointer=True),
        Field("acquireTime", 3, MICRO_TIME, "When the current holder took it.", pointer=True),
        Field("renewTime", 4, MICRO_TIME, "When the holder last renewed it.", pointer=True),
        Field("leaseTransitions", 5, "int32", "How many times it changed hands.", pointer=True),
        Field("strategy", 6, "string", "How a coordinated leader election picks the next holder.", pointer=True),
        Field("preferredHolder", 7, "string", "Who should hold it next, in a coordinated leader election.", pointer=True),
    ),
)

LEASE = register(Struct(
    API + "Lease", PROTO + "Lease", "A lease: a lock, or a heartbeat, with a holder and a renewal time.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("spec", 2, LEASE_SPEC, "The holder and the times."),
    ),
    type_meta=True, gvks=(("coordination.k8s.io", "v1", "Lease"),),
))

LEASE_LIST = register(Struct(
    API + "LeaseList", PROTO + "LeaseList", "A list of Leases.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."), Field("items", 2, ListOf(LEASE), "The Leases.", required=True)),
    type_meta=True, gvks=(("coordination.k8s.io", "v1", "LeaseList"),),
))

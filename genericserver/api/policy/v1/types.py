"""Port of k8s.io/api/policy/v1/types.go (v1.36.0): PodDisruptionBudget and Eviction, as data.

A PodDisruptionBudget says how many of an application's pods must stay healthy while someone
disrupts them on purpose (a node drained, a cluster upgraded); the disruption controller keeps
its status (how many are healthy, how many may go now), and the eviction subresource of a pod
(``POST pods/NAME/eviction`` with an :data:`EVICTION`) deletes the pod only when the budget
allows it. Field numbers from policy/v1's generated.proto.
"""

from __future__ import annotations

from genericserver.apimachinery.apis.meta.v1.types import CONDITION, DELETE_OPTIONS, LABEL_SELECTOR, LIST_META, OBJECT_META, TIME
from genericserver.apimachinery.intstr import INT_OR_STRING
from genericserver.apimachinery.structs import Field, ListOf, MapOf, Struct, register

API = "io.k8s.api.policy.v1."
PROTO = "k8s.io.api.policy.v1."

EVICTION = register(Struct(
    API + "Eviction", PROTO + "Eviction", "A request to evict a pod: a delete the pod's disruption budget may refuse.",
    (
        Field("metadata", 1, OBJECT_META, "The pod's name and namespace."),
        Field("deleteOptions", 2, DELETE_OPTIONS, "How the pod is deleted, once the budget allows it.", pointer=True),
    ),
    type_meta=True, gvks=(("policy", "v1", "Eviction"),),
))

POD_DISRUPTION_BUDGET_SPEC = Struct(
    API + "PodDisruptionBudgetSpec", PROTO + "PodDisruptionBudgetSpec",
    "Which pods the budget guards and how many of them must stay (or may go); one of the two counts.",
    (
        Field("minAvailable", 1, INT_OR_STRING, "Pods that must stay healthy after an eviction: a count or a percentage.",
              pointer=True),
        Field("selector", 2, LABEL_SELECTOR, "The pods it guards; an empty selector guards none.", pointer=True,
              patch_strategy="replace"),
        Field("maxUnavailable", 3, INT_OR_STRING, "Pods that may be unhealthy after an eviction: a count or a percentage.",
              pointer=True),
        Field("unhealthyPodEvictionPolicy", 4, "string",
              "IfHealthyBudget (the default) or AlwaysAllow: whether a not-ready pod may be evicted when the budget is short.",
              pointer=True),
    ),
)

POD_DISRUPTION_BUDGET_STATUS = Struct(
    API + "PodDisruptionBudgetStatus", PROTO + "PodDisruptionBudgetStatus",
    "What the disruption controller last counted, and the evictions it has not seen happen yet.",
    (
        Field("observedGeneration", 1, "int64", "The budget's generation the status was computed for."),
        Field("disruptedPods", 2, MapOf(TIME), "Pods evicted (by name) that the controller has not seen go yet, and when."),
        Field("disruptionsAllowed", 3, "int32", "How many pods may be evicted now.", required=True),
        Field("currentHealthy", 4, "int32", "Guarded pods that are healthy (Ready).", required=True),
        Field("desiredHealthy", 5, "int32", "Guarded pods that must stay healthy.", required=True),
        Field("expectedPods", 6, "int32", "Guarded pods their controllers want.", required=True),
        Field("conditions", 7, ListOf(CONDITION), "DisruptionAllowed: whether an eviction would be allowed now.",
              patch_strategy="merge", patch_merge_key="type", list_type="map", list_map_keys=("type",)),
    ),
)

POD_DISRUPTION_BUDGET = register(Struct(
    API + "PodDisruptionBudget", PROTO + "PodDisruptionBudget", "How many of a set of pods may be disrupted at once.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("spec", 2, POD_DISRUPTION_BUDGET_SPEC, "The budget."),
        Field("status", 3, POD_DISRUPTION_BUDGET_STATUS, "The disruption controller's count."),
    ),
    type_meta=True, gvks=(("policy", "v1", "PodDisruptionBudget"),),
))

POD_DISRUPTION_BUDGET_LIST = register(Struct(
    API + "PodDisruptionBudgetList", PROTO + "PodDisruptionBudgetList", "A list of PodDisruptionBudgets.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."),
     Field("items", 2, ListOf(POD_DISRUPTION_BUDGET), "The budgets.", required=True)),
    type_meta=True, gvks=(("policy", "v1", "PodDisruptionBudgetList"),),
))

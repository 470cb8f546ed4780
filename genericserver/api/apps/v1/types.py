"""Port of k8s.io/api/apps/v1/types.go (v1.36.0): Deployment and ReplicaSet, as data.

The fields the cluster simulation's Deployment uses (replicas, selector, template, the rolling
update's strategy, status); field numbers from apps/v1's generated.proto, descriptions ours.
"""

from __future__ import annotations

from genericserver.api.core.v1.types import POD_TEMPLATE_SPEC
from genericserver.apimachinery.apis.meta.v1.types import LABEL_SELECTOR, LIST_META, OBJECT_META, TIME
from genericserver.apimachinery.intstr import INT_OR_STRING
from genericserver.apimachinery.structs import Field, ListOf, Struct, register

API = "io.k8s.api.apps.v1."
PROTO = "k8s.io.api.apps.v1."

ROLLING_UPDATE_DEPLOYMENT = Struct(
    API + "RollingUpdateDeployment", PROTO + "RollingUpdateDeployment", "How fast a rolling update may go.",
    (
        Field("maxUnavailable", 1, INT_OR_STRING, "Pods below the replicas that may be unavailable during the update: a count or a percentage (rounded down); 25% by default.", pointer=True),
        Field("maxSurge", 2, INT_OR_STRING, "Pods above the replicas that may exist during the update: a count or a percentage (rounded up); 25% by default.", pointer=True),
    ),
)

DEPLOYMENT_STRATEGY = Struct(
    API + "DeploymentStrategy", PROTO + "DeploymentStrategy", "How old pods are replaced by new ones.",
    (
        Field("type", 1, "string", "RollingUpdate (the default) or Recreate."),
        Field("rollingUpdate", 2, ROLLING_UPDATE_DEPLOYMENT, "The rolling update's limits.", pointer=True),
    ),
)

DEPLOYMENT_SPEC = Struct(
    API + "DeploymentSpec", PROTO + "DeploymentSpec", "The pods a Deployment should run, and how to replace them.",
    (
        Field("replicas", 1, "int32", "How many pods; 1 by default.", pointer=True),
        Field("selector", 2, LABEL_SELECTOR, "Which pods are the Deployment's; must match the template's labels.", required=True, pointer=True),
        Field("template", 3, POD_TEMPLATE_SPEC, "The pods to make.", required=True),
        Field("strategy", 4, DEPLOYMENT_STRATEGY, "How old pods are replaced by new ones.", patch_strategy="retainKeys"),
        Field("minReadySeconds", 5, "int32", "Seconds a new pod must be ready before it counts as available."),
        Field("revisionHistoryLimit", 6, "int32", "Old ReplicaSets to keep for rollbacks; 10 by default.", pointer=True),
        Field("paused", 7, "bool", "True stops the controller from rolling out template changes."),
        Field("progressDeadlineSeconds", 9, "int32", "Seconds without progress after which the rollout is reported failed; 600 by default.", pointer=True),
    ),
)

DEPLOYMENT_CONDITION = Struct(
    API + "DeploymentCondition", PROTO + "DeploymentCondition", "One aspect of the Deployment's state.",
    (
        Field("type", 1, "string", "Available, Progressing or ReplicaFailure.", required=True),
        Field("status", 2, "string", "True, False or Unknown.", required=True),
        Field("lastUpdateTime", 6, TIME, "When the condition was last updated."),
        Field("lastTransitionTime", 7, TIME, "When the condition last changed."),
        Field("reason", 4, "string", "Why, as one word."),
        Field("message", 5, "string", "Why, for people."),
    ),
)

DEPLOYMENT_STATUS = Struct(
    API + "DeploymentStatus", PROTO + "DeploymentStatus", "What the deployment controller last saw.",
    (
        Field("observedGeneration", 1, "int64", "The generation the controller last acted on."),
        Field("replicas", 2, "int32", "Pods of the Deployment that are not terminating."),
        Field("updatedReplicas", 3, "int32", "Pods of the newest template that are not terminating."),
        Field("readyReplicas", 7, "int32", "Pods that are ready."),
        Field("availableReplicas", 4, "int32", "Pods available (ready for minReadySeconds)."),
        Field("unavailableReplicas", 5, "int32", "Pods still needed for the Deployment to be fully available."),
        Field("terminatingReplicas", 9, "int32", "Pods of the Deployment that are terminating.", pointer=True),
        Field("conditions", 6, ListOf(DEPLOYMENT_CONDITION), "The Deployment's conditions.",
              patch_strategy="merge", patch_merge_key="type", list_type="map", list_map_keys=("type",)),
    ),
)

DEPLOYMENT = register(Struct(
    API + "Deployment", PROTO + "Deployment", "Runs a number of identical pods and replaces them when their template changes.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("spec", 2, DEPLOYMENT_SPEC, "What the Deployment should run."),
        Field("status", 3, DEPLOYMENT_STATUS, "What it is doing; written by the controller."),
    ),
    type_meta=True, gvks=(("apps", "v1", "Deployment"),),
))

DEPLOYMENT_LIST = register(Struct(
    API + "DeploymentList", PROTO + "DeploymentList", "A list of Deployments.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."), Field("items", 2, ListOf(DEPLOYMENT), "The Deployments.", required=True)),
    type_meta=True, gvks=(("apps", "v1", "DeploymentList"),),
))

# -- replica sets: what a Deployment scales (each revision of its template is one) ------------------

REPLICA_SET_SPEC = Struct(
    API + "ReplicaSetSpec", PROTO + "ReplicaSetSpec", "How many copies of a pod template to run.",
    (
        Field("replicas", 1, "int32", "How many pods; 1 by default.", pointer=True),
        Field("minReadySeconds", 4, "int32", "Seconds a new pod must be ready before it counts as available."),
        Field("selector", 2, LABEL_SELECTOR, "Which pods are the ReplicaSet's; must match the template's labels.", required=True, pointer=True),
        Field("template", 3, POD_TEMPLATE_SPEC, "The pods to make when there are too few."),
    ),
)

REPLICA_SET_STATUS = Struct(
    API + "ReplicaSetStatus", PROTO + "ReplicaSetStatus", "What the replica set controller last saw.",
    (
        Field("replicas", 1, "int32", "Pods of the ReplicaSet that are not terminating.", required=True),
        Field("fullyLabeledReplicas", 2, "int32", "Of them, pods whose labels match the template's."),
        Field("readyReplicas", 4, "int32", "Pods that are ready."),
        Field("availableReplicas", 5, "int32", "Pods available (ready for minReadySeconds)."),
        Field("terminatingReplicas", 7, "int32", "Pods of the ReplicaSet that are terminating.", pointer=True),
        Field("observedGeneration", 3, "int64", "The generation the controller last acted on."),
    ),
)

REPLICA_SET = register(Struct(
    API + "ReplicaSet", PROTO + "ReplicaSet", "Keeps a number of pods of one template running; a Deployment makes one per revision.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata; the Deployment that owns it is in ownerReferences."),
        Field("spec", 2, REPLICA_SET_SPEC, "What the ReplicaSet should run."),
        Field("status", 3, REPLICA_SET_STATUS, "What it runs; written by the controller."),
    ),
    type_meta=True, gvks=(("apps", "v1", "ReplicaSet"),),
))

REPLICA_SET_LIST = register(Struct(
    API + "ReplicaSetList", PROTO + "ReplicaSetList", "A list of ReplicaSets.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."), Field("items", 2, ListOf(REPLICA_SET), "The ReplicaSets.", required=True)),
    type_meta=True, gvks=(("apps", "v1", "ReplicaSetList"),),
))

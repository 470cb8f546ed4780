"""Port of k8s.io/api/authorization/v1/types.go (v1.36.0): SelfSubjectAccessReview, as data.

What ``kubectl auth can-i VERB RESOURCE`` creates and reads back: may the requesting user do
this? (field numbers from authorization/v1's generated.proto; descriptions ours; the field and
label selector attributes of a resource check are left out).
"""

from __future__ import annotations

from genericserver.apimachinery.apis.meta.v1.types import OBJECT_META
from genericserver.apimachinery.structs import Field, Struct, register

API = "io.k8s.api.authorization.v1."
PROTO = "k8s.io.api.authorization.v1."

RESOURCE_ATTRIBUTES = Struct(API + "ResourceAttributes", PROTO + "ResourceAttributes", "A request on a resource, as an authorizer sees it.", (
    Field("namespace", 1, "string", "The namespace; empty for a cluster-wide resource, or for all namespaces."),
    Field("verb", 2, "string", "get, list, watch, create, update, patch, delete, deletecollection, or * for any."),
    Field("group", 3, "string", "The API group; * for any."),
    Field("version", 4, "string", "The API version; * for any."),
    Field("resource", 5, "string", "The resource; * for any."),
    Field("subresource", 6, "string", "The subresource; empty for the resource itself."),
    Field("name", 7, "string", "The object's name; empty for all."),
))

NON_RESOURCE_ATTRIBUTES = Struct(API + "NonResourceAttributes", PROTO + "NonResourceAttributes", "A request on a path that is not a resource.", (
    Field("path", 1, "string", "The URL path, such as /healthz."),
    Field("verb", 2, "string", "The HTTP verb in lower case."),
))

SELF_SUBJECT_ACCESS_REVIEW_SPEC = Struct(
    API + "SelfSubjectAccessReviewSpec", PROTO + "SelfSubjectAccessReviewSpec", "The request to check: exactly one of the two.", (
        Field("resourceAttributes", 1, RESOURCE_ATTRIBUTES, "A request on a resource.", pointer=True),
        Field("nonResourceAttributes", 2, NON_RESOURCE_ATTRIBUTES, "A request on a path.", pointer=True),
    ))

SUBJECT_ACCESS_REVIEW_STATUS = Struct(API + "SubjectAccessReviewStatus", PROTO + "SubjectAccessReviewStatus", "The authorizer's answer.", (
    Field("allowed", 1, "bool", "True when the request would be allowed.", required=True),
    Field("denied", 4, "bool", "True when an authorizer denied it outright (false with allowed false: nobody had an opinion)."),
    Field("reason", 2, "string", "Why, in the authorizer's words."),
    Field("evaluationError", 3, "string", "An error the authorizer met while deciding."),
))

SELF_SUBJECT_ACCESS_REVIEW = register(Struct(
    API + "SelfSubjectAccessReview", PROTO + "SelfSubjectAccessReview",
    "Asks whether the requesting user may do something; answered at once, stored nowhere.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata; must be empty."),
        Field("spec", 2, SELF_SUBJECT_ACCESS_REVIEW_SPEC, "What to check.", required=True),
        Field("status", 3, SUBJECT_ACCESS_REVIEW_STATUS, "The answer; filled by the server."),
    ),
    type_meta=True, gvks=(("authorization.k8s.io", "v1", "SelfSubjectAccessReview"),),
))

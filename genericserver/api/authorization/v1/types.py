"""Port of k8s.io/api/authorization/v1/types.go (v1.36.0): SelfSubjectAccessReview and SelfSubjectRulesReview, as data.

What ``kubectl auth can-i VERB RESOURCE`` creates and reads back: may the requesting user do
this? (field numbers from authorization/v1's generated.proto; descriptions ours; the field and
label selector attributes of a resource check are left out).
"""

from __future__ import annotations

from genericserver.apimachinery.apis.meta.v1.types import OBJECT_META
from genericserver.apimachinery.structs import Field, ListOf, Struct, register

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

RESOURCE_RULE = Struct(API + "ResourceRule", PROTO + "ResourceRule", "Verbs a user may use on some resources.", (
    Field("verbs", 1, ListOf("string"), "The verbs; * for all.", required=True, list_type="atomic"),
    Field("apiGroups", 2, ListOf("string"), "The API groups; * for all.", list_type="atomic"),
    Field("resources", 3, ListOf("string"), "The resources; * for all, resource/subresource for a subresource.", list_type="atomic"),
    Field("resourceNames", 4, ListOf("string"), "Only objects of these names; empty for any.", list_type="atomic"),
))

NON_RESOURCE_RULE = Struct(API + "NonResourceRule", PROTO + "NonResourceRule", "Verbs a user may use on some URL paths.", (
    Field("verbs", 1, ListOf("string"), "The verbs (get, post...); * for all.", required=True, list_type="atomic"),
    Field("nonResourceURLs", 2, ListOf("string"), "The paths; a trailing * matches any rest.", list_type="atomic"),
))

SELF_SUBJECT_RULES_REVIEW = register(Struct(
    API + "SelfSubjectRulesReview", PROTO + "SelfSubjectRulesReview",
    "Lists what the requesting user may do in a namespace; answered at once, stored nowhere.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("spec", 2, Struct(API + "SelfSubjectRulesReviewSpec", PROTO + "SelfSubjectRulesReviewSpec", "Where to list the rules.",
                                (Field("namespace", 1, "string", "The namespace."),)), "Where to list the rules.", required=True),
        Field("status", 3, Struct(API + "SubjectRulesReviewStatus", PROTO + "SubjectRulesReviewStatus", "The rules, as the authorizers know them.", (
            Field("resourceRules", 1, ListOf(RESOURCE_RULE), "What the user may do on resources.", required=True, list_type="atomic"),
            Field("nonResourceRules", 2, ListOf(NON_RESOURCE_RULE), "What the user may do on other paths.", required=True, list_type="atomic"),
            Field("incomplete", 3, "bool", "True when an authorizer could not list its rules (the list may be short).", required=True),
            Field("evaluationError", 4, "string", "What went wrong while listing them."),
        )), "The answer; filled by the server."),
    ),
    type_meta=True, gvks=(("authorization.k8s.io", "v1", "SelfSubjectRulesReview"),),
))

"""Port of k8s.io/api/authentication/v1/types.go (v1.36.0): SelfSubjectReview, as data.

What ``kubectl auth whoami`` creates and reads back: the user the server authenticated the
request as (field numbers from authentication/v1's generated.proto; descriptions ours).
"""

from __future__ import annotations

from genericserver.apimachinery.apis.meta.v1.types import OBJECT_META
from genericserver.apimachinery.structs import Field, ListOf, MapOf, Struct, register

API = "io.k8s.api.authentication.v1."
PROTO = "k8s.io.api.authentication.v1."

EXTRA_VALUE = Struct(API + "ExtraValue", PROTO + "ExtraValue", "More values an authenticator recorded for one key.",
                     (Field("items", 1, ListOf("string")),), json_form={"type": "array", "items": {"type": "string"}})

USER_INFO = Struct(API + "UserInfo", PROTO + "UserInfo", "Who a user is, as the authenticator found out.", (
    Field("username", 1, "string", "The name that identifies the user among all active users."),
    Field("uid", 2, "string", "An identifier that stays the same for this user across name changes."),
    Field("groups", 3, ListOf("string"), "The groups the user is in.", list_type="atomic"),
    Field("extra", 4, MapOf(EXTRA_VALUE), "More information the authenticator provided."),
))

SELF_SUBJECT_REVIEW_STATUS = Struct(API + "SelfSubjectReviewStatus", PROTO + "SelfSubjectReviewStatus",
                                    "What the server found out about the user making the request.", (
                                        Field("userInfo", 1, USER_INFO, "The attributes of the user making the request."),
                                    ))

SELF_SUBJECT_REVIEW = register(Struct(
    API + "SelfSubjectReview", PROTO + "SelfSubjectReview",
    "Asks the server for the attributes of the user making the request: created, never stored.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("status", 2, SELF_SUBJECT_REVIEW_STATUS, "Filled in by the server with the user's attributes."),
    ),
    type_meta=True, gvks=(("authentication.k8s.io", "v1", "SelfSubjectReview"),),
))

"""Port of k8s.io/kubernetes/pkg/registry/authorization/selfsubjectaccessreview/rest.go (v1.36.0): may I?

``kubectl auth can-i delete pods`` creates a ``SelfSubjectAccessReview`` (authorization.k8s.io/v1)
and prints ``yes`` or ``no``. Nothing is stored: the server asks its own authorizer (the one the
authorization filter asks, ``--authorization-mode``) about the request the spec describes, made
by the request's own user, and answers the review with ``status.allowed``, ``denied`` and the
authorizer's ``reason``. Go's validation first: the metadata must be empty, and exactly one of
``resourceAttributes`` and ``nonResourceAttributes`` given (422, on the kind Go names from the
internal object's empty TypeMeta: ``.authorization.k8s.io "" is invalid: ...``); no user on the
request is 400 ``no user present on request``.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from genericserver import request
from genericserver.api.authorization.v1.types import SELF_SUBJECT_ACCESS_REVIEW
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.field import errors as field
from genericserver.authz import AttributesRecord, Decision
from genericserver.registry.rest.rest import Resource

SELF_SUBJECT_ACCESS_REVIEWS = Resource("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview",
                                       SELF_SUBJECT_ACCESS_REVIEW, namespaced=False, verbs=("create",))


def validate(review: dict) -> list:
    """``ValidateSelfSubjectAccessReview``: empty metadata, exactly one kind of attributes."""
    errs = []
    meta = {k: v for k, v in (review.get("metadata") or {}).items() if k != "managedFields"}
    if meta:
        errs.append(field.invalid("metadata", json.dumps(meta, separators=(",", ":")), "must be empty"))
    spec = review.get("spec") or {}
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        errs.append(field.invalid("spec.nonResourceAttributes", _internal_non_resource_attributes(non_resource),
                                  "cannot be specified in combination with resourceAttributes"))
    if resource is None and non_resource is None:
        # Go passes spec.NonResourceAttributes, a nil pointer here: ErrorBody marshals it as null
        errs.append(field.invalid("spec.resourceAttributes", None, "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
    return errs


def _internal_non_resource_attributes(a: dict) -> dict:
    # the value Go shows is the internal type, which has no json tags: its Go field names, none omitted
    return {"Path": a.get("path", ""), "Verb": a.get("verb", "")}


def attributes(user: Any, spec: dict) -> AttributesRecord:
    """``ResourceAttributesFrom`` / ``NonResourceAttributesFrom``: the request the spec describes."""
    if spec.get("resourceAttributes") is not None:
        a = spec["resourceAttributes"]
        return AttributesRecord(user=user, verb=a.get("verb", ""), namespace=a.get("namespace", ""), api_group=a.get("group", ""),
                                api_version=a.get("version", ""), resource=a.get("resource", ""),
                                subresource=a.get("subresource", ""), name=a.get("name", ""), resource_request=True)
    a = spec["nonResourceAttributes"]
    return AttributesRecord(user=user, verb=a.get("verb", ""), path=a.get("path", ""), resource_request=False)


def new_create(authorizer: Any) -> Callable[[dict, str, dict], dict]:
    """``REST.Create`` over the server's authorizer."""

    def create(environ: dict, namespace: str, review: dict) -> dict:
        errs = validate(review)
        if errs:
            # rest.go:77 qualifies the internal object's TypeMeta.Kind, which conversion to the
            # internal version left empty: GroupKind{authorization.k8s.io, ""}, ".authorization.k8s.io"
            internal_kind = ""
            raise errors.new_invalid(f"{internal_kind}.{SELF_SUBJECT_ACCESS_REVIEWS.group}", "", field.to_causes(errs))
        user = request.user_from(environ)
        if user is None:
            raise errors.new_bad_request("no user present on request")
        decision, reason, err = authorizer.authorize(environ, attributes(user, review["spec"]))
        status: dict = {"allowed": decision == Decision.ALLOW}
        if decision == Decision.DENY:
            status["denied"] = True
        if reason:
            status["reason"] = reason
        if err is not None:
            status["evaluationError"] = str(err)
        return {**review, "metadata": {}, "status": status}

    return create

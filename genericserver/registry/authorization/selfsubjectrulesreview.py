"""Port of k8s.io/kubernetes/pkg/registry/authorization/selfsubjectrulesreview/rest.go (v1.36.0): what may I do here?

``kubectl auth can-i --list`` creates a ``SelfSubjectRulesReview`` for a namespace and prints the
rules it gets back. Nothing is stored: the server's rule resolver (its authorizer's ``RulesFor``,
:mod:`genericserver.authz`) lists what the request's own user may do there; AlwaysAllow's rules
are ``*`` verbs on ``*`` resources of ``*`` groups and on every path. No user is 400 ``no user
present on request``; no namespace, 400 ``no namespace on request``.
"""

from __future__ import annotations

from typing import Any, Callable

from genericserver import request
from genericserver.api.authorization.v1.types import SELF_SUBJECT_RULES_REVIEW
from genericserver.apimachinery.api import errors
from genericserver.registry.rest.rest import Resource

SELF_SUBJECT_RULES_REVIEWS = Resource("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview",
                                      SELF_SUBJECT_RULES_REVIEW, namespaced=False, verbs=("create",))


def new_create(resolver: Any) -> Callable[[dict, str, dict], dict]:
    """``REST.Create`` over the server's rule resolver."""

    def create(environ: dict, namespace: str, review: dict) -> dict:
        user = request.user_from(environ)
        if user is None:
            raise errors.new_bad_request("no user present on request")
        where = (review.get("spec") or {}).get("namespace", "")
        if not where:
            raise errors.new_bad_request("no namespace on request")
        resource, non_resource, incomplete, err = resolver.rules_for(environ, user, where)
        status: dict = {
            "resourceRules": [_without_empty({"verbs": list(r.verbs), "apiGroups": list(r.api_groups), "resources": list(r.resources),
                                              "resourceNames": list(r.resource_names)}) for r in resource],
            "nonResourceRules": [_without_empty({"verbs": list(r.verbs), "nonResourceURLs": list(r.non_resource_urls)})
                                 for r in non_resource],
            "incomplete": incomplete}
        if err is not None:
            status["evaluationError"] = str(err)
        return {**review, "metadata": {}, "spec": {}, "status": status}

    return create


def _without_empty(rule: dict) -> dict:
    # verbs are always written; the other lists are omitempty in Go
    return {k: v for k, v in rule.items() if v or k == "verbs"}

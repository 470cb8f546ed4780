"""Port of k8s.io/kubernetes/pkg/registry/authentication/selfsubjectreview/rest.go (v1.36.0): who am I.

``kubectl auth whoami`` creates a ``SelfSubjectReview`` (authentication.k8s.io/v1); nothing is
stored: the answer is the review with ``status.userInfo`` filled from the user the
authentication filter put on the request (name, uid, groups, extra), and a creation time.
Without a user (a server with no authentication) Go answers 400 ``no user present on
request``. Discovery names its singular ``selfsubjectreview`` (``GetSingularName``).
"""

from __future__ import annotations

from genericserver import request
from genericserver.api.authentication.v1.types import SELF_SUBJECT_REVIEW
from genericserver.audit.event import UserInfo
from genericserver.apimachinery.api import errors
from genericserver.registry.generic.registry.store import timestamp
from genericserver.registry.rest.rest import Resource

SELF_SUBJECT_REVIEWS = Resource("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", SELF_SUBJECT_REVIEW,
                                namespaced=False, singular="selfsubjectreview", verbs=("create",))


def create(environ: dict, namespace: str, obj: dict) -> dict:
    """``REST.Create``: the review of the request's own user."""
    user = request.user_from(environ)
    if user is None:
        raise errors.new_bad_request("no user present on request")
    # authentication/v1.UserInfo, written as the audit events write it
    info = UserInfo(username=user.name, uid=user.uid, groups=list(user.groups) or None,
                    extra={k: list(v) for k, v in user.extra.items()}).to_dict()
    return {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": timestamp()}, "status": {"userInfo": info}}

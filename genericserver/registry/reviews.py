"""The review APIs every kube-apiserver serves: ``auth whoami`` and ``auth can-i`` (no Go twin: kube-apiserver's controlplane installs these groups).

``authentication.k8s.io/v1`` ``selfsubjectreviews`` (who am I) and ``authorization.k8s.io/v1``
``selfsubjectaccessreviews`` (may I, asked of the server's own authorizer) and
``selfsubjectrulesreviews`` (what may I do, ``auth can-i --list``, from its rule resolver): create
only, nothing stored. ``serve`` and ``cluster --serve-api`` install both beside their own resources.
"""

from __future__ import annotations

from typing import Any

from genericserver.endpoints.handlers.rest import RequestScope
from genericserver.registry.authentication import selfsubjectreview
from genericserver.registry.authentication.selfsubjectreview import SELF_SUBJECT_REVIEWS
from genericserver.registry.authorization import selfsubjectaccessreview
from genericserver.registry.authorization.selfsubjectaccessreview import SELF_SUBJECT_ACCESS_REVIEWS
from genericserver.registry.authorization import selfsubjectrulesreview
from genericserver.registry.authorization.selfsubjectrulesreview import SELF_SUBJECT_RULES_REVIEWS


def install(groups: Any, authorizer: Any) -> None:
    """Both review groups on the server's :class:`~genericserver.apigroups.APIGroups`; the access
    review asks ``authorizer`` (the server's; None: the group is left out, as a server without
    authorization has nothing to ask)."""
    who = RequestScope(SELF_SUBJECT_REVIEWS, None, extra={"create": selfsubjectreview.create})
    groups.install_api_group("authentication.k8s.io", {"v1": [who]})
    if authorizer is not None:
        may = [RequestScope(SELF_SUBJECT_ACCESS_REVIEWS, None, extra={"create": selfsubjectaccessreview.new_create(authorizer)})]
        if hasattr(authorizer, "rules_for"):  # the rule resolver, where the authorizer has one
            may.append(RequestScope(SELF_SUBJECT_RULES_REVIEWS, None, extra={"create": selfsubjectrulesreview.new_create(authorizer)}))
        groups.install_api_group("authorization.k8s.io", {"v1": may})

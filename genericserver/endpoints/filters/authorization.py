"""Port of k8s.io/apiserver/pkg/endpoints/filters/authorization.go (v1.36.0): may this user do this?

:func:`with_authorization` asks the authorizer about each request's attributes: allowed
requests go on (annotated ``authorization.k8s.io/decision: allow`` in the audit event), an
authorizer error is a 500, anything else a 403 with Go's Status JSON, for example::

    {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
     "message":"forbidden: User \\"system:anonymous\\" cannot get path \\"/healthz\\": Everything is forbidden.",
     "reason":"Forbidden","details":{},"code":403}

:func:`get_authorizer_attributes` turns the request's user and RequestInfo into an
:class:`~genericserver.authz.AttributesRecord` (field and label selectors are not ported).

The 403 and 500 are written by :mod:`genericserver.responsewriters` (``Forbidden``,
``InternalError``), as Go's filter calls its responsewriters package.
"""

from __future__ import annotations

import logging
from typing import Callable, Iterable, Optional

from genericserver import request, responsewriters
from genericserver import runtime as rt
from genericserver.audit.context import add_audit_annotation, add_audit_annotations
from genericserver.authz import AttributesRecord, Authorizer, Decision
from genericserver.responsewriters import forbidden

log = logging.getLogger("genericserver.endpoints.filters")

DECISION_ANNOTATION_KEY = "authorization.k8s.io/decision"
REASON_ANNOTATION_KEY = "authorization.k8s.io/reason"
DECISION_ALLOW = "allow"
DECISION_FORBID = "forbid"
REASON_ERROR = "internal error"

RecordAuthorizationMetrics = Callable[[dict, Decision, Optional[BaseException], float, float], None]


def get_authorizer_attributes(environ: dict) -> tuple[Optional[AttributesRecord], Optional[Exception]]:
    """The request's user and RequestInfo as authorizer attributes (Go's ``(attributes, error)``)."""
    info = request.request_info_from(environ)
    if info is None:
        return None, Exception("no RequestInfo found in the context")
    return AttributesRecord(
        user=request.user_from(environ),
        resource_request=info.is_resource_request,
        path=info.path,
        verb=info.verb,
        api_group=info.api_group,
        api_version=info.api_version,
        resource=info.resource,
        subresource=info.subresource,
        namespace=info.namespace,
        name=info.name,
    ), None


def with_authorization(app: Callable, authorizer: Optional[Authorizer]) -> Callable:
    """Pass authorized requests on to ``app``; answer 403 (or 500 on an authorizer error) otherwise."""
    return _with_authorization(app, authorizer, lambda *args: None)


def _with_authorization(app: Callable, a: Optional[Authorizer], metrics: RecordAuthorizationMetrics) -> Callable:
    if a is None:
        log.warning("Authorization is disabled")
        return app

    def authorization(environ: dict, start_response: Callable) -> Iterable[bytes]:
        start = rt.now()
        attributes, err = get_authorizer_attributes(environ)
        if err is not None:
            return responsewriters.internal_error(start_response, environ, str(err))
        assert attributes is not None
        decision, reason, err = a.authorize(request.context_from(environ), attributes)
        finish = rt.now()
        try:
            # an authorizer (RBAC, say) may allow despite an evaluation error: the decision comes first
            if decision == Decision.ALLOW:
                add_audit_annotations(environ, DECISION_ANNOTATION_KEY, DECISION_ALLOW, REASON_ANNOTATION_KEY, reason)
                return app(environ, start_response)
            if err is not None:
                add_audit_annotation(environ, REASON_ANNOTATION_KEY, REASON_ERROR)
                return responsewriters.internal_error(start_response, environ, str(err))
            log.debug("Forbidden URI=%s reason=%s", responsewriters.request_uri(environ), reason)
            add_audit_annotations(environ, DECISION_ANNOTATION_KEY, DECISION_FORBID, REASON_ANNOTATION_KEY, reason)
            return forbidden(attributes, environ, start_response, reason)
        finally:
            metrics(environ, decision, err, start, finish)

    return authorization

"""Port of k8s.io/apiserver/pkg/endpoints/filters/authn_audit.go (v1.36.0): auditing failed authentication.

``with_failed_authentication_audit`` wraps the handler that answers 401: when the policy audits
the request, the event gets a response status whose message names the credentials that were
tried (``Authentication failed, attempted: basic, bearer``, or ``Authentication failed, no
credentials provided``) and is sent once, at ``ResponseStarted``, with the 401 code. Client
certificates count as tried when the WSGI server reports one in ``SSL_CLIENT_CERT``.
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any, Callable

from genericserver import request
from genericserver.endpoints.filters.audit import with_rejection_audit

log = logging.getLogger("genericserver.endpoints.filters")


def with_failed_authentication_audit(failed: Callable, sink: Any, policy: Any) -> Callable:
    return with_rejection_audit(failed, sink, policy, get_auth_methods)


def _has_basic_auth(environ: dict) -> bool:
    # net/http's Request.BasicAuth: "Basic " (any case) then base64 of "user:password"
    auth = environ.get("HTTP_AUTHORIZATION", "")
    if len(auth) < 6 or auth[:6].lower() != "basic ":
        return False
    try:
        decoded = base64.b64decode(auth[6:], validate=True).decode("latin-1")
    except (binascii.Error, ValueError):
        return False
    return ":" in decoded


def get_auth_methods(environ: dict) -> str:
    methods = []
    if _has_basic_auth(environ):
        methods.append("basic")
    parts = environ.get("HTTP_AUTHORIZATION", "").strip().split(" ")
    if len(parts) > 1 and parts[0].lower() == "bearer":
        methods.append("bearer")
    token = request.query(environ).get("access_token", [""])[0].strip()
    if token:
        methods.append("access_token")
    if environ.get("SSL_CLIENT_CERT"):
        methods.append("x509")
    if methods:
        return "Authentication failed, attempted: " + ", ".join(methods)
    return "Authentication failed, no credentials provided"

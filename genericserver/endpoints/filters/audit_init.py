"""Port of k8s.io/apiserver/pkg/endpoints/filters/audit_init.go (v1.36.0): every request gets an audit ID.

:func:`with_audit_init` is the outermost filter. It attaches an audit context to the request,
takes the audit ID from the ``Audit-ID`` request header (as is, however long) or makes a new
UUID, and echoes it in the ``Audit-ID`` response header of *every* response, including the
429s and 503s that inner filters produce and that are never audited. An aggregated server's
own ``with_audit_init`` does not add a second header: the outer one has claimed it (Go checks
the response header map before calling the handler; here the claim is recorded in the environ).
A response that already carries ``Audit-ID`` keeps its own value.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable

from genericserver.audit.context import with_audit_context, with_audit_id
from genericserver.audit.event import HEADER_AUDIT_ID

RESPONSE_AUDIT_ID_KEY = "genericserver.response_audit_id"
"""environ key: the Audit-ID an outer filter will put on the response."""


def new_uuid() -> str:
    """A random (version 4) UUID as text, like ``str(uuid.uuid4())`` at half the cost.

    Go's ``uuid.New().String()``; the same 16 bytes from ``os.urandom``, formatted directly
    instead of through a ``uuid.UUID`` (this runs for every request).
    """
    h = os.urandom(16).hex()
    # version 4 in the 13th digit, the RFC 4122 variant (10xx) in the 17th
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


_VARIANT = {d: "89ab"[int(d, 16) & 3] for d in "0123456789abcdef"}


def with_audit_init(app: Callable) -> Callable:
    return _with_audit_init(app, new_uuid)


def _with_audit_init(app: Callable, new_audit_id: Callable[[], str]) -> Callable:
    def audit_init(environ: dict, start_response: Callable) -> Iterable[bytes]:
        with_audit_context(environ)
        audit_id = environ.get("HTTP_AUDIT_ID", "")
        if not audit_id:
            audit_id = new_audit_id()
        with_audit_id(environ, audit_id)

        if environ.get(RESPONSE_AUDIT_ID_KEY):
            return app(environ, start_response)
        environ[RESPONSE_AUDIT_ID_KEY] = audit_id

        def with_header(status: str, headers: list, exc_info: Any = None) -> Any:
            for k, _ in headers:
                if k.lower() == "audit-id":
                    break
            else:
                headers = [*headers, (HEADER_AUDIT_ID, audit_id)]
            if exc_info is not None:
                return start_response(status, headers, exc_info)
            return start_response(status, headers)

        return app(environ, with_header)

    return audit_init

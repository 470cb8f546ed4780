"""Port of k8s.io/apiserver/pkg/audit/request.go (v1.36.0): filling an event from the request.

``log_request_metadata`` records what is known when a request reaches ``WithAudit``: the
received time, verb, request URI, user agent (cut at 1024 characters), source IPs (Go's
``utilnet.SourceIPs``: ``X-Forwarded-For``, ``X-Real-Ip``, then the peer address), the user and,
for resource requests, the object reference. ``log_impersonated_user`` adds the impersonated
user. The request and response object parts of Go's file are not ported: no objects here.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Optional

from genericserver import request
from genericserver.audit.context import audit_context_from
from genericserver.audit.event import Event, ObjectReference, UserInfo
from genericserver.responsewriters import request_uri

MAX_USER_AGENT_LENGTH = 1024
USER_AGENT_TRUNCATE_SUFFIX = "...TRUNCATED"


def log_request_metadata(environ: dict, received_timestamp: float, attribs: Any) -> None:
    ac = audit_context_from(environ)
    if ac is None or not ac.enabled():
        return

    def record(ev: Event) -> None:
        ev.request_received_timestamp = received_timestamp
        ev.verb = attribs.verb
        ev.request_uri = request_uri(environ)
        ev.user_agent = maybe_truncate_user_agent(environ)
        ev.source_ips = source_ips(environ)
        user = attribs.user
        if user is not None:
            ev.user = UserInfo(
                username=user.name,
                uid=user.uid,
                groups=list(user.groups) if user.groups else None,
                extra={k: list(v) for k, v in (user.extra or {}).items()},
            )
        if attribs.resource_request:
            ev.object_ref = ObjectReference(
                namespace=attribs.namespace,
                name=attribs.name,
                resource=attribs.resource,
                subresource=attribs.subresource,
                api_group=attribs.api_group,
                api_version=attribs.api_version,
            )

    ac.visit_event(record)


def log_impersonated_user(environ: dict, user: request.UserInfo, constraint: str = "") -> None:
    ac = audit_context_from(environ)
    if ac is None or not ac.enabled():
        return
    ac.log_impersonated_user(user, constraint)


def maybe_truncate_user_agent(environ: dict) -> str:
    ua = environ.get("HTTP_USER_AGENT", "")
    if len(ua) > MAX_USER_AGENT_LENGTH:
        ua = ua[:MAX_USER_AGENT_LENGTH] + USER_AGENT_TRUNCATE_SUFFIX
    return ua


def _parse_ip(text: str) -> Optional[str]:
    try:
        return str(ipaddress.ip_address(text.strip().strip("[]")))
    except ValueError:
        return None


def _split_host_port(addr: str) -> Optional[str]:
    # "host:port" or "[v6]:port"; None when there is no port part
    if addr.startswith("["):
        end = addr.find("]")
        return addr[1:end] if end > 0 and addr[end + 1 : end + 2] == ":" else None
    if addr.count(":") == 1:
        return addr.split(":", 1)[0]
    return None


def source_ips(environ: dict) -> list[str]:
    """``utilnet.SourceIPs``: forwarded-for chain, then X-Real-Ip, then the peer (not repeated)."""
    ips: list[str] = []
    fwd = environ.get("HTTP_X_FORWARDED_FOR", "")
    if fwd:
        for part in fwd.split(","):
            ip = _parse_ip(part)
            if ip is not None:
                ips.append(ip)
    real = environ.get("HTTP_X_REAL_IP", "")
    if real:
        ip = _parse_ip(real)
        if ip is not None and ip not in ips:
            ips.append(ip)
    remote = environ.get("REMOTE_ADDR", "")
    host = _split_host_port(remote)
    remote_ip = _parse_ip(host) if host is not None else None
    if remote_ip is None:
        remote_ip = _parse_ip(remote) if remote else None
    if remote_ip is not None and (not ips or ips[-1] != remote_ip):
        ips.append(remote_ip)
    return ips

"""Port of k8s.io/apiserver/pkg/audit/format.go (v1.36.0): the one-line "legacy" event text.

``event_string`` is what the log backend writes in ``legacy`` format and what error reports
quote: ``<time> AUDIT: id="..." stage="..." ip="..." method="..." user="..." ...``.
"""

from __future__ import annotations

import datetime
from typing import Optional

from genericserver.audit.event import Event
from genericserver.responsewriters import go_quote


def _rfc3339_nano(ts: Optional[float]) -> str:
    # Go formats the zero time as 0001-01-01T00:00:00Z; fraction digits without trailing zeros
    if ts is None:
        return "0001-01-01T00:00:00Z"
    micros = int(round(ts * 1_000_000))
    dt = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(microseconds=micros)
    frac = f"{dt.microsecond:06d}".rstrip("0")
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"


def _string_slice(items: list[str]) -> str:
    return ",".join(go_quote(i) for i in items)


def event_string(ev: Event) -> str:
    username, groups = "<none>", "<none>"
    if ev.user.username:
        username = ev.user.username
        if ev.user.groups:
            groups = _string_slice(ev.user.groups)
    asuser, asgroups = "<self>", "<lookup>"
    if ev.impersonated_user is not None:
        asuser = ev.impersonated_user.username
        if ev.impersonated_user.groups is not None:
            asgroups = _string_slice(ev.impersonated_user.groups)
    namespace = "<none>"
    if ev.object_ref is not None and ev.object_ref.namespace:
        namespace = ev.object_ref.namespace
    response = "<deferred>"
    if ev.response_status is not None:
        response = str(ev.response_status.code)
    ip = ev.source_ips[0] if ev.source_ips else "<unknown>"
    q = go_quote
    return (
        f"{_rfc3339_nano(ev.request_received_timestamp)} AUDIT: id={q(ev.audit_id)} stage={q(str(ev.stage))} "
        f"ip={q(ip)} method={q(ev.verb)} user={q(username)} groups={q(groups)} as={q(asuser)} "
        f"asgroups={q(asgroups)} user-agent={q(ev.user_agent)} namespace={q(namespace)} "
        f'uri={q(ev.request_uri)} response="{response}"'
    )

"""Port of k8s.io/apiserver/pkg/apis/audit/v1/types.go (v1.36.0), with pkg/apis/audit/helpers.go's level order: the audit.k8s.io/v1 Event.

An :class:`Event` is what every audit backend receives, one per request *stage*
(``RequestReceived``, ``ResponseStarted``, ``ResponseComplete``, ``Panic``). :meth:`Event.to_dict`
gives the exact ``audit.k8s.io/v1`` JSON shape (Go's field order, Go's ``omitempty`` rules,
timestamps as ``metav1.MicroTime``: RFC 3339 in UTC with six fraction digits, ``null`` when
unset), and :func:`event_from_dict` reads it back.

Not ported: ``requestObject``/``responseObject`` (this server stores no objects, so no level
ever has a body to record) and the internal/v1 split (there is one version, so one type).
Timestamps are wall-clock seconds since the epoch (``rt.wall()``), or ``None`` for Go's zero time.

helpers.go's part is the order of the levels (``Less``, ``GreaterOrEqual``), a method of types.go's
``Level``.
"""

from __future__ import annotations

import copy
import datetime
import enum
from dataclasses import dataclass, field
from typing import Any, Optional

HEADER_AUDIT_ID = "Audit-ID"
API_VERSION = "audit.k8s.io/v1"


class Level(str, enum.Enum):
    """How much of a request is recorded; ordered None < Metadata < Request < RequestResponse."""

    NONE = "None"
    METADATA = "Metadata"
    REQUEST = "Request"
    REQUEST_RESPONSE = "RequestResponse"

    def ord(self) -> int:
        return _LEVEL_ORDER[self]

    def less(self, other: "Level | str") -> bool:
        return ord_level(self) < ord_level(other)

    def greater_or_equal(self, other: "Level | str") -> bool:
        return ord_level(self) >= ord_level(other)

    def __str__(self) -> str:
        return self.value


_LEVEL_ORDER = {Level.NONE: 0, Level.METADATA: 1, Level.REQUEST: 2, Level.REQUEST_RESPONSE: 3}


def ord_level(level: "Level | str") -> int:
    """A level's rank; an unset or unknown level ranks as None, as Go's map lookup gives 0."""
    try:
        return _LEVEL_ORDER[Level(level)]
    except ValueError:
        return 0


class Stage(str, enum.Enum):
    """When in the life of a request an event is written."""

    REQUEST_RECEIVED = "RequestReceived"
    RESPONSE_STARTED = "ResponseStarted"
    RESPONSE_COMPLETE = "ResponseComplete"
    PANIC = "Panic"

    def __str__(self) -> str:
        return self.value


@dataclass
class UserInfo:
    """``authentication/v1.UserInfo`` as recorded in an event (lists, not tuples: it is a record)."""

    username: str = ""
    uid: str = ""
    groups: Optional[list[str]] = None
    extra: Optional[dict[str, list[str]]] = None

    def to_dict(self) -> dict:
        d: dict[str, Any] = {}
        if self.username:
            d["username"] = self.username
        if self.uid:
            d["uid"] = self.uid
        if self.groups:
            d["groups"] = list(self.groups)
        if self.extra:
            d["extra"] = {k: list(v) for k, v in self.extra.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "UserInfo":
        extra = d.get("extra")
        return cls(d.get("username", ""), d.get("uid", ""), d.get("groups"), {k: list(v) for k, v in extra.items()} if extra else None)


@dataclass
class ObjectReference:
    """What a resource request was about."""

    resource: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""
    api_group: str = ""
    api_version: str = ""
    resource_version: str = ""
    subresource: str = ""

    _JSON = (("resource", "resource"), ("namespace", "namespace"), ("name", "name"), ("uid", "uid"),
             ("api_group", "apiGroup"), ("api_version", "apiVersion"),
             ("resource_version", "resourceVersion"), ("subresource", "subresource"))

    def to_dict(self) -> dict:
        return {key: getattr(self, attr) for attr, key in self._JSON if getattr(self, attr)}

    @classmethod
    def from_dict(cls, d: dict) -> "ObjectReference":
        return cls(**{attr: d.get(key, "") for attr, key in cls._JSON})


@dataclass
class Status:
    """The part of a ``metav1.Status`` an event keeps as ``responseStatus``."""

    code: int = 0
    status: str = ""
    message: str = ""
    reason: str = ""
    details: Optional[dict] = None

    def to_dict(self) -> dict:
        # metav1.Status JSON: metadata is a struct, so Go never omits it; the rest are omitempty
        d: dict[str, Any] = {"metadata": {}}
        if self.status:
            d["status"] = self.status
        if self.message:
            d["message"] = self.message
        if self.reason:
            d["reason"] = self.reason
        if self.details is not None:
            d["details"] = dict(self.details)
        if self.code:
            d["code"] = self.code
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Status":
        return cls(d.get("code", 0), d.get("status", ""), d.get("message", ""), d.get("reason", ""), d.get("details"))


def format_micro_time(ts: Optional[float]) -> Optional[str]:
    """``metav1.MicroTime`` JSON: ``2006-01-02T15:04:05.000000Z`` in UTC, ``None`` for the zero time."""
    if ts is None:
        return None
    micros = int(round(ts * 1_000_000))
    dt = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(microseconds=micros)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond:06d}Z"


def parse_micro_time(text: Optional[str]) -> Optional[float]:
    if text is None:
        return None
    dt = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    delta = dt - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    return (delta.days * 86400 + delta.seconds) + delta.microseconds / 1_000_000


@dataclass
class Event:
    """One audit record of one request at one stage (``audit.k8s.io/v1`` ``Event``)."""

    level: Level | str = ""
    audit_id: str = ""
    stage: Stage | str = ""
    request_uri: str = ""
    verb: str = ""
    user: UserInfo = field(default_factory=UserInfo)
    impersonated_user: Optional[UserInfo] = None
    source_ips: Optional[list[str]] = None
    user_agent: str = ""
    object_ref: Optional[ObjectReference] = None
    response_status: Optional[Status] = None
    request_received_timestamp: Optional[float] = None
    stage_timestamp: Optional[float] = None
    annotations: Optional[dict[str, str]] = None

    def deep_copy(self) -> "Event":
        """Sinks must copy: the audit context keeps mutating its event after handing it over."""
        return copy.deepcopy(self)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "kind": "Event",
            "apiVersion": API_VERSION,
            "level": str(self.level),
            "auditID": self.audit_id,
            "stage": str(self.stage),
            "requestURI": self.request_uri,
            "verb": self.verb,
            "user": self.user.to_dict(),
        }
        if self.impersonated_user is not None:
            d["impersonatedUser"] = self.impersonated_user.to_dict()
        if self.source_ips:
            d["sourceIPs"] = list(self.source_ips)
        if self.user_agent:
            d["userAgent"] = self.user_agent
        if self.object_ref is not None:
            d["objectRef"] = self.object_ref.to_dict()
        if self.response_status is not None:
            d["responseStatus"] = self.response_status.to_dict()
        d["requestReceivedTimestamp"] = format_micro_time(self.request_received_timestamp)
        d["stageTimestamp"] = format_micro_time(self.stage_timestamp)
        if self.annotations:
            d["annotations"] = dict(self.annotations)
        return d


def _enum_or_str(kind: type, value: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        return value


def event_from_dict(d: dict) -> Event:
    """Decode the ``audit.k8s.io/v1`` JSON shape (as :meth:`Event.to_dict` writes it)."""
    if d.get("kind") != "Event" or d.get("apiVersion") != API_VERSION:
        raise ValueError(f"not an {API_VERSION} Event: kind={d.get('kind')!r} apiVersion={d.get('apiVersion')!r}")
    imp = d.get("impersonatedUser")
    ref = d.get("objectRef")
    st = d.get("responseStatus")
    return Event(
        level=_enum_or_str(Level, d.get("level", "")),
        audit_id=d.get("auditID", ""),
        stage=_enum_or_str(Stage, d.get("stage", "")),
        request_uri=d.get("requestURI", ""),
        verb=d.get("verb", ""),
        user=UserInfo.from_dict(d.get("user") or {}),
        impersonated_user=UserInfo.from_dict(imp) if imp is not None else None,
        source_ips=list(d["sourceIPs"]) if d.get("sourceIPs") else None,
        user_agent=d.get("userAgent", ""),
        object_ref=ObjectReference.from_dict(ref) if ref is not None else None,
        response_status=Status.from_dict(st) if st is not None else None,
        request_received_timestamp=parse_micro_time(d.get("requestReceivedTimestamp")),
        stage_timestamp=parse_micro_time(d.get("stageTimestamp")),
        annotations=dict(d["annotations"]) if d.get("annotations") else None,
    )

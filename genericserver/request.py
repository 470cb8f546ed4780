"""Port of k8s.io/apiserver/pkg/endpoints/request/{context,received_time,server_shutdown_signal}.go, with requestinfo.go's and pkg/audit/context.go's accessors (v1.36.0): request-scoped values.

Go keeps request-scoped values in the request's ``context.Context``. A WSGI request has its
``environ`` dict instead, so each value lives under one documented environ key, with a small
getter and setter each. Filters read and write only through these functions. Several Go files in
one module: each holds the getter and setter of one value (context.go the user's,
received_time.go the arrival time's, server_shutdown_signal.go the signal's, requestinfo.go the
request info's, pkg/audit/context.go the audit context's), and the filters use them as one
namespace, ``request.X``, as Go's filters use package request.

============================  =================================================  ============
environ key                   value                                              set by
============================  =================================================  ============
``genericserver.context.context``     :class:`genericserver.context.context.Context` (deadline)  request deadline filter
``genericserver.request_info``  :class:`genericserver.requestinfo.RequestInfo`   request info filter
``genericserver.user``        :class:`UserInfo`                                  authentication
``genericserver.audit``       the audit context (``genericserver.audit``)        audit init
``genericserver.received``    request-received wall time (seconds since epoch)   received timestamp
``genericserver.shutdown_signal``  an object with ``shutting_down() -> Event``  watch termination
``genericserver.mux_incomplete``  True while not all HTTP paths are installed   mux-and-discovery
``genericserver.query``       the parsed query string (see :func:`query`)        first reader
============================  =================================================  ============
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from genericserver.context import context as gocontext
from genericserver.net.url import url as neturl

CONTEXT_KEY = "genericserver.context.context"
REQUEST_INFO_KEY = "genericserver.request_info"
USER_KEY = "genericserver.user"
AUDIT_KEY = "genericserver.audit"
RECEIVED_KEY = "genericserver.received"
SHUTDOWN_SIGNAL_KEY = "genericserver.shutdown_signal"
MUX_INCOMPLETE_KEY = "genericserver.mux_incomplete"
QUERY_KEY = "genericserver.query"


@dataclass(frozen=True)
class UserInfo:
    """``user.Info``: who made the request, as authentication found out."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)


def context_from(environ: dict) -> gocontext.Context:
    """The request's context; a background context until a filter sets one."""
    ctx = environ.get(CONTEXT_KEY)
    if ctx is None:
        ctx = gocontext.background()
        environ[CONTEXT_KEY] = ctx
    return ctx


def with_context(environ: dict, ctx: gocontext.Context) -> None:
    environ[CONTEXT_KEY] = ctx


def request_info_from(environ: dict) -> Optional[Any]:
    return environ.get(REQUEST_INFO_KEY)


def with_request_info(environ: dict, info: Any) -> None:
    environ[REQUEST_INFO_KEY] = info


def user_from(environ: dict) -> Optional[UserInfo]:
    return environ.get(USER_KEY)


def with_user(environ: dict, user: UserInfo) -> None:
    environ[USER_KEY] = user


def audit_context_from(environ: dict) -> Optional[Any]:
    return environ.get(AUDIT_KEY)


def with_audit_context(environ: dict, ac: Any) -> None:
    environ[AUDIT_KEY] = ac


def received_timestamp_from(environ: dict) -> Optional[float]:
    return environ.get(RECEIVED_KEY)


def with_received_timestamp(environ: dict, when: float) -> None:
    environ[RECEIVED_KEY] = when


def server_shutdown_signal_from(environ: dict) -> Optional[Any]:
    return environ.get(SHUTDOWN_SIGNAL_KEY)


def with_server_shutdown_signal(environ: dict, signal: Any) -> None:
    """Attach the shutdown signal unless one is attached already (as Go does)."""
    environ.setdefault(SHUTDOWN_SIGNAL_KEY, signal)


def query(environ: dict) -> dict[str, list[str]]:
    """The request's query parameters as Go's ``URL.Query()`` gives them, parsed once per request.

    Several filters read the query (request info, ``?timeout=``, health ``?exclude=``); Go
    parses ``URL.Query()`` each time too, but here the parse is cached in the environ, keyed by
    the query string so a changed one is parsed again. The parse is Go's
    (:func:`genericserver.net.url.url.parse_query`), not ``urllib.parse.parse_qs``: a pair with ``;``
    or a bad escape is dropped, and values hold bytes."""
    raw = environ.get("QUERY_STRING", "")
    cached = environ.get(QUERY_KEY)
    if cached is not None and cached[0] == raw:
        return cached[1]
    parsed = neturl.parse_query(raw)
    environ[QUERY_KEY] = (raw, parsed)
    return parsed

"""Port of k8s.io/apiserver/pkg/endpoints/filters/audit.go (v1.36.0): writing audit events for each request.

:func:`with_audit` evaluates the audit policy for the request and, unless the level is None,
sends the event to the sink at each stage:

* ``RequestReceived`` as the request enters (a sink that refuses it fails the request: 500
  ``failed to store audit event``);
* ``ResponseStarted`` when the status line is set, for long-running requests (watches) only;
* ``ResponseComplete`` when the response is *closed*: in WSGI the body is sent after the app
  returns, so the record is written when the server closes the response iterable (Go writes it
  when ``ServeHTTP`` returns, which is the same moment there);
* ``Panic`` instead, with a 500 ``APIServer panic'd: <error>`` status, when the app raises, or
  when iterating its body raises; the exception is then re-raised, as Go re-panics.

A whole body (a list, alone or under ``on_close``) goes on as one, under ``on_close``: the server
holds such a body until the handler has returned, as Go's response buffer holds its output, and
any other iterable it sends chunk by chunk at once. A response closed before any status was set
is recorded as 200 ``Connection closed early``.
Go also writes per-layer latency annotations when the latency trackers are installed; they are
not part of this port, so no latency annotations are written.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Iterable, Iterator, Optional

from genericserver import request, responsewriters
from genericserver import runtime as rt
from genericserver.audit.context import AuditContext, audit_context_from
from genericserver.audit.event import Level, Stage, Status
from genericserver.audit.metrics import LEGACY, AuditMetrics
from genericserver.audit.request import log_request_metadata
from genericserver.endpoints.filters.authorization import get_authorizer_attributes
from genericserver.wsgi import close_iterable, known_chunks, on_close

log = logging.getLogger("genericserver.endpoints.filters")

LongRunningCheck = Callable[[dict, Any], bool]


def evaluate_policy_and_create_audit_event(
    environ: dict, policy: Any, sink: Any, metrics: Optional[AuditMetrics] = None
) -> tuple[Optional[AuditContext], Optional[Exception]]:
    """Evaluate the policy and initialise the request's audit context (Go's ``(context, error)``).

    ``(None, None)`` when the request has no audit context (auditing is not set up). ``metrics``
    are the server's audit counters (Go: package globals; None: the process-wide ones).
    """
    metrics = metrics if metrics is not None else LEGACY
    ac = audit_context_from(environ)
    if ac is None:
        return None, None
    attribs, err = get_authorizer_attributes(environ)
    if err is not None:
        return ac, Exception(f"failed to GetAuthorizerAttributes: {err}")
    rac = policy.evaluate_policy_rule(attribs)
    metrics.observe_policy_level(rac.level)
    try:
        ac.init(rac, sink, metrics)
    except Exception as e:
        return None, Exception(f"failed to initialize audit context: {e}")
    if rac.level == Level.NONE:
        return ac, None
    received = request.received_timestamp_from(environ)
    if received is None:
        received = rt.wall()
    log_request_metadata(environ, received, attribs)
    return ac, None


class AuditResponseWriter:
    """Records the status code in the event the first time the status is set.

    With ``process_response_started`` it also sends the ``ResponseStarted`` event at that
    moment (long-running requests, and failed requests audited before ``with_audit``).
    """

    def __init__(self, environ: dict, start_response: Callable, process_response_started: bool):
        self._environ = environ
        self._start_response = start_response
        self._process_response_started = process_response_started
        self._once = rt.once()

    def process_code(self, code: int) -> None:
        def record() -> None:
            ac = audit_context_from(self._environ)
            if ac is None:
                return
            ac.set_event_response_status_code(code)
            if self._process_response_started:
                ac.process_event_stage(Stage.RESPONSE_STARTED)

        self._once.do(record)

    def start_response(self, status: str, headers: list, exc_info: Any = None) -> Any:
        self.process_code(int(status.split(" ", 1)[0]))
        if exc_info is not None:
            return self._start_response(status, headers, exc_info)
        return self._start_response(status, headers)


def decorate_response_writer(environ: dict, start_response: Callable, process_response_started: bool) -> AuditResponseWriter:
    return AuditResponseWriter(environ, start_response, process_response_started)


def process_panic(ac: AuditContext, exc: BaseException) -> None:
    ac.set_event_response_status(Status(code=500, status="Failure", reason="InternalError", message=f"APIServer panic'd: {exc}"))
    ac.process_event_stage(Stage.PANIC)


class _AuditedBody:
    """The app's response iterable; writes the final event when the server closes it."""

    def __init__(self, inner: Iterable[bytes], ac: AuditContext, long_running: bool):
        self._inner = inner
        self._it: Optional[Iterator[bytes]] = None
        self._ac = ac
        self._long_running = long_running
        self._panicked = False
        self._closed = False

    def __iter__(self) -> "_AuditedBody":
        return self

    def __next__(self) -> bytes:
        try:
            if self._it is None:
                self._it = iter(self._inner)
            return next(self._it)
        except StopIteration:
            raise
        except BaseException as exc:
            if not self._panicked:
                self._panicked = True
                process_panic(self._ac, exc)
            raise

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            close_iterable(self._inner)
        finally:
            if not self._panicked:
                _complete_event(self._ac, self._long_running)


def _complete_event(ac: AuditContext, long_running: bool) -> None:
    """The response's final event, once the server closed the response."""
    if ac.get_event_response_status() is None:
        # nothing was ever sent: record a success, as Go does for a connection closed early
        ac.set_event_response_status(Status(code=200, status="Success", message="Connection closed early"))
        if long_running:
            ac.process_event_stage(Stage.RESPONSE_STARTED)
    ac.process_event_stage(Stage.RESPONSE_COMPLETE)


def with_rejection_audit(failed: Callable, sink: Any, policy: Any, message: Callable[[dict], str], *, mark_response_started: bool = False) -> Callable:
    """Audit the requests ``failed`` rejects (401, bad ``?timeout=``): one event sent when the
    response starts, its status message from ``message(environ)``. Shared by
    ``with_failed_authentication_audit`` and ``with_failed_request_audit``, which Go writes out
    twice; ``mark_response_started`` sets the stage up front, as the latter does."""
    if sink is None or policy is None:
        return failed

    def rejection_audit(environ: dict, start_response: Callable) -> Iterable[bytes]:
        ac, err = evaluate_policy_and_create_audit_event(environ, policy, sink)
        if err is not None:
            log.error("failed to create audit event: %s", err)
            return responsewriters.internal_error(start_response, environ, "failed to create audit event")
        if ac is None or not ac.enabled():
            return failed(environ, start_response)
        ac.set_event_response_status(Status(message=message(environ)))
        if mark_response_started:
            ac.set_event_stage(Stage.RESPONSE_STARTED)
        rw = decorate_response_writer(environ, start_response, True)
        return failed(environ, rw.start_response)

    return rejection_audit


def with_audit(
    app: Callable, sink: Any, policy: Any, long_running_check: Optional[LongRunningCheck] = None, *, metrics: Optional[AuditMetrics] = None
) -> Callable:
    """Audit every request according to ``policy`` into ``sink``; no sink or policy: ``app`` as is.

    ``metrics``: the server's audit counters (Go: package globals; None: the process-wide ones).
    """
    if sink is None or policy is None:
        return app
    metrics = metrics if metrics is not None else LEGACY

    def audit(environ: dict, start_response: Callable) -> Iterable[bytes]:
        ac, err = evaluate_policy_and_create_audit_event(environ, policy, sink, metrics)
        if err is not None:
            log.error("failed to create audit event: %s", err)
            return responsewriters.internal_error(start_response, environ, "failed to create audit event")
        if ac is None or not ac.enabled():
            return app(environ, start_response)
        if not ac.process_event_stage(Stage.REQUEST_RECEIVED):
            metrics.observe_request_rejected()
            return responsewriters.internal_error(start_response, environ, "failed to store audit event")

        long_running = False
        if long_running_check is not None and long_running_check(environ, request.request_info_from(environ)):
            long_running = True
        writer = decorate_response_writer(environ, start_response, long_running)
        try:
            body = app(environ, writer.start_response)
        except BaseException as exc:
            process_panic(ac, exc)
            raise
        if known_chunks(body) is not None:
            # a whole body (nothing left to run, so nothing to panic) stays one for the filters and
            # the server outside: the server holds it until the handler has returned, as Go's
            # response buffer does, where chunks would go out at once, and a client that got its
            # whole answer could hang up while the timeout filter still waited for the handler
            return on_close(body, functools.partial(_complete_event, ac, long_running))
        return _AuditedBody(body, ac, long_running)

    return audit


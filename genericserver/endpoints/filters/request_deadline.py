"""Port of k8s.io/apiserver/pkg/endpoints/filters/request_deadline.go (v1.36.0): each request's deadline.

:func:`with_request_deadline` gives every non-long-running request a context that expires at
*received time + timeout* (``request.with_context``), which the timeout filter and handlers
watch. The timeout is the server's ``request_timeout_maximum`` unless the client asked for a
shorter positive one with ``?timeout=`` (Go duration syntax: ``10s``, ``1m30s``, ``250ms``);
``?timeout=0s`` means "the server's default". The context is cancelled when the response is
closed (or the app raises), as Go cancels it when the handler returns.

A malformed ``?timeout=`` is a 400, audited as a failed request when auditing is on::

    {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
     "message":"invalid timeout specified in the request URL - time: invalid duration \\"foo\\"",
     "reason":"BadRequest","code":400}

A chain without RequestInfo is a programming error: 500, ``no RequestInfo found in context,
handler chain must be wrong``. The received time is the runtime time the request-received
filter recorded (:data:`~genericserver.endpoints.filters.request_received_time.RECEIVED_RUNTIME_KEY`), or now.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from genericserver import klog
from genericserver import request, responsewriters
from genericserver import runtime as rt
from genericserver import wsgi
from genericserver.apimachinery.api import errors as apierrors
from genericserver.audit.context import get_audit_id_truncated
from genericserver.context import context as gocontext
from genericserver.endpoints.filters.audit import with_rejection_audit
from genericserver.responsewriters import error_negotiated
from genericserver.endpoints.filters.request_received_time import received_runtime_from
from genericserver.godur import parse_go_duration


INVALID_TIMEOUT_IN_URL = "invalid timeout specified in the request URL"

LongRunningCheck = Callable[[dict, Any], bool]


def with_request_deadline(app: Callable, sink: Any, policy: Any, long_running: LongRunningCheck, request_timeout_maximum: float) -> Callable:
    return _with_request_deadline(app, sink, policy, long_running, request_timeout_maximum, rt.now)


def _with_request_deadline(app: Callable, sink: Any, policy: Any, long_running: LongRunningCheck, request_timeout_maximum: float, now: Callable[[], float]) -> Callable:
    def request_deadline(environ: dict, start_response: Callable) -> Iterable[bytes]:
        info = request.request_info_from(environ)
        if info is None:
            return _handle_error(environ, start_response, 500, None, "no RequestInfo found in context, handler chain must be wrong")
        if long_running(environ, info):
            return app(environ, start_response)

        user_timeout, ok, err = parse_timeout(environ)
        if err is not None:
            status_err = apierrors.new_bad_request(str(err)).status
            klog.errorf("Error - %s: %s", err, klog.go_quote(responsewriters.request_uri(environ)))
            failed = failed_error_handler(status_err)
            return with_failed_request_audit(failed, status_err, sink, policy)(environ, start_response)

        timeout = request_timeout_maximum
        # a zero timeout means "no limit of my own"; one above the maximum is capped
        if ok and 0 < user_timeout < request_timeout_maximum:
            timeout = user_timeout

        started = received_runtime_from(environ)
        if started is None:
            started = now()
        ctx, cancel = gocontext.with_deadline(request.context_from(environ), started + timeout)
        request.with_context(environ, ctx)
        return wsgi.call_app(app, environ, start_response, cancel)

    return request_deadline


def with_failed_request_audit(failed: Callable, status_err: dict, sink: Any, policy: Any) -> Callable:
    """Audit a request the filter rejects: one ``ResponseStarted`` event carrying the error message."""
    message = status_err["message"] if status_err else ""
    return with_rejection_audit(failed, sink, policy, lambda environ: message, mark_response_started=True)


def failed_error_handler(status_err: dict) -> Callable:
    def failed(environ: dict, start_response: Callable) -> Iterable[bytes]:
        if request.request_info_from(environ) is None:
            return responsewriters.internal_error(start_response, environ, "no RequestInfo found in the context")
        return error_negotiated(start_response, status_err, environ=environ)

    return failed


def parse_timeout(environ: dict) -> tuple[float, bool, Optional[Exception]]:
    """The ``?timeout=`` the client asked for: ``(seconds, True, None)``, ``(0, False, None)`` if
    none, ``(0, False, error)`` if it does not parse."""
    values = request.query(environ).get("timeout")
    value = values[0] if values else ""
    if value == "":
        return 0.0, False, None
    timeout, err = parse_go_duration(value)
    if err is not None:
        return 0.0, False, Exception(f"{INVALID_TIMEOUT_IN_URL} - {err}")
    return timeout, True, None


def _handle_error(environ: dict, start_response: Callable, code: int, inner: Optional[BaseException], msg: str) -> Iterable[bytes]:
    # the client sees only msg; the log line adds the request and the inner error
    klog.error_s_depth(1, inner, msg, method=environ.get("REQUEST_METHOD", ""), URI=responsewriters.request_uri(environ),
                       auditID=get_audit_id_truncated(environ))
    return responsewriters.http_error(start_response, msg, code)

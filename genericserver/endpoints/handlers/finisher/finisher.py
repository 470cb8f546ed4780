"""Port of k8s.io/apiserver/pkg/endpoints/handlers/finisher/finisher.go (v1.36.0): FinishRequest.

The write handlers (create, update, patch, delete, deletecollection) hand their storage call to
:func:`finish_request`. It runs the call in a goroutine of its own and waits for the first of:

* the call's result: an object, or the API error it raised (:class:`ResultFunc` raises a
  :class:`~genericserver.apimachinery.api.errors.StatusError` where Go returns an error). A
  ``Status`` object whose ``status`` is not ``Success`` is turned into its error, as Go's
  ``errors.FromObject`` does;
* a panic: any other exception. It is raised again in the caller's thread (Go panics again in
  the handler's goroutine with the recovered value and its stack; here the exception object
  carries the goroutine's traceback);
* the context's end (the handler's 34 s upper bound, the client gone, the timeout filter):
  Go's 504 ``Timeout: request did not complete within requested timeout - context deadline
  exceeded``. The call goes on (a thread cannot be stopped, nor can a goroutine): a receiver
  goroutine waits up to five minutes for its result and reports what became of it
  (``apiserver_request_post_timeout_total{source="rest-handler"}`` and an ``Unhandled Error``
  log line), as ``logPostTimeoutResult`` does.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from genericserver import klog
from genericserver import metrics as epmetrics
from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.context.context import Context
from genericserver.godur import format_go_duration
from genericserver.runtime.goroutines import stack_of_panic

ResultFunc = Callable[[], Any]
# how long the receiver waits for the call after the request timed out (postTimeoutLoggerWait)
POST_TIMEOUT_LOGGER_WAIT = 5 * 60.0


class Result:
    """What the goroutine running the call hands back: an object, an API error or a panic."""

    def __init__(self) -> None:
        self.object: Any = None
        self.err: Optional[errors.StatusError] = None
        self.reason: Optional[BaseException] = None

    def return_(self) -> Any:
        """``result.Return``: raise the panic or the error, else the object."""
        if self.reason is not None:
            raise self.reason
        if self.err is not None:
            raise self.err
        obj = self.object
        if isinstance(obj, dict) and obj.get("kind") == "Status" and obj.get("status") != "Success":
            raise errors.StatusError(obj)  # a Status that is not Success interrupts the answer
        return obj


PostTimeoutLogger = Callable[[float, Optional[Result]], None]


def finish_request(ctx: Context, fn: ResultFunc, *, metrics: Any = None) -> Any:
    """``FinishRequest``: ``fn()``'s object, or its error raised, or Go's 504 once ``ctx`` is
    done first; ``metrics`` counts what a timed-out call did afterwards (None: the legacy
    registry)."""
    return _finish_request(ctx, fn, POST_TIMEOUT_LOGGER_WAIT,
                           lambda at, r: log_post_timeout_result(at, r, metrics or epmetrics.LEGACY))


def _finish_request(ctx: Context, fn: ResultFunc, post_timeout_wait: float, post_timeout_logger: PostTimeoutLogger) -> Any:
    result = Result()
    sent = rt.event("finish-request-result")  # Go's buffered result channel of one

    def run() -> None:
        try:
            result.object = fn()
        except errors.StatusError as err:
            result.err = err
        except BaseException as exc:  # noqa: BLE001 - a panic crosses to the caller, as Go's recover hands it on
            result.reason = exc
        finally:
            sent.set()

    rt.go(run, name="finish-request")
    if rt.select(sent, ctx.done()) is sent:
        return result.return_()

    timed_out_at = rt.now()

    def receive() -> None:
        # the caller got its 504; wait a while for the call, then say what became of it
        got = rt.select(sent, timeout=post_timeout_wait)
        post_timeout_logger(timed_out_at, result if got is sent else None)

    rt.go(receive, name="finish-request-post-timeout")
    st = errors.status(504, "Timeout", f"Timeout: request did not complete within requested timeout - {ctx.err()}", {})
    raise errors.StatusError(st)  # NewTimeoutError(..., 0): no retryAfterSeconds


def log_post_timeout_result(timed_out_at: float, r: Optional[Result], metrics: Any) -> None:
    """``logPostTimeoutResult``: count the call's outcome, and log it as ``HandleError`` does."""
    elapsed = format_go_duration(rt.now() - timed_out_at)
    if r is None:  # the call has not returned yet
        metrics.record_request_post_timeout(epmetrics.POST_TIMEOUT_SOURCE_REST_HANDLER, epmetrics.POST_TIMEOUT_HANDLER_PENDING)
        klog.errorf("FinishRequest: post-timeout activity, waited for %s, child goroutine has not returned yet", elapsed)
        return
    if r.reason is not None:
        status = epmetrics.POST_TIMEOUT_HANDLER_PANIC
    elif r.err is not None:
        status = epmetrics.POST_TIMEOUT_HANDLER_ERROR
    else:
        status = epmetrics.POST_TIMEOUT_HANDLER_OK
    metrics.record_request_post_timeout(epmetrics.POST_TIMEOUT_SOURCE_REST_HANDLER, status)
    reason = "<nil>" if r.reason is None else f"{r.reason}\n{stack_of_panic(r.reason)}"
    err = f"FinishRequest: post-timeout activity - time-elapsed: {elapsed}, panicked: {str(r.reason is not None).lower()}, " \
          f"err: {r.err if r.err is not None else '<nil>'}, panic-reason: {reason}"
    klog.error_s(err, "Unhandled Error", logger="UnhandledError")

"""Port of k8s.io/apiserver/pkg/server/filters/maxinflight.go (v1.36.0), with priority-and-fairness.go's ``tooManyRequests``, which both limiters share.

``with_max_in_flight_limit`` caps how many requests run at once, separately for read-only
requests (verbs get, list, watch) and mutating ones (every other verb, including a
non-resource request's lower-cased method such as ``post``, ``head`` or ``options``). A limit of
0 leaves that class unlimited; both 0 leaves the app unwrapped. A request over the limit is
never queued: it gets 429, ``Retry-After: 1``, unless its user is in ``system:masters`` (the
super-user and the loopback client must always get an answer). Long-running requests are not
counted.

Each class's slots are a bounded semaphore from the runtime (``threading.BoundedSemaphore``
under the threads runtime), standing in for Go's buffered channel: a request takes a slot with
a non-blocking ``acquire`` and holds it until its response iterable is closed; the occupancy
recorded for the watermark is ``taken()``, Go's ``len(c)``. A :class:`RequestWatermark`
remembers the highest occupancy of each class; the maintenance loop
(:func:`start_max_in_flight_watermark_maintenance`, started by the ``max-in-flight-filter``
post-start hook, stopped with the HTTP server) publishes it every second as
``apiserver_current_inflight_requests{request_kind="readOnly"|"mutating"}`` and resets it: the
gauge is the peak of the last second, not the current count. A 429 is counted in
``apiserver_request_total`` and ``apiserver_request_terminations_total``.

Go keeps one watermark for the process and its metrics in the global registry. Here each server
has its own (its config's ``max_in_flight_watermark`` and ``metrics``, passed to the filter and
to the maintenance loop); a filter built alone uses the module's :data:`watermark` and
``metrics.LEGACY``, as Go's globals. Not ported: Go also feeds the same occupancy to priority and
fairness's ``apiserver_flowcontrol_read_vs_write_current_requests``, a flow-control metric.

priority-and-fairness.go's part is the 429 both limiters answer.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from genericserver import metrics as epmetrics
from genericserver import klog, request, runtime as rt, wsgi
from genericserver.requestinfo import LongRunningRequestCheck
from genericserver.responsewriters import go_quote, http_error, request_uri

RETRY_AFTER = "1"
# how often the watermark is published and reset; it is a maximum over this period
INFLIGHT_USAGE_METRIC_UPDATE_PERIOD = 1.0

NON_MUTATING_REQUEST_VERBS = frozenset({"get", "list", "watch"})
WATCH_VERBS = frozenset({"watch"})

SYSTEM_PRIVILEGED_GROUP = "system:masters"
TOO_MANY_REQUESTS_MESSAGE = "Too many requests, please try again later."


def _handle_error(start_response: Callable, environ: dict, err: str) -> Iterable[bytes]:
    body = http_error(start_response, f"Internal Server Error: {go_quote(request_uri(environ))}", 500)
    klog.error(err)
    return body


class RequestWatermark:
    """The highest number of requests seen executing at once, per class, since the last reset."""

    def __init__(self, phase: str):
        self.phase = phase
        self._lock = rt.lock()
        self.read_only_watermark = 0
        self.mutating_watermark = 0

    def record_mutating(self, value: int) -> None:
        with self._lock:
            if self.mutating_watermark < value:
                self.mutating_watermark = value

    def record_read_only(self, value: int) -> None:
        with self._lock:
            if self.read_only_watermark < value:
                self.read_only_watermark = value

    def publish_and_reset(self, metrics: Optional[epmetrics.Metrics] = None) -> tuple[int, int]:
        """Take the peaks of the period, start a new one, and set the in-flight gauge to the peaks."""
        with self._lock:
            pair = (self.read_only_watermark, self.mutating_watermark)
            self.read_only_watermark = self.mutating_watermark = 0
        (metrics if metrics is not None else epmetrics.LEGACY).update_inflight_request_metrics(self.phase, *pair)
        return pair


# requests being executed (Go also has a "waiting" phase, used by priority and fairness only).
# Its lock comes from the runtime current at import; it is held without any runtime call
# inside, so it is safe under the simulation runtime too.
watermark = RequestWatermark(epmetrics.EXECUTING_PHASE)


def _start_watermark_maintenance(mark: RequestWatermark, stop: rt.Event, metrics: Optional[epmetrics.Metrics] = None) -> rt.Goroutine:
    def maintain() -> None:
        # wait.Until: run now, then once per period, until stop
        while not stop.is_set():
            mark.publish_and_reset(metrics)
            if rt.select(stop, timeout=INFLIGHT_USAGE_METRIC_UPDATE_PERIOD) is not None:
                return

    return rt.go(maintain, name="max-in-flight-watermark")


def start_max_in_flight_watermark_maintenance(
    stop: rt.Event, mark: Optional[RequestWatermark] = None, metrics: Optional[epmetrics.Metrics] = None
) -> rt.Goroutine:
    """Publish ``mark`` (the module's :data:`watermark` if None) into ``metrics`` every second until ``stop`` is set."""
    return _start_watermark_maintenance(mark if mark is not None else watermark, stop, metrics)


def with_max_in_flight_limit(
    app: Callable,
    non_mutating_limit: int,
    mutating_limit: int,
    long_running_request_check: Optional[LongRunningRequestCheck],
    *,
    mark: Optional[RequestWatermark] = None,
    metrics: Optional[epmetrics.Metrics] = None,
) -> Callable:
    """Limit concurrent requests per class; 0 means no limit for that class.

    ``mark`` and ``metrics`` are the server's watermark and metrics (Go: package globals; None:
    the module's :data:`watermark` and ``metrics.LEGACY``).
    """
    if non_mutating_limit == 0 and mutating_limit == 0:
        return app
    mark = mark if mark is not None else watermark
    metrics = metrics if metrics is not None else epmetrics.LEGACY
    # Go's buffered channels of that many slots: a bounded semaphore each
    non_mutating = rt.bounded_semaphore(non_mutating_limit, "max-in-flight-non-mutating") if non_mutating_limit else None
    if non_mutating_limit:
        klog.v(2).info_s("Initialized nonMutatingChan", len=non_mutating_limit)
    else:
        klog.v(2).info_s("Running with nil nonMutatingChan")
    mutating = rt.bounded_semaphore(mutating_limit, "max-in-flight-mutating") if mutating_limit else None
    if mutating_limit:
        klog.v(2).info_s("Initialized mutatingChan", len=mutating_limit)
    else:
        klog.v(2).info_s("Running with nil mutatingChan")

    def max_in_flight_filter(environ: dict, start_response: Callable) -> Iterable[bytes]:
        info = request.request_info_from(environ)
        if info is None:
            return _handle_error(start_response, environ, "no RequestInfo found in context, handler chain must be wrong")
        if long_running_request_check is not None and long_running_request_check(environ, info):
            return app(environ, start_response)

        is_mutating = info.verb not in NON_MUTATING_REQUEST_VERBS
        slots = mutating if is_mutating else non_mutating
        if slots is None:
            return app(environ, start_response)
        record = mark.record_mutating if is_mutating else mark.record_read_only

        # take a slot if one is free, never wait for one (Go: select with a default case)
        if not slots.acquire(blocking=False):
            user = request.user_from(environ)
            if user is not None and SYSTEM_PRIVILEGED_GROUP in user.groups:
                return app(environ, start_response)
            # counted in both the requests (code 429) and the terminations
            metrics.record_dropped_request(environ, info, epmetrics.APISERVER_COMPONENT, is_mutating)
            metrics.record_request_termination(environ, info, epmetrics.APISERVER_COMPONENT, 429)
            return too_many_requests(start_response, RETRY_AFTER)

        # the occupancy is sampled both when a request starts and when it ends (Go's len(c))
        record(slots.taken())

        def release() -> None:
            slots.release()
            record(slots.taken())

        return wsgi.call_app(app, environ, start_response, release)

    return max_in_flight_filter


def too_many_requests(start_response: Callable, retry_after: str) -> Iterable[bytes]:
    """429 with ``Retry-After`` (Go keeps this in priority-and-fairness.go, shared by both limiters)."""
    return http_error(start_response, TOO_MANY_REQUESTS_MESSAGE, 429, [("Retry-After", retry_after)])

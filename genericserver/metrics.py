"""Port of k8s.io/apiserver/pkg/endpoints/metrics/metrics.go (v1.36.0): the request metrics.

The metrics of metrics.go that this server feeds, with Go's names, types, labels, buckets and
help texts (component-base prefixes the help with the stability level, ``[STABLE] ...``), on
the official Prometheus client (``prometheus_client``), exposed in the Prometheus text format
at ``/metrics`` (:mod:`genericserver.routes`):

==========================================  =========  ==========================================
metric                                      type       fed by
==========================================  =========  ==========================================
apiserver_request_total                     counter    ``monitor_request`` (instrumented handlers:
                                                       the health endpoints, and any handler
                                                       wrapped in ``instrument_handler_func``) and
                                                       max-in-flight's 429 (``record_dropped_request``)
apiserver_request_duration_seconds          histogram  ``monitor_request``
apiserver_response_sizes                    histogram  ``monitor_request`` (GET and LIST only)
apiserver_current_inflight_requests         gauge      max-in-flight's watermark, once a second
apiserver_request_terminations_total        counter    max-in-flight's 429, the timeout filter's 504
apiserver_request_aborts_total              counter    panic recovery, on ``http.ErrAbortHandler``
apiserver_request_post_timeout_total        counter    the timeout filter, when a timed-out
                                                       handler finally returns
apiserver_longrunning_requests              gauge      ``record_long_running``, for a handler that
                                                       serves a watch (Go: the watch handlers)
==========================================  =========  ==========================================

The rest of metrics.go measures what is not built here (deprecated APIs, SLO/SLI latencies
without webhooks or priority and fairness, field validation, watch events, the TLS handshake,
self-requests, filter latencies, timestamp comparison, watch lists, the queue of priority and
fairness). ``apiserver_registered_watchers`` no longer exists in v1.36.0.

As in Go, requests a filter answers on its own are counted only where Go counts them: the
retry-after filter's 429, the wait group's 503, a 401 or a 403 never reach a handler and are in
no metric; a timed-out request is a termination (504) and, once its handler returns, a request
with the code that handler wrote.

**Where Go and this port differ**: Go's metrics are package variables registered once in the
process-wide ``legacyregistry``. Here :class:`Metrics` holds them, registered in the
``CollectorRegistry`` it is given: each server gets its own (design.md section 7), so tests and
several servers in one process do not share counts. Go's package functions are its methods.
:data:`LEGACY` is the process-wide one, for a filter built alone, without a server's.
prometheus_client would add a ``_created`` series to each counter and histogram, which Go's
client does not have: it is switched off, process-wide, when this module is imported.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from genericserver import request
from genericserver import runtime as rt
from genericserver.requestinfo import RequestInfo, url_path
from genericserver.wsgi import close_iterable, on_close

prometheus_client.disable_created_metrics()

APISERVER_COMPONENT = "apiserver"
OTHER_REQUEST_METHOD = "other"

READ_ONLY_KIND = "readOnly"
MUTATING_KIND = "mutating"
WAITING_PHASE = "waiting"
EXECUTING_PHASE = "executing"

POST_TIMEOUT_SOURCE_TIMEOUT_HANDLER = "timeout-handler"
POST_TIMEOUT_SOURCE_REST_HANDLER = "rest-handler"
POST_TIMEOUT_HANDLER_PANIC = "panic"
POST_TIMEOUT_HANDLER_ERROR = "error"
POST_TIMEOUT_HANDLER_OK = "ok"
POST_TIMEOUT_HANDLER_PENDING = "pending"

# the verbs reported as they are; anything else is "other"
VALID_REQUEST_METHODS = frozenset(
    {"APPLY", "CONNECT", "CREATE", "DELETE", "DELETECOLLECTION", "GET", "LIST", "PATCH", "POST", "PROXY", "PUT", "UPDATE", "WATCH", "WATCHLIST"}
)
VALID_CONNECT_REQUESTS = frozenset({"log", "exec", "portforward", "attach", "proxy"})
APPLY_PATCH_CONTENT_TYPE = "application/apply-patch+yaml"

REQUEST_DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60)
RESPONSE_SIZE_BUCKETS = tuple(1000.0 * 10**i for i in range(7))  # ExponentialBuckets(1000, 10, 7): 1 KB to 1 GB


class Metrics:
    """The request metrics of one server, registered in ``registry`` (see the module docstring)."""

    def __init__(self, registry: Optional[CollectorRegistry] = None):
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.request_counter = Counter(
            "apiserver_request_total",
            "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            ["verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"],
            registry=r,
        )
        self.long_running_requests_gauge = Gauge(
            "apiserver_longrunning_requests",
            "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
            ["verb", "group", "version", "resource", "subresource", "scope", "component"],
            registry=r,
        )
        self.request_latencies = Histogram(
            "apiserver_request_duration_seconds",
            "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            ["verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"],
            buckets=REQUEST_DURATION_BUCKETS,
            registry=r,
        )
        self.response_sizes = Histogram(
            "apiserver_response_sizes",
            "[STABLE] Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
            ["verb", "group", "version", "resource", "subresource", "scope", "component"],
            buckets=RESPONSE_SIZE_BUCKETS,
            registry=r,
        )
        # not the current value: the highest of the last second (the base value changes too fast)
        self.current_inflight_requests = Gauge(
            "apiserver_current_inflight_requests",
            "[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
            ["request_kind"],
            registry=r,
        )
        self.request_terminations_total = Counter(
            "apiserver_request_terminations_total",
            "[ALPHA] Number of requests which apiserver terminated in self-defense.",
            ["verb", "group", "version", "resource", "subresource", "scope", "component", "code"],
            registry=r,
        )
        self.request_aborts_total = Counter(
            "apiserver_request_aborts_total",
            "[ALPHA] Number of requests which apiserver aborted possibly due to a timeout, for each group, version, verb, resource, subresource and scope",
            ["verb", "group", "version", "resource", "subresource", "scope"],
            registry=r,
        )
        # the labelled series monitor_request updates, by label values: prometheus_client's
        # labels() validates and locks on every call, a dict lookup does not (a speed matter only)
        self._monitored: dict[tuple, tuple[Any, Any, Any]] = {}
        self.request_post_timeout_total = Counter(
            "apiserver_request_post_timeout_total",
            "[ALPHA] Tracks the activity of the request handlers after the associated requests have been timed out by the apiserver",
            ["source", "status"],
            registry=r,
        )

    # -- what the filters and handlers record ---------------------------------------------------

    def update_inflight_request_metrics(self, phase: str, nonmutating: int, mutating: int) -> None:
        """The watermarks of the last period (only the executing phase exists without priority and fairness)."""
        if phase == EXECUTING_PHASE:
            self.current_inflight_requests.labels(READ_ONLY_KIND).set(nonmutating)
            self.current_inflight_requests.labels(MUTATING_KIND).set(mutating)

    def record_request_post_timeout(self, source: str, status: str) -> None:
        self.request_post_timeout_total.labels(source, status).inc()

    def record_request_abort(self, environ: dict, info: Optional[RequestInfo]) -> None:
        """A request aborted (``http.ErrAbortHandler``), possibly because it timed out."""
        info = info if info is not None else _fallback_info(environ)
        scope = clean_scope(info)
        verb = _clean_verb(canonical_verb(_method(environ), scope), "", environ, info)
        self.request_aborts_total.labels(verb, info.api_group, info.api_version, info.resource, info.subresource, scope).inc()

    def record_dropped_request(self, environ: dict, info: Optional[RequestInfo], component: str, is_mutating_request: bool) -> None:
        """A request turned away with 429 by max-in-flight: counted in ``apiserver_request_total``."""
        info = info if info is not None else _fallback_info(environ)
        scope = clean_scope(info)
        dry_run = clean_dry_run(environ)
        verb = _clean_verb(canonical_verb(_method(environ), scope), "", environ, info)
        if info.is_resource_request:
            labels = (verb, dry_run, info.api_group, info.api_version, info.resource, info.subresource, scope, component, "429")
        else:
            labels = (verb, dry_run, "", "", "", info.subresource, scope, component, "429")
        self.request_counter.labels(*labels).inc()

    def record_request_termination(self, environ: dict, info: Optional[RequestInfo], component: str, code: int) -> None:
        """A request the server cut short in self-defense (max-in-flight's 429, the timeout's 504)."""
        info = info if info is not None else _fallback_info(environ)
        scope = clean_scope(info)
        verb = _clean_verb(canonical_verb(_method(environ), scope), "", environ, info)
        if info.is_resource_request:
            labels = (verb, info.api_group, info.api_version, info.resource, info.subresource, scope, component, str(code))
        else:
            labels = (verb, "", "", "", info.path, scope, component, str(code))
        self.request_terminations_total.labels(*labels).inc()

    def record_long_running(self, environ: dict, info: Optional[RequestInfo], component: str, fn: Callable[[], Any]) -> Any:
        """Count ``fn`` (serving a long-running request) in ``apiserver_longrunning_requests`` while it runs."""
        done = self.long_running_started(environ, info, component)
        try:
            return fn()
        finally:
            done()

    def long_running_started(self, environ: dict, info: Optional[RequestInfo], component: str) -> Callable[[], None]:
        """``RecordLongRunning`` for a WSGI stream, which is served after the app returns: the
        request is counted from now until the returned function is called (when the server closes
        the stream)."""
        info = info if info is not None else _fallback_info(environ)
        scope = clean_scope(info)
        verb = _clean_verb(canonical_verb(_method(environ), scope), "", environ, info)
        if info.is_resource_request:
            g = self.long_running_requests_gauge.labels(verb, info.api_group, info.api_version, info.resource, info.subresource, scope, component)
        else:
            g = self.long_running_requests_gauge.labels(verb, "", "", "", info.path, scope, component)
        g.inc()
        return g.dec

    def monitor_request(
        self, environ: dict, verb: str, group: str, version: str, resource: str, subresource: str, scope: str,
        component: str, deprecated: bool, removed_release: str, http_code: int, resp_size: int, elapsed: float,
    ) -> None:
        """Record one answered request: its count by code, its latency, and for reads its size.

        ``verb`` must be upper case (what the installer registered the route with).
        """
        info = request.request_info_from(environ)
        if info is None:
            info = _fallback_info(environ)
        reported_verb = _clean_verb(canonical_verb(_method(environ), scope), verb, environ, info)
        dry_run = clean_dry_run(environ)
        key = (reported_verb, dry_run, group, version, resource, subresource, scope, component, str(http_code))
        series = self._monitored.get(key)
        if series is None:
            series = (
                self.request_counter.labels(*key),
                self.request_latencies.labels(*key[:8]),
                self.response_sizes.labels(reported_verb, group, version, resource, subresource, scope, component),
            )
            self._monitored[key] = series
        requests, latencies, sizes = series
        requests.inc()
        # Go: the deprecated-API gauge and audit annotations, the self-request counter and the
        # webhook-free SLO/SLI latencies; no API here is deprecated, nothing feeds the rest
        latencies.observe(elapsed)
        if verb in ("GET", "LIST"):  # only the sizes of reads are of interest
            sizes.observe(resp_size)

    def instrument_handler_func(
        self, verb: str, group: str, version: str, resource: str, subresource: str, scope: str, component: str,
        deprecated: bool, removed_release: str, handler: Callable,
    ) -> Callable:
        """``InstrumentHandlerFunc``: ``handler`` whose every answer goes through :meth:`monitor_request`.

        The status and the bytes written are taken when the response is closed (WSGI sends the
        body after the app returns); the latency runs from the request-received timestamp.
        """

        def instrumented(environ: dict, start_response: Callable) -> Iterable[bytes]:
            received = request.received_timestamp_from(environ)
            if received is None:
                received = rt.wall()
            delegate = ResponseWriterDelegator(start_response)

            def done() -> None:
                self.monitor_request(environ, verb, group, version, resource, subresource, scope, component, deprecated,
                                     removed_release, delegate.status, delegate.written, rt.wall() - received)

            # a panic leaves nothing recorded: Go's MonitorRequest is not deferred either
            body = handler(environ, delegate.start_response)
            return on_close(delegate.counting(body), done)

        return instrumented


class ResponseWriterDelegator:
    """Remembers the status a handler answered with and counts the body bytes it wrote."""

    def __init__(self, start_response: Callable):
        self._start_response = start_response
        self.status = 0
        self.written = 0

    def start_response(self, status: str, headers: list, exc_info: Any = None) -> Callable:
        self.status = int(status[:3])
        write = self._start_response(status, headers, exc_info) if exc_info is not None else self._start_response(status, headers)

        def counted_write(data: bytes) -> Any:
            self.written += len(data)
            return write(data)

        return counted_write

    def counting(self, body: Iterable[bytes]) -> Iterable[bytes]:
        chunks = body if isinstance(body, (list, tuple)) else None
        if chunks is not None:  # the common case: the size is known at once
            self.written += sum(len(c) for c in chunks)
            return body
        return _CountedBody(body, self)


class _CountedBody:
    def __init__(self, inner: Iterable[bytes], delegate: ResponseWriterDelegator):
        self._inner = inner
        self._delegate = delegate

    def __iter__(self):
        for chunk in self._inner:
            self._delegate.written += len(chunk)
            yield chunk

    def close(self) -> None:
        close_iterable(self._inner)


# -- labels, as Go cleans them --------------------------------------------------------------------


def _method(environ: dict) -> str:
    return environ.get("REQUEST_METHOD", "").upper()


def _fallback_info(environ: dict) -> RequestInfo:
    # Go: &request.RequestInfo{Verb: req.Method, Path: req.URL.Path}
    return RequestInfo(verb=environ.get("REQUEST_METHOD", ""), path=url_path(environ))


def normalized_verb(environ: dict) -> str:
    """``NormalizedVerb``: the method, a GET told from a LIST by the request's scope, then
    :func:`clean_verb` (WATCH for ``?watch=``, APPLY, CONNECT). httplog prints it."""
    verb = environ.get("REQUEST_METHOD", "")
    info: Optional[RequestInfo] = request.request_info_from(environ)
    if info is not None:
        verb = canonical_verb(verb.upper(), clean_scope(info))
    return clean_verb(verb, environ, info)


def clean_scope(info: RequestInfo) -> str:
    """``resource``, ``namespace``, ``cluster``, or empty for a non-resource request."""
    if info.name or info.verb == "create":
        return "resource"
    if info.namespace:
        return "namespace"
    if info.is_resource_request:
        return "cluster"
    return ""


def canonical_verb(verb: str, scope: str) -> str:
    """Tell a LIST from a GET (and HEAD); ``verb`` is upper case."""
    if verb in ("GET", "HEAD"):
        return "LIST" if scope not in ("resource", "") else "GET"
    return verb


def get_verb_if_watch(environ: dict) -> str:
    """``WATCH`` for a GET or LIST with a true ``?watch=``."""
    if _method(environ) in ("GET", "LIST"):
        values = request.query(environ).get("watch")
        if values and values[0].lower() not in ("0", "false"):
            return "WATCH"
    return ""


def clean_verb(verb: str, environ: dict, info: Optional[RequestInfo]) -> str:
    """``CleanVerb``: WATCH for watches, APPLY for apply patches, CONNECT for connect subresources."""
    reported = verb
    if get_verb_if_watch(environ) == "WATCH":
        reported = "WATCH"
    if verb == "WATCHLIST":  # the legacy spelling
        reported = "WATCH"
    if verb == "PATCH" and environ.get("CONTENT_TYPE", "") == APPLY_PATCH_CONTENT_TYPE:
        reported = "APPLY"
    if info is not None and info.is_resource_request and info.subresource in VALID_CONNECT_REQUESTS:
        reported = "CONNECT"
    return reported


def _clean_verb(verb: str, suggested_verb: str, environ: dict, info: Optional[RequestInfo]) -> str:
    """Go's unexported ``cleanVerb``: :func:`clean_verb`, and unknown verbs become ``other``."""
    if suggested_verb in ("WATCH", "WATCHLIST"):
        return "WATCH"  # the deprecated GET /api/{version}/watch/{resource} path
    reported = clean_verb(verb, environ, info)
    return reported if reported in VALID_REQUEST_METHODS else OTHER_REQUEST_METHOD


def clean_dry_run(environ: dict) -> str:
    """The ``?dryRun=`` values, deduplicated and sorted; ``invalid`` unless each is ``All``."""
    if "dryRun" not in environ.get("QUERY_STRING", ""):
        return ""  # the common case, without parsing the query
    dry_run = request.query(environ).get("dryRun", [])
    if any(v != "All" for v in dry_run):
        return "invalid"
    return ",".join(sorted(set(dry_run)))


# Go's legacyregistry: where a filter built without a server's metrics records (see the docstring)
LEGACY = Metrics(CollectorRegistry())

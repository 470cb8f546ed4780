"""Port of k8s.io/apiserver/pkg/server/config.go#L1036-L1118 (v1.36.0): DefaultBuildHandlerChain (and NewRequestInfoResolver, L1161).

The chain is written as an ordered list of steps, innermost first, exactly as Go wraps them
(each step wraps the handler built so far); ``default_build_handler_chain`` folds the list.
Keeping the list as data lets a test record the order in which the filters see a request and
compare it with the documented one. A request passes them outermost first:

====  ==================================  =======  =============================================
 #    filter                              Go line  condition / note
====  ==================================  =======  =============================================
 1    with_audit_init                     L1116    ``Audit-ID`` on every response
 2    with_panic_recovery                 L1115    re-raises by default (Go's ReallyCrash)
 3    with_mux_and_discovery_complete     L1114    503 instead of 404 before paths are installed
 4    with_request_received_timestamp     L1113
 5    with_request_info                   L1112
 6    with_http_logging                   L1104    rejected requests are access-logged too
 7    with_retry_after                    L1102    only with ShutdownSendRetryAfter
 8    with_cache_control                  L1099
 9    with_probabilistic_goaway           L1097    only with HTTP/2 on and --goaway-chance > 0
 10   with_watch_termination_during_...   L1094    only when the watch grace period > 0
 11   with_wait_group                     L1092
 12   with_request_deadline               L1090
 13   with_timeout_for_non_long_running   L1088
 14   with_warning_recorder               L1084    handlers' warnings as Warning headers
 15   with_cors                           L1080
 16   with_authentication                 L1077    401 through the failed handler
 17   with_audit                          L1064    only requests that got this far are audited
 18   with_impersonation                  L1059
 19   with_max_in_flight_limit            L1051    (no priority-and-fairness here)
 20   with_authorization                  L1040    403 on deny
====  ==================================  =======  =============================================

Left out, and why: the filter-latency trackers (TrackStarted/TrackCompleted) and
WithLatencyTrackers only feed metrics and tracing; WithTracing needs OpenTelemetry;
WithPriorityAndFairness is the alternative to max-in-flight and needs the flow-control API;
WithHSTS only adds a header configured by a flag we do not have; WithRoutine is an alpha
feature, off by default;
the constrained impersonation variant behaves like impersonation for what we build.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional

from genericserver.endpoints.filters.audit import with_audit
from genericserver.endpoints.filters.audit_init import with_audit_init
from genericserver.endpoints.filters.authentication import unauthorized, with_authentication
from genericserver.endpoints.filters.authn_audit import with_failed_authentication_audit
from genericserver.endpoints.filters.authorization import with_authorization
from genericserver.filters.cors import with_cors
from genericserver.filters.goaway import with_probabilistic_goaway
from genericserver.endpoints.filters.impersonation import with_impersonation
from genericserver.endpoints.filters.mux_discovery_complete import with_mux_and_discovery_complete
from genericserver.endpoints.filters.request_deadline import with_request_deadline
from genericserver.endpoints.filters.request_received_time import with_request_received_timestamp
from genericserver.endpoints.filters.requestinfo import with_request_info
from genericserver.endpoints.filters.warning import with_warning_recorder
from genericserver.endpoints.filters.cachecontrol import with_cache_control
from genericserver.filters.maxinflight import with_max_in_flight_limit
from genericserver.filters.timeout import with_timeout_for_non_long_running_requests
from genericserver.filters.waitgroup import with_wait_group
from genericserver.filters.watch_termination import with_watch_termination_during_shutdown
from genericserver.filters.with_retry_after import with_retry_after
from genericserver.filters.wrap import with_http_logging, with_panic_recovery
from genericserver.requestinfo import RequestInfoFactory

App = Callable[..., Any]
APIS_PREFIX = "/apis"


class Step(NamedTuple):
    """One filter of the chain: its name, its line in config.go, and how it wraps a handler."""

    name: str
    go_line: int
    wrap: Callable[[App], App]


def handler_chain_steps(c: Any) -> list[Step]:
    """The steps of ``default_build_handler_chain`` for ``c``, innermost first (Go's order).

    ``c`` is a :class:`genericserver.config.Config` (completed); it is not imported here, since
    config.py imports this module to build the chain."""
    signals = c.lifecycle_signals
    failed = with_failed_authentication_audit(unauthorized(), c.audit_backend, c.audit_policy_rule_evaluator)
    steps = [
        Step("authorization", 1040, lambda h: with_authorization(h, c.authorizer)),
        Step("max-in-flight", 1051, lambda h: with_max_in_flight_limit(h, c.max_requests_in_flight, c.max_mutating_requests_in_flight, c.long_running_func,
                                                                        mark=c.max_in_flight_watermark, metrics=c.metrics)),
        Step("impersonation", 1059, lambda h: with_impersonation(h, c.authorizer)),
        Step("audit", 1064, lambda h: with_audit(h, c.audit_backend, c.audit_policy_rule_evaluator, c.long_running_func, metrics=c.audit_metrics)),
        Step("authentication", 1077, lambda h: with_authentication(h, c.authenticator, failed, c.api_audiences)),
        Step("cors", 1080, lambda h: with_cors(h, c.cors_allowed_origin_list, None, None, None, "true")),
        Step("warning-recorder", 1084, with_warning_recorder),
        Step("timeout", 1088, lambda h: with_timeout_for_non_long_running_requests(h, c.long_running_func, metrics=c.metrics)),
        Step("request-deadline", 1090, lambda h: with_request_deadline(h, c.audit_backend, c.audit_policy_rule_evaluator, c.long_running_func, c.request_timeout)),
        Step("wait-group", 1092, lambda h: with_wait_group(h, c.long_running_func, c.non_long_running_request_wait_group)),
    ]
    if c.shutdown_watch_termination_grace_period > 0:
        steps.append(Step("watch-termination", 1094, lambda h: with_watch_termination_during_shutdown(h, signals, c.watch_request_wait_group)))
    serving = c.secure_serving
    if c.goaway_chance > 0 and serving is not None and not serving.disable_http2:
        steps.append(Step("probabilistic-goaway", 1097, lambda h: with_probabilistic_goaway(h, c.goaway_chance)))
    steps.append(Step("cache-control", 1099, with_cache_control))
    if c.shutdown_send_retry_after:
        steps.append(Step("retry-after", 1102, lambda h: with_retry_after(h, signals.not_accepting_new_request.signaled())))
    steps += [
        Step("http-logging", 1104, with_http_logging),
        Step("request-info", 1112, lambda h: with_request_info(h, c.request_info_resolver)),
        Step("request-received-timestamp", 1113, with_request_received_timestamp),
        Step("mux-and-discovery-complete", 1114, lambda h: with_mux_and_discovery_complete(h, signals.mux_and_discovery_complete.signaled())),
        Step("panic-recovery", 1115, lambda h: with_panic_recovery(h, c.request_info_resolver, really_crash=c.really_crash, metrics=c.metrics)),
        Step("audit-init", 1116, with_audit_init),
    ]
    return steps


def build(api_handler: App, steps: list[Step], around: Optional[Callable[[Step, App], App]] = None) -> App:
    """Fold ``steps`` around ``api_handler``; ``around(step, h)`` may wrap each result (tests)."""
    handler = api_handler
    for step in steps:
        handler = step.wrap(handler)
        if around is not None:
            handler = around(step, handler)
    return handler


def new_request_info_resolver(c: Any) -> RequestInfoFactory:
    """Go's ``NewRequestInfoResolver`` (config.go L1161): API prefixes from the config's legacy ones."""
    legacy = {p.strip("/") for p in c.legacy_api_group_prefixes}
    return RequestInfoFactory(api_prefixes=legacy | {APIS_PREFIX.strip("/")}, groupless_api_prefixes=legacy)


def default_build_handler_chain(api_handler: App, c: Any) -> App:
    """Wrap ``api_handler`` in the v1.36.0 filters, in Go's order (see the module docstring)."""
    if c.request_info_resolver is None:
        c.request_info_resolver = new_request_info_resolver(c)
    return build(api_handler, handler_chain_steps(c))

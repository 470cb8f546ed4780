"""Port of k8s.io/apiserver/pkg/server/config.go (v1.36.0): Config, New and the handler chain.

``new_config()`` gives Go's defaults; ``config.complete().new(name, delegate)`` builds a
:class:`genericserver.genericapiserver.GenericAPIServer`; ``default_build_handler_chain`` wraps
the server's director in the v1.36.0 filters, in Go's order (see its docstring). ``new`` ends
with Go's ``installAPI``: the index (``/``, ``/index.html``) when ``enable_index``, ``/metrics``
and ``/metrics/slis`` when ``enable_metrics`` (both Go's defaults), and ``/version``.

Metrics: Go registers every metric in one process-wide registry. Here each config makes its own
registries (``metrics_registry`` for ``/metrics``, ``sli_registry`` for ``/metrics/slis``) and
the objects recording into them (``metrics``, ``audit_metrics``, ``sli_metrics``), handed to the
filters, the health endpoints and the audit backend of the server it builds, so that tests and
several servers in one process do not share counts (design.md section 7). The max-in-flight
watermark is the server's too (Go: one per process).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from prometheus_client import CollectorRegistry, ProcessCollector

from genericserver import request as reqctx
from genericserver import routes
from genericserver.apimachinery import version
from genericserver.apimachinery.waitgroup import RateLimitedSafeWaitGroup, SafeWaitGroup
from genericserver.audit.metrics import AuditMetrics
from genericserver.chain import default_build_handler_chain, new_request_info_resolver
from genericserver.events import EventStream
from genericserver.filters.longrunning import basic_long_running_request_check
from genericserver.filters.maxinflight import RequestWatermark, start_max_in_flight_watermark_maintenance
from genericserver.genericapiserver import GenericAPIServer, new_empty_delegate
from genericserver.handler import APIServerHandler
from genericserver.healthz import HealthChecks
from genericserver.healthz.healthz import LogHealthz, PingHealthz
from genericserver.hooks import HookRegistry
from genericserver.lifecycle_signals import LifecycleSignals, new_lifecycle_signals
from genericserver.metrics import EXECUTING_PHASE, Metrics
from genericserver.notfoundhandler import not_found_handler
from genericserver.slis import SLIMetrics

DEFAULT_LEGACY_API_PREFIX = "/api"


def _default_checks() -> list:
    return [PingHealthz, LogHealthz]


@dataclass
class Config:
    """The settings a generic apiserver is built from (only those the shutdown touches).

    Durations are seconds (floats); ``min_request_timeout`` is whole seconds as in Go.
    """

    build_handler_chain_func: Callable[[Callable, "Config"], Callable] = field(default=None)  # type: ignore[assignment]
    non_long_running_request_wait_group: SafeWaitGroup = field(default_factory=SafeWaitGroup)
    watch_request_wait_group: RateLimitedSafeWaitGroup = field(default_factory=RateLimitedSafeWaitGroup)
    legacy_api_group_prefixes: set[str] = field(default_factory=lambda: {DEFAULT_LEGACY_API_PREFIX})
    disabled_post_start_hooks: set[str] = field(default_factory=set)
    healthz_checks: list = field(default_factory=_default_checks)
    readyz_checks: list = field(default_factory=_default_checks)
    livez_checks: list = field(default_factory=_default_checks)
    max_requests_in_flight: int = 400
    max_mutating_requests_in_flight: int = 200
    request_timeout: float = 60.0
    min_request_timeout: int = 1800
    livez_grace_period: float = 0.0
    shutdown_delay_duration: float = 0.0
    long_running_func: Callable = field(default_factory=lambda: basic_long_running_request_check({"watch"}, set()))
    shutdown_watch_termination_grace_period: float = 0.0
    shutdown_send_retry_after: bool = False
    goaway_chance: float = 0.0  # --goaway-chance: WithProbabilisticGoaway's chance per HTTP/2 request
    secure_serving: Any = None  # genericserver.secure_serving.SecureServingInfo
    audit_backend: Any = None
    audit_policy_rule_evaluator: Any = None
    authenticator: Any = None
    api_audiences: tuple = ()
    anonymous_auth: bool = False
    authorizer: Any = None
    cors_allowed_origin_list: list[str] = field(default_factory=list)
    request_info_resolver: Any = None
    loopback_client_config: Any = None
    # panic recovery re-raises by default, as Go's ReallyCrash; tests may set False for a 500
    really_crash: bool = True
    events: EventStream = field(default_factory=EventStream)
    # / and /index.html: the listed paths (routes.install_index)
    enable_index: bool = True
    # /metrics and /metrics/slis (see the module docstring for the registries)
    enable_metrics: bool = True
    metrics_registry: CollectorRegistry = field(default_factory=CollectorRegistry, repr=False)
    sli_registry: CollectorRegistry = field(default_factory=CollectorRegistry, repr=False)
    metrics: Metrics = field(default=None, repr=False)  # type: ignore[assignment]
    audit_metrics: AuditMetrics = field(default=None, repr=False)  # type: ignore[assignment]
    sli_metrics: SLIMetrics = field(default=None, repr=False)  # type: ignore[assignment]
    max_in_flight_watermark: RequestWatermark = field(default_factory=lambda: RequestWatermark(EXECUTING_PHASE), repr=False)
    version: version.Info = field(default_factory=version.get)
    # private in Go so nothing can replace it after the chain captured it
    _lifecycle_signals: LifecycleSignals = field(default_factory=new_lifecycle_signals, repr=False)

    def __post_init__(self) -> None:
        if self.build_handler_chain_func is None:
            self.build_handler_chain_func = default_build_handler_chain
        if self.metrics is None:
            self.metrics = Metrics(self.metrics_registry)
            # Go's legacyregistry has the process collector too (process_cpu_seconds_total...)
            ProcessCollector(registry=self.metrics_registry)
        if self.audit_metrics is None:
            self.audit_metrics = AuditMetrics(self.metrics_registry)
        if self.sli_metrics is None:
            self.sli_metrics = SLIMetrics(self.sli_registry, process_start_time())

    @property
    def lifecycle_signals(self) -> LifecycleSignals:
        return self._lifecycle_signals

    def drained_notify(self):
        """Set once in-flight requests drained: storage and admission keep going until then."""
        return self._lifecycle_signals.in_flight_requests_drained.signaled()

    def shutdown_initiated_notify(self):
        return self._lifecycle_signals.shutdown_initiated.signaled()

    def complete(self) -> "CompletedConfig":
        if self.request_info_resolver is None:
            self.request_info_resolver = new_request_info_resolver(self)
        return CompletedConfig(self)


def new_config() -> Config:
    """``NewConfig``: Go's defaults (400 / 200 in flight, 60 s request timeout, no delay...)."""
    return Config()


def _mux_and_discovery_complete(environ: dict) -> bool:
    return not environ.get(reqctx.MUX_INCOMPLETE_KEY, False)


class CompletedConfig:
    """``Config.complete()``: the config with its derived fields filled; ``new`` builds the server."""

    def __init__(self, config: Config):
        self.config = config

    def new(self, name: str, delegation_target: Any = None) -> GenericAPIServer:
        c = self.config
        if delegation_target is None:
            delegation_target = new_empty_delegate(not_found_handler(_mux_and_discovery_complete))
        handler = APIServerHandler(
            name,
            lambda director: c.build_handler_chain_func(director, c),
            delegation_target.unprotected_handler(),
        )
        health = HealthChecks(
            healthz_checks=c.healthz_checks,
            livez_checks=c.livez_checks,
            readyz_checks=c.readyz_checks,
            livez_grace_period=c.livez_grace_period,
            metrics=c.metrics,
            sli=c.sli_metrics,
        )
        hooks = HookRegistry(
            health,
            disabled_post_start_hooks=c.disabled_post_start_hooks,
            loopback_client_config=c.loopback_client_config,
        )
        s = GenericAPIServer(
            name=name,
            handler=handler,
            delegation_target=delegation_target,
            hooks=hooks,
            health=health,
            lifecycle_signals=c.lifecycle_signals,
            non_long_running_request_wait_group=c.non_long_running_request_wait_group,
            watch_request_wait_group=c.watch_request_wait_group,
            shutdown_timeout=c.request_timeout,
            shutdown_delay_duration=c.shutdown_delay_duration,
            shutdown_watch_termination_grace_period=c.shutdown_watch_termination_grace_period,
            shutdown_send_retry_after=c.shutdown_send_retry_after,
            secure_serving_info=c.secure_serving,
            audit_backend=c.audit_backend,
            events=c.events,
            metrics=c.metrics,
        )
        # the outermost server runs its delegates' hooks and waits for their mux signals
        hooks.post_start_hooks().update(delegation_target.post_start_hooks())
        hooks.pre_shutdown_hooks().update(delegation_target.pre_shutdown_hooks())
        for signal_name, sig in delegation_target.mux_and_discovery_complete_signals().items():
            s.register_mux_and_discovery_complete_signal(signal_name, sig)
        if c.max_requests_in_flight or c.max_mutating_requests_in_flight:

            def max_in_flight_filter(ctx: Any) -> None:
                # publishes the watermark as apiserver_current_inflight_requests until the HTTP
                # server is told to stop (the hooks' context)
                start_max_in_flight_watermark_maintenance(ctx.done(), c.max_in_flight_watermark, c.metrics)

            if not hooks.is_post_start_hook_registered("max-in-flight-filter"):
                s.add_post_start_hook("max-in-flight-filter", max_in_flight_filter)
        # Go's config always has a storage object count tracker, and a post-start hook that prunes it
        # until the server stops. It feeds priority and fairness's work estimates, which are not
        # built here, so the hook does nothing; it is kept for its name, which /healthz, /livez and
        # /readyz list (poststarthook/storage-object-count-tracker-hook, measured on genericserver-go)
        if not hooks.is_post_start_hook_registered("storage-object-count-tracker-hook"):
            s.add_post_start_hook("storage-object-count-tracker-hook", lambda ctx: None)
        # the delegates' health checks (their post-start hooks' included), unless configured here
        configured = {check.name() for check in c.healthz_checks}
        for delegate_check in delegation_target.healthz_checks():
            if delegate_check.name() not in configured:
                s.add_health_checks(delegate_check)
        install_api(name, s, c)
        return s


def install_api(name: str, s: GenericAPIServer, c: Config) -> None:
    """Go's ``installAPI``, the parts built here: the index (``/``), the metrics endpoints and
    ``/version``.

    Go also installs profiling, the debug flags, discovery and flow control, which this server
    does not have.
    """
    mux = s.handler.non_go_restful_mux
    if c.enable_index:
        routes.install_index(mux, s.listed_paths)
    if c.enable_metrics:
        routes.install_metrics(mux, c.metrics_registry, c.sli_registry)
    routes.install_version(mux, c.version)


def process_start_time() -> float:
    """When this process started, in seconds since the epoch (what component-base reports)."""
    for family in ProcessCollector(registry=None).collect():
        if family.name == "process_start_time_seconds" and family.samples:
            return family.samples[0].value
    return 0.0


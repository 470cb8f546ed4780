"""Port of k8s.io/apiserver/pkg/server/genericapiserver.go (v1.36.0): the server and its shutdown.

``GenericAPIServer`` holds what the shutdown needs (the handler, hooks, health registries, the
two wait groups, the lifecycle signals, the audit backend, the serving info); ``prepare_run()``
installs ``/healthz``, ``/livez`` and ``/readyz`` and returns a ``PreparedGenericAPIServer``
whose ``run_with_context(ctx)`` is Go's ``RunWithContext``, step for step. How the signals
depend on each other (the diagram of Go's doc comment, redrawn)::

                                  ctx cancelled
                 ┌──────────────────────┴──────────────────────┐
         ShutdownInitiated                              pre-shutdown hooks run
                 │ sleep ShutdownDelayDuration                  │
      AfterShutdownDelayDuration                      PreShutdownHooksStopped
                 └──────────────────────┬──────────────────────┘
                               NotAcceptingNewRequest
             ┌──────────────────────────┼──────────────────────────┐
     [default mode]            non-long-running wait     watch wait (rate limited,
             │                 group drains              only if grace > 0)
             │                          └────────────┬─────────────┘
             │                              InFlightRequestsDrained ──> audit backend shutdown
             │                                       │ [retry-after mode]
             └──────────── stop the HTTP server <────┘
                                   │
                       HTTPServerStoppedListening

Each goroutine of Go's ``RunWithContext`` is a named function here, started in Go's order:
``_signal_mux_and_discovery_complete``, ``_delayed_stop``, ``_stop_http_server``,
``_listener_stopped``, ``_not_accepting_new_requests``, ``_drain_non_long_running``,
``_drain_watches``, ``_drained``; their runtime names are the ones a debugger and traces show. The two
that wait and then only cancel or close (``stop-http-server``, ``internal-stop``) are ``rt.go_after``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from genericserver import klog
from genericserver import runtime as rt
from genericserver.apimachinery.waitgroup import RateLimitedSafeWaitGroup, SafeWaitGroup
from genericserver.context import context as gocontext
from genericserver.events import EventStream
from genericserver.godur import format_go_duration
from genericserver.lifecycle_signals import LifecycleSignal, LifecycleSignals
from genericserver.x.time.rate.rate import Limiter

# In retry-after mode the HTTP server is only shut down after the drain; Go leaves net/http a
# second to get the GOAWAY answered, so the grace must be at least two seconds.
RETRY_AFTER_MODE_SHUTDOWN_TIMEOUT = 2.0
# Floor of the watch drain rate: drain at least this many watches a second (provisional in Go).
MIN_WATCH_DRAIN_QPS = 200.0


class TimeToStopHTTPServer(Exception):
    """The cause recorded on the HTTP server's stop context."""


def shutdown_event(sig: LifecycleSignal) -> None:
    """A ``[graceful-termination] shutdown event`` line at V(1), naming the caller's file:line.

    Go writes each of these inline (as ``_run_with_context``'s goroutines below do); this helper
    is for code elsewhere that fires a signal, such as the known-bad variants in
    :mod:`genericserver.testing.variants`.
    """
    klog.v(1).info_s_depth(1, "[graceful-termination] shutdown event", name=sig.name)


class EmptyDelegate:
    """``NewEmptyDelegate``: the end of a delegation chain; has nothing and destroys nothing."""

    def __init__(self, handler: Optional[Callable] = None):
        self.handler = handler

    def unprotected_handler(self) -> Optional[Callable]:
        return self.handler

    def post_start_hooks(self) -> dict:
        return {}

    def pre_shutdown_hooks(self) -> dict:
        return {}

    def healthz_checks(self) -> list:
        return []

    def listed_paths(self) -> list[str]:
        return []

    def next_delegate(self) -> None:
        return None

    def prepare_run(self) -> None:
        return None

    def mux_and_discovery_complete_signals(self) -> dict[str, rt.Event]:
        return {}

    def destroy(self) -> None:
        pass


def new_empty_delegate(handler: Optional[Callable] = None) -> EmptyDelegate:
    return EmptyDelegate(handler)


class GenericAPIServer:
    """The server: built by ``CompletedConfig.new``; see :mod:`genericserver.config`."""

    def __init__(
        self,
        *,
        name: str,
        handler: Any,
        delegation_target: Any,
        hooks: Any,
        health: Any,
        lifecycle_signals: LifecycleSignals,
        non_long_running_request_wait_group: SafeWaitGroup,
        watch_request_wait_group: RateLimitedSafeWaitGroup,
        shutdown_timeout: float,
        shutdown_delay_duration: float,
        shutdown_watch_termination_grace_period: float,
        shutdown_send_retry_after: bool,
        secure_serving_info: Any = None,
        audit_backend: Any = None,
        events: Optional[EventStream] = None,
        metrics: Any = None,
    ):
        self.name = name
        self.handler = handler
        self.delegation_target = delegation_target
        self.hooks = hooks
        self.health = health
        self.lifecycle_signals = lifecycle_signals
        self.non_long_running_request_wait_group = non_long_running_request_wait_group
        self.watch_request_wait_group = watch_request_wait_group
        self.shutdown_timeout = shutdown_timeout
        self.shutdown_delay_duration = shutdown_delay_duration
        self.shutdown_watch_termination_grace_period = shutdown_watch_termination_grace_period
        self.shutdown_send_retry_after = shutdown_send_retry_after
        self.secure_serving_info = secure_serving_info
        self.audit_backend = audit_backend
        self.events = events if events is not None else EventStream()
        # the server's request metrics (genericserver.metrics.Metrics; its registry is /metrics)
        self.metrics = metrics
        self._destroy_fns: list[Callable[[], None]] = []
        self._mux_and_discovery_complete_signals: dict[str, rt.Event] = {}
        lifecycle_signals.observe(lambda sig, at: self.events.record("signal", sig.name))

    # -- the DelegationTarget interface -------------------------------------------------
    def unprotected_handler(self) -> Callable:
        return self.handler.director

    def post_start_hooks(self) -> dict:
        return self.hooks.post_start_hooks()

    def pre_shutdown_hooks(self) -> dict:
        return self.hooks.pre_shutdown_hooks()

    def healthz_checks(self) -> list:
        return self.health.healthz_checks()

    def listed_paths(self) -> list[str]:
        # Go's ListedPathProviders{handler, delegate}: the union, sorted, without duplicates
        paths = set(self.handler.listed_paths())
        if self.delegation_target is not None:
            paths.update(self.delegation_target.listed_paths())
        return sorted(paths)

    def next_delegate(self) -> Any:
        return self.delegation_target

    def mux_and_discovery_complete_signals(self) -> dict[str, rt.Event]:
        return self._mux_and_discovery_complete_signals

    # -- hooks (hooks.go) ------------------------------------------------------------------
    def add_post_start_hook(self, name: str, hook: Callable) -> None:
        self.hooks.add_post_start_hook(name, hook)

    def add_post_start_hook_or_die(self, name: str, hook: Callable) -> None:
        self.hooks.add_post_start_hook_or_die(name, hook)

    def add_pre_shutdown_hook(self, name: str, hook: Callable) -> None:
        self.hooks.add_pre_shutdown_hook(name, hook)

    def add_pre_shutdown_hook_or_die(self, name: str, hook: Callable) -> None:
        self.hooks.add_pre_shutdown_hook_or_die(name, hook)

    def run_post_start_hooks(self, ctx: gocontext.Context) -> None:
        self.hooks.run_post_start_hooks(ctx)

    def run_pre_shutdown_hooks(self) -> None:
        """Run the pre-shutdown hooks in sequence; raises their aggregated error."""
        self.events.record("hook", "pre-shutdown", phase="start")
        try:
            self.hooks.run_pre_shutdown_hooks()
        except Exception as err:
            self.events.record("hook", "pre-shutdown", phase="end", error=str(err))
            raise
        self.events.record("hook", "pre-shutdown", phase="end", error=None)

    # -- health (healthz.go) -----------------------------------------------------------
    def add_health_checks(self, *checks: Any) -> None:
        self.health.add_health_checks(*checks)

    def add_readyz_checks(self, *checks: Any) -> None:
        self.health.add_readyz_checks(*checks)

    def add_livez_checks(self, delay: float, *checks: Any) -> None:
        self.health.add_livez_checks(delay, *checks)

    # -- the rest of GenericAPIServer --------------------------------------------------
    def register_mux_and_discovery_complete_signal(self, name: str, signal: rt.Event) -> None:
        if name in self._mux_and_discovery_complete_signals:
            raise ValueError(f"{name} already registered")
        self._mux_and_discovery_complete_signals[name] = signal

    def register_destroy_func(self, fn: Callable[[], None]) -> None:
        """Functions must be idempotent: ``destroy`` may run more than once."""
        self._destroy_fns.append(fn)

    def destroy(self) -> None:
        """Own destroy functions in registration order, then the delegate's."""
        for fn in self._destroy_fns:
            fn()
        if self.delegation_target is not None:
            self.delegation_target.destroy()

    def prepare_run(self) -> "PreparedGenericAPIServer":
        """Install the health endpoints (readyz last, with the shutdown check) and return the
        server ready to run. Delegates are prepared first."""
        if self.delegation_target is not None:
            self.delegation_target.prepare_run()
        self.health.install_healthz(self.handler.non_go_restful_mux)
        self.health.install_livez(self.handler.non_go_restful_mux)
        # readiness must fail from the moment shutdown starts
        try:
            self.health.add_readyz_shutdown_check(self.lifecycle_signals.shutdown_initiated.signaled())
        except Exception as err:
            klog.errorf("Failed to install readyz shutdown check %s", err)
        self.health.install_readyz(self.handler.non_go_restful_mux, self.lifecycle_signals.has_been_ready.signal)
        return PreparedGenericAPIServer(self)


class PreparedGenericAPIServer:
    """What ``prepare_run`` returns: only a prepared server can run (as in Go)."""

    def __init__(self, server: GenericAPIServer):
        self.server = server

    def __getattr__(self, item: str) -> Any:
        return getattr(self.server, item)

    # -- Run / RunWithContext ------------------------------------------------------------
    def run(self, stop_ch: rt.Event) -> None:
        """Deprecated in Go: a context that is done when ``stop_ch`` is set, then ``run_with_context``."""
        return self.run_with_context(context_for_channel(stop_ch))

    def run_with_context(self, ctx: gocontext.Context) -> None:
        """Serve until ``ctx`` is done, then shut down gracefully; see the module docstring.

        Returns once requests drained, the audit backend flushed, the listener stopped, the
        HTTP server shut down and every shutdown event logged. Raises what a pre-shutdown hook
        raised, at once (the rest of the shutdown carries on in the background). ``destroy()``
        runs on every return path.
        """
        s = self.server
        try:
            self._run_with_context(ctx)
        finally:
            s.destroy()

    def _run_with_context(self, ctx: gocontext.Context) -> None:
        s = self.server
        signals = s.lifecycle_signals
        stop_ch = ctx.done()

        rt.go(self._signal_mux_and_discovery_complete, stop_ch, name="mux-and-discovery-complete")
        rt.go(self._delayed_stop, stop_ch, name="delayed-stop")

        shutdown_timeout = s.shutdown_timeout
        if s.shutdown_send_retry_after:
            shutdown_timeout = RETRY_AFTER_MODE_SHUTDOWN_TIMEOUT
            klog.v(1).info_s("[graceful-termination] using HTTP Server shutdown timeout", shutdownTimeout=format_go_duration(shutdown_timeout))

        # Cancelling ctx must not stop the HTTP server right away: keep only its values and
        # cancel on our own terms (at NotAcceptingNewRequest, or after the drain).
        stop_http_server_ctx, stop_http_server = gocontext.with_cancel_cause(gocontext.without_cancel(ctx))
        rt.go_after(self._time_to_stop_http_server(), self._stop_http_server, stop_http_server, name="stop-http-server")

        # The audit backend must run before the first request, or processing events could
        # block; it stops once in-flight requests drained.
        if s.audit_backend is not None:
            try:
                s.audit_backend.run(signals.in_flight_requests_drained.signaled())
            except Exception as err:
                raise RuntimeError(f"failed to run the audit backend: {err}") from err

        stopped_ch, listener_stopped_ch = self.non_blocking_run_with_context(stop_http_server_ctx, shutdown_timeout)

        listener_stopped = rt.go(self._listener_stopped, listener_stopped_ch, name="listener-stopped")
        not_accepting = rt.go(self._not_accepting_new_requests, name="not-accepting-new-requests")
        non_long_running_drained = rt.event("non-long-running-requests-drained")
        rt.go(self._drain_non_long_running, non_long_running_drained, name="drain-non-long-running")
        watches_drained = rt.event("active-watches-drained")
        rt.go(self._drain_watches, watches_drained, name="drain-watches")
        drained = rt.go(self._drained, non_long_running_drained, watches_drained, name="drained")

        klog.v(1).info("[graceful-termination] waiting for shutdown to be initiated")
        stop_ch.wait()

        # Run the pre-shutdown hooks right here (kube-apiserver removes itself from the
        # `kubernetes` endpoints in one). PreShutdownHooksStopped fires however they end.
        try:
            s.run_pre_shutdown_hooks()
        finally:
            signals.pre_shutdown_hooks_stopped.signal()
            klog.v(1).info_s("[graceful-termination] pre-shutdown hooks completed", name=signals.pre_shutdown_hooks_stopped.name)

        # every request in flight has been answered (bounded by the request timeout)
        signals.in_flight_requests_drained.signaled().wait()

        if s.audit_backend is not None:
            s.audit_backend.shutdown()
            s.events.record("audit", "shutdown-completed")
            klog.v(1).info_s("[graceful-termination] audit backend shutdown completed")

        # the HTTP server's Shutdown has finished: every connection idle or the timeout hit
        listener_stopped_ch.wait()
        stopped_ch.wait()
        # Go returns and lets the goroutines that log shutdown events finish on their own; a Python
        # thread may not get the GIL back before the interpreter exits, and its line would be lost,
        # so wait for them (NotAcceptingNewRequest's makes the relays' calls before it logs).
        not_accepting.done.wait()
        drained.done.wait()
        listener_stopped.done.wait()
        klog.v(1).info("[graceful-termination] apiserver is exiting")

    # -- RunWithContext's goroutines, in Go's order ---------------------------------------
    def _signal_mux_and_discovery_complete(self, stop_ch: rt.Event) -> None:
        signals = self.server.lifecycle_signals
        for name, sig in list(self.server.mux_and_discovery_complete_signals().items()):
            if rt.select(sig, stop_ch) is not sig:
                klog.v(1).infof("haven't completed %s, stop requested", signals.mux_and_discovery_complete.name)
                return
        signals.mux_and_discovery_complete.signal()
        klog.v(1).infof("%s has all endpoints registered and discovery information is complete", signals.mux_and_discovery_complete.name)

    def _delayed_stop(self, stop_ch: rt.Event) -> None:
        signals = self.server.lifecycle_signals
        try:
            stop_ch.wait()
            # /readyz turns red now: the delay is the load balancers' window to notice it
            # and stop sending traffic here.
            signals.shutdown_initiated.signal()
            klog.v(1).info_s("[graceful-termination] shutdown event", name=signals.shutdown_initiated.name)
            rt.sleep(self.server.shutdown_delay_duration)
        finally:
            klog.v(1).info_s("[graceful-termination] shutdown event", name=signals.after_shutdown_delay_duration.name)
            signals.after_shutdown_delay_duration.signal()

    def _time_to_stop_http_server(self) -> rt.Event:
        # NotAcceptingNewRequest, or the drain's end in retry-after mode (the listener stays open)
        signals = self.server.lifecycle_signals
        return signals.in_flight_requests_drained.signaled() if self.server.shutdown_send_retry_after \
            else signals.not_accepting_new_request.signaled()

    def _stop_http_server(self, stop_http_server: Callable[[Optional[BaseException]], None]) -> None:
        # a go_after goroutine: the HTTP server's Shutdown is one thread wake-up from the signal
        stop_http_server(TimeToStopHTTPServer("time to stop HTTP server"))

    def _listener_stopped(self, listener_stopped_ch: rt.Event) -> None:
        signals = self.server.lifecycle_signals
        listener_stopped_ch.wait()
        self.server.events.record("listener", "stopped")
        signals.http_server_stopped_listening.signal()
        klog.v(1).info_s("[graceful-termination] shutdown event", name=signals.http_server_stopped_listening.name)

    def _not_accepting_new_requests(self) -> None:
        signals = self.server.lifecycle_signals
        try:
            signals.after_shutdown_delay_duration.signaled().wait()
            # also wait for the pre-shutdown hooks: some of them make API calls to clean up
            # after themselves (lease reconcilers removing this server from the active set)
            signals.pre_shutdown_hooks_stopped.signaled().wait()
        finally:
            signals.not_accepting_new_request.signal()
            klog.v(1).info_s("[graceful-termination] shutdown event", name=signals.not_accepting_new_request.name)

    def _drain_non_long_running(self, drained: rt.Event) -> None:
        signals = self.server.lifecycle_signals
        try:
            signals.not_accepting_new_request.signaled().wait()
            # From here on the wait group rejects new requests. In the default mode clients
            # mostly see "connection refused" instead of the 503, because the listener is
            # already closed; in retry-after mode they see the 429 (Go has the same TODO).
            self.server.non_long_running_request_wait_group.wait()
        finally:
            klog.v(1).info("[graceful-termination] in-flight non long-running request(s) have drained")
            drained.set()

    def _drain_watches(self, drained: rt.Event) -> None:
        s = self.server
        try:
            s.lifecycle_signals.not_accepting_new_request.signaled().wait()
            grace = s.shutdown_watch_termination_grace_period
            if grace <= 0:
                klog.v(1).info_s("[graceful-termination] not going to wait for active watch request(s) to drain")
                return
            before, after, err = s.watch_request_wait_group.wait(lambda count: watch_drain_limiter(count, grace))
            klog.v(1).info_s(
                "[graceful-termination] active watch request(s) have drained",
                duration=format_go_duration(grace),
                activeWatchesBefore=before,
                activeWatchesAfter=after,
                error=err,
            )
        finally:
            drained.set()

    def _drained(self, non_long_running_drained: rt.Event, watches_drained: rt.Event) -> None:
        signals = self.server.lifecycle_signals
        try:
            non_long_running_drained.wait()
            watches_drained.wait()
        finally:
            signals.in_flight_requests_drained.signal()
            klog.v(1).info_s("[graceful-termination] shutdown event", name=signals.in_flight_requests_drained.name)

    # -- NonBlockingRun -----------------------------------------------------------------
    def non_blocking_run(self, stop_ch: rt.Event, shutdown_timeout: float) -> tuple[rt.Event, rt.Event]:
        return self.non_blocking_run_with_context(context_for_channel(stop_ch), shutdown_timeout)

    def non_blocking_run_with_context(self, ctx: gocontext.Context, shutdown_timeout: float) -> tuple[rt.Event, rt.Event]:
        """Start serving and the post-start hooks; return (stopped, listener_stopped) at once.

        Without serving info Go returns nil channels and ``RunWithContext`` would then block
        forever. Here there is simply no server to stop: both events are set as soon as the
        server is told to stop, so the shutdown sequence still completes.
        """
        s = self.server
        internal_stop = rt.event("internal-stop")
        if s.secure_serving_info is not None and s.handler is not None:
            try:
                stopped_ch, listener_stopped_ch = s.secure_serving_info.serve(s.handler, shutdown_timeout, internal_stop)
            except Exception:
                internal_stop.set()
                raise
        else:
            stopped_ch = listener_stopped_ch = internal_stop

        # now that the listener is bound, the caller's ctx decides when it goes away
        rt.go_after(ctx.done(), internal_stop.set, name="internal-stop")
        s.run_post_start_hooks(ctx)
        return stopped_ch, listener_stopped_ch


def watch_drain_limiter(count: int, grace: float) -> tuple[Limiter, gocontext.Context, Callable[[], None]]:
    """The watch drain's rate limiter: ``count`` watches spread over ``grace`` seconds, at least
    200 a second, burst 1 (each ``Done`` takes one token), hard stop after ``grace``."""
    qps = max(count / grace, MIN_WATCH_DRAIN_QPS)
    ctx, cancel = gocontext.with_timeout(gocontext.background(), grace)
    return Limiter(qps, 1), ctx, cancel


def context_for_channel(stop_ch: rt.Event) -> gocontext.Context:
    """``wait.ContextForChannel``: a context that is cancelled once ``stop_ch`` is set."""
    ctx, cancel = gocontext.with_cancel(gocontext.background())

    def cancel_on_stop() -> None:
        if rt.select(stop_ch, ctx.done()) is stop_ch:
            cancel()

    rt.go(cancel_on_stop, name="context-for-channel")
    return ctx

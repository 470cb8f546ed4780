"""Known-bad lifecycle variants: a step of the shutdown done wrong (no Go twin).

Each swaps one piece through a seam the server already has: a goroutine of ``run_with_context``
is a named method of ``PreparedGenericAPIServer``, a filter is looked up by
``chain.handler_chain_steps`` when the chain is built, and the audit backend is whatever the
config holds when ``CompletedConfig.new`` builds the server (a wrapper). The invariants over a
whole run (:mod:`genericserver.testing.invariants`) catch each of them.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from genericserver import chain
from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.config import CompletedConfig
from genericserver.filters.waitgroup import _with_wait_group, wait_group_write_retry_after_to_response
from genericserver.filters.with_retry_after import _has_exempt_path_prefix, is_request_exempt_from_retry_after
from genericserver.genericapiserver import PreparedGenericAPIServer, shutdown_event
from genericserver.testing.variants import Variant


class NotAcceptingWithoutHooks(Variant):
    """NotAcceptingNewRequest fires when the delay ends, without waiting for the pre-shutdown hooks
    (whose own API calls, such as removing this server from the endpoints, then fail)."""

    name = "not-accepting-without-hooks"
    story = "NotAcceptingNewRequest fires when the delay ends, while a pre-shutdown hook still calls the server"
    breaks = "PreparedGenericAPIServer._not_accepting_new_requests"
    bug_class = "a step that forgets one of its prerequisites"
    kind = "lifecycle"

    @staticmethod
    def _not_accepting_new_requests(self: PreparedGenericAPIServer) -> None:
        signals = self.server.lifecycle_signals
        try:
            signals.after_shutdown_delay_duration.signaled().wait()  # and not the hooks
        finally:
            signals.not_accepting_new_request.signal()
            shutdown_event(signals.not_accepting_new_request)

    def patches(self) -> list[tuple[Any, str, Any]]:
        return [(PreparedGenericAPIServer, "_not_accepting_new_requests", self._not_accepting_new_requests)]


class AuditShutdownBeforeDrain(Variant):
    """The audit backend is shut down as soon as the server stops accepting requests, while
    in-flight requests still have events to write; a shut-down backend drops them."""

    name = "audit-shutdown-before-drain"
    story = "the audit backend shuts down at NotAcceptingNewRequest and drops the events of requests still in flight"
    breaks = "the audit backend's shutdown in run_with_context"
    bug_class = "a resource released before its last users are done"
    kind = "lifecycle"

    class Backend:
        def __init__(self, backend: Any, signals: Any):
            self._backend, self._signals = backend, signals
            self._down = False

        def run(self, stop: rt.Event) -> None:
            self._backend.run(stop)
            rt.go(self._shut_down_early, name="audit-early-shutdown")

        def _shut_down_early(self) -> None:
            self._signals.not_accepting_new_request.signaled().wait()
            self._down = True
            self._backend.shutdown()

        def shutdown(self) -> None:
            if not self._down:
                self._down = True
                self._backend.shutdown()

        def process_events(self, *events: Any) -> bool:
            if self._down:
                return True  # accepted and dropped, as a closed buffered backend does
            return self._backend.process_events(*events)

        def __getattr__(self, item: str) -> Any:
            return getattr(self._backend, item)

    def patches(self) -> list[tuple[Any, str, Any]]:
        real_new = CompletedConfig.new
        wrapper = self.Backend

        def new(completed: CompletedConfig, name: str, delegation_target: Any = None) -> Any:
            c = completed.config
            if c.audit_backend is not None and not isinstance(c.audit_backend, wrapper):
                c.audit_backend = wrapper(c.audit_backend, c.lifecycle_signals)
            return real_new(completed, name, delegation_target)

        return [(CompletedConfig, "new", new)]


def _slot_released_before_body(app: Callable, long_running: Any, wg: Any) -> Callable:
    """``with_wait_group`` that releases the slot when the app returns, before its body is sent."""

    def early_release(environ: dict, start_response: Callable) -> Iterable[bytes]:
        info = reqctx.request_info_from(environ)
        if info is None or long_running(environ, info):
            return app(environ, start_response)
        try:
            wg.add(1)
        except Exception:
            if is_request_exempt_from_retry_after(environ):
                return app(environ, start_response)
            return wait_group_write_retry_after_to_response(start_response)
        try:
            return app(environ, start_response)
        finally:
            wg.done()

    return early_release


class SlotReleasedBeforeBody(Variant):
    """The wait-group filter releases the slot when the app returns, before the response body has
    been sent (the WSGI trap: a Go handler has sent everything when it returns, a WSGI app has not)."""

    name = "slot-released-before-body"
    story = "the wait-group filter releases its slot when the WSGI app returns, before the body is sent"
    breaks = "filters.waitgroup.with_wait_group"
    bug_class = "release before the work it guards is done"
    kind = "lifecycle"

    def patches(self) -> list[tuple[Any, str, Any]]:
        return [(chain, "with_wait_group", _slot_released_before_body)]


class ExemptionRulesDiffer(Variant):
    """The wait-group filter exempts by path only and forgets the loopback User-Agent that
    with_retry_after exempts: a loopback request let through by one is refused by the other."""

    name = "exemption-rules-differ"
    story = "the wait-group filter exempts by path only, so a loopback request with_retry_after lets through gets a 503"
    breaks = "filters.waitgroup.with_wait_group"
    bug_class = "two checks of one rule that disagree"
    kind = "lifecycle"

    @staticmethod
    def _with_wait_group(app: Callable, long_running: Any, wg: Any) -> Callable:
        return _with_wait_group(app, long_running, wg, _has_exempt_path_prefix)

    def patches(self) -> list[tuple[Any, str, Any]]:
        return [(chain, "with_wait_group", self._with_wait_group)]


class ListenerStoppedAtNotAccepting(Variant):
    """In retry-after mode the HTTP server is stopped at NotAcceptingNewRequest, as in the default
    mode, instead of after the drain: clients get "connection refused" instead of the 429."""

    name = "listener-stopped-at-not-accepting"
    story = "in retry-after mode the listener closes at NotAcceptingNewRequest, so clients get refused instead of a 429"
    breaks = "PreparedGenericAPIServer._time_to_stop_http_server"
    bug_class = "a step ordered by the wrong signal"
    kind = "lifecycle"

    @staticmethod
    def _time_to_stop_http_server(self: PreparedGenericAPIServer) -> Any:
        return self.server.lifecycle_signals.not_accepting_new_request.signaled()

    def patches(self) -> list[tuple[Any, str, Any]]:
        return [(PreparedGenericAPIServer, "_time_to_stop_http_server", self._time_to_stop_http_server)]

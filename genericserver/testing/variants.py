"""Known-bad variants of the server, for tests only: deliberate bugs the invariants must catch (no Go twin).

Nothing in the server has a flag for these. Each variant swaps one piece through a seam the
server already has: a goroutine of ``run_with_context`` is a named method of
``PreparedGenericAPIServer`` (a subclass overrides it), a filter is one ``Step`` of
``chain.handler_chain_steps`` (replaced through ``Config.build_handler_chain_func``), and the
audit backend is whatever the config holds (a wrapper). ``VARIANTS`` maps each name to its
class; ``run_scenario(..., variant=VARIANTS[name]())`` runs one.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from genericserver import chain
from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.filters.waitgroup import _with_wait_group, wait_group_write_retry_after_to_response
from genericserver.filters.with_retry_after import _has_exempt_path_prefix, is_request_exempt_from_retry_after
from genericserver.genericapiserver import PreparedGenericAPIServer, TimeToStopHTTPServer, shutdown_event


class Variant:
    """The interface: the base class changes nothing; each hook gets the real thing and returns
    what the run uses instead (``run_scenario(..., variant=...)``)."""

    name = "real"

    def build_handler_chain(self, default: Callable) -> Callable:
        return default

    def audit_backend(self, backend: Any, signals: Any) -> Any:
        return backend

    def prepared(self, prepared: Any) -> Any:
        return prepared


class NotAcceptingWithoutHooks(Variant):
    """NotAcceptingNewRequest fires when the delay ends, without waiting for the pre-shutdown hooks
    (whose own API calls, such as removing this server from the endpoints, then fail)."""

    name = "not-accepting-without-hooks"

    class Prepared(PreparedGenericAPIServer):
        def _not_accepting_new_requests(self) -> None:
            signals = self.server.lifecycle_signals
            try:
                signals.after_shutdown_delay_duration.signaled().wait()
            finally:
                signals.not_accepting_new_request.signal()
                shutdown_event(signals.not_accepting_new_request)

    def prepared(self, prepared: Any) -> Any:
        return self.Prepared(prepared.server)


class AuditShutdownBeforeDrain(Variant):
    """The audit backend is shut down as soon as the server stops accepting requests, while
    in-flight requests still have events to write; a shut-down backend drops them."""

    name = "audit-shutdown-before-drain"

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

    def audit_backend(self, backend: Any, signals: Any) -> Any:
        return self.Backend(backend, signals)


def _replace_step(name: str, wrap: Callable[[Any], Callable]) -> Callable:
    """A ``build_handler_chain_func`` with the step called ``name`` built by ``wrap(config)``."""

    def build(api_handler: Callable, c: Any) -> Callable:
        steps = [chain.Step(s.name, s.go_line, wrap(c)) if s.name == name else s for s in chain.handler_chain_steps(c)]
        return chain.build(api_handler, steps)

    return build


class SlotReleasedBeforeBody(Variant):
    """The wait-group filter releases the slot when the app returns, before the response body has
    been sent (the WSGI trap: a Go handler has sent everything when it returns, a WSGI app has not)."""

    name = "slot-released-before-body"

    @staticmethod
    def with_wait_group(app: Callable, long_running: Any, wg: Any) -> Callable:
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

    def build_handler_chain(self, default: Callable) -> Callable:
        return _replace_step("wait-group", lambda c: lambda h: self.with_wait_group(h, c.long_running_func, c.non_long_running_request_wait_group))


class ExemptionRulesDiffer(Variant):
    """The wait-group filter exempts by path only and forgets the loopback User-Agent that
    with_retry_after exempts: a loopback request let through by one is refused by the other."""

    name = "exemption-rules-differ"

    def build_handler_chain(self, default: Callable) -> Callable:
        return _replace_step(
            "wait-group",
            lambda c: lambda h: _with_wait_group(h, c.long_running_func, c.non_long_running_request_wait_group, _has_exempt_path_prefix),
        )


class ListenerStoppedAtNotAccepting(Variant):
    """In retry-after mode the HTTP server is stopped at NotAcceptingNewRequest, as in the default
    mode, instead of after the drain: clients get "connection refused" instead of the 429."""

    name = "listener-stopped-at-not-accepting"

    class Prepared(PreparedGenericAPIServer):
        def _stop_http_server(self, stop_http_server: Callable) -> None:
            try:
                self.server.lifecycle_signals.not_accepting_new_request.signaled().wait()
            finally:
                stop_http_server(TimeToStopHTTPServer("time to stop HTTP server"))

    def prepared(self, prepared: Any) -> Any:
        return self.Prepared(prepared.server)


VARIANTS: dict[str, type[Variant]] = {
    v.name: v
    for v in (NotAcceptingWithoutHooks, AuditShutdownBeforeDrain, SlotReleasedBeforeBody, ExemptionRulesDiffer, ListenerStoppedAtNotAccepting)
}


def variant(name: str) -> Variant:
    """The variant called ``name``; ``"real"`` is the server as it is."""
    return Variant() if name in ("", "real") else VARIANTS[name]()

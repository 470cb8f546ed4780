"""Lifecycle variants from the shutdown's history: bugs kube-apiserver really had, switched back in for the labs (no Go twin).

Each one puts back, through a seam the server already has, what the server did before an
upstream pull request fixed it (the pull request is named in the variant's docstring and in the
lab of :mod:`genericserver.labs` that uses it):

* ``readyz-red-too-late`` (kubernetes/kubernetes#88911): ``/readyz`` turned red only when the
  shutdown delay was over, so the load balancers learned of the shutdown when it was too late;
* ``no-shutdown-delay`` (before kubernetes/kubernetes#74416): no delay at all between SIGTERM
  and the end of serving;
* ``watches-not-drained`` (before kubernetes/kubernetes#114925): InFlightRequestsDrained does
  not wait for the watches, whatever ``--shutdown-watch-termination-grace-period`` says;
* ``http-shutdown-not-awaited`` (kubernetes/kubernetes#72970): ``run_with_context`` returns as
  soon as the HTTP server was told to stop, without waiting for its ``Shutdown`` to finish, so
  a response still being written is cut off when the process exits.

They are lifecycle variants (``kind = "lifecycle"``) like those of :mod:`.lifecycle`, but not
among the sixteen of :data:`genericserver.testing.variants.VARIANTS` that the fuzzers are
measured against: the invariants catch the first three, and nothing but a check written for it
catches the fourth - which is what its lab is about.
"""

from __future__ import annotations

from typing import Any, Callable

from genericserver import klog
from genericserver import runtime as rt
from genericserver.genericapiserver import GenericAPIServer, PreparedGenericAPIServer
from genericserver.secure_serving import SecureServingInfo
from genericserver.testing.variants import Variant


class ReadyzRedTooLate(Variant):
    """The readyz shutdown check waits for AfterShutdownDelayDuration instead of ShutdownInitiated:
    the load balancers' window (the delay) is over before they can see the red /readyz."""

    name = "readyz-red-too-late"
    story = "/readyz turns red only when the shutdown delay ends, so load balancers notice the shutdown too late"
    breaks = "GenericAPIServer.prepare_run (the signal the readyz shutdown check watches)"
    bug_class = "a step ordered by the wrong signal"
    kind = "lifecycle"

    @staticmethod
    def prepare_run(self: GenericAPIServer) -> PreparedGenericAPIServer:
        if self.delegation_target is not None:
            self.delegation_target.prepare_run()
        self.health.install_healthz(self.handler.non_go_restful_mux)
        self.health.install_livez(self.handler.non_go_restful_mux)
        # the bug: red from the end of the delay, when it should be red from its start
        self.health.add_readyz_shutdown_check(self.lifecycle_signals.after_shutdown_delay_duration.signaled())
        self.health.install_readyz(self.handler.non_go_restful_mux, self.lifecycle_signals.has_been_ready.signal)
        return PreparedGenericAPIServer(self)

    def patches(self) -> list[tuple[Any, str, Any]]:
        return [(GenericAPIServer, "prepare_run", self.prepare_run)]


class NoShutdownDelay(Variant):
    """``delayed-stop`` ignores ``--shutdown-delay-duration``: the server stops accepting requests
    the moment SIGTERM arrives, while the endpoints and kube-proxy still send it traffic."""

    name = "no-shutdown-delay"
    story = "the shutdown delay is skipped: the server stops accepting the moment it is told to stop"
    breaks = "PreparedGenericAPIServer._delayed_stop"
    bug_class = "a wait that is left out"
    kind = "lifecycle"

    @staticmethod
    def _delayed_stop(self: PreparedGenericAPIServer, stop_ch: rt.Event) -> None:
        signals = self.server.lifecycle_signals
        try:
            stop_ch.wait()
            signals.shutdown_initiated.signal()
            klog.v(1).info_s("[graceful-termination] shutdown event", name=signals.shutdown_initiated.name)
            # the bug: no rt.sleep(self.server.shutdown_delay_duration) here
        finally:
            klog.v(1).info_s("[graceful-termination] shutdown event", name=signals.after_shutdown_delay_duration.name)
            signals.after_shutdown_delay_duration.signal()

    def patches(self) -> list[tuple[Any, str, Any]]:
        return [(PreparedGenericAPIServer, "_delayed_stop", self._delayed_stop)]


class WatchesNotDrained(Variant):
    """``drain-watches`` does not wait for the watch wait group, even with a grace period:
    InFlightRequestsDrained (and the audit flush, and the HTTP server's stop in retry-after
    mode) come while watches are still open."""

    name = "watches-not-drained"
    story = "the drain does not wait for watches, so InFlightRequestsDrained fires while watches are still open"
    breaks = "PreparedGenericAPIServer._drain_watches"
    bug_class = "a wait that is left out"
    kind = "lifecycle"

    @staticmethod
    def _drain_watches(self: PreparedGenericAPIServer, drained: rt.Event) -> None:
        try:
            self.server.lifecycle_signals.not_accepting_new_request.signaled().wait()
            # the bug: whatever the grace period, nobody waits for the watch wait group
        finally:
            drained.set()

    def patches(self) -> list[tuple[Any, str, Any]]:
        return [(PreparedGenericAPIServer, "_drain_watches", self._drain_watches)]


class HTTPShutdownNotAwaited(Variant):
    """The *stopped* event ``SecureServingInfo.serve`` returns is set when the server is told to
    stop, not when its ``shutdown`` returned: ``run_with_context`` returns while connections are
    still being served, and a process that exits then cuts their responses off."""

    name = "http-shutdown-not-awaited"
    story = "run_with_context returns without waiting for the HTTP server's shutdown, cutting off responses still being written"
    breaks = "secure_serving.SecureServingInfo.serve (the stopped event)"
    bug_class = "a release announced before the work is done"
    kind = "lifecycle"

    def patches(self) -> list[tuple[Any, str, Any]]:
        real_serve = vars(SecureServingInfo)["serve"]

        def serve(info: SecureServingInfo, handler: Callable, shutdown_timeout: float, stop_ch: rt.Event) -> tuple[rt.Event, rt.Event]:
            _stopped, listener_stopped = real_serve(info, handler, shutdown_timeout, stop_ch)
            told_to_stop = rt.event("server-told-to-stop")

            def announce() -> None:
                stop_ch.wait()
                told_to_stop.set()  # the bug: the shutdown has only begun

            rt.go(announce, name="http-server-shutdown-not-awaited")
            return told_to_stop, listener_stopped

        return [(SecureServingInfo, "serve", serve)]


HISTORY_VARIANTS: tuple[type[Variant], ...] = (ReadyzRedTooLate, NoShutdownDelay, WatchesNotDrained, HTTPShutdownNotAwaited)

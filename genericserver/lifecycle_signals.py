"""Port of k8s.io/apiserver/pkg/server/lifecycle_signals.go (v1.36.0).

The generic apiserver coordinates its shutdown through eight one-shot signals. Each is a
named closed-once channel; here a :class:`LifecycleSignal` wraps a runtime event.

Expected order (see walkthrough.md for the full timeline):
ShutdownInitiated -> AfterShutdownDelayDuration; PreShutdownHooksStopped (in parallel);
both -> NotAcceptingNewRequest -> InFlightRequestsDrained; HTTPServerStoppedListening before
InFlightRequestsDrained by default, after it with ShutdownSendRetryAfter. HasBeenReady and
MuxAndDiscoveryComplete are about start-up.

Go tests replace six signals with recording wrappers; here nothing is replaced. Instead a
signal accepts *observers*, called once, in the signalling goroutine, just before the event
fires, with the signal and the runtime time. Observers can record the order or hold the
signal back while a test step runs (the Go test's ``signalInterceptingTestStep``).
"""

from __future__ import annotations

from typing import Callable, Iterator

from genericserver import runtime as rt

Observer = Callable[["LifecycleSignal", float], None]

# Field order of Go's lifecycleSignals struct; each signal's name is its field name.
SIGNAL_NAMES = (
    "ShutdownInitiated",
    "AfterShutdownDelayDuration",
    "PreShutdownHooksStopped",
    "NotAcceptingNewRequest",
    "InFlightRequestsDrained",
    "HTTPServerStoppedListening",
    "HasBeenReady",
    "MuxAndDiscoveryComplete",
)


class LifecycleSignal:
    """One lifecycle event: ``signal()`` fires it once; ``signaled()`` is the event to wait on."""

    def __init__(self, name: str):
        self._name = name
        self._event = rt.event(name)
        self._lock = rt.lock()
        self._fired = False
        self._once = rt.once()
        self._observers: list[Observer] = []

    @property
    def name(self) -> str:
        return self._name

    def signal(self) -> None:
        """Mark the event as happened. Idempotent: only the first call notifies and fires, and
        (as with Go's ``sync.Once``) no call returns before the event is set."""
        self._once.do(self._fire)

    def _fire(self) -> None:
        with self._lock:
            self._fired = True
            observers = list(self._observers)
        try:
            at = rt.now()
            for observe in observers:
                observe(self, at)
        finally:
            # an observer that raises must not swallow the signal: waiters would hang forever
            self._event.set()

    def signaled(self) -> rt.Event:
        """The same event on every call; it is set once the signal fired and stays set."""
        return self._event

    def is_signaled(self) -> bool:
        return self._event.is_set()

    def observe(self, fn: Observer) -> None:
        """Call ``fn(signal, now)`` right before this signal fires (not if it already has)."""
        with self._lock:
            self._observers.append(fn)

    def __repr__(self) -> str:
        return f"<LifecycleSignal {self._name} {'fired' if self.is_signaled() else 'pending'}>"


class LifecycleSignals:
    """The eight signals of v1.36.0, as snake_case attributes named with the Go strings."""

    def __init__(self) -> None:
        self.shutdown_initiated = LifecycleSignal("ShutdownInitiated")
        self.after_shutdown_delay_duration = LifecycleSignal("AfterShutdownDelayDuration")
        self.pre_shutdown_hooks_stopped = LifecycleSignal("PreShutdownHooksStopped")
        self.not_accepting_new_request = LifecycleSignal("NotAcceptingNewRequest")
        self.in_flight_requests_drained = LifecycleSignal("InFlightRequestsDrained")
        self.http_server_stopped_listening = LifecycleSignal("HTTPServerStoppedListening")
        self.has_been_ready = LifecycleSignal("HasBeenReady")
        self.mux_and_discovery_complete = LifecycleSignal("MuxAndDiscoveryComplete")

    def __iter__(self) -> Iterator[LifecycleSignal]:
        return iter(
            (
                self.shutdown_initiated,
                self.after_shutdown_delay_duration,
                self.pre_shutdown_hooks_stopped,
                self.not_accepting_new_request,
                self.in_flight_requests_drained,
                self.http_server_stopped_listening,
                self.has_been_ready,
                self.mux_and_discovery_complete,
            )
        )

    def by_name(self, name: str) -> LifecycleSignal:
        for sig in self:
            if sig.name == name:
                return sig
        raise KeyError(name)

    def shutting_down(self) -> rt.Event:
        """What watch handlers wait on (``request.ServerShutdownSignal``): NotAcceptingNewRequest."""
        return self.not_accepting_new_request.signaled()

    def observe(self, fn: Observer) -> None:
        """Observe every signal's firing."""
        for sig in self:
            sig.observe(fn)


def new_lifecycle_signals() -> LifecycleSignals:
    return LifecycleSignals()


class SignalRecorder:
    """Records (name, runtime time) of each signal fired, in firing order."""

    def __init__(self, signals: LifecycleSignals):
        self._lock = rt.lock()
        self.fired: list[tuple[str, float]] = []
        signals.observe(self._record)

    def _record(self, sig: LifecycleSignal, at: float) -> None:
        with self._lock:
            self.fired.append((sig.name, at))

    def names(self) -> list[str]:
        with self._lock:
            return [n for n, _ in self.fired]

"""Tests of genericserver/lifecycle_signals.py: the eight one-shot shutdown signals.

A signal fires once and stays fired; ``signaled()`` is one event for its whole life; observers
run exactly once, in the signalling goroutine, before any waiter can see the event.
"""

from __future__ import annotations

import pytest

from genericserver import runtime as rt
from genericserver.lifecycle_signals import (
    SIGNAL_NAMES,
    LifecycleSignal,
    LifecycleSignals,
    SignalRecorder,
    new_lifecycle_signals,
)
from genericserver.testing.sim import Simulation

JOIN = 5.0

GO_ORDER = [
    "ShutdownInitiated",
    "AfterShutdownDelayDuration",
    "PreShutdownHooksStopped",
    "NotAcceptingNewRequest",
    "InFlightRequestsDrained",
    "HTTPServerStoppedListening",
    "HasBeenReady",
    "MuxAndDiscoveryComplete",
]

ATTRIBUTES = [
    "shutdown_initiated",
    "after_shutdown_delay_duration",
    "pre_shutdown_hooks_stopped",
    "not_accepting_new_request",
    "in_flight_requests_drained",
    "http_server_stopped_listening",
    "has_been_ready",
    "mux_and_discovery_complete",
]


def test_the_eight_signals_in_go_order():
    signals = new_lifecycle_signals()
    assert isinstance(signals, LifecycleSignals)
    assert [s.name for s in signals] == GO_ORDER
    assert list(SIGNAL_NAMES) == GO_ORDER


@pytest.mark.parametrize("attribute,name", list(zip(ATTRIBUTES, GO_ORDER)), ids=GO_ORDER)
def test_each_attribute_carries_its_go_name(attribute, name):
    signals = new_lifecycle_signals()
    sig = getattr(signals, attribute)
    assert sig.name == name
    assert signals.by_name(name) is sig
    assert sig.signaled().name == name


def test_by_name_rejects_unknown_names():
    with pytest.raises(KeyError):
        new_lifecycle_signals().by_name("ShuttingDown")


def test_signal_fires_once_and_stays_fired():
    sig = LifecycleSignal("ShutdownInitiated")
    calls = []
    sig.observe(lambda s, at: calls.append(s.name))
    ev = sig.signaled()
    assert not ev.is_set() and not sig.is_signaled()
    sig.signal()
    sig.signal()
    sig.signal()
    assert calls == ["ShutdownInitiated"]
    assert ev.is_set() and sig.is_signaled()
    assert sig.signaled() is ev
    assert ev.wait(0)


def test_signaled_returns_the_same_event_before_and_after():
    sig = LifecycleSignal("HasBeenReady")
    before = [sig.signaled() for _ in range(3)]
    sig.signal()
    assert all(ev is before[0] for ev in before + [sig.signaled()])


def test_shutting_down_is_not_accepting_new_request():
    signals = new_lifecycle_signals()
    assert signals.shutting_down() is signals.not_accepting_new_request.signaled()
    signals.shutdown_initiated.signal()
    assert not signals.shutting_down().is_set()
    signals.not_accepting_new_request.signal()
    assert signals.shutting_down().is_set()


def test_an_observer_added_after_the_signal_fired_is_not_called():
    sig = LifecycleSignal("HasBeenReady")
    sig.signal()
    calls = []
    sig.observe(lambda s, at: calls.append(at))
    sig.signal()
    assert calls == []


def test_observers_run_before_any_waiter_sees_the_event():
    sig = LifecycleSignal("NotAcceptingNewRequest")
    in_observer, release = rt.event("in-observer"), rt.event("release")
    order: list[str] = []

    def observer(s: LifecycleSignal, at: float) -> None:
        order.append("observer")
        in_observer.set()
        release.wait()  # hold the signal back, as the Go test's intercepting step does

    def waiter() -> None:
        sig.signaled().wait()
        order.append("waiter")

    sig.observe(observer)
    w = rt.go(waiter, name="waiter")
    s = rt.go(sig.signal, name="signaller")
    assert in_observer.wait(JOIN)
    # the signal is under way but held in the observer: nobody may see it yet
    assert not sig.signaled().is_set()
    assert not sig.is_signaled()
    assert not w.done.is_set()
    assert rt.select(sig.signaled(), timeout=0) is None
    release.set()
    assert w.join(JOIN) and s.join(JOIN)
    assert order == ["observer", "waiter"]


def test_observers_get_the_signal_and_the_runtime_time():
    def main():
        signals = new_lifecycle_signals()
        seen = []
        signals.observe(lambda s, at: seen.append((s.name, at)))
        t0 = rt.now()
        signals.shutdown_initiated.signal()
        rt.sleep(70)
        signals.after_shutdown_delay_duration.signal()
        return [(n, at - t0) for n, at in seen]

    assert Simulation().run(main) == [("ShutdownInitiated", 0.0), ("AfterShutdownDelayDuration", 70.0)]


def test_signal_recorder_keeps_firing_order_and_times():
    def main():
        signals = new_lifecycle_signals()
        recorder = SignalRecorder(signals)
        t0 = rt.now()
        order = ["ShutdownInitiated", "PreShutdownHooksStopped", "AfterShutdownDelayDuration", "NotAcceptingNewRequest", "HTTPServerStoppedListening", "InFlightRequestsDrained"]
        for i, name in enumerate(order):
            signals.by_name(name).signal()
            signals.by_name(name).signal()  # repeats are not recorded
            rt.sleep(1)
        return order, recorder.names(), [(n, at - t0) for n, at in recorder.fired]

    order, names, fired = Simulation().run(main)
    assert names == order
    assert fired == [(n, float(i)) for i, n in enumerate(order)]


def test_concurrent_signals_from_many_goroutines_notify_once():
    signals = new_lifecycle_signals()
    recorder = SignalRecorder(signals)
    gs = [rt.go(signals.has_been_ready.signal, name=f"readyz-{i}") for i in range(20)]
    for g in gs:
        assert g.join(JOIN)
    assert recorder.names() == ["HasBeenReady"]
    assert signals.has_been_ready.is_signaled()


def test_signal_returns_only_once_the_event_has_fired():
    # Go's Signal uses sync.Once: no call returns before the channel is closed, even a call
    # that lost the race to a signaller still busy (here: busy in an observer)
    def main():
        sig = LifecycleSignal("HTTPServerStoppedListening")
        in_observer = rt.event("in-observer")

        def slow_observer(s: LifecycleSignal, at: float) -> None:
            in_observer.set()
            rt.sleep(1)

        sig.observe(slow_observer)
        first = rt.go(sig.signal, name="first-signaller")
        in_observer.wait()
        t0 = rt.now()
        sig.signal()
        fired_when_returned = sig.is_signaled()
        first.join()
        return fired_when_returned, rt.now() - t0

    fired_when_returned, waited = Simulation().run(main)
    assert fired_when_returned, "signal() returned while the event was still unset"
    assert waited == pytest.approx(1.0)


@pytest.mark.expect_goroutine_panic
def test_a_failing_observer_does_not_swallow_the_signal():
    sig = LifecycleSignal("InFlightRequestsDrained")

    def broken(s: LifecycleSignal, at: float) -> None:
        raise RuntimeError("observer bug")

    sig.observe(broken)
    g = rt.go(sig.signal, name="signaller")
    assert g.join(JOIN)
    assert isinstance(g.exception, RuntimeError)
    # waiters must not hang forever because a recorder failed
    assert sig.signaled().is_set()

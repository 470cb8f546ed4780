"""Tests of genericserver/apimachinery/waitgroup.py: SafeWaitGroup and the WaitGroup under it.

Ports of k8s.io/apimachinery/pkg/util/waitgroup/waitgroup_test.go (v1.36.0) plus a
Hypothesis state machine against a plain counter model, run on the simulation runtime.
"""

from __future__ import annotations

import queue
import time
from typing import Any, Callable, Optional

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from genericserver import runtime as rt
from genericserver.testing.choosers import schedules
from genericserver.testing.sim import Deadlock
from genericserver.testing.sim_machine import SimulatedMachine
from genericserver.testing.variants import variant
from genericserver.apimachinery.waitgroup import (
    ADD_AFTER_WAIT,
    AddAfterWaitError,
    NegativeCounterError,
    SafeWaitGroup,
    WaitGroup,
)

JOIN = 5.0  # generous bound for a goroutine we know is about to finish


def test_TestWaitGroup():
    wg1, wg2 = SafeWaitGroup(), SafeWaitGroup()
    n = 16
    wg1.add(n)
    wg2.add(n)
    exited: queue.Queue[int] = queue.Queue()

    def member(i: int) -> None:
        wg1.done()
        wg2.wait()
        exited.put(i)

    members = [rt.go(member, i, name=f"member-{i}") for i in range(n)]
    wg1.wait()
    for _ in range(n):
        # nobody may pass the barrier while wg2 still counts someone
        assert exited.empty(), "SafeWaitGroup released group too soon"
        wg2.done()
    assert sorted(exited.get(timeout=JOIN) for _ in range(n)) == list(range(n))
    assert all(g.join(JOIN) for g in members)


def test_TestWaitGroupAddFail():
    wg = SafeWaitGroup()
    wg.add(1)
    wg.done()
    wg.wait()
    with pytest.raises(AddAfterWaitError) as exc:
        wg.add(1)
    assert str(exc.value) == "add with positive delta after Wait is forbidden"


def test_negative_counter_raises_and_leaves_the_counter_alone():
    wg = SafeWaitGroup()
    with pytest.raises(NegativeCounterError, match="^sync: negative WaitGroup counter$"):
        wg.done()
    wg.add(2)
    with pytest.raises(NegativeCounterError):
        wg.add(-3)
    wg.done()
    wg.done()
    wg.wait()  # back at zero: returns at once


def test_zero_and_negative_deltas_are_allowed_after_wait():
    wg = SafeWaitGroup()
    wg.add(3)
    entered = _spy_on_wait(wg)
    waiter = rt.go(wg.wait, name="waiter")
    assert entered.wait(JOIN)
    with pytest.raises(AddAfterWaitError, match=f"^{ADD_AFTER_WAIT}$"):
        wg.add(1)
    wg.add(0)
    wg.add(-2)
    assert not waiter.done.is_set()
    wg.done()
    assert waiter.join(JOIN)


def test_a_positive_add_racing_wait_either_is_waited_for_or_fails():
    # the read-write lock makes "add" and "wait began" atomic with respect to each other
    for _ in range(50):
        wg = SafeWaitGroup()
        added = rt.event("added")
        outcome: list[str] = []

        def request() -> None:
            try:
                wg.add(1)
            except AddAfterWaitError:
                outcome.append("refused")
                added.set()
                return
            outcome.append("admitted")
            added.set()
            wg.done()

        g = rt.go(request, name="request")
        wg.wait()
        # wait() returned: the request was refused, or it was admitted and has finished
        assert added.wait(JOIN)
        assert outcome in (["refused"], ["admitted"])
        if outcome == ["admitted"]:
            assert g.join(JOIN)
        g.join(JOIN)


def test_inner_waitgroup_zero_event_renews_for_each_busy_period():
    wg = WaitGroup()
    assert wg.zero().is_set()
    wg.add(1)
    first = wg.zero()
    assert not first.is_set()
    assert wg.zero() is first  # one event per busy period
    wg.done()
    assert first.is_set()
    wg.add(2)
    second = wg.zero()
    assert second is not first and not second.is_set()
    wg.add(-2)
    assert second.is_set()


def _spy_on_wait(wg: SafeWaitGroup) -> rt.Event:
    """An event set once a later ``wg.wait()`` has set its flag and reached the counter."""
    entered = rt.event("wait-entered")
    inner = wg._wg
    original = inner.zero

    def zero() -> rt.Event:
        ev = original()
        entered.set()
        return ev

    inner.zero = zero  # type: ignore[method-assign]
    return entered


class _WaitGroupEnv:
    """What the program works on inside the simulation: the group and its waiters."""

    def __init__(self) -> None:
        self.wg = SafeWaitGroup()
        self.waiters: list[rt.Goroutine] = []


def _expect(error: Optional[type], fn: Callable[..., None], *args: Any) -> None:
    if error is None:
        fn(*args)
    else:
        with pytest.raises(error):
            fn(*args)


class SafeWaitGroupMachine(SimulatedMachine):
    """SafeWaitGroup against a model: a counter and a "wait began" flag.

    Runs on the simulation runtime (see genericserver.testing.sim_machine): a waiter that never
    returns is a deadlock report naming it, not a hung test. Waiters start as goroutines;
    ``let_time_pass`` lets every goroutine run until it blocks and then checks that the waiters
    returned exactly when the counter is zero.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counter = 0
        self.waiting = False
        self.waiters = 0

    def make(self) -> _WaitGroupEnv:
        return _WaitGroupEnv()

    @initialize(n=st.integers(0, 5), schedule=schedules())
    def requests_in_flight(self, n: int, schedule: list[int]) -> None:
        self.schedule = schedule
        self.counter = n
        self.step(f"add({n})", lambda env: env.wg.add(n))

    @rule(delta=st.integers(-2, 3))
    def add(self, delta: int) -> None:
        error: Optional[type] = None
        if self.waiting and delta > 0:
            error = AddAfterWaitError
        elif self.counter + delta < 0:
            error = NegativeCounterError
        else:
            self.counter += delta
        self.step(f"add({delta})", lambda env: _expect(error, env.wg.add, delta))

    @rule()
    def done(self) -> None:
        error = NegativeCounterError if self.counter == 0 else None
        self.counter = max(self.counter - 1, 0)
        self.step("done()", lambda env: _expect(error, env.wg.done))

    @rule()
    def start_wait(self) -> None:
        name = f"waiter-{self.waiters}"
        self.waiters += 1
        self.waiting = True

        def start(env: _WaitGroupEnv) -> None:
            # go on once the waiter flipped the flag (the write side of the lock is released):
            # from then on adds must fail; the waiter itself may still be on its way to the counter
            flipped = rt.event(f"{name}-flipped")
            mu = env.wg._mu
            unlock = mu.unlock

            def spy() -> None:
                unlock()
                del mu.unlock  # type: ignore[attr-defined]
                flipped.set()

            mu.unlock = spy  # type: ignore[method-assign]
            env.waiters.append(rt.go(env.wg.wait, name=name))
            flipped.wait()

        self.step("go wait()", start)

    @precondition(lambda self: self.counter == 0)
    @rule()
    def wait_at_zero_returns_at_once(self) -> None:
        self.waiting = True
        self.step("wait() at zero", lambda env: env.wg.wait())

    @rule()
    def let_time_pass(self) -> None:
        counter = self.counter
        self.step("let time pass", lambda env: self.check_waiters(env, counter))

    @staticmethod
    def check_waiters(env: _WaitGroupEnv, counter: int) -> None:
        rt.sleep(1.0)  # every other goroutine runs until it blocks
        for g in env.waiters:
            if counter == 0:
                g.join()  # a waiter stuck here is the simulation's deadlock report, by name
            else:
                assert not g.done.is_set(), f"{g.name} returned with {counter} in flight"

    def finish(self, env: _WaitGroupEnv) -> None:
        self.check_waiters(env, self.counter)
        if self.counter:
            env.wg.add(-self.counter)
            for g in env.waiters:
                g.join()


TestSafeWaitGroupMachine = SafeWaitGroupMachine.TestCase


def _lost_wake_up_program(schedule: list[int]) -> None:
    machine = SafeWaitGroupMachine()
    machine.requests_in_flight(1, schedule)
    machine.start_wait()
    machine.done()  # preempted at the right point, the waiter is still between its check and its event
    machine.let_time_pass()
    machine.teardown()


def test_a_primitive_that_hangs_is_a_named_deadlock_report():
    _lost_wake_up_program([0, 0, 1])  # the real wait group: the waiter returns
    started = time.perf_counter()
    with variant("wait-group-lost-wake-up").switched_in(), pytest.raises(Deadlock) as err:
        _lost_wake_up_program([0, 0, 1])
    # found by the deadlock check, not by the watchdog's 10 real seconds or the test's timeout
    assert time.perf_counter() - started < 10.0
    assert err.value.blocked == {
        "main": "waiting for event 'waiter-0-done'",
        "waiter-0": "waiting for event 'waitgroup-zero'",
    }


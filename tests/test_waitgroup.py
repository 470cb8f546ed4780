"""Tests of genericserver/waitgroup.py: SafeWaitGroup and the WaitGroup under it.

Ports of k8s.io/apimachinery/pkg/util/waitgroup/waitgroup_test.go (v1.36.0) plus a
Hypothesis state machine against a plain counter model.
"""

from __future__ import annotations

import queue

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from genericserver import runtime as rt
from genericserver.waitgroup import (
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


class SafeWaitGroupMachine(RuleBasedStateMachine):
    """SafeWaitGroup against a model: a counter and a "wait began" flag."""

    def __init__(self) -> None:
        super().__init__()
        self.wg = SafeWaitGroup()
        self.counter = 0
        self.waiting = False
        self.waiters: list[rt.Goroutine] = []

    @initialize(n=st.integers(0, 5))
    def requests_in_flight(self, n: int) -> None:
        self.wg.add(n)
        self.counter = n

    @rule(delta=st.integers(-2, 3))
    def add(self, delta: int) -> None:
        if self.waiting and delta > 0:
            with pytest.raises(AddAfterWaitError, match=f"^{ADD_AFTER_WAIT}$"):
                self.wg.add(delta)
        elif self.counter + delta < 0:
            with pytest.raises(NegativeCounterError):
                self.wg.add(delta)
        else:
            self.wg.add(delta)
            self.counter += delta

    @rule()
    def done(self) -> None:
        if self.counter == 0:
            with pytest.raises(NegativeCounterError):
                self.wg.done()
        else:
            self.wg.done()
            self.counter -= 1

    @rule()
    def start_wait(self) -> None:
        inner = self.wg._wg
        inner.zero = WaitGroup.zero.__get__(inner)  # type: ignore[method-assign]  # drop older spies
        entered = _spy_on_wait(self.wg)
        self.waiters.append(rt.go(self.wg.wait, name=f"waiter-{len(self.waiters)}"))
        # once the waiter reaches the counter, its flag is set: no race with the next rule
        assert entered.wait(JOIN)
        self.waiting = True

    @precondition(lambda self: self.counter == 0)
    @rule()
    def wait_at_zero_returns_at_once(self) -> None:
        self.wg.wait()
        self.waiting = True

    @invariant()
    def waiters_return_exactly_when_the_counter_is_zero(self) -> None:
        for g in self.waiters:
            if self.counter == 0:
                assert g.join(JOIN), f"{g.name} still blocked with the counter at zero"
            else:
                assert not g.done.is_set(), f"{g.name} returned with {self.counter} in flight"

    def teardown(self) -> None:
        leftover = self.wg._wg._n  # the real counter: it may differ from the model on a failure
        if leftover:
            self.wg._wg.add(-leftover)
        for g in self.waiters:
            assert g.join(JOIN)


TestSafeWaitGroupMachine = SafeWaitGroupMachine.TestCase

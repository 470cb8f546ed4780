"""Tests of genericserver/apimachinery/waitgroup.py: RateLimitedSafeWaitGroup.

Ports of k8s.io/apimachinery/pkg/util/waitgroup/ratelimited_waitgroup_test.go (v1.36.0), the
burst-of-one case on the simulation runtime's virtual clock, and a Hypothesis state machine
against a plain counter model, run on the simulation runtime.
"""

from __future__ import annotations

import time
from typing import Optional

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from genericserver import runtime as rt
from genericserver.context import context
from genericserver.context.context import CANCELED, Context
from genericserver.testing.choosers import schedules
from genericserver.testing.sim import Simulation
from genericserver.testing.sim_machine import SimulatedMachine
from genericserver.x.time.rate.rate import INF, Limiter
from genericserver.apimachinery.waitgroup import (
    ADD_AFTER_WAIT,
    NO_FACTORY,
    AddAfterWaitError,
    NegativeCounterError,
    RateLimitedSafeWaitGroup,
    RateLimiter,
    WaitGroup,
)

JOIN = 10.0  # generous bound for goroutines we know are about to finish


class Wrapper:
    """The Go test's wrapper: reads the group's count and flag under its lock."""

    def __init__(self, wg: RateLimitedSafeWaitGroup):
        self.wg = wg

    def count(self) -> int:
        with self.wg._mu:
            return self.wg._count

    def waiting(self) -> bool:
        with self.wg._mu:
            return self.wg._wait


class LimiterWrapper:
    """Counts ``wait`` calls and delegates to a real limiter when one is set."""

    def __init__(self) -> None:
        self.delegate: Optional[Limiter] = None
        self._lock = rt.lock()
        self._invoked = 0
        self.contexts: list[Context] = []

    def invoked(self) -> int:
        with self._lock:
            return self._invoked

    def wait(self, ctx: Context) -> None:
        with self._lock:
            self._invoked += 1
            self.contexts.append(ctx)
        if self.delegate is not None:
            try:
                self.delegate.wait(ctx)
            except Exception:
                pass  # the Go wrapper ignores its delegate's error too


def run_rate_limited_safe_wait_group() -> None:
    """TestRateLimitedSafeWaitGroup, written against the runtime so either runtime can run it."""
    limiter = LimiterWrapper()
    cancel_invoked = 0
    factory_called = rt.event("factory-called")
    count_got: list[int] = []

    def new_rate_limiter(count: int) -> tuple[RateLimiter, Context, context.CancelFunc]:
        count_got.append(count)
        grace = 2
        limiter.delegate = Limiter(count // grace, 20)  # Go: count / int(grace.Seconds())
        factory_called.set()
        return limiter, context.background(), cancel

    def cancel() -> None:
        nonlocal cancel_invoked
        cancel_invoked += 1

    group = RateLimitedSafeWaitGroup()
    group._limiter = limiter  # set before wait(), to prove done() ignores it until then
    target = Wrapper(group)

    n1, n2 = 100, 101  # n1 finish before wait(); n2 are still in flight when it begins
    n1_done, n2_before_wait, n2_done = WaitGroup(), WaitGroup(), WaitGroup()
    start, blocked = rt.event("start"), rt.event("blocked")
    goroutines = []

    def quick() -> None:
        start.wait()
        group.add(1)
        group.done()
        n1_done.done()

    def slow() -> None:
        start.wait()
        group.add(1)
        n2_before_wait.done()
        blocked.wait()
        group.done()
        n2_done.done()

    n1_done.add(n1)
    goroutines += [rt.go(quick, name=f"n1-{i}") for i in range(n1)]
    n2_before_wait.add(n2)
    n2_done.add(n2)
    goroutines += [rt.go(slow, name=f"n2-{i}") for i in range(n2)]

    assert target.count() == 0
    start.set()
    n1_done.wait()
    assert limiter.invoked() == 0, "the limiter was used before wait()"
    n2_before_wait.wait()
    assert target.count() == n2

    result: list[tuple[int, int, Optional[Exception]]] = []
    waiter = rt.go(lambda: result.append(group.wait(new_rate_limiter)), name="waiter")

    # the factory runs under the group's lock and the flag flips before the lock is released
    assert factory_called.wait(JOIN)
    assert target.waiting(), "expected to be in waiting"
    with pytest.raises(AddAfterWaitError, match=ADD_AFTER_WAIT):
        group.add(1)
    assert count_got == [n2]

    blocked.set()
    n2_done.wait()
    assert limiter.invoked() == n2
    assert all(ctx is limiter.contexts[0] for ctx in limiter.contexts)

    assert waiter.join(JOIN)
    for g in goroutines:
        assert g.join(JOIN)
    assert target.count() == 0
    assert result == [(n2, 0, None)]
    assert cancel_invoked == 1


def test_TestRateLimitedSafeWaitGroup():
    # 101 done() calls at 50/s with a burst of 20: about 1.6 s of real time
    run_rate_limited_safe_wait_group()


def test_TestRateLimitedSafeWaitGroup_on_virtual_time():
    # the same steps, one goroutine at a time: the 81 tokens beyond the burst take 1.62 s
    def main():
        t0 = rt.now()
        run_rate_limited_safe_wait_group()
        return rt.now() - t0

    assert Simulation().run(main) == pytest.approx(81 / 50)


def test_TestRateLimitedSafeWaitGroupWithHardTimeout():
    group = RateLimitedSafeWaitGroup()
    target = Wrapper(group)
    n = 10
    adders = [rt.go(group.add, 1, name=f"adder-{i}") for i in range(n)]
    for g in adders:
        assert g.join(JOIN)
    assert target.count() == n

    ctx, cancel = context.with_cancel(context.background())
    cancel()
    active_at, active_now, err = group.wait(lambda count: (None, ctx, cancel))
    assert active_at == n
    assert active_now == n
    assert err is CANCELED


def test_TestRateLimitedSafeWaitGroupWithBurstOfOne():
    n, grace = 200, 5

    def main():
        group = RateLimitedSafeWaitGroup()
        added = WaitGroup()
        added.add(n)

        def adder() -> None:
            group.add(1)
            added.done()

        for i in range(n):
            rt.go(adder, name=f"adder-{i}")
        added.wait()

        waiting = rt.event("waiting")
        left = WaitGroup()
        left.add(n)

        def leaver() -> None:
            waiting.wait()
            group.done()
            left.done()

        for i in range(n):
            rt.go(leaver, name=f"leaver-{i}")

        def factory(count: int):
            # no deadline: wait() lasts exactly as long as the limiter paces the leavers
            waiting.set()  # Go closes the gate as the factory returns; done() needs the lock anyway
            return Limiter(n // grace, 1), context.background(), lambda: None

        t0 = rt.now()
        result = group.wait(factory)
        took = rt.now() - t0
        left.wait()
        return result, took

    started = time.monotonic()
    result, took = Simulation().run(main)
    real = time.monotonic() - started
    assert result == (n, 0, None)
    interval = 1 / (n / grace)  # 25 ms between tokens at 40/s
    # the first done() has the one token of the burst, the other 199 are paced: 4.975 s
    assert (n - 1) * interval - 1e-9 <= took <= grace + interval
    # paced on the real clock, the leavers alone would take (n - 1) intervals of real time; the
    # bound is that, not a speed (a machine slowed forty times by strace took 2.8 s)
    assert real < (n - 1) * interval, f"paced on real time: took {real:.2f}s"


def test_the_tail_of_a_drain_is_released_at_once_near_the_deadline():
    # the apiserver's factory shape: burst 1 and a context ending at the grace period;
    # a done() whose token would come after the deadline goes through at once
    n = 50

    def main():
        group = RateLimitedSafeWaitGroup()
        group.add(n)
        gate = rt.event("gate")
        left_at: list[float] = []

        def leaver() -> None:
            gate.wait()
            group.done()
            left_at.append(rt.now())

        leavers = [rt.go(leaver, name=f"leaver-{i}") for i in range(n)]

        def factory(count: int):
            ctx, cancel = context.with_timeout(context.background(), 1.05)
            gate.set()
            return Limiter(10, 1), ctx, cancel

        t0 = rt.now()
        result = group.wait(factory)
        took = rt.now() - t0
        for g in leavers:
            g.join()
        return result, took, sorted(t - t0 for t in left_at)

    result, took, left_at = Simulation().run(main)
    assert result == (n, 0, None)
    assert took == pytest.approx(1.0)
    paced = [0.1 * i for i in range(11)]  # tokens at 0, 0.1, ... 1.0, all before 1.05
    assert left_at == pytest.approx([0.0] * (n - 11) + paced)


def test_a_drain_still_running_at_the_deadline_reports_deadline_exceeded():
    def main():
        group = RateLimitedSafeWaitGroup()
        group.add(3)
        group.done()  # not rate limited: wait() has not begun

        def factory(count: int):
            ctx, cancel = context.with_timeout(context.background(), 2)
            return Limiter(INF, 1), ctx, cancel

        t0 = rt.now()
        result = group.wait(factory)
        took = rt.now() - t0
        group.add(-2)  # the stragglers leave later; a negative delta is still allowed
        return result, took

    result, took = Simulation().run(main)
    assert result == (2, 2, context.DEADLINE_EXCEEDED)
    assert took == pytest.approx(2.0)


def test_wait_without_a_factory_fails_and_does_not_start_waiting():
    group = RateLimitedSafeWaitGroup()
    group.add(1)
    before, after, err = group.wait(None)
    assert (before, after) == (0, 0)
    assert isinstance(err, Exception) and str(err) == NO_FACTORY == "rate limiter factory must be specified"
    assert not Wrapper(group).waiting()
    group.add(1)  # still accepting
    assert Wrapper(group).count() == 2


def test_the_factory_is_called_even_with_nothing_in_flight():
    calls: list[int] = []
    cancels: list[int] = []

    def factory(count: int):
        calls.append(count)
        return Limiter(INF, 1), context.background(), lambda: cancels.append(1)

    assert RateLimitedSafeWaitGroup().wait(factory) == (0, 0, None)
    assert calls == [0] and cancels == [1]


def test_done_below_zero_raises():
    group = RateLimitedSafeWaitGroup()
    with pytest.raises(NegativeCounterError):
        group.done()
    group.add(1)
    with pytest.raises(NegativeCounterError):
        group.add(-2)
    group.add(-1)
    assert Wrapper(group).count() == 0


class CountingLimiter:
    """Never blocks; remembers every context it was asked to wait with."""

    def __init__(self) -> None:
        self.contexts: list[Context] = []

    def wait(self, ctx: Context) -> None:
        self.contexts.append(ctx)


class _GroupEnv:
    """What the program works on inside the simulation: the group, its limiter and the waiter."""

    def __init__(self) -> None:
        self.group = RateLimitedSafeWaitGroup()
        self.limiter = CountingLimiter()
        self.ctx, self.cancel = context.with_cancel(context.background())
        self.factory_counts: list[int] = []
        self.cancels = 0
        self.result: list[tuple] = []
        self.waiter: Optional[rt.Goroutine] = None

    def factory(self, count: int):
        self.factory_counts.append(count)
        return self.limiter, self.ctx, self.count_cancel

    def count_cancel(self) -> None:
        self.cancels += 1


def _expect(error: Optional[type], fn, *args) -> None:  # type: ignore[no-untyped-def]
    if error is None:
        fn(*args)
    else:
        with pytest.raises(error):
            fn(*args)


class RateLimitedSafeWaitGroupMachine(SimulatedMachine):
    """RateLimitedSafeWaitGroup against a model: counter, wait flag, limiter calls, result.

    Runs on the simulation runtime (genericserver.testing.sim_machine): a wait() that never
    returns is a deadlock report naming it. ``let_time_pass`` lets every goroutine run until it
    blocks, then checks the model against the group.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counter = 0
        self.waiting = False
        self.limited_dones = 0
        self.count_at_wait: Optional[int] = None
        self.expected_result: Optional[tuple] = None

    def make(self) -> _GroupEnv:
        return _GroupEnv()

    @initialize(n=st.integers(0, 5), schedule=schedules())
    def requests_in_flight(self, n: int, schedule: list[int]) -> None:
        self.schedule = schedule
        self.counter = n
        self.step(f"add({n})", lambda env: env.group.add(n))

    @rule(delta=st.integers(-2, 3))
    def add(self, delta: int) -> None:
        error: Optional[type] = None
        if self.waiting and delta > 0:
            error = AddAfterWaitError
        elif self.counter + delta < 0:
            error = NegativeCounterError
        else:
            self.counter += delta
            self._maybe_drained()
        self.step(f"add({delta})", lambda env: _expect(error, env.group.add, delta))

    @rule()
    def done(self) -> None:
        if self.counter == 0:
            self.step("done()", lambda env: _expect(NegativeCounterError, env.group.done))
            return
        self.counter -= 1
        if self.waiting:
            self.limited_dones += 1
        self._maybe_drained()
        self.step("done()", lambda env: env.group.done())

    @rule()
    def wait_without_factory(self) -> None:
        def call(env: _GroupEnv) -> None:
            assert env.group.wait(None)[:2] == (0, 0)

        self.step("wait(None)", call)

    @precondition(lambda self: not self.waiting)
    @rule()
    def start_wait(self) -> None:
        self.waiting = True
        self.count_at_wait = self.counter
        self._maybe_drained()

        def start(env: _GroupEnv) -> None:
            called = rt.event("factory-called")

            def traced(count: int):
                out = env.factory(count)
                called.set()
                return out

            env.waiter = rt.go(lambda: env.result.append(env.group.wait(traced)), name="waiter")
            # the flag flips under the lock the factory ran under: no race with the next step
            called.wait()

        self.step("go wait(factory)", start)

    @precondition(lambda self: self.waiting and self.expected_result is None)
    @rule()
    def hard_stop(self) -> None:
        self.expected_result = (self.count_at_wait, self.counter, CANCELED)

        def stop(env: _GroupEnv) -> None:
            env.cancel()
            # wait() reads the count after the stop: let it return before the next done()
            assert env.waiter is not None
            env.waiter.join()

        self.step("hard stop", stop)

    def _maybe_drained(self) -> None:
        if self.waiting and self.expected_result is None and self.counter == 0:
            self.expected_result = (self.count_at_wait, 0, None)

    @rule()
    def let_time_pass(self) -> None:
        model = (self.counter, self.waiting, self.limited_dones, self.count_at_wait, self.expected_result)
        self.step("let time pass", lambda env: self.check(env, *model))

    @staticmethod
    def check(env: _GroupEnv, counter: int, waiting: bool, limited: int, count_at_wait: Optional[int],
              expected: Optional[tuple]) -> None:
        rt.sleep(1.0)  # every other goroutine runs until it blocks
        if env.waiter is not None:
            if expected is None:
                assert not env.waiter.done.is_set(), f"wait() returned early: {env.result}"
            else:
                env.waiter.join()  # one that never returns is the simulation's deadlock report
                assert env.result == [expected]
                assert env.cancels == 1
        assert len(env.limiter.contexts) == limited, "done() is rate limited only after wait() began"
        assert all(ctx is env.ctx for ctx in env.limiter.contexts)
        assert env.factory_counts == ([] if count_at_wait is None else [count_at_wait])
        assert Wrapper(env.group).count() == counter
        assert Wrapper(env.group).waiting() == waiting

    def finish(self, env: _GroupEnv) -> None:
        self.check(env, self.counter, self.waiting, self.limited_dones, self.count_at_wait, self.expected_result)
        env.cancel()
        if env.waiter is not None:
            env.waiter.join()


TestRateLimitedSafeWaitGroupMachine = RateLimitedSafeWaitGroupMachine.TestCase


# -- the count drops when done() starts, not when its token comes (kubernetes#114925) -------------


def _leave_during_the_drain() -> list[tuple[float, str, object]]:
    """Three watches leave right after the drain began, with a limiter that admits one a
    second (burst 1), and the hard stop at 1.5 s: each step's count and counter, and what
    wait() returned, on the virtual clock."""
    steps: list[tuple[float, str, object]] = []

    def main() -> None:
        group = RateLimitedSafeWaitGroup()
        probe = Wrapper(group)
        group.add(3)
        stop_ctx, stop = context.with_cancel(context.background())
        result: list = []
        waiter = rt.go(lambda: result.append(group.wait(lambda n: (Limiter(1, 1), stop_ctx, lambda: None))), name="drain")
        rt.sleep(0.1)
        leavers = [rt.go(group.done, name=f"watch-{i}") for i in range(3)]
        for at in (0.2, 1.2):  # the first left at once; the second at 1 s; the third is parked
            rt.sleep(at - rt.now())
            steps.append((at, "count, counter", (probe.count(), group._wg._n)))
        rt.sleep(1.5 - rt.now())
        stop()  # the grace period ends: the third watch is still waiting for its token
        waiter.done.wait()
        steps.append((rt.now(), "wait returned", result[0][:2] + (type(result[0][2]).__name__,)))
        for g in leavers:
            g.done.wait()

    Simulation().run(main)
    return steps


def test_the_counts_wait_reports_are_gos_step_by_step():
    assert _leave_during_the_drain() == [
        (0.2, "count, counter", (0, 2)),  # all three began to leave: none counts; two hold the group
        (1.2, "count, counter", (0, 1)),  # the second got its token at 1 s
        (1.5, "wait returned", (3, 0, "Canceled")),  # three when the drain began, none after
    ]


def test_the_count_after_the_limiter_variant_reports_the_parked_watch_as_active():
    from genericserver.testing.variants import VARIANTS

    with VARIANTS["rate-limited-count-after-limiter"]().switched_in():
        steps = _leave_during_the_drain()
    assert steps[0] == (0.2, "count, counter", (2, 2))
    assert steps[-1] == (1.5, "wait returned", (3, 1, "Canceled"))

"""Tests of genericserver/x/time/rate/rate.py, the token bucket behind RateLimitedSafeWaitGroup.

The arithmetic is checked at explicit times (``reserve_n``/``tokens_at``) and against an
independent model (GCRA); ``wait`` is checked on the simulation runtime's virtual clock, where
a second of waiting costs nothing and the times are exact.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver import runtime as rt
from genericserver.context import context
from genericserver.context.context import CANCELED, DEADLINE_EXCEEDED
from genericserver.testing.sim import Simulation
from genericserver.x.time.rate.rate import INF, INF_DURATION, Limiter, RateLimitError

EPS = 1e-9


def simulate(main):
    """Run ``main`` as the simulation's main goroutine and return what it returns."""
    return Simulation().run(main)


# -- arithmetic at explicit times -----------------------------------------------------------


def test_starts_full_then_refills_at_the_rate():
    lim = Limiter(2, 3)
    assert lim.limit() == 2 and lim.burst() == 3
    assert lim.tokens_at(100.0) == 3
    acts = [lim.reserve_n(100.0, 1).time_to_act for _ in range(5)]
    assert acts == pytest.approx([100.0, 100.0, 100.0, 100.5, 101.0])
    assert lim.tokens_at(100.0) == pytest.approx(-2)
    assert lim.tokens_at(101.0) == pytest.approx(0)
    assert lim.tokens_at(1000.0) == 3  # refilling stops at the burst


def test_a_reservation_delay_counts_from_the_given_time():
    lim = Limiter(10, 1)
    lim.reserve_n(0.0, 1)
    r = lim.reserve_n(0.0, 1)
    assert r.ok
    assert r.delay_from(0.0) == pytest.approx(0.1)
    assert r.delay_from(0.05) == pytest.approx(0.05)
    assert r.delay_from(1.0) == 0


def test_infinite_rate_never_waits_and_ignores_the_burst():
    lim = Limiter(INF, 0)
    for _ in range(100):
        r = lim.reserve_n(5.0, 3)
        assert r.ok and r.delay_from(5.0) == 0


def test_zero_rate_allows_the_burst_once():
    lim = Limiter(0, 2)
    assert [lim.reserve_n(0.0, 1).ok for _ in range(3)] == [True, True, False]
    assert lim.reserve_n(1e6, 1).ok is False  # it never refills


def test_more_than_the_burst_is_never_ok():
    r = Limiter(1, 2).reserve_n(0.0, 3)
    assert not r.ok
    assert r.delay_from(0.0) == INF_DURATION


def test_cancelling_a_reservation_gives_its_token_back():
    lim = Limiter(1, 1)
    lim.reserve_n(0.0, 1)
    r = lim.reserve_n(0.0, 1)  # acts at 1.0
    assert lim.tokens_at(0.5) == pytest.approx(-0.5)
    r.cancel_at(0.5)
    assert lim.tokens_at(0.5) == pytest.approx(0.5)
    assert lim.reserve_n(0.5, 1).time_to_act == pytest.approx(1.0)


def test_cancelling_keeps_the_tokens_later_reservations_count_on():
    lim = Limiter(1, 1)
    lim.reserve_n(0.0, 1)
    first = lim.reserve_n(0.0, 1)  # acts at 1.0
    lim.reserve_n(0.0, 1)  # acts at 2.0, queued behind the first
    first.cancel_at(0.5)
    # the third reservation already counted the first one's token: nothing comes back
    assert lim.tokens_at(0.5) == pytest.approx(-1.5)


def test_cancelling_after_the_reservation_acted_changes_nothing():
    lim = Limiter(1, 1)
    lim.reserve_n(0.0, 1)
    r = lim.reserve_n(0.0, 1)  # acts at 1.0
    assert lim.tokens_at(1.5) == pytest.approx(0.5)
    r.cancel_at(1.5)
    assert lim.tokens_at(1.5) == pytest.approx(0.5)


def gcra(rate: float, burst: int, arrivals: list[float]) -> list[float]:
    """The same bucket as a generic cell rate algorithm: emission interval and tolerance."""
    interval, tolerance = 1 / rate, (burst - 1) / rate
    tat, acts = -math.inf, []
    for a in arrivals:
        acts.append(max(a, tat - tolerance))
        tat = max(tat, a) + interval
    return acts


@given(
    rate=st.sampled_from([0.5, 1.0, 3.0, 40.0, 200.0]),
    burst=st.integers(1, 5),
    gaps=st.lists(st.sampled_from([0.0, 0.0, 0.01, 0.1, 0.25, 1.0, 7.0]), min_size=1, max_size=40),
)
def test_reservations_match_an_independent_token_bucket_model(rate, burst, gaps):
    lim = Limiter(rate, burst)
    arrivals = [sum(gaps[: i + 1]) for i in range(len(gaps))]
    acts = [lim.reserve_n(a, 1).time_to_act for a in arrivals]
    assert acts == pytest.approx(gcra(rate, burst, arrivals), abs=1e-6)
    # never more than burst + rate * span events in any window
    for i in range(len(acts)):
        for j in range(i, len(acts)):
            assert j - i + 1 <= burst + rate * (acts[j] - acts[i]) + 1e-6


# -- wait() on virtual time ------------------------------------------------------------------


def test_wait_paces_callers_at_the_rate():
    def main():
        lim = Limiter(5, 1)
        ctx = context.background()
        t0 = rt.now()
        times = []
        for _ in range(6):
            lim.wait(ctx)
            times.append(rt.now() - t0)
        return times

    assert simulate(main) == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])


def test_wait_with_n_above_the_burst_fails():
    lim = Limiter(1, 1)
    with pytest.raises(RateLimitError, match=r"^rate: Wait\(n=2\) exceeds limiter's burst 1$"):
        lim.wait_n(context.background(), 2)
    Limiter(INF, 1).wait_n(context.background(), 2)  # the burst does not matter at INF


def test_wait_on_a_done_context_returns_its_error_and_takes_no_token():
    lim = Limiter(1, 1)
    ctx, cancel = context.with_cancel(context.background())
    cancel()
    with pytest.raises(context.Canceled) as exc:
        lim.wait(ctx)
    assert exc.value is CANCELED
    assert lim.tokens() == 1


def test_wait_fails_at_once_when_the_token_would_come_after_the_deadline():
    def main():
        lim = Limiter(1, 1)
        lim.wait(context.background())  # empties the bucket: the next token is 1 s away
        ctx, cancel = context.with_timeout(context.background(), 0.5)
        t0 = rt.now()
        try:
            with pytest.raises(RateLimitError, match=r"^rate: Wait\(n=1\) would exceed context deadline$"):
                lim.wait(ctx)
            assert rt.now() == t0, "the failure must not wait"
            assert lim.tokens() == pytest.approx(0.0), "a failed wait takes no token"
        finally:
            cancel()
        ctx, cancel = context.with_timeout(context.background(), 1.5)
        try:
            lim.wait(ctx)  # reachable before the deadline: waits for it
            return rt.now() - t0
        finally:
            cancel()

    assert simulate(main) == pytest.approx(1.0)


def test_wait_on_a_context_ending_first_returns_the_token_and_the_error():
    def main():
        lim = Limiter(1, 1)
        lim.wait(context.background())
        ctx, cancel = context.with_cancel(context.background())
        errors = []

        def waiter():
            try:
                lim.wait(ctx)
            except context.ContextError as err:
                errors.append(err)

        g = rt.go(waiter, name="waiter")
        rt.sleep(0.25)
        cancel()
        g.join()
        t_cancel = rt.now()
        assert errors == [CANCELED]
        lim.wait(context.background())  # the returned token is back by now + 0.75
        return rt.now() - t_cancel

    assert simulate(main) == pytest.approx(0.75)


def test_wait_is_cut_short_when_a_parent_context_ends():
    def main():
        lim = Limiter(1, 1)
        lim.wait(context.background())
        parent, cancel_parent = context.with_timeout(context.background(), 5)
        ctx, cancel = context.with_cancel(parent)
        t0 = rt.now()
        stopper = rt.go(lambda: (rt.sleep(0.5), cancel_parent()), name="stopper")
        try:
            with pytest.raises(context.Canceled):
                lim.wait(ctx)  # the token is due at 1.0, the deadline 5.0: it waits
            return rt.now() - t0
        finally:
            cancel()
            stopper.join()

    assert simulate(main) == pytest.approx(0.5)


def test_infinite_rate_wait_never_blocks():
    def main():
        lim = Limiter(INF, 1)
        t0 = rt.now()
        for _ in range(1000):
            lim.wait(context.background())
        return rt.now() - t0

    assert simulate(main) == 0


def test_a_context_past_its_deadline_fails_with_deadline_exceeded():
    def main():
        lim = Limiter(0.1, 1)  # a token every 10 s
        ctx, cancel = context.with_timeout(context.background(), 3)
        try:
            lim.wait(ctx)  # the first token is free
            with pytest.raises(RateLimitError):
                lim.wait(ctx)  # the next is 10 s away, the deadline 3 s
            rt.sleep(3)
            with pytest.raises(context.DeadlineExceeded) as exc:
                lim.wait(ctx)
            return exc.value
        finally:
            cancel()

    assert simulate(main) is DEADLINE_EXCEEDED


def test_wait_uses_real_time_under_the_threads_runtime():
    lim = Limiter(100, 1)
    t0 = rt.now()
    for _ in range(4):
        lim.wait(context.background())
    assert rt.now() - t0 >= 0.03 - 0.002

"""Hypothesis strategies for lincheck: scenarios of calls on each primitive, and schedules (no Go twin).

A scenario is 2-3 goroutines of 1-4 calls each (and up to two calls in a sequential ``init``),
drawn from the calls a target accepts (:data:`genericserver.testing.lincheck_targets.TARGETS`);
calls of the time-dependent ones carry small virtual delays. Everything shrinks towards fewer
calls, no delay and no preemption. Requires Hypothesis (a test dependency), imported lazily.
"""

from __future__ import annotations

from typing import Any

from genericserver.testing.lincheck import LinScenario, Op

def _ops(name: str) -> dict[str, Any]:
    """Per target: strategies of one call (for a plain goroutine), and of the init part."""
    from hypothesis import strategies as st

    op = lambda n, *args, **kw: st.just(Op(n, tuple(args), **kw))  # noqa: E731
    delays = st.sampled_from((0.0, 0.0, 0.5, 1.0))
    if name in ("WaitGroup", "SafeWaitGroup"):
        calls = st.one_of(op("add", 1), op("add", 2), op("add", -1), op("done"), op("wait"))
        return {"call": calls, "init": st.one_of(op("add", 1), op("add", 2))}
    if name == "RateLimitedSafeWaitGroup":
        # a done() a second later comes after wait() began: it takes a token (one a second, burst
        # 1), so a second one parks on the limiter; stop() at 1.5 s ends the wait while it is
        # parked, and wait() reads the count then (the drop must not wait for the token)
        calls = [Op("add", (1,)), Op("done"), Op("done", (), 1.0), Op("done", (), 1.0), Op("stop", (), 1.5)]
        return {"call": st.sampled_from(calls), "init": op("add", 1), "min_init": 2, "once": op("wait")}
    if name == "Limiter":
        return {"call": st.builds(Op, st.sampled_from(("allow", "wait")), st.just(()), delays), "init": op("allow")}
    if name == "LifecycleSignal":
        return {"call": st.sampled_from([Op(n) for n in ("signal", "wait", "is_signaled", "observed")])}
    if name == "Once":
        return {"call": st.sampled_from([Op("do"), Op("do"), Op("count")])}
    if name == "select":
        cases = st.tuples(st.integers(0, 2), st.integers(0, 2))
        return {"call": st.one_of(
            st.builds(lambda i, d: Op("set", (i,), d), st.integers(0, 2), delays),
            st.builds(lambda c: Op("select", c), cases),
            st.builds(lambda c: Op("select", c + (1.0,)), cases),
        )}
    if name == "BoundedSemaphore":
        return {"call": st.sampled_from([Op(n) for n in ("acquire", "try_acquire", "release", "taken")]),
                "init": op("acquire")}
    if name == "Context":
        return {"call": st.one_of(st.builds(lambda i: Op("cancel", (i,)), st.integers(0, 1)),
                                  st.sampled_from([Op(n) for n in ("err", "cause", "wait", "child_wait", "child_err")]))}
    if name == "AuditBuffered":
        return {"call": st.builds(lambda i: Op("process", (i,)), st.integers(0, 9)), "once": op("shutdown")}
    raise KeyError(name)


def schedules(max_size: int = 48, max_value: int = 3) -> Any:
    """Schedules for lincheck's small runs, of two shapes drawn half and half.

    *Sparse*: up to three preemptions anywhere in an otherwise unpreempted run (a bug that
    needs one goroutine stopped at one exact point). *Dense*: every entry 0 to ``max_value``,
    a random walk through the interleavings (a bug that needs a tangle of them). A history has
    a few dozen decisions, so both fit in ``max_size``. Shrinking turns entries into zeros
    ("no preemption"), drops them, and prefers the sparse shape.
    """
    from hypothesis import strategies as st

    dense = st.lists(st.integers(min_value=0, max_value=max_value), max_size=max_size)
    return st.one_of(sparse_schedules(max_size, max_value), dense)


def sparse_schedules(max_size: int = 48, max_value: int = 3) -> Any:
    """The sparse shape of :func:`schedules` alone: at most three preemptions."""
    from hypothesis import strategies as st

    point = st.tuples(st.integers(min_value=0, max_value=max_size // 2), st.integers(min_value=1, max_value=max_value))
    return st.lists(point, max_size=3).map(lambda ps: [c for gap, choice in ps for c in [0] * gap + [choice]])


def _rwlock_section() -> Any:
    from hypothesis import strategies as st

    delays = st.sampled_from((0.0, 1.0, 2.0))
    return st.builds(
        lambda write, arrive, hold: (Op("lock" if write else "rlock", (), arrive), Op("unlock" if write else "runlock", (), hold)),
        st.booleans(), delays, delays,
    )


def scenarios(name: str, max_threads: int = 3, max_calls: int = 4) -> Any:
    """Scenarios for target ``name``: 2 to ``max_threads`` goroutines of 1 to ``max_calls`` calls,
    and up to two calls in init. Where a target allows one call of a kind (``wait`` of the
    rate-limited group, the audit ``shutdown``) it goes at the end of one goroutine."""
    from hypothesis import strategies as st

    if name == "RWLock":
        sections = st.lists(_rwlock_section(), min_size=1, max_size=2).map(lambda ss: tuple(o for s in ss for o in s))
        return st.builds(LinScenario, st.lists(sections, min_size=2, max_size=max_threads).map(tuple))
    if name == "TimeoutHandoff":  # one handler goroutine puts, the caller takes (or gives up)
        put = st.builds(lambda i: Op("put", (i,)), st.integers(0, 9))
        take = st.one_of(st.just(Op("take")), st.just(Op("take")), st.just(Op("abandon")))
        return st.builds(lambda p, t: LinScenario((tuple(p), tuple(t))),
                         st.lists(put, min_size=1, max_size=max_calls), st.lists(take, min_size=1, max_size=max_calls))
    ops = _ops(name)
    thread = st.lists(ops["call"], min_size=1, max_size=max_calls).map(tuple)

    @st.composite
    def build(draw: Any) -> LinScenario:
        threads = list(draw(st.lists(thread, min_size=2, max_size=max_threads)))
        if "once" in ops:
            which = draw(st.integers(0, len(threads) - 1))
            threads[which] = threads[which][: max_calls - 1] + (draw(ops["once"]),)
        init = tuple(draw(st.lists(ops["init"], min_size=ops.get("min_init", 0), max_size=2))) if "init" in ops else ()
        return LinScenario(tuple(threads), init)

    return build()


__all__ = ["scenarios", "schedules"]

"""Tests for genericserver.testing.sim, the deterministic simulation runtime (no Go twin)."""

from __future__ import annotations

import contextvars
import sys
import threading
import time

import pytest
from hypothesis import find, given, settings

from genericserver import runtime as rt
from genericserver.context import context
from genericserver.testing import sim_threads
from genericserver.testing.sim import (
    EPOCH,
    PCT,
    Deadlock,
    Escaped,
    FirstRunnable,
    GoroutinePanic,
    Scripted,
    SeededRandom,
    Simulation,
    SimulationError,
    format_trace,
    schedules,
)

# -- scenarios --------------------------------------------------------------------------------


def workers() -> list[str]:
    """Three goroutines sharing a lock, a condition, events and timers; returns the order of steps."""
    order: list[str] = []
    lk = rt.lock()
    cond = rt.condition(lk)
    ready = rt.event("ready")
    count = [0]

    def worker(i: int) -> None:
        with lk:
            order.append(f"w{i}-in")
        rt.sleep(0.5 * i)
        with cond:
            count[0] += 1
            order.append(f"w{i}-done")
            cond.notify_all()
        if i == 2:
            ready.set()

    done = [rt.go(worker, i, name=f"worker-{i}").done for i in range(3)]
    if rt.select(ready, rt.after(10, name="timeout")) is ready:
        order.append("main-ready")
    with cond:
        while count[0] < 3:
            cond.wait()
    rt.wait_all(done)
    return order


def lost_update() -> int:
    """Two unsynchronised increments: the result is 1 only if one is preempted between read and write."""
    box = {"n": 0}

    def incr() -> None:
        rt.sleep(0)
        seen = box["n"]
        rt.sleep(0)  # the window: read and write are separate steps
        box["n"] = seen + 1

    handles = [rt.go(incr, name=f"incr-{i}") for i in range(2)]
    for h in handles:
        h.join()
    return box["n"]


def run(scenario, chooser=None, **kw):
    sim = Simulation(chooser=chooser, **kw)
    return sim.run(scenario), sim


# -- reproducibility --------------------------------------------------------------------------


def test_same_choices_give_the_identical_trace_twice():
    first_result, first = run(workers, SeededRandom(7))
    again_result, again = run(workers, SeededRandom(7))
    replay_result, replay = run(workers, Scripted(first.choices))
    assert first.choices, "the scenario must offer real decisions"
    assert first.trace == again.trace == replay.trace
    assert first.choices == again.choices == replay.choices
    assert first_result == again_result == replay_result


def test_different_choices_reach_different_orders():
    plain, _ = run(workers, FirstRunnable())
    preempted, _ = run(workers, Scripted([0, 2]))  # at main's second go(), run worker-1 at once
    assert plain[:3] == ["w0-in", "w0-done", "w1-in"]
    assert preempted[:3] == ["w1-in", "w0-in", "w0-done"]
    orders = {tuple(run(workers, SeededRandom(seed))[0]) for seed in range(20)}
    assert len(orders) >= 3


def test_trace_entries_are_step_time_name_op_tuples():
    _, sim = run(workers)
    assert [entry[0] for entry in sim.trace] == list(range(1, len(sim.trace) + 1))
    step, at, name, op = sim.trace[0]
    assert (step, at, name, op) == (1, 0.0, "main", "go 'worker-0'")
    assert all(isinstance(e, tuple) and len(e) == 4 for e in sim.trace)
    assert [t for _, t, _, _ in sim.trace] == sorted(t for _, t, _, _ in sim.trace)
    assert "worker-2" in format_trace(sim.trace)


def test_choices_record_only_decisions_with_options():
    def alone() -> float:
        for _ in range(5):
            rt.sleep(1)
        return rt.now()

    result, sim = run(alone, Scripted([1, 1, 1]))
    assert result == 5.0
    assert len(sim.trace) == 5
    assert sim.choices == []


@given(schedules())
def test_any_schedule_replays_identically(schedule):
    result, sim = run(workers, Scripted(schedule))
    again_result, again = run(workers, Scripted(schedule))
    replay_result, replay = run(workers, Scripted(sim.choices))
    assert sim.trace == again.trace == replay.trace
    assert result == again_result == replay_result
    assert sorted(result) == sorted(["w0-in", "w1-in", "w2-in", "w0-done", "w1-done", "w2-done", "main-ready"])


def test_hypothesis_shrinks_a_failing_schedule_to_one_preemption():
    def loses_update(schedule):
        return run(lost_update, Scripted(schedule))[0] == 1

    smallest = find(schedules(), loses_update, settings=settings(max_examples=500, database=None, derandomize=True))
    assert sum(1 for c in smallest if c) == 1


# -- choosers ---------------------------------------------------------------------------------


def test_pct_finds_a_depth_2_ordering_bug_within_40_runs():
    def found(chooser_for_seed) -> list[int]:
        return [seed for seed in range(40) if run(lost_update, chooser_for_seed(seed))[0] == 1]

    assert run(lost_update, FirstRunnable())[0] == 2
    assert found(lambda seed: PCT(seed, depth=1, max_steps=12)) == []  # no preemption, no bug
    assert found(lambda seed: PCT(seed, depth=2, max_steps=12)) != []


def test_scripted_zero_means_no_preemption():
    plain, plain_sim = run(workers, FirstRunnable())
    zeros, zeros_sim = run(workers, Scripted([0] * 50))
    assert plain == zeros
    assert plain_sim.trace == zeros_sim.trace


def test_scripted_rejects_negative_choices():
    with pytest.raises(ValueError):
        Scripted([0, -1])


# -- virtual time -----------------------------------------------------------------------------


def test_sleep_70_is_not_waited_on_the_real_clock():
    def shutdown_delay() -> tuple[float, float]:
        rt.sleep(70)
        fired = rt.after(30, name="after-30")
        fired.wait()
        return rt.now(), rt.wall()

    started = time.perf_counter()
    (virtual, wall), sim = run(shutdown_delay)
    assert time.perf_counter() - started < 30.0  # neither sleep (70 s, then 30 s) waited on the real clock
    assert virtual == 100.0 == sim.now()
    assert wall == EPOCH + 100.0


def test_time_starts_at_start_and_jumps_to_the_earliest_deadline():
    def sleepers() -> list[tuple[str, float]]:
        woke: list[tuple[str, float]] = []

        def sleeper(d: float) -> None:
            rt.sleep(d)
            woke.append((f"s{d:g}", rt.now()))

        hs = [rt.go(sleeper, d, name=f"sleep-{d:g}") for d in (3, 1, 2)]
        for h in hs:
            h.join()
        return woke

    woke, _ = run(sleepers, SeededRandom(1), start=1000.0)
    assert woke == [("s1", 1001.0), ("s2", 1002.0), ("s3", 1003.0)]


def test_waits_with_timeouts_expire_on_virtual_time():
    def timeouts() -> list:
        never = rt.event("never")
        lk = rt.lock()
        cond = rt.condition(lk)
        got = [never.wait(5), rt.now(), rt.select(never, timeout=2), rt.now()]
        with cond:
            got += [cond.wait(3), rt.now(), cond.wait_for(lambda: False, timeout=4), rt.now()]
        holder_has_it = rt.event("held")

        def holder() -> None:
            lk.acquire()
            holder_has_it.set()

        rt.go(holder, name="holder")
        holder_has_it.wait()
        got += [lk.acquire(timeout=1), rt.now(), lk.acquire(blocking=False)]
        return got

    got, _ = run(timeouts)
    assert got == [False, 5.0, None, 7.0, False, 10.0, False, 14.0, False, 15.0, False]


def test_a_real_pause_changes_no_outcome():
    def scenario(pause: float) -> list:
        answer = rt.event("answer")

        def slow_responder() -> None:
            time.sleep(pause)  # a person at a breakpoint: real time passes, virtual time does not
            answer.set()

        rt.go(slow_responder, name="responder")
        return [answer.wait(timeout=0.05), rt.now()]

    quick, quick_sim = run(lambda: scenario(0.0), watchdog=5.0)
    paused, paused_sim = run(lambda: scenario(0.2), watchdog=5.0)
    assert quick == paused == [True, 0.0]
    assert quick_sim.trace == paused_sim.trace


# -- failures ---------------------------------------------------------------------------------


def test_a_planted_deadlock_is_reported_with_goroutine_names():
    def lock_order_inversion() -> None:
        a, b = rt.lock(), rt.lock()
        left_has_a, right_has_b = rt.event("left-has-a"), rt.event("right-has-b")

        def left() -> None:
            with a:
                left_has_a.set()
                right_has_b.wait()
                with b:
                    pass

        def right() -> None:
            with b:
                right_has_b.set()
                left_has_a.wait()
                with a:
                    pass

        rt.go(left, name="left")
        rt.go(right, name="right")
        rt.select(rt.event("never-closed"), rt.event("also-never"))

    sim = Simulation(SeededRandom(3))
    with pytest.raises(Deadlock) as err:
        sim.run(lock_order_inversion)
    assert err.value.blocked == {
        "main": "waiting for any of events 'never-closed', 'also-never'",
        "left": "waiting for lock 'lock-2' held by goroutine 'right'",
        "right": "waiting for lock 'lock-1' held by goroutine 'left'",
    }
    message = str(err.value)
    assert message.startswith("all goroutines are asleep - deadlock!")
    assert "goroutine 'left': waiting for lock 'lock-2'" in message
    assert sorted(sim.leftover()) == ["left", "main", "right"]


def test_deadlock_on_a_condition_and_an_event():
    def scenario() -> None:
        cond = rt.condition()

        def waiter() -> None:
            with cond:
                cond.wait()

        rt.go(waiter, name="waiter")
        rt.event("go-ahead").wait()

    with pytest.raises(Deadlock) as err:
        Simulation().run(scenario)
    assert err.value.blocked == {
        "main": "waiting for event 'go-ahead'",
        "waiter": "waiting on condition 'cond-1' for a notify",
    }


def test_a_bounded_semaphore_blocks_acquirers_until_a_release_and_refuses_one_too_many():
    def scenario() -> list:
        sem = rt.bounded_semaphore(1, "slots")
        seen = [sem.acquire(blocking=False), sem.acquire(blocking=False), sem.taken()]
        rt.go(lambda: seen.append(("acquired", sem.acquire(), rt.now())), name="later")
        rt.sleep(3)
        sem.release()  # wakes the blocked acquirer, at virtual time 3
        rt.sleep(1)
        seen.append(sem.taken())
        sem.release()
        try:
            sem.release()
        except ValueError as err:
            seen.append(str(err))
        return seen

    result, _ = run(scenario)
    assert result == [True, False, 1, ("acquired", True, 3.0), 1, "Semaphore released too many times"]


def test_a_deadlock_on_a_bounded_semaphore_names_it():
    def scenario() -> None:
        sem = rt.bounded_semaphore(1, "slots")
        sem.acquire()
        rt.go(sem.acquire, name="stuck")
        sem.acquire()

    with pytest.raises(Deadlock) as err:
        Simulation().run(scenario)
    assert err.value.blocked == {
        "main": "waiting on condition 'slots-1' for a notify",
        "stuck": "waiting on condition 'slots-1' for a notify",
    }


def test_run_returns_when_the_rest_is_blocked_forever_and_lists_leftovers():
    def scenario() -> str:
        rt.go(rt.event("never").wait, name="stuck")
        rt.go(rt.sleep, 5, name="napper")
        return "done"

    result, sim = run(scenario)
    assert result == "done"
    assert sim.leftover() == ["stuck"]
    assert sim.now() == 5.0  # the napper still ran to its end


def test_a_goroutine_panic_ends_the_run():
    def scenario() -> None:
        def bad() -> None:
            raise ValueError("boom")

        rt.go(bad, name="bad-worker")
        rt.event("never").wait()

    with pytest.raises(GoroutinePanic, match="goroutine 'bad-worker' panicked: ValueError") as err:
        Simulation().run(scenario)
    assert isinstance(err.value.__cause__, ValueError)
    assert err.value.name == "bad-worker"


def test_main_exception_is_re_raised_and_result_returned():
    def failing() -> None:
        rt.sleep(1)
        raise KeyError("main failed")

    with pytest.raises(KeyError, match="main failed"):
        Simulation().run(failing)
    assert Simulation().run(lambda x: x * 2, 21) == 42


def test_a_thread_outside_the_simulation_cannot_use_its_primitives():
    def scenario() -> str:
        ev = rt.event("ev")
        caught: list[BaseException] = []

        def intruder() -> None:
            try:
                ev.set()
            except SimulationError as exc:
                caught.append(exc)

        t = threading.Thread(target=intruder, name="intruder")
        t.start()
        t.join()
        assert not ev.is_set()
        return str(caught[0])

    message, _ = run(scenario)
    assert "thread 'intruder', which the simulation does not control" in message

    sim = Simulation()
    ev = sim.event("made-outside")
    with pytest.raises(SimulationError, match="outside Simulation.run"):
        ev.set()
    with pytest.raises(SimulationError, match="runs once"):
        sim.run(lambda: None)
        sim.run(lambda: None)


def test_the_watchdog_names_a_goroutine_that_escaped_control():
    def scenario() -> None:
        back = rt.event("back")

        def escapee() -> None:
            time.sleep(0.3)  # a real sleep: nothing the simulation can see
            back.set()  # too late: the run is over; this unwinds the thread

        rt.go(escapee, name="escapee")
        back.wait()

    with pytest.raises(Escaped, match="goroutine 'escapee' escaped control: real sleep or socket"):
        Simulation(watchdog=0.05).run(scenario)


def test_the_watchdog_is_off_while_a_debugger_is_attached():
    def scenario() -> float:
        def tracer(frame, event, arg):
            return None

        frame = sys._getframe()
        sys.settrace(tracer)  # what pdb does in the stopped thread
        frame.f_trace = tracer
        try:
            time.sleep(0.4)  # "stopped at a breakpoint" for four watchdog periods
        finally:
            frame.f_trace = None
            sys.settrace(None)
        rt.sleep(3)
        return rt.now()

    assert Simulation(watchdog=0.1).run(scenario) == 3.0


def test_step_limit_stops_a_goroutine_that_ticks_forever():
    def ticker() -> None:
        while True:
            rt.sleep(1)

    def scenario() -> None:
        rt.go(ticker, name="ticker")

    sim = Simulation(max_steps=100)
    with pytest.raises(SimulationError, match="step limit reached: 100 decisions"):
        sim.run(scenario)
    assert sim.leftover() == ["ticker"]


# -- the composites and other modules under the simulation --------------------------------------


def test_after_func_runs_at_its_virtual_time_unless_stopped():
    def scenario() -> list:
        fired: list = []
        rt.after_func(5, lambda: fired.append(("kept", rt.now())), name="kept")
        timer = rt.after_func(3, lambda: fired.append(("stopped", rt.now())), name="stopped")
        rt.sleep(1)
        timer.stop()
        rt.sleep(10)
        return fired

    fired, sim = run(scenario)
    assert fired == [("kept", 5.0)]
    assert sim.leftover() == []


def test_rwlock_and_once_under_the_simulation():
    def scenario() -> list:
        rw = rt.rwlock()
        once = rt.once()
        log: list = []

        def reader(i: int) -> None:
            with rw.read_locked():
                log.append(f"r{i}+")
                rt.sleep(1)
                log.append(f"r{i}-")
            once.do(lambda: log.append("once"))

        def writer() -> None:
            with rw.write_locked():
                log.append("w+")
                rt.sleep(1)
                log.append("w-")

        hs = [rt.go(reader, 0, name="reader-0"), rt.go(writer, name="writer"), rt.go(reader, 1, name="reader-1")]
        for h in hs:
            h.join()
        return log

    for seed in range(10):
        log, _ = run(scenario, SeededRandom(seed))
        assert log.count("once") == 1
        w_in, w_out = log.index("w+"), log.index("w-")
        assert w_out == w_in + 1, log  # nothing happens inside the writer's critical section


def test_goroutine_names_are_unique_in_a_run():
    def scenario() -> list[str]:
        return [rt.go(lambda: None, name="worker").name for _ in range(3)]

    names, _ = run(scenario)
    assert names == ["worker", "worker#2", "worker#3"]


def test_context_deadlines_run_on_virtual_time():
    def scenario() -> tuple:
        ctx, cancel = context.with_timeout(context.background(), 60)
        ctx.done().wait()
        at = rt.now()
        cancel()
        return at, ctx.err()

    (at, err), sim = run(scenario)
    assert at == 60.0
    assert err is context.DEADLINE_EXCEEDED
    assert sim.leftover() == []


# -- goroutine threads are reused (genericserver.testing.sim_threads) ------------------------------


def _thread_of_each_goroutine() -> dict[str, tuple[int, str]]:
    seen: dict[str, tuple[int, str]] = {}

    def note(name: str) -> None:
        seen[name] = (threading.get_ident(), threading.current_thread().name)
        rt.sleep(0.1)

    for name in ("a", "b", "c"):
        rt.go(note, name, name=name)
    rt.sleep(1)
    return seen


def test_goroutine_threads_are_reused_from_run_to_run_and_named_after_their_goroutine():
    first, _ = run(_thread_of_each_goroutine)
    again, _ = run(_thread_of_each_goroutine)
    assert {name for _, name in first.values()} == {"sim:a", "sim:b", "sim:c"}
    assert {ident for ident, _ in first.values()} & {ident for ident, _ in again.values()}
    sim_threads.release_idle()
    assert sim_threads.idle_count() == 0


def test_a_reused_thread_gets_the_tracer_a_new_thread_would_get():
    run(_thread_of_each_goroutine)  # leaves idle threads behind
    calls: list[str] = []

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "call" and frame.f_code.co_name == "note":
            calls.append(threading.current_thread().name)
        return None

    threading.settrace(tracer)
    try:
        run(_thread_of_each_goroutine)
    finally:
        threading.settrace(None)  # type: ignore[arg-type]
    assert sorted(calls) == ["sim:a", "sim:b", "sim:c"]
    calls.clear()
    run(_thread_of_each_goroutine)  # and it is gone again once the tracer is
    assert calls == []


def test_goroutines_blocked_on_many_things_wake_in_creation_order():
    # every kind of wake-up (event, lock, notify, deadline) at once: who runs is still decided
    # among the runnable goroutines in creation order, so FirstRunnable runs them 0, 1, 2, 3
    def scenario() -> list[str]:
        order: list[str] = []
        ev, lk, cond = rt.event("ev"), rt.lock(), rt.condition()
        lk.acquire()

        def by_event() -> None:
            ev.wait()
            order.append("event")

        def by_lock() -> None:
            with lk:
                order.append("lock")

        def by_notify() -> None:
            with cond:
                cond.wait()
            order.append("notify")

        def by_deadline() -> None:
            rt.sleep(1)
            order.append("deadline")

        for fn in (by_event, by_lock, by_notify, by_deadline):
            rt.go(fn, name=fn.__name__)
        rt.sleep(1)  # all four blocked; at t=1 the sleeper is due and main wakes the others
        ev.set()
        lk.release()
        with cond:
            cond.notify()
        rt.sleep(1)
        return order

    order, _ = run(scenario)
    assert order == ["deadline", "event", "lock", "notify"]


WHO = contextvars.ContextVar("who", default="nobody")


def test_a_goroutine_starts_with_its_spawners_context_variables_as_under_threads():
    def main() -> list[str]:
        seen: list[str] = []
        WHO.set("replica-1")

        def child() -> None:
            seen.append(WHO.get())
            WHO.set("changed-by-child")

        rt.wait_all([rt.go(child, name="child").done, rt.go(lambda: seen.append("after:" + WHO.get()), name="late").done])
        return seen + [WHO.get()]

    assert Simulation(chooser=FirstRunnable()).run(main) == ["replica-1", "after:replica-1", "replica-1"]

"""Speed of the simulation runtime: decisions and schedules per second (no Go twin).

Compared, in the same process and run, with the floor any thread-based scheduler has in
CPython: a raw baton handoff between two threads (lock release in one, acquire in the other).
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from _thread import allocate_lock
from typing import Any, Optional, Sequence

from genericserver import runtime as rt
from genericserver.testing.sim import Chooser, FirstRunnable, SeededRandom, Simulation


class _AlwaysSwitch(Chooser):
    """Preempt at every decision: each decision is then one real thread handoff."""

    def choose(self, runnable: Sequence[Any], current: Any) -> int:
        return 1


def _pin(cpu: Optional[int]) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, (cpu,))  # this thread only


def raw_handoffs_per_second(cpus: tuple[Optional[int], Optional[int]], rounds: int = 20_000) -> float:
    """Baton handoffs per second between two threads, optionally pinned to given CPUs."""
    ping, pong = allocate_lock(), allocate_lock()
    ping.acquire()
    pong.acquire()
    ready = threading.Event()
    rates = []

    def one(me: Any, other: Any, cpu: Optional[int], first: bool) -> None:
        _pin(cpu)
        if first:
            ready.wait()
        else:
            ready.set()
        started = time.perf_counter()
        for _ in range(rounds):
            if first:
                other.release()
                me.acquire()
            else:
                me.acquire()
                other.release()
        rates.append(2 * rounds / (time.perf_counter() - started))

    threads = [
        threading.Thread(target=one, args=(ping, pong, cpus[0], True), name="bench-ping"),
        threading.Thread(target=one, args=(pong, ping, cpus[1], False), name="bench-pong"),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return min(rates)


def _yielders(count: int, steps: int) -> None:
    def loop() -> None:
        for _ in range(steps):
            rt.sleep(0)

    done = [rt.go(loop, name=f"yielder-{i}").done for i in range(count)]
    rt.wait_all(done)


def sim_decisions_per_second(chooser: Chooser, goroutines: int, steps: int, one_cpu: bool = True) -> float:
    sim = Simulation(chooser, one_cpu=one_cpu)
    started = time.perf_counter()
    sim.run(_yielders, goroutines, steps)
    return len(sim.trace) / (time.perf_counter() - started)


def lifecycle() -> None:
    """A small shutdown-shaped scenario: a delay, hooks, three requests, a drain (about 50 decisions)."""
    stop = rt.event("stopCh")
    initiated = rt.event("ShutdownInitiated")
    after_delay = rt.event("AfterShutdownDelayDuration")
    hooks_stopped = rt.event("PreShutdownHooksStopped")
    not_accepting = rt.event("NotAcceptingNewRequest")
    drained = rt.event("InFlightRequestsDrained")
    cond = rt.condition()
    inflight = [0]

    def request(seconds: float) -> None:
        with cond:
            inflight[0] += 1
        rt.sleep(seconds)
        with cond:
            inflight[0] -= 1
            cond.notify_all()

    def delayed_stop() -> None:
        stop.wait()
        initiated.set()
        rt.sleep(70)
        after_delay.set()

    def hooks() -> None:
        stop.wait()
        for _ in range(2):
            rt.sleep(0.1)
        hooks_stopped.set()

    def drain() -> None:
        rt.select(after_delay, rt.after(80, name="give-up"))
        hooks_stopped.wait()
        not_accepting.set()
        with cond:
            while inflight[0]:
                cond.wait()
        drained.set()

    rt.go(delayed_stop, name="delayed-stop")
    rt.go(hooks, name="pre-shutdown-hooks")
    rt.go(drain, name="drain")
    for i in range(3):
        rt.go(request, 40.0 * i, name="request")
    rt.sleep(1)
    stop.set()
    drained.wait()


def schedules_per_second(runs: int = 300, one_cpu: bool = True) -> tuple[float, float]:
    decisions = []
    started = time.perf_counter()
    for seed in range(runs):
        sim = Simulation(SeededRandom(seed), one_cpu=one_cpu)
        sim.run(lifecycle)
        decisions.append(len(sim.trace))
    return runs / (time.perf_counter() - started), statistics.mean(decisions)


def main() -> None:
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    same = (cpus[0], cpus[0]) if cpus else (None, None)
    across = (cpus[0], cpus[1]) if len(cpus) > 1 else (None, None)
    raw_same = raw_handoffs_per_second(same)
    raw_across = raw_handoffs_per_second(across)
    switching = sim_decisions_per_second(_AlwaysSwitch(), 2, 20_000)
    switching_free = sim_decisions_per_second(_AlwaysSwitch(), 2, 5_000, one_cpu=False)
    staying = sim_decisions_per_second(FirstRunnable(), 1, 50_000)
    schedules, mean_decisions = schedules_per_second()
    schedules_free, _ = schedules_per_second(100, one_cpu=False)
    rows = [
        ("raw handoff, two threads on one core", raw_same, ""),
        ("raw handoff, two threads on two cores", raw_across, ""),
        ("sim decisions, each a switch (one_cpu)", switching, f"{switching / raw_same:.2f} x raw one-core handoff"),
        ("sim decisions, each a switch (OS placed)", switching_free, f"{switching_free / raw_across:.2f} x two-core"),
        ("sim decisions, no switch", staying, f"{staying / raw_same:.2f} x raw one-core handoff"),
        ("lifecycle schedules (one_cpu)", schedules, f"{mean_decisions:.0f} decisions each; budget 400 /s"),
        ("lifecycle schedules (OS placed)", schedules_free, ""),
    ]
    for label, rate, note in rows:
        print(f"{label:<42} {rate:10,.0f} /s  {note}".rstrip())


if __name__ == "__main__":
    main()

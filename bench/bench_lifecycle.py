"""Speed of the fuzzing: lifecycle schedules and lincheck histories per second (no Go twin).

A *standard lifecycle scenario* runs the real config, handler chain and ``run_with_context`` over
the in-memory transport on the simulation runtime: the 70 s shutdown delay, one pre-shutdown
hook, a request in flight across NotAcceptingNewRequest, one on a kept-alive connection during
the delay, and one refused after the listener closed. Each run gets a different random schedule.
The budget (design.md section 9) is 400 schedules per second per process.

A *standard lincheck scenario* is three goroutines adding to, leaving and waiting on a
SafeWaitGroup; each run gets a random schedule and its history is checked against the model.
Beside it, the same scenario on plain threads (the threads runtime, no schedule, no checking):
what one history costs when nothing controls the interleaving.
"""

from __future__ import annotations

import random
import statistics
import time

from genericserver import runtime as rt
from genericserver.testing import lincheck
from genericserver.testing.choosers import Scripted
from genericserver.testing.invariants import check
from genericserver.testing.lincheck import LinScenario, Op
from genericserver.testing.lincheck_targets import TARGETS
from genericserver.testing.scenario import HookSpec, RequestSpec, Scenario, run_scenario

STANDARD = Scenario(
    shutdown_delay=70.0,
    hooks=(HookSpec(duration=0.5),),
    requests=(
        RequestSpec("ordinary", "AfterShutdownDelayDuration", 0.0, 3.0, "new"),  # in flight at NotAccepting
        RequestSpec("ordinary", "ShutdownInitiated", 2.0, 0.2, "reused"),  # during the delay, kept-alive
        RequestSpec("ordinary", "NotAcceptingNewRequest", 0.5, 0.0, "new"),  # refused
    ),
)


def random_schedule(rng: random.Random, size: int = 64) -> list[int]:
    return [rng.choice((0, 0, 0, 1, 2, 3)) for _ in range(size)]


def schedules_per_second(scenario: Scenario = STANDARD, runs: int = 300, with_checks: bool = True) -> tuple[float, float, float, int]:
    """(schedules per wall second, per CPU second of this process, mean decisions, failed runs).

    On a shared machine the CPU figure is the steadier one: the wall figure drops when other
    processes take the core the simulation's threads are pinned to.
    """
    rng = random.Random(0)
    schedules = [random_schedule(rng) for _ in range(runs)]
    run_scenario(scenario)  # warm up imports and caches
    decisions, failures = [], 0
    started, cpu = time.perf_counter(), time.process_time()
    for schedule in schedules:
        run = run_scenario(scenario, chooser=Scripted(schedule))
        decisions.append(run.decisions)
        if with_checks and check(run):
            failures += 1
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return runs / wall, runs / cpu, statistics.mean(decisions), failures


LINCHECK = LinScenario(
    threads=((Op("add", (1,)), Op("done")), (Op("add", (1,)), Op("done")), (Op("done"), Op("wait"))),
    init=(Op("add", (1,)),),
)


def lincheck_histories_per_second(runs: int = 1000) -> float:
    """Histories per wall second: run under a random schedule, then checked against the model."""
    rng = random.Random(0)
    target = TARGETS["SafeWaitGroup"]
    schedules = [[rng.choice((0, 0, 1, 2, 3)) for _ in range(40)] for _ in range(runs)]
    started = time.perf_counter()
    for schedule in schedules:
        history = lincheck.run_history(target, LINCHECK, schedule)
        assert lincheck.verdict(target, history) is None
    return runs / (time.perf_counter() - started)


def plain_thread_histories_per_second(runs: int = 1000) -> float:
    """The same scenario on the threads runtime: real threads, whatever order the OS picks."""
    target = TARGETS["SafeWaitGroup"]
    started = time.perf_counter()
    for _ in range(runs):
        obj = target.make()
        for op in LINCHECK.init:
            target.call(obj, op)

        def worker(ops: tuple) -> None:
            for op in ops:
                try:
                    target.call(obj, op)
                except Exception:
                    pass  # a done() before its add(): the result is what the simulation records

        goroutines = [rt.go(worker, ops, name=f"g{i}") for i, ops in enumerate(LINCHECK.threads)]
        for g in goroutines:
            g.join()
    return runs / (time.perf_counter() - started)


def main() -> None:
    import logging

    logging.disable(logging.WARNING)  # the chain logs "Authentication is disabled" per server built
    try:
        rate, cpu_rate, mean_decisions, failures = schedules_per_second()
        bare, _, _, _ = schedules_per_second(runs=100, with_checks=False)
        empty, _, empty_decisions, _ = schedules_per_second(Scenario(), runs=100)
        histories = lincheck_histories_per_second()
        plain = plain_thread_histories_per_second()
    finally:
        logging.disable(logging.NOTSET)
    rows = [
        ("standard lifecycle schedules, checked", rate, f"{mean_decisions:.0f} decisions each; budget 400 /s; {failures} failed"),
        ("  the same, per CPU second", cpu_rate, ""),
        ("standard lifecycle schedules, unchecked", bare, ""),
        ("empty scenario (start and shut down)", empty, f"{empty_decisions:.0f} decisions each"),
        ("lincheck histories, checked (SafeWaitGroup)", histories, "3 goroutines, 7 calls, random schedules"),
        ("  the same scenario on plain threads", plain, "threads runtime: no schedule, no check"),
    ]
    for label, value, note in rows:
        print(f"{label:<42} {value:10,.0f} /s  {note}".rstrip())


if __name__ == "__main__":
    main()

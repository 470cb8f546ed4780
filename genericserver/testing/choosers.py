"""Choosers for the simulation runtime: who runs next at each decision (no Go twin).

At every decision with more than one runnable goroutine, :class:`~genericserver.testing.sim.Simulation`
asks its chooser ``choose(runnable, current) -> index``. ``runnable`` is in a stable order: the
goroutine that is yielding first when it may go on, then the others by creation order. So index 0
always means "no preemption" (keep running, or the oldest runnable one when the current one
blocked). Each goroutine in the list has a ``gid`` (creation serial, from 1) and a ``name``.

A chooser must not read real time, thread ids or anything else that differs between two runs:
a run is fully determined by the scenario and the indexes it returns (``Simulation.choices``).
"""

from __future__ import annotations

import random
from typing import Any, Iterable, Sequence

__all__ = ["Chooser", "FirstRunnable", "SeededRandom", "PCT", "Scripted", "schedules", "compact", "expand"]


class Chooser:
    """The interface: return an index into ``runnable`` (called only when it has 2+ entries)."""

    def choose(self, runnable: Sequence[Any], current: Any) -> int:
        raise NotImplementedError


class FirstRunnable(Chooser):
    """Never preempt: the current goroutine runs until it blocks, then the oldest runnable one."""

    def choose(self, runnable: Sequence[Any], current: Any) -> int:
        return 0

    def __repr__(self) -> str:
        return "FirstRunnable()"


class SeededRandom(Chooser):
    """A uniformly random runnable goroutine at every decision, from a seeded generator."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._rng = random.Random(seed)

    def choose(self, runnable: Sequence[Any], current: Any) -> int:
        return self._rng.randrange(len(runnable))

    def __repr__(self) -> str:
        return f"SeededRandom({self.seed})"


class PCT(Chooser):
    """Probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS 2010).

    Every goroutine gets a random priority when the chooser first sees it; the highest-priority
    runnable one always runs. At ``depth - 1`` randomly placed change points the goroutine that
    is yielding drops below every initial priority. A bug that needs ``depth`` ordering
    constraints is then found with probability at least ``1 / (n * k**(depth-1))`` per run, for
    ``n`` goroutines and ``k`` steps. Here a step is a decision with more than one option (the
    only ones a chooser sees), so ``max_steps`` should be about that many per run.
    """

    def __init__(self, seed: int = 0, depth: int = 2, max_steps: int = 64):
        if depth < 1:
            raise ValueError("PCT depth must be at least 1")
        if max_steps < depth - 1:
            raise ValueError("PCT max_steps must leave room for depth-1 change points")
        self.seed, self.depth, self.max_steps = seed, depth, max_steps
        self._rng = random.Random(seed)
        points = self._rng.sample(range(1, max_steps + 1), depth - 1)
        # the i-th change point lowers the yielding goroutine to priority i (all below `depth`)
        self._changes = {step: float(i) for i, step in enumerate(points, start=1)}
        self._priority: dict[int, float] = {}
        self._step = 0

    def choose(self, runnable: Sequence[Any], current: Any) -> int:
        self._step += 1
        priority = self._priority
        lowered = self._changes.get(self._step)
        if lowered is not None:
            priority[current.gid] = lowered
        best, best_p = 0, -1.0
        for i, g in enumerate(runnable):
            p = priority.get(g.gid)
            if p is None:
                p = priority[g.gid] = self.depth + self._rng.random()
            if p > best_p:
                best, best_p = i, p
        return best

    def __repr__(self) -> str:
        return f"PCT(seed={self.seed}, depth={self.depth}, max_steps={self.max_steps})"


class Scripted(Chooser):
    """An explicit schedule: one int per decision with 2+ options, ``0`` once the list runs out.

    ``0`` is "no preemption"; ``k`` picks the k-th runnable goroutine (modulo how many there are),
    so any list of non-negative ints is a valid schedule and Hypothesis can shrink it freely.
    ``Scripted(sim.choices)`` replays a run made with any chooser.
    """

    def __init__(self, choices: Iterable[int]):
        self._choices = list(choices)
        if any(c < 0 for c in self._choices):
            raise ValueError("Scripted choices must be non-negative")
        self._i = 0

    def choose(self, runnable: Sequence[Any], current: Any) -> int:
        i = self._i
        if i < len(self._choices):
            self._i = i + 1
            return self._choices[i] % len(runnable)
        return 0

    def __repr__(self) -> str:
        return f"Scripted({self._choices!r})"


def schedules(max_size: int = 64, max_value: int = 3) -> Any:
    """A Hypothesis strategy of schedules for :class:`Scripted`: short lists of small ints.

    About two thirds of the entries are 0 (no preemption). Each entry shrinks towards 0 and the
    list towards shorter, so a failing schedule shrinks towards the fewest preemptions.
    """
    from hypothesis import strategies as st  # a test dependency only

    entry = st.integers(min_value=-2 * max_value, max_value=max_value).map(lambda v: v if v > 0 else 0)
    return st.lists(entry, max_size=max_size)


def compact(schedule: Sequence[int]) -> str:
    """A schedule as only its non-zero entries, by position: ``[0, 0, 2, 0, 1]`` -> ``{2: 2, 4: 1}``.

    Most entries are 0 ("no preemption"), so this is how a schedule is printed; ``{}`` is the
    schedule that never preempts. :func:`expand` turns it back into a list.
    """
    return "{" + ", ".join(f"{i}: {c}" for i, c in enumerate(schedule) if c) + "}"


def expand(preemptions: dict[int, int]) -> list[int]:
    """The list form of a compact schedule: ``{2: 2, 4: 1}`` -> ``[0, 0, 2, 0, 1]``."""
    out = [0] * (max(preemptions, default=-1) + 1)
    for i, c in preemptions.items():
        out[i] = c
    return out


def deep_schedules(max_preemptions: int = 40, max_gap: int = 100, max_value: int = 3) -> Any:
    """Schedules for :class:`~genericserver.testing.choosers.Scripted` that reach the shutdown.

    A run makes a few hundred decisions with a choice and the shutdown comes after the
    start-up's, but a plain ``st.lists`` of entries averages a handful of them (it would only
    ever perturb the start-up) and drawing hundreds is slow. So Hypothesis draws a short list
    of preemptions, each ``(gap, choice)``: ``gap`` zeros ("no preemption"), then ``choice``
    (1 to ``max_value``); the schedule is that list spelled out. Shrinking removes preemptions
    and moves them earlier (gaps shrink towards 0), so a failing schedule shrinks towards the
    fewest non-zero entries.
    """
    from hypothesis import strategies as st

    point = st.tuples(st.integers(min_value=0, max_value=max_gap), st.integers(min_value=1, max_value=max_value))
    return st.lists(point, max_size=max_preemptions).map(spell_out)


def spell_out(preemptions: Sequence[tuple[int, int]]) -> list[int]:
    """``[(2, 1), (0, 3)]`` -> ``[0, 0, 1, 3]``."""
    schedule: list[int] = []
    for gap, choice in preemptions:
        schedule += [0] * gap
        schedule.append(choice)
    return schedule

"""Hypothesis state machines whose program runs on the simulation runtime (no Go twin).

A stateful test of a primitive (a wait group, say) used to run its rules on real threads and
join goroutines with real timeouts; a bug that makes the primitive hang then hung the test,
and pytest-timeout could not end it (Hypothesis replays the example after the alarm). Here
each rule updates the model and appends a *step*; at teardown the steps run in order as
goroutine ``main`` of one :class:`~genericserver.testing.sim.Simulation`, under a schedule
Hypothesis drew with the first rule. Nothing waits on real time: a hang is the simulation's
deadlock report, naming each goroutine and what it waits for, within milliseconds.

Requires Hypothesis (a test dependency).
"""

from __future__ import annotations

from typing import Any, Callable

from hypothesis.stateful import RuleBasedStateMachine

from genericserver.testing.choosers import Scripted
from genericserver.testing.sim import Simulation

Step = Callable[[Any], None]


class StepFailed(AssertionError):
    """A step's check failed; the message says which step of the program it was."""


class SimulatedMachine(RuleBasedStateMachine):
    """Subclasses: ``make()`` builds the object under test (inside the simulation), rules call
    ``self.step(what, fn)`` with ``fn(env)`` doing the real call and its checks, and
    ``finish(env)`` (optional) runs last. ``self.schedule`` is the schedule (set it from an
    ``@initialize`` rule); ``self.steps`` the program so far."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[tuple[str, Step]] = []
        self.schedule: list[int] = []

    def step(self, what: str, fn: Step) -> None:
        self.steps.append((what, fn))

    def make(self) -> Any:
        raise NotImplementedError

    def finish(self, env: Any) -> None:
        """Called after the last step, still inside the simulation."""

    def teardown(self) -> None:
        if not self.steps:
            return

        def main() -> None:
            env = self.make()
            for i, (what, fn) in enumerate(self.steps):
                try:
                    fn(env)
                except AssertionError as err:
                    raise StepFailed(f"step {i} ({what}): {err}") from err
            self.finish(env)

        Simulation(Scripted(self.schedule)).run(main)

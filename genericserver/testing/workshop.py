"""A Hypothesis state machine that writes shutdown scenarios as workshop scripts (no Go twin).

Each program configures a server, then sends requests, lets virtual time pass, signals the
shutdown and nudges the scheduler (``step``: at the next scheduling decision run the k-th
runnable goroutine). At teardown the script is played once on the simulation runtime against
the real server and every invariant is checked, so a failing program reads like a workshop
script::

    state = ShutdownWorkshop()
    state.configure(delay=70.0, hooks=[], retry_after=True, watch_grace=0.0)
    state.send_request(conn='reused', duration=3.0, kind='ordinary')
    state.advance_clock(seconds=0.5)
    state.signal_shutdown()
    state.step(choice=2)
    state.teardown()

and the failure message carries the command that replays the run. To hunt a bug with it, give a
subclass the bug as ``variant`` and run it with Hypothesis (``tests/test_fuzz_stateful.py`` does
both)::

    from hypothesis.stateful import run_state_machine_as_test
    from genericserver.testing.variants import variant
    from genericserver.testing.workshop import ShutdownWorkshop

    class MyLab(ShutdownWorkshop):
        variant = variant("slot-released-before-body")

    run_state_machine_as_test(MyLab)   # raises InvariantViolation, with the replay command

Requires Hypothesis (a test dependency).
"""

from __future__ import annotations

from typing import Any, Optional

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from genericserver.testing import replay
from genericserver.testing.scenario import DELAYS, DURATIONS, KINDS, HookSpec, RequestSpec, Scenario, StepChooser, run_scenario
from genericserver.testing.variants import Variant


class ShutdownWorkshop(RuleBasedStateMachine):
    """Programs of configure / send_request / advance_clock / signal_shutdown / step, checked
    at teardown on the server with ``variant`` switched in (None: the server as it is)."""

    variant: Optional[Variant] = None

    @initialize(
        retry_after=st.booleans(),
        delay=st.sampled_from(DELAYS),
        watch_grace=st.sampled_from((0.0, 2.0)),
        hooks=st.lists(st.builds(HookSpec, duration=st.sampled_from((0.0, 5.0)), loopback=st.booleans()), max_size=1),
    )
    def configure(self, retry_after: bool, delay: float, watch_grace: float, hooks: list) -> None:
        self.config: dict[str, Any] = {"retry_after": retry_after, "shutdown_delay": delay, "watch_grace": watch_grace,
                                       "hooks": tuple(hooks)}
        self.actions: list[tuple] = []
        self.stopped = False

    @rule(kind=st.sampled_from(KINDS), conn=st.sampled_from(("new", "reused")), duration=st.sampled_from(DURATIONS))
    def send_request(self, kind: str, conn: str, duration: float) -> None:
        self.actions.append(("send", RequestSpec(kind=kind, duration=duration, conn=conn)))

    @rule(seconds=st.sampled_from((0.001, 0.5, 2.0, 70.0)))
    def advance_clock(self, seconds: float) -> None:
        self.actions.append(("sleep", seconds))

    @precondition(lambda self: not self.stopped)
    @rule()
    def signal_shutdown(self) -> None:
        self.actions.append(("stop",))
        self.stopped = True

    @rule(choice=st.integers(min_value=1, max_value=4))
    def step(self, choice: int) -> None:
        self.actions.append(("step", choice))

    def teardown(self) -> None:
        if not hasattr(self, "config"):
            return
        scenario = Scenario(**self.config, actions=tuple(self.actions))
        run = run_scenario(scenario, chooser=StepChooser(), variant=self.variant)
        run.schedule = replay.trim(run.choices)  # what the steps chose, as a schedule Scripted replays
        replay.check_run(run, "workshop scripts")

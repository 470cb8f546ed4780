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

and the failure message carries the command that replays the run.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test

from genericserver.testing import replay
from genericserver.testing.scenario import DELAYS, DURATIONS, KINDS, HookSpec, RequestSpec, Scenario, StepChooser, run_scenario
from genericserver.testing.variants import SlotReleasedBeforeBody

EXAMPLES = settings.default.max_examples
FUZZING = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"


class ShutdownWorkshop(RuleBasedStateMachine):
    variant = None

    @initialize(
        retry_after=st.booleans(),
        delay=st.sampled_from(DELAYS),
        watch_grace=st.sampled_from((0.0, 2.0)),
        hooks=st.lists(st.builds(HookSpec, duration=st.sampled_from((0.0, 5.0)), loopback=st.booleans()), max_size=1),
    )
    def configure(self, retry_after, delay, watch_grace, hooks):
        self.config = {"retry_after": retry_after, "shutdown_delay": delay, "watch_grace": watch_grace, "hooks": tuple(hooks)}
        self.actions: list[tuple] = []
        self.stopped = False

    @rule(kind=st.sampled_from(KINDS), conn=st.sampled_from(("new", "reused")), duration=st.sampled_from(DURATIONS))
    def send_request(self, kind, conn, duration):
        self.actions.append(("send", RequestSpec(kind=kind, duration=duration, conn=conn)))

    @rule(seconds=st.sampled_from((0.001, 0.5, 2.0, 70.0)))
    def advance_clock(self, seconds):
        self.actions.append(("sleep", seconds))

    @precondition(lambda self: not self.stopped)
    @rule()
    def signal_shutdown(self):
        self.actions.append(("stop",))
        self.stopped = True

    @rule(choice=st.integers(min_value=1, max_value=4))
    def step(self, choice):
        self.actions.append(("step", choice))

    def teardown(self):
        if not hasattr(self, "config"):
            return
        scenario = Scenario(**self.config, actions=tuple(self.actions))
        run = run_scenario(scenario, chooser=StepChooser(), variant=self.variant)
        run.schedule = replay.trim(run.choices)  # what the steps chose, as a schedule Scripted replays
        replay.check_run(run, "workshop scripts")


@pytest.fixture(autouse=True)
def replays_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv(replay.REPLAY_DIR_ENV, str(tmp_path / "replays"))


def test_stateful_workshop_scripts_keep_the_invariants():
    run_state_machine_as_test(ShutdownWorkshop, settings=settings(max_examples=EXAMPLES, stateful_step_count=12))


class SlotReleasedTooEarlyWorkshop(ShutdownWorkshop):
    variant = SlotReleasedBeforeBody()


def test_stateful_workshop_catches_a_slot_released_before_the_body(tmp_path):
    # make test stops at the first failing program; make fuzz also shrinks it
    phases = list(Phase) if FUZZING else [Phase.generate]
    with pytest.raises(replay.InvariantViolation) as err:
        run_state_machine_as_test(
            SlotReleasedTooEarlyWorkshop,
            # drawn at random in the fuzz profile, where it can take well over 300 programs
            settings=settings(max_examples=3000 if FUZZING else 300, stateful_step_count=12, database=None, phases=phases),
        )
    assert "tracked_requests_complete_before_drained" in str(err.value)
    scenario, schedule, variant = replay.load(err.value.path)
    assert variant == "slot-released-before-body"
    assert replay.replay(err.value.path).fingerprint()[0]  # the saved run plays again

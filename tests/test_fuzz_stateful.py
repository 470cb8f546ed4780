"""The stateful workshop machine (genericserver.testing.workshop) keeps the invariants, and catches a planted bug (no Go twin).

``ShutdownWorkshop`` writes shutdown scenarios as workshop scripts; its docstring shows one.
A failing program's message carries the command that replays the run.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from genericserver.testing import replay
from genericserver.testing.variants import SlotReleasedBeforeBody
from genericserver.testing.workshop import ShutdownWorkshop

EXAMPLES = settings.default.max_examples
FUZZING = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"


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

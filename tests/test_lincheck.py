"""Tests of genericserver.testing.lincheck: the checker itself, and every primitive against its model (no Go twin).

The checker is tested on histories written by hand (what it must accept, what it must refuse,
and why), then each target of genericserver.testing.lincheck_targets runs as a property: random
scenarios under random schedules on the real primitive must always be linearizable. ``make
test`` runs a few dozen histories per primitive, ``make fuzz`` a thousand and prints how many
distinct interleavings each family covered.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docs_output import assert_shows, expected
from genericserver.testing import lincheck, replay
from genericserver.testing.choosers import expand
from genericserver.testing.lincheck import BLOCKED, Call, History, LinScenario, Op, linearize
from genericserver.testing.lincheck_scenarios import scenarios, schedules
from genericserver.testing.lincheck_targets import TARGETS, SafeWaitGroupModel, WaitGroupModel
from genericserver.testing.variants import variant

FUZZING = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
PER_TARGET = 1000 if FUZZING else 25  # drawn scenarios; each runs under TRIES schedules
TRIES = 8


@pytest.fixture(autouse=True)
def replays_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv(replay.REPLAY_DIR_ENV, str(tmp_path / "replays"))


def history(*calls: tuple) -> History:
    """A history from ``(goroutine, op, call seq, return seq or None, result)``, at virtual time 0
    unless a sixth and seventh item give the call's and the return's time."""
    h = History("test", LinScenario(((),)), [])
    for g, op, c, r, result, *times in calls:
        call_at, ret_at = times if times else (0.0, 0.0)
        h.calls.append(Call(g, op, c, call_at, r, None if r is None else ret_at, result))
    return h


ADD, DONE, WAIT = Op("add", (1,)), Op("done"), Op("wait")


# -- the checker on histories written by hand --------------------------------------------------------


def test_a_sequential_history_is_linearizable_iff_the_model_agrees():
    good = history(("g0", ADD, 1, 2, None), ("g0", DONE, 3, 4, None), ("g0", WAIT, 5, 6, None))
    assert [str(c.op) for c, _, _ in linearize(WaitGroupModel(), good)] == ["add(1)", "done()", "wait()"]
    bad = history(("g0", ADD, 1, 2, None), ("g0", WAIT, 3, 4, None))  # wait returned with 1 in flight
    assert linearize(WaitGroupModel(), bad) is None
    negative = history(("g0", DONE, 1, 2, "NegativeCounterError"))
    assert linearize(WaitGroupModel(), negative) is not None


def test_overlapping_calls_may_take_effect_in_either_order_but_real_time_order_holds():
    # wait() overlaps the done(): it may take effect after it
    overlapping = history(("g0", ADD, 1, 2, None), ("g1", WAIT, 3, 6, None), ("g0", DONE, 4, 5, None))
    assert linearize(WaitGroupModel(), overlapping) is not None
    # the same results, but wait() returned before done() was called: no order explains it
    ordered = history(("g0", ADD, 1, 2, None), ("g1", WAIT, 3, 4, None), ("g0", DONE, 5, 6, None))
    assert linearize(WaitGroupModel(), ordered) is None


def test_a_wait_that_returned_while_a_concurrent_add_was_admitted_is_a_violation():
    # SafeWaitGroup: wait() refuses adds from its first part on, so an add admitted while the
    # wait was in progress must have come before it, and then the wait could not have returned
    h = history(("g0", WAIT, 1, 3, None), ("g1", ADD, 2, 4, None))
    assert linearize(SafeWaitGroupModel(), h) is None
    refused = history(("g0", WAIT, 1, 3, None), ("g1", ADD, 2, 4, "AddAfterWaitError"))
    assert linearize(SafeWaitGroupModel(), refused) is not None


def test_a_pending_blocking_call_must_be_blocked_at_the_end():
    stuck_fairly = history(("g0", ADD, 1, 2, None), ("g1", WAIT, 3, None, None))
    assert linearize(WaitGroupModel(), stuck_fairly) is not None  # still 1 in flight: may block
    lost_wake_up = history(("g0", ADD, 1, 2, None), ("g1", WAIT, 3, None, None), ("g0", DONE, 4, 5, None))
    assert linearize(WaitGroupModel(), lost_wake_up) is None  # the counter reached 0 and it slept on


def test_parts_anchored_at_their_call_follow_virtual_time():
    # RWLock: a writer announced at t=0 keeps out a reader that arrives at t=1...
    model = TARGETS["RWLock"].model
    late_reader = history(
        ("g0", Op("rlock"), 1, 2, None, 0.0, 0.0),
        ("g1", Op("lock"), 3, None, None, 0.0, None),
        ("g2", Op("rlock"), 4, 5, None, 1.0, 1.0),
    )
    assert linearize(model, late_reader) is None
    # ...but not one at the same instant, which may have come before the announcement
    same_instant = history(
        ("g0", Op("rlock"), 1, 2, None, 0.0, 0.0),
        ("g1", Op("lock"), 3, None, None, 0.0, None),
        ("g2", Op("rlock"), 4, 5, None, 0.0, 0.0),
    )
    assert linearize(model, same_instant) is not None


def test_a_timeout_is_placed_where_it_fired():
    model = TARGETS["TimeoutHandoff"].model
    put, take = Op("put", (0,)), Op("take")
    missed = history(("g0", put, 1, 3, True, 0.0, 0.0), ("g1", take, 2, 4, "timeout", 0.0, 1.0))
    assert linearize(model, missed) is None  # the item was there long before the timeout fired
    fair = history(("g0", put, 3, 4, True, 1.0, 1.0), ("g1", take, 1, 2, "timeout", 0.0, 1.0))
    assert linearize(model, fair) is not None


def test_models_say_blocked_with_None():
    assert WaitGroupModel().step(1, WAIT, 0, 0.0) is BLOCKED
    assert SafeWaitGroupModel().step((0, True), ADD, 0, 0.0) == ((0, True), "AddAfterWaitError")


# -- running scenarios: histories, reports, replay ------------------------------------------------


def test_run_history_records_calls_returns_and_pending_calls():
    target = TARGETS["WaitGroup"]
    h = lincheck.run_history(target, LinScenario(((WAIT,), (Op("add", (-1,)),)), (ADD, ADD)))
    assert [(c.goroutine, str(c.op), c.result, c.pending) for c in h.calls] == [
        ("init", "add(1)", None, False), ("init", "add(1)", None, False),
        ("g0", "wait()", None, True), ("g1", "add(-1)", None, False),
    ]
    assert h.error is None
    assert lincheck.verdict(target, h) is None  # one still in flight: the wait may block


def test_a_failure_prints_columns_writes_a_replay_file_and_the_replay_command_reruns_it(tmp_path, capsys):
    bug = variant("once-runs-twice")
    scenario = LinScenario(((Op("do"),), (Op("do"),)))
    with bug.switched_in(), pytest.raises(lincheck.NotLinearizable) as err:
        lincheck.check(TARGETS["Once"], scenario, [0, 0, 0, 1], variant=bug.name)
    message = str(err.value)
    assert message.splitlines()[0] == "lincheck Once (variant 'once-runs-twice'): no order of these calls fits the Once model"
    assert f"  time  {'g0':<26}g1" in message
    assert "    -> 2" in message  # the second do() saw the function run twice
    assert "schedule: {3: 1} (1 non-zero entries" in message
    assert f"replay:   {sys.executable} -m genericserver.testing.replay {err.value.path}" in message
    doc = json.loads(err.value.path.read_text())
    assert (doc["lincheck"], doc["variant"], doc["schedule"]) == ("Once", "once-runs-twice", [0, 0, 0, 1])
    assert replay.main([str(err.value.path)]) == 1
    out = capsys.readouterr().out
    assert "NOT LINEARIZABLE: no order of these calls fits the Once model" in out
    assert "-- history" in out and "do()" in out
    # without the bug the same schedule is fine, and the replay says so
    doc["variant"] = "real"
    fixed = tmp_path / "fixed.json"
    fixed.write_text(json.dumps(doc))
    assert replay.main([str(fixed), "--trace"]) == 0
    assert "linearizable: an order of these calls fits the model" in capsys.readouterr().out


def test_the_variant_is_switched_out_again():
    from genericserver.runtime import seam

    real = seam.Once.do
    with variant("once-runs-twice").switched_in():
        assert seam.Once.do is not real
    assert seam.Once.do is real


def test_coverage_counts_distinct_interleavings():
    cov = lincheck.Coverage()
    target = TARGETS["Once"]
    scenario = LinScenario(((Op("do"),), (Op("count"),)))
    for schedule in ([], [], [0, 1], [0, 0, 1, 1]):
        cov.add("Once", lincheck.run_history(target, scenario, schedule))
    assert cov.runs["Once"] == 4
    assert 2 <= len(cov.orders["Once"]) <= 3
    assert cov.lines()[0].split()[:2] == ["Once", "4"]


# -- every primitive against its model ------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_property_primitive_is_linearizable(name):
    target = TARGETS[name]

    @settings(max_examples=PER_TARGET, deadline=None)
    @given(scenario=scenarios(name), schedule=schedules(), seed=st.integers(0, 2**16))
    def linearizable(scenario, schedule, seed):
        lincheck.check(target, scenario, schedule, seed=seed, tries=TRIES)

    linearizable()


def test_the_walkthroughs_failure_is_what_lincheck_prints():
    # walkthrough.md 7: SafeWaitGroup.add looking at the wait flag before taking the read lock
    bug = variant("safe-wait-group-check-outside-lock")
    scenario = LinScenario(((Op("wait"),), (Op("add", (1,)),)))
    with bug.switched_in(), pytest.raises(lincheck.NotLinearizable) as err:
        lincheck.check(TARGETS["SafeWaitGroup"], scenario, expand({2: 1, 3: 1}), variant=bug.name)
    # the run's own file name and interpreter, as the docs name them
    message = str(err.value).replace(str(err.value.path), "replays/lincheck-eefbe5ab5a88.json")
    assert_shows(expected("walkthrough-lincheck"), message.replace(sys.executable, ".venv/bin/python"))

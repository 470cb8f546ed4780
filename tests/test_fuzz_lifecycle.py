"""Property tests of the shutdown under the simulation runtime, and replay (no Go twin).

Hypothesis draws a scenario (modes, delays, hooks, requests; see genericserver.testing.scenario)
and, separately, a schedule; the real server runs it over the in-memory transport and every
invariant of genericserver.testing.invariants is checked. A failure prints the scenario, the
schedule and the command that replays it. ``make test`` runs the "ci" Hypothesis profile,
``make fuzz`` the long one.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import time

import pytest
from hypothesis import given, settings

from docs_output import assert_shows, expected
from genericserver.filters import waitgroup as waitgroup_filter
from genericserver.testing import replay
from genericserver.testing.choosers import SeededRandom, schedules
from genericserver.testing.invariants import check
from genericserver.testing.scenario import HookSpec, RequestSpec, Scenario, deep_schedules, run_scenario, scenarios
from genericserver.testing.variants import SlotReleasedBeforeBody

EXAMPLES = settings.default.max_examples  # 60 in the ci profile, 2000 with make fuzz


@pytest.fixture(autouse=True)
def replays_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv(replay.REPLAY_DIR_ENV, str(tmp_path / "replays"))


@settings(max_examples=EXAMPLES)
@given(scenario=scenarios(), schedule=deep_schedules())
def test_property_shutdown_invariants_hold(scenario, schedule):
    replay.check_run(run_scenario(scenario, schedule), "lifecycle")


@settings(max_examples=max(EXAMPLES // 2, 20))
@given(scenario=scenarios(max_requests=3, max_hooks=1), schedule=deep_schedules(max_value=8))
def test_property_invariants_hold_under_wide_preemption(scenario, schedule):
    # big indexes: each preemption picks among many goroutines, not just the next one or two
    replay.check_run(run_scenario(scenario, schedule), "lifecycle, wide preemption")


@settings(max_examples=max(EXAMPLES // 2, 20))
@given(scenario=scenarios(), schedule=schedules())
def test_property_invariants_hold_under_start_up_preemption(scenario, schedule):
    # the plain short schedules of the simulation: they perturb the start-up only
    replay.check_run(run_scenario(scenario, schedule), "lifecycle, start-up preemption")


# -- the graceful-termination test's story, told as a scenario ----------------------------------

GO_TEST_STORY = Scenario(
    shutdown_delay=5.0,
    watch_grace=2.0,
    hooks=(HookSpec(duration=6.0, loopback=True),),  # outlasts the delay, and calls the server
    requests=(
        RequestSpec("ordinary", "start", 0.5, 20.0, "new"),  # 0: in flight through the shutdown
        RequestSpec("watch", "start", 0.5, 130.0, "new"),  # 1: a watch held open
        RequestSpec("readyz", "start", 0.5, 0.0, "new"),  # 2: ready
        RequestSpec("readyz", "ShutdownInitiated", 0.001, 0.0, "new"),  # 3: not ready any more
        RequestSpec("ordinary", "ShutdownInitiated", 1.0, 0.0, "reused"),  # 4: during the delay, kept-alive conn
        RequestSpec("ordinary", "ShutdownInitiated", 1.0, 0.0, "new"),  # 5: during the delay, new conn
        RequestSpec("ordinary", "AfterShutdownDelayDuration", 0.5, 0.0, "new"),  # 6: the hook still runs
        RequestSpec("ordinary", "NotAcceptingNewRequest", 0.5, 0.0, "new"),  # 7: too late, new conn
        RequestSpec("ordinary", "NotAcceptingNewRequest", 0.5, 0.0, "reused"),  # 8: too late, kept-alive conn
    ),
)


def answers(run):
    return {e.fields["rid"]: e.fields for e in run.of("client", "answer")}


def shutdown_signals(run):
    return [e.name for e in run.of("signal") if e.name not in ("HasBeenReady", "MuxAndDiscoveryComplete")]


@pytest.mark.parametrize("seed", [0, 1])
def test_story_default_mode(seed):
    run = run_scenario(GO_TEST_STORY, chooser=SeededRandom(seed))
    assert check(run) == []
    got = answers(run)
    assert {rid: got[rid]["outcome"] for rid in ("0", "1", "2", "3", "4", "5", "6", "h0")} == {
        "0": "ok", "1": "ok", "2": "ok", "3": "error-500", "4": "ok", "5": "ok", "6": "ok", "h0": "ok",
    }
    assert "[-]shutdown failed: reason withheld" in got["3"]["body"]
    assert got["4"]["reused"] is True
    assert got["7"]["outcome"] == got["8"]["outcome"] == "refused"
    assert shutdown_signals(run) == [
        "ShutdownInitiated", "AfterShutdownDelayDuration", "PreShutdownHooksStopped", "NotAcceptingNewRequest",
        "HTTPServerStoppedListening", "InFlightRequestsDrained",
    ]


@pytest.mark.parametrize("seed", [0, 1])
def test_story_retry_after_mode(seed):
    run = run_scenario(dataclasses.replace(GO_TEST_STORY, retry_after=True), chooser=SeededRandom(seed))
    assert check(run) == []
    got = answers(run)
    assert [got[rid]["outcome"] for rid in ("0", "1", "4", "5", "6", "h0")] == ["ok"] * 6
    for rid in ("7", "8"):
        assert got[rid]["outcome"] == "retry-after-429"
        assert (got[rid]["retry_after"], got[rid]["connection"]) == ("5", "close")
        assert got[rid]["body"] == "The apiserver is shutting down, please try again later.\n"
    assert got["8"]["reused"] is True
    assert shutdown_signals(run) == [
        "ShutdownInitiated", "AfterShutdownDelayDuration", "PreShutdownHooksStopped", "NotAcceptingNewRequest",
        "InFlightRequestsDrained", "HTTPServerStoppedListening",
    ]


def test_story_timeline_and_audit():
    run = run_scenario(GO_TEST_STORY)
    at = {e.name: e.at for e in run.of("signal")}
    assert at["ShutdownInitiated"] == 1.0
    assert at["AfterShutdownDelayDuration"] == 6.0  # the 5 s delay
    assert at["PreShutdownHooksStopped"] == at["NotAcceptingNewRequest"] == 7.0  # the 6 s hook
    assert at["InFlightRequestsDrained"] == 20.5  # request 0 answered
    audited = {e.fields["audit_id"] for e in run.of("audit", "ResponseComplete")}
    shutdown = run.of("audit", "backend-shutdown")[0]
    for rid in ("0", "1"):
        assert answers(run)[rid]["audit_id"] in audited
    assert all(e.seq < shutdown.seq for e in run.of("audit", "ResponseComplete"))
    assert run.of("run", "returned")[0].fields["error"] is None


def test_a_failing_hook_is_returned_at_once_and_the_shutdown_still_completes():
    scenario = Scenario(hooks=(HookSpec(duration=1.0, fails=True),), requests=(RequestSpec("ordinary", "start", 0.5, 4.0),))
    run = run_scenario(scenario)
    assert check(run) == []
    returned = run.of("run", "returned")[0]
    assert "hook-0 failed on purpose" in returned.fields["error"]
    drained = run.of("signal", "InFlightRequestsDrained")[0]
    assert returned.seq < drained.seq  # returned before the drain, which went on in the background
    assert run.leftover == []


def test_a_seventy_second_delay_is_not_waited_on_the_real_clock():
    scenario = Scenario(shutdown_delay=70.0, requests=(RequestSpec("ordinary", "NotAcceptingNewRequest", 0.001),))
    started = time.perf_counter()
    run = run_scenario(scenario)
    assert time.perf_counter() - started < 70.0  # not waited on the real clock (a bound, not a speed)
    assert run.of("signal", "AfterShutdownDelayDuration")[0].at == 71.0
    assert answers(run)["0"]["outcome"] == "refused"


# -- replay ---------------------------------------------------------------------------------------


def test_the_same_scenario_and_schedule_give_the_same_run():
    schedule = [0, 2, 1, 0, 0, 3, 1, 1, 0, 2] * 8
    first = run_scenario(GO_TEST_STORY, schedule)
    again = run_scenario(GO_TEST_STORY, schedule)
    assert first.fingerprint() == again.fingerprint()
    assert first.choices != run_scenario(GO_TEST_STORY).choices  # the schedule did change the run


def test_a_failure_saves_a_replay_file_and_prints_the_command(tmp_path):
    scenario = Scenario(requests=(RequestSpec("ordinary", "start", 0.0, 3.0),))
    run = run_scenario(scenario, [0, 1], SlotReleasedBeforeBody())
    with pytest.raises(replay.InvariantViolation) as err:
        replay.check_run(run)
    message = str(err.value)
    assert "tracked_requests_complete_before_drained" in message
    assert f"scenario: {scenario!r}" in message
    assert "schedule: {1: 1} (1 non-zero entries" in message
    assert f"replay:   {sys.executable} -m genericserver.testing.replay {err.value.path}" in message
    # walkthrough.md section 7 shows this very message
    assert_shows(expected("walkthrough-fuzz-failure"),
                 message.replace(sys.executable, ".venv/bin/python").replace(f"{err.value.path.parent}/", "replays/"))
    assert replay.load(err.value.path) == (scenario, [0, 1], "slot-released-before-body")
    assert replay.replay(err.value.path).fingerprint() == run.fingerprint()


def test_the_replay_command_reports_the_violations(capsys):
    run = run_scenario(Scenario(requests=(RequestSpec("ordinary", "start", 0.0, 3.0),)), [], SlotReleasedBeforeBody())
    path = replay.save(run, check(run))
    assert replay.main([str(path), "--trace"]) == 1
    out = capsys.readouterr().out
    assert "VIOLATED tracked_requests_complete_before_drained" in out
    assert "-- scheduling decisions" in out and "main" in out
    assert "signal    InFlightRequestsDrained" in out
    good = replay.save(run_scenario(GO_TEST_STORY), [])
    assert replay.main([str(good), "--quiet"]) == 0
    assert "all invariants hold" in capsys.readouterr().out


def test_a_pause_at_a_breakpoint_in_a_goroutine_changes_nothing():
    schedule = [0, 1, 0, 2, 1] * 10
    plain = run_scenario(GO_TEST_STORY, schedule)
    hits = []

    def pause(frame):
        hits.append(frame.f_code.co_name)
        time.sleep(0.002)  # someone looking around at the pdb prompt

    # the wait-group filter runs in the connection goroutines; stop where it takes a slot
    source, first = inspect.getsourcelines(waitgroup_filter)
    line = first + next(i for i, text in enumerate(source) if "wg.add(1)" in text)
    with replay.stop_at(f"genericserver/filters/waitgroup.py:{line}", pause):
        paused = run_scenario(GO_TEST_STORY, schedule, watchdog=None)
    assert hits and set(hits) == {"wait_group_filter"}
    assert paused.fingerprint() == plain.fingerprint()

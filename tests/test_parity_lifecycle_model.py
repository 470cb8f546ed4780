"""The model of which `[graceful-termination]` lines Go's code orders (tests/parity/happens_before.py),
checked against the lifecycle corpus's recordings of reference/genericserver-go, and the replay's
comparison shown to fail on a changed answer, exit code or order (no Go twin)."""

from __future__ import annotations

import copy

import pytest

from parity import happens_before as hb
from parity import lifecycle_replay as replay

RECORDED = replay.RECORDED


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_every_pair_go_s_code_orders_held_in_every_recorded_run(name):
    go = RECORDED[name]
    lines = go["lines"]
    constant = {(lines[i], lines[j]) for i, j in go["order"]}
    required = {(a, b) for a, b in hb.required_pairs(hb.is_retry_after(go["flags"])) if a in lines and b in lines}
    assert required - constant == set()


def test_the_model_orders_what_the_code_chains_and_leaves_races_alone():
    default, retry_after = hb.required_pairs(False), hb.required_pairs(True)
    # a chain: the delay's end is logged before its signal, which NotAcceptingNewRequest waits for
    assert (hb.AFTER_DELAY, hb.NOT_ACCEPTING) in default
    # both goroutines are woken by stopCh's close: no order
    assert (hb.SHUTDOWN_INITIATED, hb.HOOKS_COMPLETED) not in default
    assert (hb.HOOKS_COMPLETED, hb.SHUTDOWN_INITIATED) not in default
    # the drain goroutines wait on NotAcceptingNewRequest's signal, which comes before its line
    assert (hb.NOT_ACCEPTING, hb.NON_LR_DRAINED) not in default
    # the listener stops at NotAcceptingNewRequest by default, at the drain with retry-after
    assert (hb.NON_LR_DRAINED, hb.STOPPED_LISTENING) not in default
    assert (hb.NON_LR_DRAINED, hb.STOPPED_LISTENING) in retry_after


def flipped(name: str, change) -> dict:
    ours = copy.deepcopy(RECORDED[name])
    change(ours)
    return ours


def test_go_s_own_recording_replays_without_a_difference():
    for name in RECORDED:
        assert replay.differences(name, copy.deepcopy(RECORDED[name])) == {}, name


def test_a_changed_status_code_fails_the_replay():
    def change(ours):
        ours["answers"]["draining-new"]["status"] = 503
    assert list(replay.differences("retry-after", flipped("retry-after", change))) == ["answer draining-new"]


def test_a_changed_exit_code_fails_the_replay():
    def change(ours):
        ours["exit"] = 1
    assert "exit" in replay.differences("default-delay", flipped("default-delay", change))


def test_a_signal_logged_out_of_go_s_order_fails_the_replay():
    # a scenario whose every Go run logged both lines (a run under load may lose NotAcceptingNewRequest's
    # line to the process's exit: nothing orders it before "apiserver is exiting")
    name = next(n for n in ("default-delay", "default-delay-in-flight", "hook-sleep")
                if {hb.AFTER_DELAY, hb.NOT_ACCEPTING} <= set(RECORDED[n]["lines"]))

    def change(ours):
        lines = ours["lines"]
        i, j = lines.index(hb.AFTER_DELAY), lines.index(hb.NOT_ACCEPTING)
        lines[i], lines[j] = lines[j], lines[i]
    found = replay.differences(name, flipped(name, change))
    assert list(found) == ["lines"] and "out of order" in found["lines"]


def test_a_missing_line_fails_the_replay():
    def change(ours):
        ours["lines"].remove(hb.DRAINED)
    assert "missing: " + hb.DRAINED in replay.differences("default-delay", flipped("default-delay", change))["lines"]


# -- what the replay refuses, and the regressions it must catch --------------------------------


def test_every_scenario_is_recorded_with_the_steps_it_plays():
    assert sorted(RECORDED) == sorted(replay.BY_NAME)
    assert [name for name in replay.BY_NAME if replay.stale(name)] == []


def test_a_scenario_whose_steps_changed_since_it_was_recorded_is_refused(monkeypatch):
    changed = copy.deepcopy(replay.BY_NAME["default-delay"])
    changed.steps[0].arg = "/livez"  # the first request asks another path
    monkeypatch.setitem(replay.BY_NAME, "default-delay", changed)
    assert "changed since it was recorded" in replay.stale("default-delay")
    with pytest.raises(AssertionError, match="changed since it was recorded"):
        replay.check("default-delay")  # refused before any server runs
    monkeypatch.setitem(replay.BY_NAME, "default-delay", replay.BY_NAME["default-no-delay"])
    assert "changed since it was recorded" in replay.stale("default-delay")  # the flags too


def test_the_lines_go_never_logs_after_a_hook_error_are_the_main_goroutine_s_last():
    main = [arg for op, arg in hb.goroutines(False)["main"] if op == "log"]
    assert tuple(main[main.index(hb.HOOKS_COMPLETED) + 1:]) == hb.MAIN_AFTER_HOOKS


@pytest.mark.parametrize("name", [n for n in sorted(RECORDED) if RECORDED[n]["exit"] != 0])
def test_apiserver_is_exiting_after_a_failing_hook_fails_the_replay(name):
    """RunWithContext returned the hook's error (or panicked): Go cannot log "apiserver is exiting"."""
    def change(ours):
        ours["lines"].append(hb.EXITING)
    assert "extra: " + hb.EXITING in replay.differences(name, flipped(name, change))["lines"]


def test_a_stalled_body_that_holds_the_drain_fails_the_replay():
    """What serve did before issue 56: the wait group waited for the body, so InFlightRequestsDrained
    never came, nor the exit (the replay's wait for it fails first; here its record, as a timeout)."""
    def change(ours):
        ours["lines"] = [l for l in ours["lines"] if l not in (hb.NON_LR_DRAINED, hb.DRAINED, hb.EXITING)]
        ours["exit"] = None
    found = replay.differences("stalled-body", flipped("stalled-body", change))
    assert "exit" in found and "missing: " + hb.DRAINED in found["lines"]


def test_a_late_body_answered_past_the_shutdown_timeout_fails_the_replay():
    """What serve did before issue 56 in the retry-after mode: it held on, and answered the body
    that came after Go's 2 s."""
    def change(ours):
        ours["answers"]["late"] = {"outcome": "answered", "status": 200, "body": "", "Connection": "close"}
    assert list(replay.differences("late-body-retry-after", flipped("late-body-retry-after", change))) == ["answer late"]


def test_a_timeout_s_abort_logged_as_a_panic_fails_the_replay():
    def change(ours):
        ours["counted"]["http: panic serving"] += 1
    found = replay.differences("request-timeout-head-sent", flipped("request-timeout-head-sent", change))
    assert list(found) == ["counted"] and "http: panic serving" in found["counted"]


def test_post_timeout_activity_logged_more_often_than_go_s_fails_the_replay():
    # (fewer is no difference: nothing orders the line before the exit, so a loaded machine may lose
    # it; that it is logged at all is test_filters_timeout.py's post-timeout tests' to show)
    def more(ours):
        ours["counted"]["Post-timeout activity"] = 2
    assert list(replay.differences("request-timeout-head-sent", flipped("request-timeout-head-sent", more))) == ["counted"]

    def fewer(ours):
        ours["counted"]["Post-timeout activity"] = 0
    assert replay.differences("request-timeout-head-sent", flipped("request-timeout-head-sent", fewer)) == {}


# the wait group held until /echo's header went out, as before issue 56: werkzeug's own iterator,
# whose first chunk (empty) the server sends at once as Go's Flush, header and all
SERVE_WITH_THE_STALLED_BODY_BUG = """
import sys

import werkzeug.wrappers

from genericserver import sampleapi
from genericserver.__main__ import main

sampleapi.Response.get_app_iter = werkzeug.wrappers.Response.get_app_iter
sys.argv = ["genericserver", "serve", *sys.argv[1:]]
sys.exit(main())
"""


def test_a_serve_whose_stalled_body_holds_the_drain_fails_the_replay():
    """The stalled body put back on purpose, played for real: InFlightRequestsDrained never comes
    (Go's comes at once; 5 s is the wait here, the replay's own is 30 s)."""
    import subprocess
    import sys

    from parity import lifecycle

    def start(flags):
        return subprocess.Popen([sys.executable, "-c", SERVE_WITH_THE_STALLED_BODY_BUG, "--secure-port", "0", *flags],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    with pytest.raises(AssertionError, match='no line matched .*InFlightRequestsDrained'):
        lifecycle.run(replay.BY_NAME["stalled-body-retry-after"], start, go=False, wait=5.0)


def test_every_group_of_scenarios_has_its_test_file():
    from pathlib import Path

    from parity.lifecycle_corpus import GROUPS, named

    tests = Path(__file__).parent
    for group in GROUPS:
        assert named(group), group
        assert f'named("{group}")' in (tests / f"test_parity_lifecycle_{group}.py").read_text(), group

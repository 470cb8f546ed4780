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
    def change(ours):
        lines = ours["lines"]
        i, j = lines.index(hb.AFTER_DELAY), lines.index(hb.NOT_ACCEPTING)
        lines[i], lines[j] = lines[j], lines[i]
    found = replay.differences("default-delay", flipped("default-delay", change))
    assert list(found) == ["lines"] and "out of order" in found["lines"]


def test_a_missing_line_fails_the_replay():
    def change(ours):
        ours["lines"].remove(hb.DRAINED)
    assert "missing: " + hb.DRAINED in replay.differences("default-delay", flipped("default-delay", change))["lines"]

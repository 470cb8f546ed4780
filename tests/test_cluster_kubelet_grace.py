"""The kubelet's grace arithmetic (kuberuntime_container.go killContainer and executePreStopHook)
on the simulation runtime: what the preStop hook took comes off the grace, SIGTERM gets the rest
with a 2 s floor, SIGKILL at the deadline.

Kept apart from tests/test_cluster_kubelet.py, which the kubelet-prestop-full-grace lab points
students to for the API: these tests are that lab's answer.
"""

from __future__ import annotations

import pytest

from test_cluster_kubelet import SleepAction, run_deletion, takes


@pytest.mark.parametrize(
    "grace,pre_stop,term_after,signals,gone",
    [
        # the pod leaves the API one loop of the volume manager (0.1 s) after its container stopped
        (10, None, None, [("SIGTERM", 0), ("SIGKILL", 10)], 10.1),
        (10, None, 1.0, [("SIGTERM", 0)], 1.1),
        (10, SleepAction(3), None, [("SIGTERM", 3), ("SIGKILL", 10)], 10.1),
        # 3.7 s are 3 whole seconds: 7 s are left after the hook
        (10, takes(3.7), None, [("SIGTERM", 3.7), ("SIGKILL", 10.7)], 10.8),
        # 9.5 s leave 1 s, raised to the 2 s floor
        (10, takes(9.5), None, [("SIGTERM", 9.5), ("SIGKILL", 11.5)], 11.6),
        (10, takes(9.5), 0.5, [("SIGTERM", 9.5)], 10.1),
    ],
    ids=[
        "no-prestop-sigkill-at-grace",
        "exits-on-sigterm",
        "sleep-prestop-subtracted",
        "prestop-whole-seconds-subtracted",
        "two-second-floor",
        "floor-then-clean-exit",
    ],
)
def test_prestop_time_is_subtracted_and_sigkill_comes_at_the_deadline(grace, pre_stop, term_after, signals, gone):
    got = run_deletion(grace, pre_stop, term_after)
    assert got["signals"] == signals
    assert got["gone"] == gone


def test_a_hanging_prestop_does_not_extend_the_pods_life_beyond_grace_plus_two_seconds():
    got = run_deletion(10, takes(None))
    assert got["signals"] == [("SIGTERM", 10), ("SIGKILL", 12)]
    assert got["gone"] == 12.1  # one loop of the volume manager after the SIGKILL
    # the hook was still running when its container stopped: it fails then, and is recorded
    assert "FailedPreStopHook" in got["events"]

"""The shutdown-manager's retry of POST /healthcheck/fail (projectcontour/contour#3136: client-go's
backoff, 4 tries, 0.2 s, 1 s, 5 s, jittered) on virtual time.

Kept apart from tests/test_cluster_shutdownmanager.py, which the contour-healthcheck-fail-no-retry
lab points students to for its FakeAdmin: this schedule is that lab's answer.
"""

from __future__ import annotations

import pytest

from genericserver.cluster.shutdownmanager import ShutdownOptions, shutdown
from genericserver.events import EventStream
from genericserver.testing.sim import Simulation
from test_cluster_shutdownmanager import FakeAdmin


@pytest.mark.parametrize(
    "failures,jitter,attempts",
    [
        (0, 0.0, [0.0]),
        (2, 0.0, [0.0, 0.2, 1.2]),
        (9, 0.0, [0.0, 0.2, 1.2, 6.2]),  # four tries, then give up and go on
        (9, 1.0, [0.0, 0.22, 1.32, 6.82]),  # each wait stretched by up to 10 %
    ],
    ids=["first-try", "third-try", "gives-up-after-four", "full-jitter"],
)
def test_the_healthcheck_fail_backoff_schedule(tmp_path, failures, jitter, attempts):
    admin = FakeAdmin(failures)
    events = EventStream()

    def main() -> bool:
        opts = ShutdownOptions(str(tmp_path / "ok"), check_interval=1, check_delay=0)
        return shutdown(opts, admin, events=events, rand=lambda: jitter)

    assert Simulation().run(main) is True
    assert [round(t, 6) for t in admin.attempts] == attempts
    gave_up = [e.name for e in events if "error sending envoy healthcheck fail" in e.name]
    assert gave_up == (["shutdown: error sending envoy healthcheck fail: creating healthcheck fail POST request failed: connection refused"]
                       if failures >= 4 else [])

"""Tests of genericserver.audit.memory: the test backend behaves like Go's fakeAudit."""

from __future__ import annotations

import pytest

from genericserver import runtime as rt
from genericserver.audit.event import Event, Level, Stage
from genericserver.audit.memory import MemoryBackend
from genericserver.testing.sim import Simulation


def test_records_copies_and_answers_audited():
    b = MemoryBackend()
    ev = Event(audit_id="a", stage=Stage.REQUEST_RECEIVED)
    assert b.process_events(ev)
    ev.stage = Stage.RESPONSE_COMPLETE
    b.process_events(ev)
    assert b.audited("a") and not b.audited("b")
    assert b.stages("a") == [Stage.REQUEST_RECEIVED, Stage.RESPONSE_COMPLETE]
    assert b.name() == "fake-audit"


def test_shutdown_waits_for_stop():
    def main():
        b = MemoryBackend()
        stop = rt.event("stop")
        b.run(stop)
        done = rt.event("done")
        rt.go(lambda: (b.shutdown(), done.set()), name="shutdown")
        rt.sleep(10)
        assert not done.is_set() and not b.shutdown_completed()
        stop.set()
        done.wait()
        return b.shutdown_completed()

    assert Simulation().run(main) is True


def test_shutdown_before_run_is_an_error():
    with pytest.raises(RuntimeError, match="shut down before it was run"):
        MemoryBackend().shutdown()


def test_policy_level_and_callback():
    seen = []
    b = MemoryBackend(level=Level.REQUEST, on_request=seen.append)
    assert b.evaluate_policy_rule(None).level == Level.REQUEST
    b.process_events(Event(audit_id="x"), Event(audit_id="y"))
    assert [[e.audit_id for e in batch] for batch in seen] == [["x", "y"]]

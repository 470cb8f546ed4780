"""Tests of genericserver.audit.union: Go's union_test.go."""

from __future__ import annotations

import pytest

from genericserver import runtime as rt
from genericserver.apimachinery.errors import Aggregate
from genericserver.audit.event import Event
from genericserver.audit.union import union


class FakeBackend:
    def __init__(self, name="", ok=True):
        self.events = []
        self._name = name
        self._ok = ok
        self.shut = False

    def process_events(self, *events):
        self.events.extend(events)
        return self._ok

    def run(self, stop):
        pass

    def shutdown(self):
        self.shut = True

    def name(self):
        return self._name


def test_union():
    backends = [FakeBackend(), FakeBackend(), FakeBackend()]
    b = union(*backends)
    assert b.process_events(*[Event(audit_id=str(i)) for i in range(5)])
    for backend in backends:
        assert [e.audit_id for e in backend.events] == ["0", "1", "2", "3", "4"]


def test_union_reports_any_failure_but_feeds_all():
    a, bad, c = FakeBackend(), FakeBackend(ok=False), FakeBackend()
    assert union(a, bad, c).process_events(Event()) is False
    assert len(a.events) == len(bad.events) == len(c.events) == 1


class CannotMultipleRunBackend(FakeBackend):
    def __init__(self):
        super().__init__("cannotMultipleRunBackend")
        self.started = rt.event("started")

    def run(self, stop):
        if self.started.is_set():
            raise RuntimeError("run twice")  # Go: closing a closed channel panics
        self.started.set()


def test_union_run():
    backends = [CannotMultipleRunBackend() for _ in range(3)]
    union(*backends).run(rt.event("stop"))
    assert all(b.started.is_set() for b in backends)


def test_union_run_aggregates_errors():
    class Failing(FakeBackend):
        def run(self, stop):
            raise RuntimeError(f"cannot start {self._name}")

    with pytest.raises(Aggregate) as exc:
        union(Failing("a"), FakeBackend("ok"), Failing("b")).run(rt.event("stop"))
    assert str(exc.value) == "[cannot start a, cannot start b]"


def test_union_shutdown_and_name():
    a, b = FakeBackend("log"), FakeBackend("buffered<log>")
    u = union(a, b)
    u.shutdown()
    assert a.shut and b.shut
    assert u.name() == "union[log,buffered<log>]"
    assert union(a) is a

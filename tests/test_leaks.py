"""genericserver.testing.leaks: the leak checks every test ends with (no Go twin)."""

from __future__ import annotations

from genericserver import runtime as rt
from genericserver.testing.leaks import goroutines_started_since


def test_a_goroutine_left_by_an_earlier_test_is_not_blamed_on_the_next():
    # two suites at once: one test failed and left its server's goroutines running, and every
    # later test of that worker failed its leak check too (60 errors for one failure)
    release = rt.event("release")
    left = rt.go(release.wait, name="left-by-an-earlier-test")
    try:
        before = rt.THREADS.live()
        assert goroutines_started_since(before) == []
        mine = rt.go(release.wait, name="left-by-this-test")
        assert [g.name for g in goroutines_started_since(before)] == ["left-by-this-test"]
    finally:
        release.set()
        assert left.done.wait(10) and mine.done.wait(10)

"""Tests of genericserver.testing.pauses: a failed real-socket test says what a debugger pause outlasted."""

from __future__ import annotations

import pdb

from genericserver.testing import pauses


def test_time_at_the_pdb_prompt_is_counted(monkeypatch):
    ticks = iter([100.0, 165.0])
    monkeypatch.setattr(pauses.time, "monotonic", lambda: next(ticks))
    monkeypatch.setattr(pdb.Pdb, "interaction", lambda self, *a, **k: None)  # a prompt left at once
    monkeypatch.setattr(pauses, "_installed", [False])
    pauses.install()  # wraps the stand-in; monkeypatch puts the real one back afterwards
    pauses.reset()
    pdb.Pdb().interaction(None, None)
    assert pauses.paused() == 65.0


def test_the_explanation_names_the_limits_the_pause_outlasted_and_the_way_out():
    text = pauses.explain(65.0)
    assert "paused at the debugger prompt for 65 s" in text
    assert "the request timeout (the timeout filter answers 504): 60 s" in text
    assert "the read-header timeout" in text and "idle timeout" not in text
    assert "simulation runtime (virtual time) have no such limit" in text
    assert "--break FILE:LINE" in text
    assert "No server deadline is that short" in pauses.explain(3.0)


def test_a_failing_test_that_was_paused_says_so_and_a_passing_or_unpaused_one_does_not(pytester):
    pytester.makepyfile(
        """
        from genericserver.testing import pauses

        def test_paused_then_failed():
            pauses._paused[0] = 65.0  # as if you had sat at the pdb prompt for 65 s
            assert False, "got a 504"

        def test_failed_without_a_pause():
            assert False

        def test_paused_and_passed():
            pauses._paused[0] = 65.0
        """
    )
    result = pytester.runpytest_inprocess("-p", "genericserver.testing.pauses", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert out.count("paused in the debugger") == 1
    assert "the request timeout (the timeout filter answers 504): 60 s" in out

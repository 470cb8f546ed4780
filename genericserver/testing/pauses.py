"""Telling a test's reader that a debugger pause, not the server, failed a real-socket test (no Go twin).

A test on real sockets runs on real time: while you sit at a ``pdb`` prompt the server's deadlines
keep running, and a 65 s pause turns a request into a 504 that looks like a bug. The simulation
runtime's tests run on virtual time and cannot be failed that way (a pause changes nothing
there: ``python -m genericserver.testing.replay FILE --break FILE:LINE``).

:func:`install` wraps ``pdb.Pdb.interaction`` (where pdb waits for you) to add up the time spent
at the prompt. The module is also a pytest plugin (``tests/conftest.py`` loads it with
``pytest_plugins``): it resets the count before each test and, when a test fails after a pause of
a second or more, adds :func:`explain`'s text to the report. Debuggers that do not go through pdb
(an IDE's) are not seen.
"""

from __future__ import annotations

import pdb
import time
from typing import Any

import pytest

# The real-time limits a pause can run into, longest first (where they are set).
REAL_TIME_LIMITS = (
    ("the idle timeout of a keep-alive connection", 90.0, "httpserver.Server(idle_timeout=...)"),
    ("the request timeout (the timeout filter answers 504)", 60.0, "--request-timeout, Config.request_timeout"),
    ("the read-header timeout (the connection is closed unanswered)", 32.0, "httpserver.Server(read_header_timeout=...)"),
    ("the test's own waits (WAIT in each test module)", 5.0, "tests/test_*.py"),
)

_paused = [0.0]  # seconds spent at the pdb prompt since the last reset
_installed = [False]


def install() -> None:
    """Count time spent in ``pdb.Pdb.interaction`` (idempotent)."""
    if _installed[0]:
        return
    _installed[0] = True
    original = pdb.Pdb.interaction

    def interaction(self: pdb.Pdb, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            return original(self, *args, **kwargs)
        finally:
            _paused[0] += time.monotonic() - started

    pdb.Pdb.interaction = interaction  # type: ignore[method-assign]


def reset() -> None:
    _paused[0] = 0.0


def paused() -> float:
    """Seconds spent at the pdb prompt since the last :func:`reset`."""
    return _paused[0]


def explain(seconds: float) -> str:
    """Why a test that was paused that long may have failed, and what to do instead."""
    passed = [f"  {what}: {limit:g} s ({where})" for what, limit, where in REAL_TIME_LIMITS if seconds >= limit]
    lines = [f"This test was paused at the debugger prompt for {seconds:.0f} s. It runs on real sockets and real time,",
             "so the server's deadlines kept running while you looked around."]
    if passed:
        lines.append("Limits that pause outlasted:")
        lines += passed
    else:
        lines.append("No server deadline is that short, but the test's own timed waits may be.")
    lines += ["Tests on the simulation runtime (virtual time) have no such limit: a pause there changes",
              "nothing. To step through a shutdown, replay one: python -m genericserver.testing.replay FILE --break FILE:LINE."]
    return "\n".join(lines)


# -- the pytest plugin -------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    install()


def pytest_runtest_setup(item: pytest.Item) -> None:
    reset()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and paused() >= 1.0:
        report.sections.append(("paused in the debugger", explain(paused())))

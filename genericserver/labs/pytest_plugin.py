"""A pytest plugin that runs the tests with the active lab's bug switched in (no Go twin).

Load it explicitly, from the directory where ``genericserver lab start NAME`` was run::

    pytest -p genericserver.labs.pytest_plugin my_test.py

At configure time (before any test file is imported) it reads the active lab the way the
``genericserver`` command does (:func:`genericserver.labs.state.active_lab`: the
``GENERICSERVER_LAB`` variable, else ``.genericserver-lab`` in the directory pytest was started
from) and switches its bug in until pytest ends. The report header says which lab is active.
Without an active lab it changes nothing. It takes ``GENERICSERVER_LAB`` out of the environment
once it has read it. ``genericserver lab check`` does not use it: its runs switch the bug in
themselves, where a test cannot see it (:mod:`genericserver.labs.forkrun`); the state this
plugin keeps, for its report header, is a pair's own runs' business.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Optional

from genericserver.labs import state

_stack = contextlib.ExitStack()
_active: list[Optional[str]] = [None]


def pytest_configure(config: Any) -> None:
    _active[0] = _stack.enter_context(state.activated(config.invocation_params.dir, announce=False))
    # the tests judge behaviour, not the switch: what said which lab is active is gone before
    # they are imported ('lab check' runs them where no state file is)
    os.environ.pop(state.LAB_ENV, None)


def pytest_unconfigure(config: Any) -> None:
    _stack.close()
    _active[0] = None


def pytest_report_header(config: Any) -> str:
    if _active[0] is None:
        return "genericserver lab: none active"
    return f"genericserver lab: {_active[0]} ({state.banner(_active[0])})"

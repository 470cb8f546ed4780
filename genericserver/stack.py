"""Where something was registered, for diagnostics (no Go twin: plays Go's debug.Stack()).

Go records ``debug.Stack()`` when a path or a hook is registered, to explain a duplicate later.
Formatting a Python stack reads source lines and costs more than the registration itself, and
it is almost never shown, so :func:`capture` keeps the frames and formats them only when the
stack is turned into text.
"""

from __future__ import annotations

import sys
import traceback


class Stack:
    """The caller's stack at capture time; ``str()`` formats it like ``traceback.format_stack``."""

    __slots__ = ("_summary",)

    def __init__(self, skip: int):
        self._summary = traceback.StackSummary.extract(traceback.walk_stack(sys._getframe(skip + 1)), lookup_lines=False)
        self._summary.reverse()

    def __str__(self) -> str:
        return "".join(self._summary.format())

    __repr__ = __str__


def capture(skip: int = 1) -> Stack:
    """The stack of whoever called the caller of ``capture`` (``skip`` frames above it)."""
    return Stack(skip + 1)

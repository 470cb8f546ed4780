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
        # (file, line, function) of each frame, outermost first: a plain walk is several
        # times cheaper than StackSummary.extract, which is built only when formatting
        frames = []
        f = sys._getframe(skip + 1)
        while f is not None:
            code = f.f_code
            frames.append((code.co_filename, f.f_lineno, code.co_name, None))
            f = f.f_back
        frames.reverse()
        self._summary = frames

    def __str__(self) -> str:
        return "".join(traceback.StackSummary.from_list(self._summary).format())

    __repr__ = __str__


def capture(skip: int = 1) -> Stack:
    """The stack of whoever called the caller of ``capture`` (``skip`` frames above it)."""
    return Stack(skip + 1)

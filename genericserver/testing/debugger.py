"""The debugger of ``--break`` prompts: pdb with a ``goroutines`` command (no Go twin).

At a ``genericserver replay FILE --break FILE:LINE`` prompt one goroutine holds the baton and
every other one waits. ``goroutines`` (or ``gr``) lists them all, as Go's debuggers list
goroutines: the id, the name given to ``rt.go``, the state (``running``, ``runnable``,
``sleeping``, or the event, lock or condition it waits on, with its deadline in virtual time),
and the innermost line of its own code (the runtime's and the simulation's frames left out).
"""

from __future__ import annotations

import pdb
from typing import Any

from genericserver import runtime as rt


class GoroutinePdb(pdb.Pdb):
    """pdb, plus ``goroutines``."""

    def do_goroutines(self, arg: str) -> None:
        """goroutines | gr
        List the simulation's goroutines: id, name, state, and the line each is at."""
        from genericserver.testing.sim import Simulation

        sim = rt.current()
        if not isinstance(sim, Simulation):
            self.message("goroutines: not in a simulated run")
            return
        for gid, name, state, where in sim.goroutines():  # three short lines each: a projector's width
            self.message(f"{gid:>3} {name}")
            self.message(f"   {state}")
            self.message(f"   at {where}")

    do_gr = do_goroutines


def prompt_at(frame: Any) -> None:
    """The prompt at ``frame``'s current line, before it runs; ``n``, ``s`` and ``c`` work."""
    import sys

    debugger = GoroutinePdb()
    debugger.reset()
    sys.settrace(debugger.trace_dispatch)
    frame.f_trace = debugger.trace_dispatch
    debugger.interaction(frame, None)

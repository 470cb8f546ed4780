"""How a Go process dies of a panic or a SIGQUIT, for a process of threads (no Go twin: plays Go's runtime).

Two things a Go binary does that no apiserver file spells out, because the Go runtime does them:

* an unrecovered panic ends the process: the runtime prints ``panic: <value>`` (a value that
  was recovered and panicked again, as ``HandleCrash`` does, gets ``[recovered, repanicked]``,
  Go 1.25's wording), a blank line, then the panicking goroutine's stack, innermost call
  first, and exits with status 2 (:func:`die_of_panic`);
* SIGQUIT (Ctrl-\\) prints ``SIGQUIT: quit`` and the stack of every goroutine, then exits with
  status 2 (:func:`die_of_sigquit`). Go adds the program counter and registers, which mean
  nothing for Python and are left out.

A goroutine is a thread here, so the dump lists every thread, each with its name (the
goroutine names the server gives, ``go:delayed-stop``, ``go:drain-watches``..., which Go
itself cannot show) and its native thread id in the place of Go's goroutine number. The state
in brackets is guessed from the innermost Python frame (``chan receive`` for an event wait,
``select``, ``sleep``, ``semacquire``, ``IO wait``, ``idle`` for a pooled thread waiting for
work, ``running`` otherwise). A frame reads ``module.function(...)`` then, on the next line
after a tab, ``file:line``, as Go writes ``pkg.Func(...)`` and ``file.go:line +0x1f``.

Both end the process with ``os._exit(2)`` (the seam ``_exit``): no cleanup runs, as none runs
in Go. Who calls them: :mod:`genericserver.cmd` sets the threads runtime's ``on_panic`` to
:func:`die_of_panic` (a process started by ``genericserver serve`` dies of a panic as Go's
does; tests and library users keep the default, which records the panic), and the
``signal-handler`` goroutine of :mod:`genericserver.signal_handler` calls :func:`die_of_sigquit`.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from types import FrameType, TracebackType
from typing import Any, Callable, Iterable, Optional, TextIO

# seam: how the process ends (Go's exit(2))
_exit: Callable[[int], Any] = os._exit

_STATES = {
    "wait": "chan receive",  # threading.Event.wait / Condition.wait: <-ch
    "_select": "select",
    "select": "select",
    "sleep": "sleep",
    "acquire": "semacquire",
    "_work": "idle",  # a pooled goroutine thread between goroutines
    "_loop": "select",  # the timer thread
    "accept": "IO wait",
    "recv": "IO wait",
    "recv_into": "IO wait",
    "readinto": "IO wait",
    "readline": "IO wait",
    "_receive": "syscall",  # the signal goroutine's pipe read
}


def frame_lines(frames: Iterable[tuple[FrameType, int]]) -> list[str]:
    """Go's frame lines for (frame, line) pairs given innermost first."""
    out = []
    for frame, lineno in frames:
        code = frame.f_code
        module = frame.f_globals.get("__name__", "?")
        out.append(f"{module}.{getattr(code, 'co_qualname', code.co_name)}(...)")
        out.append(f"\t{code.co_filename}:{lineno}")
    return out


def stack_of(frame: Optional[FrameType]) -> list[tuple[FrameType, int]]:
    frames = []
    while frame is not None:
        frames.append((frame, frame.f_lineno))
        frame = frame.f_back
    return frames


def traceback_frames(tb: Optional[TracebackType]) -> list[tuple[FrameType, int]]:
    frames = [(f, line) for f, line in traceback.walk_tb(tb)]
    frames.reverse()  # walk_tb goes outermost first
    return frames


def _state(frames: list[tuple[FrameType, int]], current: bool, name: str = "") -> str:
    if current or not frames:
        return "running"
    state = _STATES.get(frames[0][0].f_code.co_name, "running")
    if state == "idle" and name != "go:idle":
        return "runnable"  # handed a goroutine (and named after it) but not yet running it
    return state


def goroutine_header(thread: threading.Thread, state: str) -> str:
    return f'goroutine {thread.native_id} "{thread.name}" [{state}]:'


def format_all_goroutines() -> str:
    """Every thread with its stack, the calling one first (Go lists the current goroutine first)."""
    frames = sys._current_frames()
    me = threading.current_thread()
    threads = sorted(threading.enumerate(), key=lambda t: (t is not me, t.native_id or 0))
    blocks = []
    for thread in threads:
        frame = frames.get(thread.ident or -1)
        if frame is None:
            continue
        stack = stack_of(frame)
        if thread is me:
            stack = stack[1:]  # leave out this function itself
        lines = [goroutine_header(thread, _state(stack, thread is me, thread.name))] + frame_lines(stack)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def stack_of_panic(exc: BaseException, outer: Optional[FrameType] = None) -> str:
    """Go's ``runtime.Stack(buf, false)`` while panicking: this goroutine, from where ``exc`` was
    raised outwards to the frame that caught it, then on from ``outer`` (its caller) if given."""
    frames = traceback_frames(exc.__traceback__)
    if outer is not None:
        frames += stack_of(outer)
    return "\n".join([goroutine_header(threading.current_thread(), "running")] + frame_lines(frames)) + "\n"


def format_panic(exc: BaseException, repanicked: bool = False) -> str:
    """``panic: <value>`` and the goroutine that raised it, as Go's runtime prints an unrecovered panic."""
    value = str(exc) or type(exc).__name__
    suffix = " [recovered, repanicked]" if repanicked else ""
    # Go indents the continuation lines of a multi-line panic value with a tab
    head = "panic: " + value.replace("\n", "\n\t") + suffix
    thread = threading.current_thread()
    stack = traceback_frames(exc.__traceback__)
    return f"{head}\n\n" + "\n".join([goroutine_header(thread, "running")] + frame_lines(stack)) + "\n"


def die_of_panic(name: str, exc: BaseException, out: Optional[TextIO] = None) -> None:
    """End the process as Go's runtime does on a panic nobody recovered: the report, then exit 2.

    ``name`` is the goroutine's (the runtime's ``on_panic`` passes it; the thread carries it too).
    A panic that went through ``utilruntime.handle_crash`` was recovered and raised again.
    """
    from_handle_crash = getattr(exc, "_handle_crash_repanicked", False)
    _write(out, format_panic(exc, repanicked=from_handle_crash))
    _exit(2)


def die_of_sigquit(out: Optional[TextIO] = None) -> None:
    """``SIGQUIT: quit``, every goroutine's stack, exit 2."""
    _write(out, "SIGQUIT: quit\n\n" + format_all_goroutines())
    _exit(2)


def _write(out: Optional[TextIO], text: str) -> None:
    stream = out if out is not None else sys.stderr
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):  # stderr gone: the exit status still says it
        pass

"""Port of k8s.io/apimachinery/pkg/util/runtime/runtime.go (v1.36.0): HandleCrash, ReallyCrash, PanicHandlers.

Go's apiserver starts goroutines with ``defer utilruntime.HandleCrash()``: a panic in them is
recovered, every function in ``PanicHandlers`` runs (``logPanic``: the line
``"Observed a panic" panic="..." stacktrace=<...>``), then, since ``ReallyCrash`` is true by
default, the value is panicked again. Nothing recovers it a second time, so the Go runtime ends
the process: ``panic: <value> [recovered, repanicked]``, the goroutine's stack, exit status 2.

Here a panic is an exception and the deferred call is a ``with`` block::

    with utilruntime.handle_crash():
        ...

On an exception, :data:`PANIC_HANDLERS` and the block's own handlers run; with
:data:`REALLY_CRASH` (True, as in Go; tests may turn it off to survive a crash, as Go's tests
do) the exception goes on out of the goroutine, else it is swallowed. What an exception leaving
a goroutine does is the runtime's business, as in Go: a process started by
``genericserver serve`` dies as Go's does (exit 2, see :mod:`genericserver.runtime.goroutines`); in
tests the threads runtime records it in ``panics`` instead.

A panic whose value is a string (Go's ``panic(fmt.Sprintf(...))``, as ``RunServer`` does) is
:class:`Panic` here, a ``BaseException``, so that no ``except Exception`` (Go's error handling)
takes it for an error; ``logPanic`` prints such a value as it is, and any other with its Go
syntax as well (``panicGoValue``, Python's ``repr`` here). Go's line is attributed to the
function that deferred ``HandleCrash``; here to the function holding the ``with`` block.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Callable, Optional

from genericserver import klog
from genericserver.filters.timeout import AbortHandler
from genericserver.runtime.goroutines import stack_of_panic

# Go's ReallyCrash: panic again after the handlers ran (tests set it False to survive)
REALLY_CRASH = True


class Panic(BaseException):
    """``panic("...")`` with a string value: the message is the value."""


def log_panic(exc: BaseException) -> None:
    """``logPanic``: ``Observed a panic``, except for ``http.ErrAbortHandler`` (a deliberate abort).

    Call it from a handler run by :func:`handle_crash`: the line names the function holding
    the ``with`` block.
    """
    if isinstance(exc, AbortHandler):
        return
    # the traceback runs from the with block's function inwards; its callers lead outwards
    stacktrace = stack_of_panic(exc, sys._getframe(2).f_back)
    if isinstance(exc, Panic):
        klog.error_s_depth(2, None, "Observed a panic", panic=str(exc), stacktrace=stacktrace)
    else:
        klog.error_s_depth(2, None, "Observed a panic", panic=str(exc), panicGoValue=repr(exc), stacktrace=stacktrace)


PanicHandler = Callable[[BaseException], None]

# Go's PanicHandlers: run for every panic handle_crash sees, before the block's own handlers
PANIC_HANDLERS: list[PanicHandler] = [log_panic]


class handle_crash:  # noqa: N801 - used as `with handle_crash():`, Go's `defer HandleCrash()`
    """``defer utilruntime.HandleCrash(additionalHandlers...)`` as a ``with`` block (see the module docstring)."""

    def __init__(self, *additional_handlers: PanicHandler):
        self.additional_handlers = additional_handlers

    def __enter__(self) -> "handle_crash":
        return self

    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException], tb: Optional[TracebackType]) -> bool:
        if exc is None:
            return False
        for fn in PANIC_HANDLERS:
            fn(exc)
        for fn in self.additional_handlers:
            fn(exc)
        if REALLY_CRASH:
            # recovered and panicked again: Go's runtime says so when it ends the process
            exc._handle_crash_repanicked = True  # type: ignore[attr-defined]
            return False
        return True

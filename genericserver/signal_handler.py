"""Port of k8s.io/apiserver/pkg/server/signal.go and signal_posix.go (v1.36.0).

:func:`setup_signal_context` is how a server process learns it should stop: the first SIGTERM
or SIGINT cancels the returned context (which starts the whole graceful shutdown), a second one
ends the process at once with exit code 1, for the impatient. It may be called once per process
(Go's second call panics on closing a closed channel; here it raises). :func:`request_shutdown`
injects a signal from code, as if one had arrived.

How signals travel, as in Go: Go's runtime turns a signal into a message on a channel that one
goroutine reads. Here the message is one byte on a pipe, written by CPython's C-level signal
handler itself (``signal.set_wakeup_fd``): on whichever thread the OS delivered the signal to,
and without the main thread. A Python-level handler would not do: Python runs those in the
main thread only, between bytecodes, so a signal the OS hands to another thread while the main
thread is blocked on a lock (waiting for the shutdown, say) would never be handled. The
Python-level handler is installed only to replace the default action, and does nothing. The
``signal-handler`` goroutine reads the pipe: it cancels the context on the first shutdown
signal and calls ``os._exit(1)`` on the second (Go's ``os.Exit(1)``: no cleanup, no flushing of
buffered output). Bytes of other signals that have Python handlers (the wakeup fd gets them
all) are skipped. A process has one wakeup fd: an asyncio loop in the main thread, which sets
its own, does not mix with this (none runs in this project).

SIGQUIT, too, is read from the pipe: the goroutine then prints every goroutine's stack and ends
the process with exit status 2 (:func:`genericserver.runtime.goroutines.die_of_sigquit`). That is not
in signal.go: every Go binary's runtime does it; here it needs this module's pipe, because a
Python-level handler could be stuck behind a main thread blocked on a lock, as above.

Differences from Go: Go's channel holds two pending signals and ``RequestShutdown`` returns
False when it is full; the pipe here holds thousands, so it is False only when no handler is set
up. Signal handlers can only be installed from the main thread (``ValueError`` otherwise). This
is for real processes on the threads runtime: the goroutine blocks in a pipe read, which the
simulation runtime cannot schedule.
:func:`_reset_for_tests` undoes everything (previous handlers back, goroutine stopped) so a test
process can set it up again; Go has no such thing.

Two Go files in one module: signal_posix.go holds only the list of signals (SIGINT, SIGTERM) that
signal.go waits for.
"""

from __future__ import annotations

import os
import signal
from typing import Any, Callable, Optional

from genericserver import runtime as rt
from genericserver.context import context as gocontext
from genericserver.runtime import goroutines

SHUTDOWN_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# what Go's runtime answers with a dump of every goroutine (not a shutdown signal)
QUIT_SIGNAL = signal.SIGQUIT

_STOP = 0  # not a signal number: tells the goroutine to return (tests only)

# seams: what the second signal calls, and what SIGQUIT does
_exit: Callable[[int], Any] = os._exit
_quit: Callable[[], Any] = goroutines.die_of_sigquit


class _Handler:
    def __init__(self) -> None:
        self.ctx, self._cancel = gocontext.with_cancel(gocontext.background())
        self._r, self._w = os.pipe()
        os.set_blocking(self._w, False)  # a handler must never block the main thread
        self._previous: dict[int, Any] = {}
        self._previous_wakeup_fd: Optional[int] = None
        try:
            self._previous_wakeup_fd = signal.set_wakeup_fd(self._w, warn_on_full_buffer=False)
            for sig in SHUTDOWN_SIGNALS + (QUIT_SIGNAL,):
                self._previous[sig] = signal.signal(sig, self._on_signal)
        except BaseException:
            self._restore()
            self._close()
            raise
        self.goroutine = rt.go(self._loop, name="signal-handler")

    def _on_signal(self, signum: int, frame: Any) -> None:
        # the signal number is on the pipe already (the wakeup fd); this handler only keeps
        # the default action (ending the process) away
        return None

    def notify(self, signum: int) -> bool:
        try:
            return os.write(self._w, bytes([signum])) == 1
        except OSError:  # full (BlockingIOError) or already closed
            return False

    def _receive(self) -> Optional[int]:
        """The next shutdown signal's number; None once told to stop (or the pipe is gone).

        A SIGQUIT on the way ends the process with every goroutine's stack, as Go's runtime does.
        """
        while True:
            try:
                data = os.read(self._r, 1)
            except OSError:
                return None
            if not data or data[0] == _STOP:
                return None
            if data[0] == QUIT_SIGNAL:
                _quit()
            elif data[0] in SHUTDOWN_SIGNALS:
                return data[0]

    def _loop(self) -> None:
        if self._receive() is None:
            return
        self._cancel()
        if self._receive() is None:
            return
        _exit(1)  # second signal: no more patience

    def _restore(self) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()
        if self._previous_wakeup_fd is not None:
            signal.set_wakeup_fd(self._previous_wakeup_fd)
            self._previous_wakeup_fd = None

    def _close(self) -> None:
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass

    def stop(self) -> None:
        self._restore()
        os.write(self._w, bytes([_STOP]))
        self.goroutine.join()
        self._close()


_handler: Optional[_Handler] = None


def setup_signal_context() -> gocontext.Context:
    """A context cancelled by the first SIGTERM or SIGINT; a second one exits with code 1.

    Call it once per process, from the main thread; a second call raises RuntimeError.
    """
    global _handler
    if _handler is not None:
        raise RuntimeError("close of closed channel")  # Go panics the same way
    _handler = _Handler()
    return _handler.ctx


def setup_signal_handler() -> rt.Event:
    """Like :func:`setup_signal_context`, returning only the done event (Go's stop channel)."""
    return setup_signal_context().done()


def request_shutdown() -> bool:
    """Act as if a shutdown signal arrived; False when no handler is set up."""
    h = _handler
    if h is None:
        return False
    return h.notify(SHUTDOWN_SIGNALS[0])


def _reset_for_tests() -> None:
    """Put back the previous signal handlers, stop the goroutine and allow a new setup."""
    global _handler
    h, _handler = _handler, None
    if h is not None:
        h.stop()

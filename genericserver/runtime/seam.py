"""The runtime seam's interface: what every runtime provides, and what is built on it (no Go twin).

:class:`Runtime` lists the primitives a runtime must supply (goroutines, one-shot events,
``select``, locks, conditions, the clock) and builds the composite ones from them: ``after``,
``after_func``, and Go's ``sync.RWMutex`` and ``sync.Once`` (:class:`RWLock`, :class:`Once`).
:mod:`genericserver.runtime` implements it on real threads and is where server code gets it
from; :mod:`genericserver.testing.sim` implements it on virtual time.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Callable, Iterator, Optional


class Event:
    """A one-shot event: Go's closed channel. Once set it stays set and wakes every waiter."""

    name: str

    def set(self) -> None:
        raise NotImplementedError

    def is_set(self) -> bool:
        raise NotImplementedError

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until set; return False if ``timeout`` seconds passed first."""
        raise NotImplementedError

    def __repr__(self) -> str:
        state = "set" if self.is_set() else "open"
        return f"<{type(self).__name__} {self.name!r} {state}>"


class BoundedSemaphore:
    """``threading.BoundedSemaphore``'s interface: Go's buffered channel used as a semaphore.

    ``acquire(blocking=False)`` is Go's ``select { case c <- true: ... default: }``, ``release()``
    is ``<-c`` (releasing more than was acquired raises ``ValueError``), and ``taken()`` is
    ``len(c)``: how many permits are out.
    """

    def acquire(self, blocking: bool = True, timeout: Optional[float] = None) -> bool:
        raise NotImplementedError

    def release(self, n: int = 1) -> None:
        raise NotImplementedError

    def taken(self) -> int:
        raise NotImplementedError


class Goroutine:
    """A handle on a started goroutine: its name and an event set when it returns."""

    def __init__(self, name: str, done: Event):
        self.name = name
        self._done = done
        self.exception: Optional[BaseException] = None

    @property
    def done(self) -> Event:
        return self._done

    def join(self, timeout: Optional[float] = None) -> bool:
        return self.done.wait(timeout)

    def __repr__(self) -> str:
        return f"<Goroutine {self.name!r} {'done' if self.done.is_set() else 'running'}>"


class Timer:
    """The handle ``after_func`` returns; ``stop()`` keeps ``fn`` from running if it has not yet."""

    def __init__(self, stop: Event):
        self._stop = stop

    def stop(self) -> None:
        self._stop.set()


class Runtime:
    """What server code may use instead of ``threading`` and ``time``.

    Subclasses supply the primitives (``go``, ``event``, ``select``, ``lock``, ``condition``,
    ``bounded_semaphore``, ``now``, ``sleep``); the composite ones (``go_after``, ``after``, ``after_func``,
    ``rwlock``, ``once``) are built here from those, so both runtimes share one implementation of
    them (the threads runtime's ``go_after`` adds a speed trick).
    """

    name = "runtime"

    # -- primitives a runtime must supply -------------------------------------------------
    def go(self, fn: Callable[..., Any], *args: Any, name: str) -> Goroutine:
        raise NotImplementedError

    def event(self, name: str = "event") -> Event:
        raise NotImplementedError

    def select(self, *events: Event, timeout: Optional[float] = None) -> Optional[Event]:
        """Wait for the first of ``events`` to be set and return it (``None`` on timeout).

        When several are already set, the first in argument order wins; Go picks at random,
        which callers here never rely on.
        """
        raise NotImplementedError

    def lock(self) -> Any:
        raise NotImplementedError

    def condition(self, lk: Any = None) -> Any:
        raise NotImplementedError

    def bounded_semaphore(self, value: int, name: str = "semaphore") -> BoundedSemaphore:
        """A semaphore with ``value`` permits that refuses to be released beyond them."""
        raise NotImplementedError

    def now(self) -> float:
        raise NotImplementedError

    def sleep(self, seconds: float) -> None:
        raise NotImplementedError

    def wall(self) -> float:
        """Wall-clock seconds since the epoch, for timestamps people read (audit events)."""
        raise NotImplementedError

    # -- composites, shared by every runtime ----------------------------------------------
    def go_after(self, ev: Event, fn: Callable[..., Any], *args: Any, name: str) -> Goroutine:
        """``go func() { <-ev; fn(args...) }()``: a goroutine that waits for ``ev``, then calls
        ``fn``, which must not block (it cancels a context, closes a channel) nor take a lock the
        setter of ``ev`` may hold. The threads runtime may run ``fn`` on the thread that sets
        ``ev`` (see its ``go_after``)."""
        started_at = _caller_outside_the_runtime()  # (what a debugger shows while it waits)

        def wait_then_call() -> None:
            _ = started_at  # held in this frame, where the simulation's goroutine list finds it
            ev.wait()
            fn(*args)

        return self.go(wait_then_call, name=name)

    def after(self, seconds: float, name: str = "after") -> Event:
        """An event that fires ``seconds`` from now (``time.After``)."""
        ev = self.event(name)
        self.after_func(seconds, ev.set, name=name)
        return ev

    def after_func(self, seconds: float, fn: Callable[[], Any], *, name: str) -> Timer:
        """Run ``fn`` in its own goroutine after ``seconds`` unless the timer is stopped first."""
        stop = self.event(f"{name}-stop")

        def timer() -> None:
            if self.select(stop, timeout=max(0.0, seconds)) is None:
                fn()

        self.go(timer, name=name)
        return Timer(stop)

    def rwlock(self) -> "RWLock":
        return RWLock(self)

    def once(self) -> "Once":
        return Once(self)


def _caller_outside_the_runtime() -> tuple[str, int, str]:
    """``(file, line, function)`` of the innermost caller outside this package."""
    frame = sys._getframe(1)
    while frame.f_back is not None and "genericserver/runtime/" in frame.f_code.co_filename.replace(os.sep, "/"):
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name


class RWLock:
    """``sync.RWMutex``: many readers or one writer; a waiting writer blocks new readers."""

    def __init__(self, rt: Runtime):
        # the readers' paths take the condition's lock directly: one call less per request
        self._lock = rt.lock()
        self._cond = rt.condition(self._lock)
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    def rlock(self) -> None:
        with self._lock:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1

    def runlock(self) -> None:
        with self._lock:
            if self._readers <= 0:
                raise RuntimeError("sync: RUnlock of unlocked RWMutex")
            self._readers -= 1
            if self._readers == 0 and self._writers_waiting:
                # only a writer waits for the last reader (Go's rUnlockSlow wakes a pending
                # writer); readers wait for a writer, and unlock wakes them
                self._cond.notify_all()

    def lock(self) -> None:
        with self._cond:
            self._writers_waiting += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._writers_waiting -= 1
            self._writer = True

    def unlock(self) -> None:
        with self._cond:
            if not self._writer:
                raise RuntimeError("sync: Unlock of unlocked RWMutex")
            self._writer = False
            self._cond.notify_all()

    @contextlib.contextmanager
    def read_locked(self) -> Iterator[None]:
        self.rlock()
        try:
            yield
        finally:
            self.runlock()

    @contextlib.contextmanager
    def write_locked(self) -> Iterator[None]:
        self.lock()
        try:
            yield
        finally:
            self.unlock()


class Once:
    """``sync.Once``: ``do(fn)`` runs ``fn`` the first time only; later callers wait for it."""

    def __init__(self, rt: Runtime):
        self._lock = rt.lock()
        self._done = False

    def do(self, fn: Callable[[], Any]) -> None:
        if self._done:
            return
        with self._lock:
            if not self._done:
                try:
                    fn()
                finally:
                    self._done = True

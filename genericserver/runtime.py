"""The runtime seam: goroutines, closed-channel events, select, locks and the clock (no Go twin).

Go's shutdown code leans on goroutines, channels that are closed exactly once, ``select``,
``time.Sleep``, ``time.After`` and mutexes. Server code in this package never touches
``threading`` or ``time`` directly; it asks the *current runtime* for these primitives:

==========================  =============================================================
Go                          genericserver.runtime
==========================  =============================================================
``go f(x)``                 ``go(f, x, name="delayed-stop")``
``ch := make(chan struct{})``  ``ev = event("name")``
``close(ch)``               ``ev.set()`` (idempotent here; Go would panic on a 2nd close)
``<-ch``                    ``ev.wait()``
``select { case <-a: case <-b: }``  ``select(a, b)`` returns the first ready event
``select { ...; default: }``  ``ev.is_set()``
``time.Sleep(d)``           ``sleep(d)``
``time.After(d)``           ``after(d)`` (an event that fires after ``d`` seconds)
``time.AfterFunc(d, f)``    ``after_func(d, f, name=...)``
``time.Now()``              ``now()`` (monotonic seconds)
``sync.Mutex`` / ``RWMutex``  ``lock()`` / ``rwlock()``
``sync.Cond`` / ``sync.Once``  ``condition(lk)`` / ``once()``
==========================  =============================================================

Two runtimes implement :class:`Runtime`: :class:`ThreadsRuntime` here (the default, for
production and real sockets) and the simulation runtime in :mod:`genericserver.testing.sim`,
which runs one thread at a time on a virtual clock so that shutdown interleavings can be
chosen, replayed and stepped through in a debugger. ``use(rt)`` installs a runtime for a block
of code; every primitive is bound to the runtime that created it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import traceback
from typing import Any, Callable, Iterator, Optional, Sequence

from genericserver.threadpool import PLACEMENT, ThreadPool, TimerThread, park

log = logging.getLogger("genericserver.runtime")


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


class Goroutine:
    """A handle on a started goroutine: its name and an event set when it returns."""

    def __init__(self, name: str, done: Event):
        self.name = name
        self.done = done
        self.exception: Optional[BaseException] = None

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
    ``now``, ``sleep``); the composite ones (``after``, ``after_func``, ``rwlock``, ``once``)
    are built here from those, so both runtimes share one implementation of them.
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

    def now(self) -> float:
        raise NotImplementedError

    def sleep(self, seconds: float) -> None:
        raise NotImplementedError

    def wall(self) -> float:
        """Wall-clock seconds since the epoch, for timestamps people read (audit events)."""
        raise NotImplementedError

    # -- composites, shared by every runtime ----------------------------------------------
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
            if self._readers == 0:
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


# ---------------------------------------------------------------------------------------
# The threads runtime: real threads and the monotonic clock.
# ---------------------------------------------------------------------------------------


class _ThreadEvent(Event):
    """A closed-once channel on real threads; ``select`` can wait on several together.

    Each waiter parks on a lock of its own, which ``set`` releases: cheaper than
    ``threading.Event`` (a condition and its lock per event) on the per-request hot paths.
    """

    __slots__ = ("name", "_set", "_guard", "_waiters")

    def __init__(self, name: str):
        self.name = name
        self._set = False
        self._guard = threading.Lock()
        self._waiters: list[Any] = []

    def set(self) -> None:
        with self._guard:
            if self._set:
                return
            self._set = True
            waiters, self._waiters = self._waiters, []
        for w in waiters:
            _wake(w)

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: Optional[float] = None) -> bool:
        if self._set:
            return True
        if timeout is not None and timeout <= 0:
            return False
        w = _parked()
        if not self._watch(w):
            return True
        if not park(w, timeout):
            self._unwatch(w)
        return self._set

    def _watch(self, w: Any) -> bool:
        """Register ``w`` to be woken; False (and ``w`` woken) if already set."""
        with self._guard:
            if not self._set:
                self._waiters.append(w)
                return True
        _wake(w)
        return False

    def _unwatch(self, w: Any) -> None:
        if self._set:
            return  # set() took every waiter off already
        with self._guard:
            try:
                self._waiters.remove(w)
            except ValueError:
                pass


def _parked() -> Any:
    """A lock that is held: acquiring it again parks the thread until ``_wake`` releases it."""
    w = threading.Lock()
    w.acquire()
    return w


def _wake(w: Any) -> None:
    try:
        w.release()
    except RuntimeError:
        pass  # already woken by another event of the same select


class ThreadsRuntime(Runtime):
    """The production runtime: each goroutine runs on a daemon thread, time is ``time.monotonic``.

    Goroutines run on daemon threads because Go does not wait for goroutines when ``main``
    returns. The threads come from a :class:`~genericserver.threadpool.ThreadPool`: a thread
    whose goroutine returned waits ``IDLE_LINGER`` for the next one before it ends (it is named
    ``go:<goroutine name>`` while it runs one, ``go:idle`` between). A goroutine starts on the
    CPU of the thread that started it and does not preempt it, as with Go's scheduler, and a
    thread of the program's own that waits on an event is held on its CPU meanwhile (see
    :mod:`genericserver.threadpool`). All timers share one thread.
    ``live()`` lists the goroutines still running, so tests can
    prove none leaked, and ``panics`` keeps every exception a goroutine died of (Go would crash
    the process).
    """

    name = "threads"

    def __init__(self) -> None:
        # the running goroutines, in start order; dict updates are atomic under the GIL, so the
        # per-request path takes no lock for this bookkeeping
        self._live: dict[Goroutine, None] = {}
        self.panics: list[tuple[str, BaseException]] = []
        self._pool = ThreadPool(PLACEMENT, batch=True)
        self._timers = TimerThread()

    def go(self, fn: Callable[..., Any], *args: Any, name: str) -> Goroutine:
        g = Goroutine(name, _ThreadEvent(f"{name}-done"))
        live = self._live

        def body() -> None:
            try:
                fn(*args)
            except BaseException as exc:  # a goroutine's panic: log it and keep it for tests
                g.exception = exc
                self.panics.append((name, exc))
                log.error("goroutine %s panicked:\n%s", name, traceback.format_exc())
            finally:
                del live[g]
                g.done.set()

        live[g] = None
        self._pool.run(body, f"go:{name}")
        return g

    def after_func(self, seconds: float, fn: Callable[[], Any], *, name: str) -> Timer:
        """One shared timer thread instead of a thread per timer (a request deadline each)."""
        return self._timers.add(time.monotonic() + max(0.0, seconds), lambda: self.go(fn, name=name))

    def live(self) -> list[Goroutine]:
        return list(self._live)

    def event(self, name: str = "event") -> Event:
        return _ThreadEvent(name)

    def select(self, *events: Event, timeout: Optional[float] = None) -> Optional[Event]:
        # (events here are all _ThreadEvents: their flag is read directly, on a per-request path)
        for ev in events:
            if ev._set:  # type: ignore[attr-defined]
                return ev
        if timeout is not None and timeout <= 0:
            return None
        w = _parked()
        try:
            for ev in events:
                if not ev._watch(w):  # type: ignore[attr-defined]
                    break  # set meanwhile: no need to wait
            else:
                park(w, timeout)
        finally:
            for ev in events:
                ev._unwatch(w)  # type: ignore[attr-defined]
        for ev in events:
            if ev._set:  # type: ignore[attr-defined]
                return ev
        return None

    def lock(self) -> Any:
        return threading.Lock()

    def condition(self, lk: Any = None) -> Any:
        return threading.Condition(lk if lk is not None else threading.Lock())

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def wall(self) -> float:
        return time.time()


# ---------------------------------------------------------------------------------------
# The current runtime and module-level shortcuts (what server code calls).
# ---------------------------------------------------------------------------------------

THREADS = ThreadsRuntime()
_current: Runtime = THREADS


def current() -> Runtime:
    """The runtime new primitives come from."""
    return _current


@contextlib.contextmanager
def use(rt: Runtime) -> Iterator[Runtime]:
    """Install ``rt`` as the current runtime for the duration of the block."""
    global _current
    previous, _current = _current, rt
    try:
        yield rt
    finally:
        _current = previous


def go(fn: Callable[..., Any], *args: Any, name: str) -> Goroutine:
    return _current.go(fn, *args, name=name)


def event(name: str = "event") -> Event:
    return _current.event(name)


def select(*events: Event, timeout: Optional[float] = None) -> Optional[Event]:
    return _current.select(*events, timeout=timeout)


def wait_all(events: Sequence[Event]) -> None:
    """Wait for every event in turn (the order does not matter: each stays set)."""
    for ev in events:
        ev.wait()


def lock() -> Any:
    return _current.lock()


def rwlock() -> RWLock:
    return _current.rwlock()


def condition(lk: Any = None) -> Any:
    return _current.condition(lk)


def once() -> Once:
    return _current.once()


def now() -> float:
    return _current.now()


def sleep(seconds: float) -> None:
    _current.sleep(seconds)


def wall() -> float:
    return _current.wall()


def after(seconds: float, name: str = "after") -> Event:
    return _current.after(seconds, name)


def after_func(seconds: float, fn: Callable[[], Any], *, name: str) -> Timer:
    return _current.after_func(seconds, fn, name=name)

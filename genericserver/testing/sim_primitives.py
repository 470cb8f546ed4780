"""The simulation runtime's goroutine records and primitives: events, locks, conditions (no Go twin).

Split from :mod:`genericserver.testing.sim` to keep each module readable: a primitive here only
records what its goroutine waits for and calls back into the simulation to decide who runs next.
"""

from __future__ import annotations

import math
from _thread import get_ident
from typing import Any, Callable, Optional, Protocol

from genericserver.runtime import BoundedSemaphore, Event, Goroutine

_INF = math.inf
# What a goroutine is waiting for (_G.kind).
_RUN, _EVENTS, _LOCK, _NOTIFY, _SLEEP, _DEAD = range(6)

class SimulationError(RuntimeError):
    """The simulation could not go on: misuse, a step limit, a goroutine out of control."""


class Deadlock(SimulationError):
    """Every goroutine is blocked and no deadline is pending; ``blocked`` maps name -> what it waits for."""

    def __init__(self, blocked: dict[str, str]):
        self.blocked = dict(blocked)
        lines = "".join(f"\n  goroutine {name!r}: {what}" for name, what in self.blocked.items())
        super().__init__(f"all goroutines are asleep - deadlock!{lines}")


class GoroutinePanic(SimulationError):
    """A goroutine other than ``main`` raised; like a Go panic, it ends the whole run."""

    def __init__(self, name: str, exception: BaseException):
        self.name = name
        self.exception = exception
        super().__init__(f"goroutine {name!r} panicked: {exception!r}")


class Escaped(SimulationError):
    """The running goroutine made no runtime call for ``watchdog`` real seconds."""

    def __init__(self, name: str, seconds: float):
        self.name = name
        super().__init__(
            f"goroutine {name!r} escaped control: real sleep or socket? "
            f"(no runtime call for {seconds:g} s of real time)"
        )


class _Killed(BaseException):
    """Raised inside a goroutine the simulation tears down; it never leaves the goroutine's thread."""


class _G:
    """The simulation's record of one goroutine (what choosers see as ``gid`` and ``name``)."""

    __slots__ = (
        "gid", "name", "sem", "ident", "thread", "kind", "objs",
        "deadline", "op", "notified", "handle", "killed", "awake", "timed",
    )

    def __init__(self, gid: int, name: str):
        self.gid = gid
        self.name = name
        self.sem: Any = None  # its thread's baton (sim_threads.Task.baton): released to let it run
        self.ident: Optional[int] = None
        self.thread: Any = None  # its sim_threads.Task
        self.kind = _RUN
        self.objs: Any = None
        self.deadline = _INF
        self.op = "start"
        self.notified = False
        self.handle: Optional[Goroutine] = None
        self.killed = False  # unwinding from _Killed during teardown
        self.awake = False  # on the simulation's awake list (it may be able to run)
        self.timed = False  # on its list of blocked goroutines with a deadline

    def __repr__(self) -> str:
        return f"<goroutine {self.gid} {self.name!r}>"


_NOBODY = _G(0, "<nobody>")  # the baton holder outside run(): matches no thread


def _ready(g: _G, now: float) -> bool:
    kind = g.kind
    if kind == _RUN:
        return True
    if g.deadline <= now:
        return True
    if kind == _EVENTS:
        for ev in g.objs:
            if ev._set:
                return True
        return False
    if kind == _LOCK:
        return g.objs._holder is None
    if kind == _NOTIFY:
        return g.notified
    return False


class Scheduler(Protocol):
    """What a primitive needs of the simulation that owns it (:class:`genericserver.testing.sim.Simulation`)."""

    _running: Optional[_G]  # the goroutine holding the baton
    _now: float  # virtual time

    def _foreign(self) -> _G:
        """The record of a thread the simulation did not start (a test's main thread)."""
        ...

    def _decide(self, g: _G) -> None:
        """``g`` has recorded what it waits for: pick who runs next and park ``g`` until chosen."""
        ...

    def _wake(self, g: _G) -> None:
        """What ``g`` waits for may have happened: consider it at the next decision."""
        ...


class _SimEvent(Event):
    """A closed-once channel under the simulation: ``set`` and ``wait`` are decision points."""

    def __init__(self, sim: Scheduler, name: str):
        self.name = name
        self._sim = sim
        self._set = False
        self._waiters: list[_G] = []  # blocked goroutines to wake when it is set
        self._wait_op = f"wait event {name!r}"
        self._set_op = f"set event {name!r}"

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        sim = self._sim
        g = sim._running
        if g.ident != get_ident():
            g = sim._foreign()
        self._fire()
        g.op = self._set_op
        sim._decide(g)

    def _fire(self) -> None:
        """Set it and wake its waiters, without a decision (a goroutine's exit sets its done event)."""
        self._set = True
        waiters, self._waiters = self._waiters, []
        for w in waiters:
            self._sim._wake(w)

    def wait(self, timeout: Optional[float] = None) -> bool:
        sim = self._sim
        g = sim._running
        if g.ident != get_ident():
            g = sim._foreign()
        g.kind = _EVENTS
        g.objs = (self,)
        g.deadline = _INF if timeout is None else sim._now + max(timeout, 0.0)
        g.op = self._wait_op
        sim._decide(g)
        return self._set


class _SimLock:
    """``threading.Lock`` under the simulation; it remembers its holder for deadlock reports."""

    def __init__(self, sim: Scheduler, name: str):
        self.name = name
        self._sim = sim
        self._holder: Optional[_G] = None
        self._waiters: list[_G] = []  # blocked goroutines to wake when it is freed
        self._acquire_op = f"lock {name!r}"
        self._release_op = f"unlock {name!r}"

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        sim = self._sim
        g = sim._running
        if g.ident != get_ident():
            g = sim._foreign()
        g.kind = _LOCK
        g.objs = self
        if not blocking:
            g.deadline = sim._now
        elif timeout is None or timeout < 0:
            g.deadline = _INF
        else:
            g.deadline = sim._now + timeout
        g.op = self._acquire_op
        sim._decide(g)
        if self._holder is None:
            self._holder = g
            return True
        return False

    def release(self) -> None:
        sim = self._sim
        g = sim._running
        if g.ident != get_ident():
            g = sim._foreign()
        if self._holder is None:
            raise RuntimeError("release unlocked lock")
        self._free()
        g.op = self._release_op
        sim._decide(g)

    def _free(self) -> None:
        self._holder = None
        waiters, self._waiters = self._waiters, []
        for w in waiters:
            self._sim._wake(w)

    def locked(self) -> bool:
        return self._holder is not None

    __enter__ = acquire  # (with its defaults: blocking, no timeout) one call less per ``with``

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        holder = "unlocked" if self._holder is None else f"held by {self._holder.name!r}"
        return f"<sim lock {self.name!r} {holder}>"


class _SimCondition:
    """``threading.Condition`` under the simulation: FIFO notify, ``wait`` re-takes the lock."""

    def __init__(self, sim: Scheduler, lk: _SimLock, name: str):
        self.name = name
        self._sim = sim
        self._lock = lk
        self._waiters: list[_G] = []
        self.acquire = lk.acquire
        self.release = lk.release
        self._wait_op = f"wait condition {name!r}"
        self._relock_op = f"relock {lk.name!r} after condition {name!r}"
        self._notify_op = f"notify condition {name!r}"

    def __enter__(self) -> bool:
        return self._lock.acquire()

    def __exit__(self, *exc: Any) -> None:
        self._lock.release()

    def wait(self, timeout: Optional[float] = None) -> bool:
        sim = self._sim
        g = sim._running
        if g.ident != get_ident():
            g = sim._foreign()
        lk = self._lock
        if lk._holder is not g:
            raise RuntimeError("cannot wait on un-acquired lock")
        lk._free()
        g.notified = False
        self._waiters.append(g)
        g.kind = _NOTIFY
        g.objs = self
        g.deadline = _INF if timeout is None else sim._now + max(timeout, 0.0)
        g.op = self._wait_op
        sim._decide(g)
        notified = g.notified
        if not notified:
            self._waiters.remove(g)
        g.kind = _LOCK
        g.objs = lk
        g.op = self._relock_op
        sim._decide(g)
        lk._holder = g
        return notified

    def wait_for(self, predicate: Callable[[], Any], timeout: Optional[float] = None) -> Any:
        end = None if timeout is None else self._sim._now + timeout
        result = predicate()
        while not result:
            remaining = None
            if end is not None:
                remaining = end - self._sim._now
                if remaining <= 0:
                    break
            self.wait(remaining)
            result = predicate()
        return result

    def notify(self, n: int = 1) -> None:
        sim = self._sim
        g = sim._running
        if g.ident != get_ident():
            g = sim._foreign()
        if self._lock._holder is None:
            raise RuntimeError("cannot notify on un-acquired lock")
        woken = self._waiters[:n]
        del self._waiters[:n]
        for w in woken:
            w.notified = True
            sim._wake(w)
        g.op = self._notify_op
        sim._decide(g)

    def notify_all(self) -> None:
        self.notify(len(self._waiters))

    def __repr__(self) -> str:
        return f"<sim condition {self.name!r} waiters={[w.name for w in self._waiters]}>"


class _SimBoundedSemaphore(BoundedSemaphore):
    """``threading.BoundedSemaphore`` under the simulation, on its lock and condition.

    A goroutine blocked in ``acquire`` shows in a deadlock report as waiting on the condition
    named after the semaphore; a non-blocking ``acquire`` is still a decision point (taking the
    lock), so a schedule can interleave other goroutines around it.
    """

    def __init__(self, sim: Scheduler, value: int, name: str):
        if value < 0:
            raise ValueError("semaphore initial value must be >= 0")
        self.name = name
        self._cond = _SimCondition(sim, _SimLock(sim, name), name)
        self._initial = self._value = value

    def acquire(self, blocking: bool = True, timeout: Optional[float] = None) -> bool:
        with self._cond:
            if not blocking:
                if self._value == 0:
                    return False
            elif not self._cond.wait_for(lambda: self._value > 0, timeout):
                return False
            self._value -= 1
            return True

    def release(self, n: int = 1) -> None:
        with self._cond:
            if self._value + n > self._initial:
                raise ValueError("Semaphore released too many times")
            self._value += n
            self._cond.notify(n)

    def taken(self) -> int:
        return self._initial - self._value

    __enter__ = acquire

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<sim semaphore {self.name!r} {self.taken()}/{self._initial} taken>"

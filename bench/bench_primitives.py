"""What the standard primitives cost per request: threading.Event and BoundedSemaphore against hand-made ones (no Go twin).

The threads runtime's event is a ``threading.Event`` and max-in-flight's slots a
``threading.BoundedSemaphore`` (what the brief promises a reader); before, they were a list of
parked locks and a lock with a counter. This bench prints both, measured in the same run, for the
operations a request goes through: making an event (a context's done, a goroutine's done), a
hand-off (one goroutine sets, another waits), a ``select`` over two events, and taking and
releasing a slot. And what a ``select`` parks on, for the hand-off every request's timeout filter
makes: a ``threading.Event``, or the plain lock of :mod:`genericserver.runtime.speed_tricks`. The full
chain's cost per request is ``bench_chain``'s.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Any, Callable, Optional

from genericserver import runtime as rt

ROUNDS = 5
N = 20000


class _ParkedEvent:
    """The runtime's event before: a flag and a list of parked locks, released by ``set``."""

    __slots__ = ("_set", "_guard", "_waiters")

    def __init__(self) -> None:
        self._set = False
        self._guard = threading.Lock()
        self._waiters: list[Any] = []

    def set(self) -> None:
        with self._guard:
            self._set = True
            waiters, self._waiters = self._waiters, []
        for w in waiters:
            w.release()

    def wait(self, timeout: Optional[float] = None) -> bool:
        if self._set:
            return True
        w = threading.Lock()
        w.acquire()
        with self._guard:
            if self._set:
                return True
            self._waiters.append(w)
        w.acquire()
        return True


class _CountedSlots:
    """max-in-flight's slots before: a lock and a counter."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.used, self.lock = capacity, 0, threading.Lock()

    def acquire(self, blocking: bool = False) -> bool:
        with self.lock:
            if self.used >= self.capacity:
                return False
            self.used += 1
            return True

    def release(self) -> None:
        with self.lock:
            self.used -= 1


def _per_op_us(fn: Callable[[], None], n: int = N) -> float:
    started = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - started) / n * 1e6


def _handoff_us(make: Callable[[], Any], n: int = N // 4) -> float:
    """A goroutine sets a fresh event that this thread waits on, ``n`` times in a row."""
    def one() -> None:
        ev = make()
        rt.go(ev.set, name="bench-set")
        ev.wait()

    done = rt.event("bench-handoffs")
    result: list[float] = []
    rt.go(lambda: (result.append(_per_op_us(one, n)), done.set()), name="bench-handoffs")
    done.wait()
    return result[0]


def _select_handoff_us(parker: Callable[[], Any], n: int = N // 4) -> float:
    """As ``_handoff_us``, but this thread waits in ``select`` over two fresh events, parked on
    ``parker`` (the runtime's choice is swapped for the measurement only)."""
    def one() -> None:
        a, b = rt.event("a"), rt.event("b")
        rt.go(b.set, name="bench-set")
        rt.select(a, b)

    chosen, rt.THREADS._new_parker = rt.THREADS._new_parker, parker
    try:
        done = rt.event("bench-selects")
        result: list[float] = []
        rt.go(lambda: (result.append(_per_op_us(one, n)), done.set()), name="bench-selects")
        done.wait()
    finally:
        rt.THREADS._new_parker = chosen
    return result[0]


def main() -> None:
    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    for _ in range(ROUNDS):
        add("make an event: threading.Event", _per_op_us(lambda: rt.event("x")))
        add("make an event: parked locks (before)", _per_op_us(_ParkedEvent))
        add("hand-off: threading.Event", _handoff_us(lambda: rt.event("x")))
        add("hand-off: parked locks (before)", _handoff_us(_ParkedEvent))
        add("select hand-off, parked on a threading.Event", _select_handoff_us(threading.Event))
        add("select hand-off, parked on a lock (speed_tricks)", _select_handoff_us(rt._parked_lock))
        a, b = rt.event("a"), rt.event("b")
        b.set()
        add("select over two, one set", _per_op_us(lambda: rt.select(a, b)))
        sem = rt.bounded_semaphore(100)
        add("take and give a slot: BoundedSemaphore", _per_op_us(lambda: (sem.acquire(blocking=False), sem.release())))
        slots = _CountedSlots(100)
        add("take and give a slot: lock + counter (before)", _per_op_us(lambda: (slots.acquire(), slots.release())))
    rt.THREADS.release_idle()
    medians = {name: statistics.median(v) for name, v in rows.items()}
    print(f"the runtime's primitives, per operation (median of {ROUNDS} rounds):")
    for name, us in medians.items():
        print(f"  {name:48s} {us:7.2f} us")
    for what, now, before in (("make an event", "make an event: threading.Event", "make an event: parked locks (before)"),
                              ("hand-off", "hand-off: threading.Event", "hand-off: parked locks (before)"),
                              ("slot", "take and give a slot: BoundedSemaphore", "take and give a slot: lock + counter (before)")):
        print(f"  {what}: the standard primitive costs {medians[now] - medians[before]:+.2f} us ({medians[now] / medians[before]:.1f}x)")
    event, lock = medians["select hand-off, parked on a threading.Event"], medians["select hand-off, parked on a lock (speed_tricks)"]
    print(f"  select: parking on a lock saves {event - lock:.2f} us a hand-off ({event / lock:.2f}x faster); a request selects once")


if __name__ == "__main__":
    main()

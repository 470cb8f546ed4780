"""Threads for the threads runtime: a pool for goroutines and one thread for all timers (no Go twin).

:class:`genericserver.runtime.ThreadsRuntime` runs goroutines on a :class:`ThreadPool` and
timers on a :class:`TimerThread`. Both are details of that runtime; server code never uses them.
"""

from __future__ import annotations

import heapq
import os
import threading
import time
from typing import Any, Callable, Optional

# An idle pooled thread or the timer thread waits this long for work before it exits: long
# enough to be reused under load, short enough that a test's leak check does not wait for it.
IDLE_LINGER = 0.05


def cpu_placement() -> tuple[Callable[[], int], Callable[[int, int], None]] | None:
    """``(current_cpu, pin)`` where the OS lets threads be placed, else None.

    ``current_cpu()`` is the CPU the calling thread runs on; ``pin(tid, cpu)`` keeps thread
    ``tid`` (a native id, 0 for the caller) on that CPU. Linux only (``sched_getcpu`` is not in
    the standard library, so it comes from libc); with a single usable CPU there is nothing to
    gain.
    """
    if not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2:
        return None
    try:
        import ctypes

        current_cpu = ctypes.CDLL(None).sched_getcpu
        current_cpu.restype = ctypes.c_int
        current_cpu.argtypes = []
    except (OSError, AttributeError):
        return None
    if current_cpu() < 0:
        return None

    def pin(tid: int, cpu: int) -> None:
        os.sched_setaffinity(tid, (cpu,))

    return current_cpu, pin


PLACEMENT = cpu_placement()
"""This machine's thread placement (``None`` where threads cannot be placed)."""

_local = threading.local()  # ``pooled`` is True on the pool's threads


def park(w: Any, timeout: Optional[float]) -> bool:
    """Block on the held lock ``w`` until it is released (or ``timeout`` seconds); True if it was.

    A pool thread is on its CPU already. Any other thread (a program's main thread, a werkzeug
    connection thread) is held on the CPU it is on while it waits, and gets its own CPU set back
    when it wakes: the goroutine it waits for was started on that CPU, and wakes it there rather
    than on another core. (Linux would otherwise often wake it on an idle core, which costs tens
    of microseconds here, twice per request through the timeout filter.)
    """
    mask = None
    if PLACEMENT is not None and not getattr(_local, "pooled", False):
        try:
            mask = os.sched_getaffinity(0)
            os.sched_setaffinity(0, (PLACEMENT[0](),))
        except OSError:
            mask = None
    try:
        return w.acquire(True, -1 if timeout is None else timeout)
    finally:
        if mask is not None:
            os.sched_setaffinity(0, mask)


def no_wakeup_preemption() -> None:
    """Mark the calling thread so that a thread it wakes waits until it blocks (Linux only).

    Go's scheduler puts a goroutine it readies in ``runnext`` and lets the running one go on
    until it blocks. Linux by default lets the woken thread preempt the waker at once; that
    thread then finds the GIL taken and sleeps again, so every hand-off costs two extra context
    switches. ``SCHED_BATCH`` threads never preempt on wake-up; an unprivileged process may
    choose it. Where it is refused or missing, nothing changes.
    """
    batch = getattr(os, "SCHED_BATCH", None)
    if batch is None:
        return
    try:
        os.sched_setscheduler(0, batch, os.sched_param(0))
    except OSError:
        pass


class Slot:
    """One pooled thread's mailbox: ``ready`` is released when ``task`` was set."""

    __slots__ = ("ready", "task", "tid", "cpu")

    def __init__(self, cpu: int) -> None:
        self.ready = threading.Lock()
        self.ready.acquire()
        self.task: Optional[tuple[Callable[[], None], str]] = None
        self.tid = threading.get_native_id()
        self.cpu = cpu  # the CPU this thread is pinned to, -1 for none


class ThreadPool:
    """Reuses goroutine threads: starting a thread costs far more than handing one a task.

    A goroutine starts on its spawner's CPU. Go's scheduler does the same (a new goroutine goes
    into the spawning P's ``runnext`` slot), so spawn-then-wait, as the timeout filter does for
    every request, never crosses cores. Here that matters more than in Go: every switch between
    Python threads is a hand-over of the GIL, and waking a thread on another core costs tens of
    microseconds on a virtual machine against a few on the same core. Only one thread runs
    Python code at a time anyway, so little parallelism is given up. A long-lived goroutine
    stays on the CPU it started on; its thread moves when it is reused for another one. The
    waiting side is :func:`park`; with ``batch`` the threads also run ``SCHED_BATCH``
    (:func:`no_wakeup_preemption`).
    """

    def __init__(
        self,
        placement: Optional[tuple[Callable[[], int], Callable[[int, int], None]]] = None,
        *,
        batch: bool = False,
    ) -> None:
        self._lock = threading.Lock()
        self._idle: list[Slot] = []
        self._placement = placement
        self._batch = batch

    def _cpu(self) -> int:
        return self._placement[0]() if self._placement is not None else -1

    def run(self, body: Callable[[], None], name: str) -> None:
        cpu = self._cpu()
        with self._lock:
            slot = self._idle.pop() if self._idle else None
        if slot is not None:
            if cpu >= 0 and cpu != slot.cpu:
                self._pin(slot.tid, cpu)
                slot.cpu = cpu
            slot.task = (body, name)
            slot.ready.release()  # placed first: the thread wakes where it will run
            return
        threading.Thread(target=self._work, args=((body, name), cpu), name=name, daemon=True).start()

    def _pin(self, tid: int, cpu: int) -> None:
        try:
            self._placement[1](tid, cpu)  # type: ignore[index]
        except OSError:  # the CPU left our set (a cgroup changed): stop placing threads
            self._placement = None

    def _work(self, task: tuple[Callable[[], None], str], cpu: int) -> None:
        me = threading.current_thread()
        _local.pooled = True
        if cpu >= 0:
            self._pin(0, cpu)
        if self._batch:
            no_wakeup_preemption()
        slot = Slot(cpu)
        while True:
            body, me.name = task
            body()
            me.name = "go:idle"
            with self._lock:
                self._idle.append(slot)
            if not slot.ready.acquire(timeout=IDLE_LINGER):
                with self._lock:
                    if slot in self._idle:  # nobody picked this thread: let it end
                        self._idle.remove(slot)
                        return
                slot.ready.acquire()  # a task was handed over just as we gave up: take it
            task, slot.task = slot.task, None  # type: ignore[assignment]


class ThreadTimer:
    """A pending timer on the shared heap; ``stop()`` keeps it from firing if it has not yet."""

    __slots__ = ("owner", "when", "fire", "stopped")

    def __init__(self, owner: "TimerThread", when: float, fire: Callable[[], None]):
        self.owner, self.when, self.fire, self.stopped = owner, when, fire, False

    def stop(self) -> None:
        self.owner.stop(self)

    def __lt__(self, other: "ThreadTimer") -> bool:
        return self.when < other.when


class TimerThread:
    """All pending timers on one heap, served by one thread that exits when none are left.

    A stopped timer is dropped from the count at once; once no timer is pending the heap is
    cleared. The thread looks at the heap at least every ``IDLE_LINGER``, so it ends soon after
    the last timer went, and adding or stopping a far-off timer never has to wake it.
    """

    def __init__(self) -> None:
        # adding and stopping take the lock itself (a C call); only the thread uses the condition
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._heap: list[ThreadTimer] = []
        self._pending = 0
        self._running = False

    def add(self, when: float, fire: Callable[[], None]) -> ThreadTimer:
        timer = ThreadTimer(self, when, fire)
        with self._lock:
            heapq.heappush(self._heap, timer)
            self._pending += 1
            if not self._running:
                self._running = True
                threading.Thread(target=self._loop, name="go:timers", daemon=True).start()
            elif self._heap[0] is timer and when - time.monotonic() < IDLE_LINGER:
                # the thread looks again within IDLE_LINGER anyway: wake it only for a timer due
                # sooner (a request's 60 s deadline must not cost a thread switch)
                self._cond.notify()
        return timer

    def stop(self, timer: ThreadTimer) -> None:
        with self._lock:
            self._settle(timer)

    def _settle(self, timer: ThreadTimer) -> bool:
        # under the lock: mark a timer stopped or fired; False if it already was
        if timer.stopped:
            return False
        timer.stopped = True
        self._pending -= 1
        if self._pending == 0:
            self._heap.clear()
        return True

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._heap and self._heap[0].stopped:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait(IDLE_LINGER)
                    if not self._heap:
                        self._running = False
                        return
                    continue
                delay = self._heap[0].when - time.monotonic()
                if delay > 0:
                    self._cond.wait(min(delay, IDLE_LINGER))
                    continue
                due = heapq.heappop(self._heap)
                fire = self._settle(due)
            if fire:
                due.fire()

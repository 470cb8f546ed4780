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

Two runtimes implement :class:`Runtime` (its interface and the primitives built on it, such as
``RWLock`` and ``Once``, are in :mod:`genericserver.seam`): :class:`ThreadsRuntime` here (the
default, for production and real sockets; this module is the only one that touches
``threading`` and ``time``) and the simulation runtime in :mod:`genericserver.testing.sim`,
which runs one thread at a time on a virtual clock so that shutdown interleavings can be
chosen, replayed and stepped through in a debugger. ``use(rt)`` installs a runtime for a block
of code; every primitive is bound to the runtime that created it.
"""

from __future__ import annotations

import contextlib
import heapq
import logging
import os
import threading
import time
import traceback
from typing import Any, Callable, Iterator, Optional, Sequence

from genericserver.seam import Event, Goroutine, Once, Runtime, RWLock, Timer

log = logging.getLogger("genericserver.runtime")


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
        if not _park(w, timeout):
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


# An idle pooled thread or the timer thread waits this long for work before it exits: long
# enough to be reused under load, short enough that a test's leak check does not wait for it.
IDLE_LINGER = 0.05


def _cpu_placement() -> tuple[Callable[[], int], Callable[[int, int], None]] | None:
    """``(current_cpu, pin)`` where the OS lets threads be placed, else None.

    ``current_cpu()`` is the CPU the calling thread runs on; ``pin(tid, cpu)`` keeps thread
    ``tid`` (a native id, 0 for the caller) on that CPU. Linux only (``sched_getcpu`` is not in
    the standard library, so it comes from libc); with a single usable CPU there is nothing to
    gain.
    """
    try:
        if not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2:
            return None
        import ctypes

        current_cpu = ctypes.CDLL(None).sched_getcpu
        current_cpu.restype = ctypes.c_int
        current_cpu.argtypes = []
    except (OSError, AttributeError, ImportError):  # not allowed here, no libc symbol, no ctypes
        return None
    if current_cpu() < 0:
        return None

    def pin(tid: int, cpu: int) -> None:
        os.sched_setaffinity(tid, (cpu,))

    return current_cpu, pin


_PLACEMENT = _cpu_placement()
"""This machine's thread placement (``None`` where threads cannot be placed)."""

_local = threading.local()  # ``pooled`` is True on the pool's threads


def _park(w: Any, timeout: Optional[float]) -> bool:
    """Block on the held lock ``w`` until it is released (or ``timeout`` seconds); True if it was.

    A pool thread is on its CPU already. Any other thread (a program's main thread, a werkzeug
    connection thread) is held on the CPU it is on while it waits, and gets its own CPU set back
    when it wakes: the goroutine it waits for was started on that CPU, and wakes it there rather
    than on another core. (Linux would otherwise often wake it on an idle core, which costs tens
    of microseconds here, twice per request through the timeout filter.)
    """
    mask = None
    if _PLACEMENT is not None and not getattr(_local, "pooled", False):
        try:
            mask = os.sched_getaffinity(0)
            os.sched_setaffinity(0, (_PLACEMENT[0](),))
        except OSError:
            mask = None
    try:
        return w.acquire(True, -1 if timeout is None else timeout)
    finally:
        if mask is not None:
            try:
                os.sched_setaffinity(0, mask)
            except OSError:  # the set changed meanwhile (a cgroup): keep what we have
                pass


def _no_wakeup_preemption() -> None:
    """Mark the calling thread so that, when woken, it waits for its waker to block (Linux only).

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


class _Slot:
    """One pooled thread's mailbox: ``ready`` is released when ``task`` was set."""

    __slots__ = ("ready", "task", "tid", "cpu")

    def __init__(self, cpu: int) -> None:
        self.ready = threading.Lock()
        self.ready.acquire()
        self.task: Optional[tuple[Callable[[], None], str]] = None
        self.tid = threading.get_native_id()
        self.cpu = cpu  # the CPU this thread is pinned to, -1 for none


class _ThreadPool:
    """Reuses goroutine threads: starting a thread costs far more than handing one a task.

    A goroutine starts on its spawner's CPU. Go's scheduler does the same (a new goroutine goes
    into the spawning P's ``runnext`` slot), so spawn-then-wait, as the timeout filter does for
    every request, never crosses cores. Here that matters more than in Go: every switch between
    Python threads is a hand-over of the GIL, and waking a thread on another core costs tens of
    microseconds on a virtual machine against a few on the same core. Only one thread runs
    Python code at a time anyway, so little parallelism is given up. A long-lived goroutine
    stays on the CPU it started on; its thread moves when it is reused for another one. The
    waiting side is :func:`_park`; with ``batch`` the threads also run ``SCHED_BATCH``
    (:func:`_no_wakeup_preemption`). As always on Linux, a thread or process that a goroutine
    starts with ``threading`` or ``subprocess`` inherits both (server code here starts none).
    """

    def __init__(
        self,
        placement: Optional[tuple[Callable[[], int], Callable[[int, int], None]]] = None,
        *,
        batch: bool = False,
    ) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Slot] = []
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

    def release_idle(self) -> None:
        """End every idle thread now rather than after ``IDLE_LINGER`` (a test's leak check)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for slot in idle:
            slot.task = None
            slot.ready.release()

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
            _no_wakeup_preemption()
        slot = _Slot(cpu)
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
            if task is None:  # let go of (release_idle)
                return


class _ThreadTimer:
    """A pending timer on the shared heap; ``stop()`` keeps it from firing if it has not yet."""

    __slots__ = ("owner", "when", "fire", "stopped")

    def __init__(self, owner: "_TimerThread", when: float, fire: Callable[[], None]):
        self.owner, self.when, self.fire, self.stopped = owner, when, fire, False

    def stop(self) -> None:
        self.owner.stop(self)

    def __lt__(self, other: "_ThreadTimer") -> bool:
        return self.when < other.when


class _TimerThread:
    """All pending timers on one heap, served by one thread that exits when none are left.

    A stopped timer is dropped from the count at once; once no timer is pending the heap is
    cleared. The thread looks at the heap at least every ``IDLE_LINGER``, so it ends soon after
    the last timer went, and adding or stopping a far-off timer never has to wake it.
    """

    def __init__(self) -> None:
        # adding and stopping take the lock itself (a C call); only the thread uses the condition
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._heap: list[_ThreadTimer] = []
        self._pending = 0
        self._running = False
        self._let_go = False

    def add(self, when: float, fire: Callable[[], None]) -> _ThreadTimer:
        timer = _ThreadTimer(self, when, fire)
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

    def stop(self, timer: _ThreadTimer) -> None:
        with self._lock:
            self._settle(timer)

    def release_idle(self) -> None:
        """With no timer pending, let the thread end now rather than after ``IDLE_LINGER``."""
        with self._lock:
            self._let_go = True  # read when the heap is next empty, even if it is not waiting yet
            self._cond.notify()

    def _settle(self, timer: _ThreadTimer) -> bool:
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
                    if not self._let_go:
                        self._cond.wait(IDLE_LINGER)
                    self._let_go = False
                    if not self._heap:
                        self._running = False
                        return
                    continue
                self._let_go = False
                delay = self._heap[0].when - time.monotonic()
                if delay > 0:
                    self._cond.wait(min(delay, IDLE_LINGER))
                    continue
                due = heapq.heappop(self._heap)
                fire = self._settle(due)
            if fire:
                due.fire()


class ThreadsRuntime(Runtime):
    """The production runtime: each goroutine runs on a daemon thread, time is ``time.monotonic``.

    Goroutines run on daemon threads because Go does not wait for goroutines when ``main``
    returns. The threads come from a pool (:class:`_ThreadPool`): a thread
    whose goroutine returned waits ``IDLE_LINGER`` for the next one before it ends (it is named
    ``go:<goroutine name>`` while it runs one, ``go:idle`` between). A goroutine starts on the
    CPU of the thread that started it and does not preempt it, as with Go's scheduler, and a
    thread of the program's own that waits on an event is held on its CPU meanwhile (see
    :func:`_park`). All timers share one thread.
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
        self._pool = _ThreadPool(_PLACEMENT, batch=True)
        self._timers = _TimerThread()

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

    def release_idle(self) -> None:
        """End the idle goroutine threads and an idle timer thread at once (tests' leak checks
        wait for every thread a test started; without this each idle one lingers first)."""
        self._pool.release_idle()
        self._timers.release_idle()

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
                _park(w, timeout)
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

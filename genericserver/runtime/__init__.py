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
``go func() { <-ch; f() }()``  ``go_after(ev, f, name=...)`` (``f`` must not block)
``time.Now()``              ``now()`` (monotonic seconds)
``sync.Mutex`` / ``RWMutex``  ``lock()`` / ``rwlock()``
``sync.Cond`` / ``sync.Once``  ``condition(lk)`` / ``once()``
``c := make(chan bool, n)``  ``sem = bounded_semaphore(n)`` (a channel used as a semaphore:
                            ``c <- true`` in a ``select`` with ``default`` is
                            ``sem.acquire(blocking=False)``, ``<-c`` is ``sem.release()``,
                            ``len(c)`` is ``sem.taken()``)
==========================  =============================================================

Under this module's :class:`ThreadsRuntime` an event **is** a ``threading.Event`` and a
semaphore **is** a ``threading.BoundedSemaphore``: stepping into ``ev.wait()`` lands in the
standard library.

Two runtimes implement :class:`Runtime` (its interface and the primitives built on it, such as
``RWLock`` and ``Once``, are in :mod:`genericserver.runtime.seam`): :class:`ThreadsRuntime` here (the
default, for production and real sockets; this module is the only one that touches
``threading`` and ``time``, and :mod:`genericserver.runtime.speed_tricks` holds its speed tricks) and
the simulation runtime in :mod:`genericserver.testing.sim`,
which runs one thread at a time on a virtual clock so that shutdown interleavings can be
chosen, replayed and stepped through in a debugger. ``use(rt)`` installs a runtime for a block
of code; every primitive is bound to the runtime that created it.

One thing Go has no word for: a goroutine starts with a copy of its spawner's context variables
(:mod:`contextvars`), in both runtimes, and so does an ``after_func``'s. Go's goroutines carry
nothing, and no server code reads a context variable; the simulated cluster runs several
"processes" (replicas) in this one, and that is how a log line finds the container that printed
it (:mod:`genericserver.cluster.logs`).
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import logging
import threading
import time
import traceback
from typing import Any, Callable, Iterator, Optional, Sequence

from genericserver.runtime import speed_tricks
from genericserver.runtime.seam import BoundedSemaphore, Event, Goroutine, Once, Runtime, RWLock, Timer

log = logging.getLogger("genericserver.runtime")
_PLAIN_LOCK = type(threading.Lock())


# ---------------------------------------------------------------------------------------
# The threads runtime: real threads and the monotonic clock.
# ---------------------------------------------------------------------------------------


class _ThreadEvent(threading.Event, Event):
    """A closed-once channel on real threads: a ``threading.Event`` that ``select`` can also watch.

    ``set``, ``is_set`` and ``wait`` are the standard ones. A ``select`` over several events
    parks on a parker of its own thread (a ``threading.Event``, or the lighter one of
    :mod:`genericserver.runtime.speed_tricks`) and registers it with each event it watches; ``set`` sets
    those too, after its own flag, so a selector never misses the event that fired.
    """

    def __init__(self, name: str):
        # What threading.Event.__init__ does, but on the Condition's default lock, an RLock:
        # on a plain Lock the Condition looks up three methods the lock lacks (three caught
        # AttributeErrors) and checks its owner in Python, which made each event cost 2 us to
        # make (bench_primitives).
        self._cond = threading.Condition()
        self._flag = False
        self.name = name
        self._selecting = threading.Lock()  # guards _selectors
        self._selectors: list[Any] = []  # the parkers of the selects watching this event

    def set(self) -> None:
        super().set()
        with self._selecting:
            selectors, self._selectors = self._selectors, []
        for woken in selectors:
            woken.set()

    def _watch(self, woken: Any) -> bool:
        """Register a selector's ``woken`` to be set with this event; False if this one is set already."""
        with self._selecting:
            if self.is_set():
                return False
            self._selectors.append(woken)
            return True

    def _unwatch(self, woken: Any) -> None:
        with self._selecting:
            if woken in self._selectors:
                self._selectors.remove(woken)

    def __repr__(self) -> str:
        return Event.__repr__(self)


class _ThreadGoroutine(Goroutine):
    """A goroutine's handle whose ``done`` event is made when first asked for.

    Most goroutines are never joined (each request's timeout handler is one): an event made and
    set for each would cost the request its making and, worse, its setting on the way out, while
    the goroutine that wakes the request's thread still holds the GIL.
    """

    def __init__(self, name: str):
        self.name = name
        self.exception: Optional[BaseException] = None
        self._lock = threading.Lock()
        self._done: Optional[_ThreadEvent] = None
        self._returned = False

    @property
    def done(self) -> Event:
        with self._lock:
            if self._done is None:
                self._done = _ThreadEvent(f"{self.name}-done")
                if self._returned:
                    self._done.set()
            return self._done

    def returned(self) -> None:
        with self._lock:
            self._returned = True
            done = self._done
        if done is not None:
            done.set()


def _select(events: Sequence[_ThreadEvent], timeout: Optional[float], new_parker: Callable[[], Any]) -> Optional[Event]:
    """Go's ``select`` over closed-once channels: the first of ``events`` that is set, or None."""
    fired = _first_set(events)
    if fired is not None or (timeout is not None and timeout <= 0):
        return fired
    woken = _selector_parker(new_parker)
    watched = []
    for ev in events:
        if not ev._watch(woken):
            break  # set meanwhile: no need to wait
        watched.append(ev)
    else:
        deadline = None if timeout is None else time.monotonic() + timeout
        while woken.wait(None if deadline is None else deadline - time.monotonic()):
            if _first_set(events) is not None:
                break
            # woken was set late by an event that fired during an earlier select of this
            # thread: clear it, and look again before waiting, so no set meant for this select
            # is lost
            woken.clear()
            if _first_set(events) is not None:
                break
    for ev in watched:
        ev._unwatch(woken)
    return _first_set(events)


def _first_set(events: Sequence[_ThreadEvent]) -> Optional[Event]:
    for ev in events:
        if ev.is_set():
            return ev
    return None


_selector = threading.local()


def _selector_parker(new_parker: Callable[[], Any]) -> Any:
    """What this thread parks on in ``select``, cleared: one per thread, not one per select (a
    request's timeout filter selects once). It has ``threading.Event``'s ``set``, ``wait`` and
    ``clear``: a ``threading.Event``, or a lighter one from :mod:`genericserver.runtime.speed_tricks`."""
    woken = getattr(_selector, "woken", None)
    if woken is None or _selector.made_by is not new_parker:
        woken = _selector.woken = new_parker()
        _selector.made_by = new_parker
    woken.clear()
    return woken


def _parked_lock() -> Any:
    """A select's parker with the speed trick: a lock of ours, parked on as
    :class:`genericserver.runtime.speed_tricks.ParkedLock` says."""
    return speed_tricks.ParkedLock(threading.Lock())


# An idle pooled thread or the timer thread waits this long for work before it exits: long
# enough to be reused under load, short enough that a test's leak check does not wait for it.
IDLE_LINGER = 0.05


class _Slot:
    """One pooled thread's mailbox: ``ready`` is released when ``task`` was set."""

    __slots__ = ("ready", "task", "thread", "tid", "cpu")

    def __init__(self) -> None:
        self.ready = threading.Lock()
        self.ready.acquire()
        self.task: Optional[tuple[Callable[[], None], str]] = None
        self.thread = threading.current_thread()
        self.tid = threading.get_native_id()
        self.cpu = -1  # the CPU the placer pinned this thread to, -1 for none


class _ThreadPool:
    """Reuses goroutine threads: starting a thread costs far more than handing one a task.

    An idle thread waits on its slot's lock for the next goroutine, ``IDLE_LINGER`` at most.
    ``placer`` (see :mod:`genericserver.runtime.speed_tricks`) may pin a thread to its spawner's CPU
    (no other change: speed only, never behaviour).
    """

    def __init__(self, placer: speed_tricks.NoPlacement = speed_tricks.NO_PLACEMENT) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Slot] = []
        self._placer = placer

    def run(self, body: Callable[[], None], name: str) -> None:
        with self._lock:
            slot = self._idle.pop() if self._idle else None
        if slot is not None:
            self._placer.move_to_spawner(slot)
            slot.task = (body, name)
            # named now, not when it wakes: a goroutine dump taken before the thread runs lists
            # the goroutine (Go's "runnable"), where it would otherwise show an idle thread
            slot.thread.name = name
            slot.ready.release()
            return
        cpu = self._placer.spawner_cpu()
        threading.Thread(target=self._work, args=((body, name), cpu), name=name, daemon=True).start()

    def release_idle(self) -> None:
        """End every idle thread now rather than after ``IDLE_LINGER`` (a test's leak check)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for slot in idle:
            slot.task = None
            slot.ready.release()

    def _work(self, task: tuple[Callable[[], None], str], cpu: int) -> None:
        me = threading.current_thread()
        slot = _Slot()
        self._placer.start_worker(slot, cpu)
        while True:
            body = task[0]  # the spawner named this thread after the goroutine (run)
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


class _ThreadBoundedSemaphore(threading.BoundedSemaphore):
    """``threading.BoundedSemaphore``, plus ``taken()``: how many permits are out (Go's ``len(c)``)."""

    def __init__(self, value: int):
        super().__init__(value)
        # as for _ThreadEvent: its Condition on an RLock checks its owner in C (each release
        # notifies; a request takes and gives back a slot)
        self._cond = threading.Condition()

    def taken(self) -> int:
        # a plain read without the semaphore's lock, as Go's len(c) on a channel is a plain read
        return self._initial_value - self._value  # type: ignore[attr-defined]


class ThreadsRuntime(Runtime):
    """The production runtime: each goroutine runs on a daemon thread, time is ``time.monotonic``.

    Goroutines run on daemon threads because Go does not wait for goroutines when ``main``
    returns. The threads come from a pool (:class:`_ThreadPool`): a thread
    whose goroutine returned waits ``IDLE_LINGER`` for the next one before it ends (it is named
    ``go:<goroutine name>`` from the moment it is handed one, ``go:idle`` between). All timers share one thread.
    Events are ``threading.Event`` objects, semaphores ``threading.BoundedSemaphore`` ones, locks and
    conditions the ``threading`` ones. With ``tricks`` (the default) goroutine threads are
    placed, and a ``select`` parks, as :mod:`genericserver.runtime.speed_tricks` says: speed only, no
    change in behaviour.
    ``live()`` lists the goroutines still running, so tests can
    prove none leaked, and ``panics`` keeps every exception a goroutine died of (Go would crash
    the process; ``on_panic``, when set, may do so).
    """

    name = "threads"

    def __init__(self, *, tricks: bool = True) -> None:
        # the running goroutines, in start order; dict updates are atomic under the GIL, so the
        # per-request path takes no lock for this bookkeeping
        self._live: dict[Goroutine, None] = {}
        self.panics: list[tuple[str, BaseException]] = []
        # what else a goroutine's panic does: nothing by default (tests read ``panics``); a real
        # process ends itself as Go's runtime does (genericserver.cmd sets goroutines.die_of_panic)
        self.on_panic: Optional[Callable[[str, BaseException], None]] = None
        self._tricks = tricks
        self._pool = _ThreadPool(speed_tricks.default_placer() if tricks else speed_tricks.NO_PLACEMENT)
        # what a select parks on: a lock held while clear, or (without tricks) a threading.Event
        self._new_parker: Callable[[], Any] = _parked_lock if tricks else threading.Event
        self._timers = _TimerThread()

    def go(self, fn: Callable[..., Any], *args: Any, name: str) -> Goroutine:
        g = _ThreadGoroutine(name)
        live = self._live
        spawner = contextvars.copy_context()  # (see the module's docstring)

        def body() -> None:
            try:
                spawner.run(fn, *args)
            except BaseException as exc:
                g.exception = exc
                self._panicked(name, exc)
            finally:
                del live[g]
                g.returned()

        live[g] = None
        self._pool.run(body, f"go:{name}")
        return g

    def _panicked(self, name: str, exc: BaseException) -> None:
        """A goroutine's panic: log it and keep it for tests (Go would crash the process)."""
        self.panics.append((name, exc))
        if self.on_panic is not None:
            self.on_panic(name, exc)
        log.error("goroutine %s panicked:\n%s", name, traceback.format_exc())

    def go_after(self, ev: Event, fn: Callable[..., Any], *args: Any, name: str) -> Goroutine:
        """``go func() { <-ev; fn(args...) }()``. With ``tricks``, ``fn`` runs on the thread that
        sets ``ev``, right after it is set (:class:`genericserver.runtime.speed_tricks.Relay`); the
        goroutine still starts, waits and shows in ``live()`` and goroutine dumps, and finds the
        call made when it wakes. A panic of ``fn`` is the goroutine's, wherever it ran."""
        if not self._tricks or not isinstance(ev, _ThreadEvent):
            return super().go_after(ev, fn, *args, name=name)
        spawner = contextvars.copy_context()  # (see the module's docstring)

        def call() -> None:
            try:
                spawner.run(fn, *args)
            except BaseException as exc:
                self._panicked(name, exc)

        relay = speed_tricks.Relay(threading.Lock(), call)

        def wait_then_call() -> None:
            ev.wait()
            relay.run()  # a no-op if the setter ran it

        g = self.go(wait_then_call, name=name)
        ev._watch(relay)  # (False: set already, and the goroutine makes the call)
        return g

    def after_func(self, seconds: float, fn: Callable[[], Any], *, name: str) -> Timer:
        """One shared timer thread instead of a thread per timer (a request deadline each)."""
        spawner = contextvars.copy_context()  # the timer thread's would be nobody's
        return self._timers.add(time.monotonic() + max(0.0, seconds), lambda: spawner.run(self.go, fn, name=name))

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
        return _select(events, timeout, self._new_parker)  # type: ignore[arg-type]

    lock = staticmethod(threading.Lock)  # (the class itself: a lock is made on every request's path)

    def condition(self, lk: Any = None) -> Any:
        lk = lk if lk is not None else threading.Lock()
        if self._tricks and type(lk) is _PLAIN_LOCK:  # (speed_tricks.PlainLockCondition)
            return speed_tricks.PlainLockCondition(lk)
        return threading.Condition(lk)

    def bounded_semaphore(self, value: int, name: str = "semaphore") -> BoundedSemaphore:
        return _ThreadBoundedSemaphore(value)

    # the clock functions themselves, not methods that call them: rt.now() runs several times
    # on every request's path
    now = staticmethod(time.monotonic)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    wall = staticmethod(time.time)


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


def go_after(ev: Event, fn: Callable[..., Any], *args: Any, name: str) -> Goroutine:
    return _current.go_after(ev, fn, *args, name=name)


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


def bounded_semaphore(value: int, name: str = "semaphore") -> BoundedSemaphore:
    return _current.bounded_semaphore(value, name)


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

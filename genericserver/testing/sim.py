"""The simulation runtime: goroutines on real threads, one at a time, on a virtual clock (no Go twin).

Each goroutine is a real thread (so a debugger steps through it like any other code; threads
are reused from run to run, see :mod:`genericserver.testing.sim_threads`), but only the one
holding the *baton* runs. Every runtime call (``go``, event ``set``/``wait``, ``select``,
lock ``acquire``/``release``, condition ops, ``sleep``; not ``now()`` or ``is_set()``) is a
*decision point*: the calling thread works out which goroutines could run now, in a stable order
(itself first when it may go on, then by creation order; it looks only at goroutines whose wait
may have ended, as events, locks and conditions wake their waiters), asks the chooser for an index and, if
that is another goroutine, hands it the baton and waits for it back. Index 0 means "no
preemption". The decision is made in the yielding thread itself, so a switch costs one handoff.

When nothing can run, the virtual clock jumps to the earliest deadline; with none pending the
run is over if ``main`` has returned, and otherwise every goroutine is stuck: :class:`Deadlock`
names each one and what it waits for. No decision reads real time, so a run is reproducible from
(scenario, ``sim.choices``): ``Simulation(chooser=Scripted(sim.choices))`` replays it. The only
real-time check is a watchdog for a goroutine that escaped control (a real sleep, a socket);
it stays quiet while a debugger is attached.

At the end every thread the simulation started has exited: goroutines still blocked (see
:meth:`Simulation.leftover`) are woken with a private exception that unwinds them.
"""

from __future__ import annotations

import contextvars
import gc
import os
import sys
import threading
import time
from _thread import get_ident
from typing import Any, Callable, Optional, Sequence

from genericserver import runtime
from genericserver.runtime import Event, Goroutine, Runtime
from genericserver.testing import sim_threads
from genericserver.testing.choosers import PCT, Chooser, FirstRunnable, Scripted, SeededRandom, schedules

__all__ = [
    "Simulation",
    "SimulationError",
    "Deadlock",
    "GoroutinePanic",
    "Escaped",
    "Chooser",
    "FirstRunnable",
    "SeededRandom",
    "PCT",
    "Scripted",
    "schedules",
    "format_trace",
    "EPOCH",
]

EPOCH = 1767225600.0  # 2026-01-01T00:00:00Z; wall() is EPOCH + virtual now, the same every run

from genericserver.testing.sim_primitives import (  # noqa: E402
    _DEAD,
    _EVENTS,
    _INF,
    _LOCK,
    _NOTIFY,
    _RUN,
    _SLEEP,
    Deadlock,
    Escaped,
    GoroutinePanic,
    SimulationError,
    _G,
    _NOBODY,
    _Killed,
    _ready,
    _SimBoundedSemaphore,
    _SimCondition,
    _SimEvent,
    _SimLock,
)



def _pick_cpu() -> Optional[int]:
    """One CPU for all goroutine threads (Linux only). Only one runs at a time anyway, and a
    baton handoff within one core costs a few microseconds, across cores tens of them."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[os.getpid() % len(cpus)]  # spread parallel test processes over the cores


# frames that are the machinery, not the goroutine's own code: the runtime, the simulation, the
# debugger and the thread that carries the goroutine
_MACHINERY = ("genericserver/runtime/", "genericserver/testing/sim", "genericserver/testing/replay.py",
              "genericserver/testing/debugger.py", "/threading.py", "/bdb.py", "/pdb.py", "/cmd.py", "/contextlib.py")


def _where(frame: Any) -> str:
    """``path:line in function`` of the innermost frame of ``frame``'s stack that is not machinery
    (a path inside the package without its ``genericserver/``, to fit a projector's width)."""
    waits_to_call: Any = None
    while frame is not None:
        path = frame.f_code.co_filename.replace(os.sep, "/")
        if not any(m in path for m in _MACHINERY):
            short = path.rsplit("/genericserver/", 1)[-1]
            return f"{short}:{frame.f_lineno} in {frame.f_code.co_name}"
        if frame.f_code.co_name == "wait_then_call" and waits_to_call is None:
            waits_to_call = frame.f_locals.get("started_at")  # a go_after goroutine: where it began
        frame = frame.f_back
    if waits_to_call is not None:
        path, line, fn = waits_to_call
        return f"{path.replace(os.sep, '/').rsplit('/genericserver/', 1)[-1]}:{line} in {fn}"
    return "-"


def format_trace(trace: Sequence[tuple[int, float, str, str]]) -> str:
    """The trace as aligned lines: step, virtual time, goroutine, what it resumed from."""
    width = max((len(name) for _, _, name, _ in trace), default=4)
    return "\n".join(f"{step:5d} {t:10.3f}  {name:<{width}}  {op}" for step, t, name, op in trace)


class Simulation(Runtime):
    """A deterministic runtime: ``Simulation(chooser).run(main_fn, *args)``; see the module docstring.

    ``start`` is the initial virtual time; ``watchdog`` the real seconds a goroutine may run
    without a runtime call (``None``: never checked); ``max_steps`` bounds the decisions of one
    run (a goroutine that ticks forever would otherwise never let ``run`` return); ``one_cpu``
    keeps all goroutine threads on one CPU (Linux), which makes a switch several times cheaper.
    Goroutines still running after ``main`` returns go on (on virtual time) until they finish
    or block forever; one that raises then still ends the run with :class:`GoroutinePanic`.
    A Simulation runs once; make a new one (with a fresh chooser) for the next run.
    """

    name = "simulation"

    def __init__(
        self,
        chooser: Optional[Chooser] = None,
        start: float = 0.0,
        watchdog: Optional[float] = 10.0,
        *,
        epoch: float = EPOCH,
        max_steps: int = 200_000,
        one_cpu: bool = True,
    ):
        self.chooser = chooser if chooser is not None else FirstRunnable()
        self._choose = self.chooser.choose
        self._now = float(start)
        self._epoch = epoch
        self._watchdog = watchdog
        self._max_steps = max_steps
        self._cpu = _pick_cpu() if one_cpu else None
        self._running = _NOBODY
        self._gs: list[_G] = []  # live goroutines, by creation order
        # the goroutines that may be able to run (the running one included), by creation order;
        # a blocked one leaves it and waits on what can wake it (_sleep), see _decide
        self._awake: list[_G] = []
        self._timed: list[_G] = []  # blocked goroutines with a deadline
        self._threads: list[sim_threads.Task] = []
        self._idents: set[int] = set()
        self._names: dict[str, int] = {}
        self._next_gid = 1
        self._counters = {"lock": 0, "cond": 0, "semaphore": 0}
        self._trace: list[tuple[int, float, str, str]] = []
        self._choices: list[int] = []
        self._step = 0
        self._main: Optional[_G] = None
        self._main_done = False
        self._result: Any = None
        self._main_exc: Optional[BaseException] = None
        self._outcome: Optional[SimulationError] = None
        self._leftover: list[str] = []
        self._over = threading.Event()
        self._started = False
        self._active = False
        self._stopping = False

    # -- results --------------------------------------------------------------------------
    @property
    def trace(self) -> list[tuple[int, float, str, str]]:
        """One ``(step, virtual time, goroutine name, op it resumed from)`` per decision."""
        return self._trace

    @property
    def choices(self) -> list[int]:
        """The index picked at each decision that had 2+ options; ``Scripted(choices)`` replays."""
        return self._choices

    def leftover(self) -> list[str]:
        """Names of the goroutines still blocked when the run ended (empty: none left behind)."""
        return list(self._leftover)

    def goroutines(self) -> list[tuple[int, str, str, str]]:
        """Every live goroutine as ``(id, name, state, where)``, for a debugger prompt: ``running``
        (the one holding the baton), ``runnable``, or what it waits on (until when, if it has a
        deadline); ``where`` is its innermost line outside the runtime's own machinery."""
        frames = sys._current_frames()
        rows = []
        for g in list(self._gs):
            state = "running" if g is self._running else self._describe(g)
            if g is not self._running and g.deadline < _INF:
                state += f" until t={g.deadline:g}"
            rows.append((g.gid, g.name, state, _where(frames.get(g.ident))))
        return rows

    # -- running --------------------------------------------------------------------------
    def run(self, main_fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``main_fn(*args)`` as goroutine ``main`` until it and every other goroutine has
        finished or is blocked forever; return its result or raise its exception."""
        if self._started:
            raise SimulationError("a Simulation runs once; make a new one for the next run")
        self._started = True
        self._active = True
        escaped: Optional[_G] = None
        # No cyclic garbage collection during the run, one of the youngest generation after it:
        # a run's objects (a whole server, for a lifecycle run) live until it ends, so a
        # collection in the middle only moves them to older generations, where full collections
        # of the whole heap find them later; after the run they are garbage and go in one pass
        # (a fifth of a lifecycle run's time before). Also, no finalizer runs mid-run.
        collecting = gc.isenabled()
        gc.disable()
        try:
            with runtime.use(self):
                main = self._main = self._spawn(main_fn, args, "main")
                self._running = main
                main.sem.release()
                escaped = self._watch()
        finally:
            stuck = self._teardown(escaped)
            self._active = False
            # drop the goroutine records: they and the events they hold point back at this
            # simulation, a cycle only the cyclic GC would free
            self._gs, self._threads, self._main, self._awake, self._timed = [], [], None, [], []
            if collecting:
                gc.enable()
                gc.collect(0)
        outcome = self._outcome
        if outcome is None and stuck:
            outcome = SimulationError(f"goroutines did not exit when the simulation released them: {stuck}")
        if outcome is not None:
            raise outcome from (outcome.exception if isinstance(outcome, GoroutinePanic) else None)
        if self._main_exc is not None:
            raise self._main_exc
        return self._result

    def _spawn(self, fn: Callable[..., Any], args: tuple, name: str) -> _G:
        seen = self._names.get(name, 0) + 1
        self._names[name] = seen
        if seen > 1:
            name = f"{name}#{seen}"
        g = _G(self._next_gid, name)
        self._next_gid += 1
        g.handle = Goroutine(name, _SimEvent(self, f"{name}-done"))
        self._gs.append(g)
        self._wake(g)
        # a reused thread (see sim_threads): it runs nothing until it is first handed the baton
        # with its spawner's context variables, as under the threads runtime (its docstring says why)
        spawner = contextvars.copy_context()
        t = sim_threads.start(lambda: spawner.run(self._body, g, fn, args), f"sim:{name}", self._cpu)
        g.thread, g.sem = t, t.baton
        self._threads.append(t)
        g.ident = t.ident
        self._idents.add(t.ident)  # type: ignore[arg-type]
        return g

    def _body(self, g: _G, fn: Callable[..., Any], args: tuple) -> None:
        # the thread starts this when it is first handed the baton (g.sem)
        if self._stopping:
            return
        try:
            result = fn(*args)
        except BaseException as exc:
            if self._stopping:
                return  # torn down (_Killed), or an error raised while unwinding from it
            g.handle.exception = exc  # type: ignore[union-attr]
            if g is not self._main:
                self._gs.remove(g)
                g.kind = _DEAD
                self._end(GoroutinePanic(g.name, exc))
                return
            self._main_exc = exc
        else:
            if self._stopping:
                return
            if g is self._main:
                self._result = result
        g.kind = _DEAD
        g.op = "exit"
        self._gs.remove(g)
        g.handle.done._fire()  # type: ignore[union-attr]
        if g is self._main:
            self._main_done = True
        self._decide(g)

    # -- the decision point (the hot path) --------------------------------------------------
    def _decide(self, cur: _G) -> None:
        """Pick who runs next; return when ``cur`` may go on (never, if ``cur`` has exited)."""
        if self._stopping:
            # tearing down: a goroutine unwinding may finish what needs no waiting, nothing else
            if cur.killed and (cur.kind == _DEAD or _ready(cur, self._now)):
                cur.kind = _RUN
                return
            cur.killed = True
            raise _Killed()
        now = self._now
        while True:
            # Only the awake goroutines can be ready: a blocked one is woken (put back on the
            # list) by what it waits for, an event set, a lock freed, a notify or its deadline.
            # This is _ready(g, now), inlined: the decision is the simulation's hot path.
            cur_ready = cur.kind == _RUN or cur.kind != _DEAD and _ready(cur, now)
            runnable = [cur] if cur_ready else []
            asleep = []
            for g in self._awake:
                if g is cur:
                    if not cur_ready:
                        asleep.append(g)
                    continue
                kind = g.kind
                if kind == _RUN or g.deadline <= now:
                    runnable.append(g)
                elif kind == _EVENTS:
                    for ev in g.objs:
                        if ev._set:
                            runnable.append(g)
                            break
                    else:
                        asleep.append(g)
                elif kind == _LOCK and g.objs._holder is None or kind == _NOTIFY and g.notified:
                    runnable.append(g)
                else:
                    asleep.append(g)
            for g in asleep:
                self._awake.remove(g)
                self._sleep(g)
            if runnable:
                break
            soonest = min([g.deadline for g in self._gs], default=_INF)
            if soonest == _INF:
                self._stall(cur)
                return
            self._now = now = soonest
            timed, self._timed = self._timed, []
            for g in timed:
                g.timed = False
                if g.deadline <= now:
                    self._wake(g)
                elif not g.awake and g.kind != _DEAD:
                    g.timed = True
                    self._timed.append(g)
        n = len(runnable)
        if n == 1:
            nxt = runnable[0]
        else:
            i = self._choose(runnable, cur)
            if not 0 <= i < n:
                raise SimulationError(f"chooser {self.chooser!r} picked {i} of {n} runnable goroutines")
            self._choices.append(i)
            nxt = runnable[i]
        step = self._step = self._step + 1
        self._trace.append((step, now, nxt.name, nxt.op))
        if step >= self._max_steps:
            self._end(SimulationError(f"step limit reached: {step} decisions (max_steps={self._max_steps})"))
            self._park(cur)
            return
        if nxt is not cur:
            self._running = nxt
            nxt.sem.release()
            if cur.kind == _DEAD:
                return
            cur.sem.acquire()
            if self._stopping:
                cur.killed = True
                raise _Killed()
        cur.kind = _RUN
        cur.deadline = _INF

    def _wake(self, g: _G) -> None:
        """``g`` may be able to run: put it back on the awake list, in creation order."""
        if g.awake or g.kind == _DEAD:
            return
        g.awake = True
        awake = self._awake
        i = len(awake)
        while i and awake[i - 1].gid > g.gid:
            i -= 1
        awake.insert(i, g)

    def _sleep(self, g: _G) -> None:
        """``g`` cannot run now: off the awake list, onto the waiters of what it waits for."""
        g.awake = False
        kind = g.kind
        if kind == _EVENTS:
            for ev in g.objs:
                ev._waiters.append(g)
        elif kind == _LOCK:
            g.objs._waiters.append(g)
        # _NOTIFY: the condition's notify wakes it; _SLEEP: only its deadline does
        if g.deadline != _INF and not g.timed:
            g.timed = True
            self._timed.append(g)

    def _stall(self, cur: _G) -> None:
        """Nothing can run and no deadline is pending: the run is over, or deadlocked."""
        if self._main_done:
            self._end(None)
        else:
            self._end(Deadlock({g.name: self._describe(g) for g in self._gs}))
        self._park(cur)

    def _park(self, cur: _G) -> None:
        """The run is over: a live ``cur`` waits here until teardown unwinds it."""
        if cur.kind == _DEAD:
            return
        cur.sem.acquire()
        cur.killed = True
        raise _Killed()

    def _end(self, outcome: Optional[SimulationError]) -> None:
        if self._over.is_set():
            return
        self._outcome = outcome
        self._leftover = [g.name for g in self._gs]
        self._over.set()

    @staticmethod
    def _describe(g: _G) -> str:
        kind = g.kind
        if kind == _EVENTS:
            if not g.objs:
                return "waiting forever (select with no cases)"
            if len(g.objs) == 1:
                return f"waiting for event {g.objs[0].name!r}"
            return "waiting for any of events " + ", ".join(repr(ev.name) for ev in g.objs)
        if kind == _LOCK:
            holder = g.objs._holder
            if holder is None:
                return f"waiting for lock {g.objs.name!r}"
            gone = " (exited)" if holder.kind == _DEAD else ""
            return f"waiting for lock {g.objs.name!r} held by goroutine {holder.name!r}{gone}"
        if kind == _NOTIFY:
            return f"waiting on condition {g.objs.name!r} for a notify"
        if kind == _SLEEP:
            return "sleeping"
        return "runnable"

    def _foreign(self) -> _G:
        """A primitive was used by a thread that does not hold the baton: say who and why not."""
        ident = get_ident()
        if self._stopping and ident in self._idents:
            raise _Killed()  # an escaped goroutine coming back after the run was torn down
        who = threading.current_thread().name
        if not self._active:
            raise SimulationError(
                f"simulation primitive used from thread {who!r} outside Simulation.run(); "
                "only the simulation's goroutines may use its events, locks and clock"
            )
        raise SimulationError(
            f"simulation primitive used from thread {who!r}, which the simulation does not control; "
            "start it with go() (rt.go) so that it runs under the simulation"
        )

    # -- the controlling thread: watchdog and teardown ------------------------------------
    def _watch(self) -> Optional[_G]:
        """Wait for the run to end; return the goroutine that escaped control, if one did."""
        limit = self._watchdog
        if limit is None:
            self._over.wait()
            return None
        poll = min(limit / 4, 1.0)
        last_step, last_change = -1, time.monotonic()
        while not self._over.wait(poll):
            step = self._step
            clock = time.monotonic()
            if step != last_step or self._debugged():
                last_step, last_change = step, clock
            elif clock - last_change >= limit:
                holder = self._running
                self._stopping = True  # the escapee, if it comes back, unwinds instead of deciding
                self._end(Escaped(holder.name, limit))
                return holder
        return None

    def _debugged(self) -> bool:
        """True while a debugger traces the process or the goroutine holding the baton."""
        for tracer in (sys.gettrace(), threading.gettrace()):
            module = getattr(tracer, "__module__", None) or type(tracer).__module__
            if tracer is not None and not module.startswith("coverage"):  # coverage is no debugger
                return True
        frame = sys._current_frames().get(self._running.ident)  # type: ignore[arg-type]
        while frame is not None:
            if frame.f_trace is not None:  # pdb.set_trace() and friends set this on the stack
                return True
            frame = frame.f_back
        return False

    def _teardown(self, escaped: Optional[_G]) -> list[str]:
        """Unwind every goroutine still blocked, one at a time; return those that would not exit."""
        self._stopping = True
        patience = self._watchdog if self._watchdog is not None else 10.0
        stuck = []
        for g in list(self._gs):
            if g is escaped:
                continue
            self._running = g
            try:
                g.sem.release()
            except RuntimeError:
                pass  # already handed the baton by an escaped goroutine that came back late
            g.thread.join(patience)  # type: ignore[union-attr]
            if g.thread.is_alive():  # type: ignore[union-attr]
                stuck.append(g.name)
        self._running = _NOBODY
        for t in self._threads:
            if escaped is None or t is not escaped.thread:
                t.join(patience)
        return stuck

    # -- the Runtime primitives -------------------------------------------------------------
    def go(self, fn: Callable[..., Any], *args: Any, name: str) -> Goroutine:
        g = self._running
        if g.ident != get_ident():
            g = self._foreign()
        if self._stopping:
            raise _Killed()
        child = self._spawn(fn, args, name)
        g.op = f"go {child.name!r}"
        self._decide(g)
        return child.handle  # type: ignore[return-value]

    def event(self, name: str = "event") -> Event:
        return _SimEvent(self, name)

    def select(self, *events: Event, timeout: Optional[float] = None) -> Optional[Event]:
        g = self._running
        if g.ident != get_ident():
            g = self._foreign()
        for ev in events:
            if not isinstance(ev, _SimEvent) or ev._sim is not self:
                raise TypeError(f"select on {ev!r}, which is not an event of this simulation")
        g.kind = _EVENTS
        g.objs = events
        g.deadline = _INF if timeout is None else self._now + max(timeout, 0.0)
        g.op = "select " + ", ".join([repr(ev.name) for ev in events])
        self._decide(g)
        for ev in events:
            if ev._set:  # type: ignore[attr-defined]
                return ev
        return None

    def lock(self) -> _SimLock:
        self._counters["lock"] += 1
        return _SimLock(self, f"lock-{self._counters['lock']}")

    def condition(self, lk: Any = None) -> _SimCondition:
        if lk is None:
            lk = self.lock()
        elif not isinstance(lk, _SimLock) or lk._sim is not self:
            raise TypeError(f"condition on {lk!r}, which is not a lock of this simulation")
        self._counters["cond"] += 1
        return _SimCondition(self, lk, f"cond-{self._counters['cond']}")

    def bounded_semaphore(self, value: int, name: str = "semaphore") -> _SimBoundedSemaphore:
        self._counters["semaphore"] += 1
        return _SimBoundedSemaphore(self, value, f"{name}-{self._counters['semaphore']}")

    def now(self) -> float:
        return self._now

    def sleep(self, seconds: float) -> None:
        g = self._running
        if g.ident != get_ident():
            g = self._foreign()
        g.kind = _SLEEP
        g.deadline = self._now + max(seconds, 0.0)
        g.op = f"sleep {seconds:g}"
        self._decide(g)

    def wall(self) -> float:
        return self._epoch + self._now

"""The simulation's goroutine threads: a pool that reuses them from run to run (no Go twin).

A speed trick, kept off the reader's path. Starting an OS thread costs about as much as a
hundred baton handoffs, and a lifecycle run starts twenty goroutines, so fresh threads were a
quarter of every fuzzing run. Here a thread whose goroutine returned waits (``IDLE_LINGER`` at
most) for the next goroutine of this or a later :class:`~genericserver.testing.sim.Simulation`.

Nothing a goroutine can observe changes: each task runs on a thread named ``sim:<goroutine>``,
with the tracer and profiler the ``threading`` module would give a new thread (so a
breakpoint set by ``replay --break`` or coverage still reaches it), on the CPU set the
simulation asks for. The threads run SCHED_BATCH where Linux has it
(:func:`genericserver.runtime.speed_tricks.no_wakeup_preemption`): a goroutine handed the baton
does not preempt the one handing it over only to find the GIL still taken (about a third
fewer context switches a run). :func:`release_idle` ends the idle threads at once, for leak
checks.
"""

from __future__ import annotations

import os
import sys
import threading
from _thread import allocate_lock
from typing import Any, Callable, Optional

from genericserver.runtime import speed_tricks

__all__ = ["IDLE_LINGER", "Task", "start", "release_idle", "idle_count"]

# An idle thread waits this long for the next goroutine before it ends: long enough to carry
# over between the examples Hypothesis runs back to back, short enough not to matter after.
IDLE_LINGER = 1.0

_ALL_CPUS: Optional[frozenset[int]] = (
    frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
)


class Task:
    """One goroutine's run on a pooled thread.

    The thread starts ``body`` when ``baton`` is first released (the simulation's first handoff
    to the goroutine: the thread wakes once, straight into the goroutine, instead of once to
    take the task and again for the baton) and then holds it; ``join(timeout)`` waits for the
    body to return.
    """

    __slots__ = ("body", "name", "cpu", "_exited", "ident", "baton")

    def __init__(self, body: Callable[[], None], name: str, cpu: Optional[int]):
        self.body, self.name, self.cpu = body, name, cpu
        self._exited = allocate_lock()
        self._exited.acquire()  # released once the body returned and the thread is idle again
        self.ident: Optional[int] = None
        self.baton: Any = None  # the thread's lock, held while it does not run

    def join(self, timeout: float) -> bool:
        if self._exited.acquire(timeout=timeout):
            self._exited.release()
            return True
        return False

    def is_alive(self) -> bool:
        return self._exited.locked()


class _Worker:
    __slots__ = ("baton", "task", "cpus", "ident")

    def __init__(self, task: Task):
        self.baton = allocate_lock()  # released: run (the next task, or go on with this one)
        self.baton.acquire()
        self.task: Optional[Task] = task
        self.cpus: Any = "inherited"  # the CPU set this thread is on, once it set one
        self.ident: Optional[int] = None


_lock = threading.Lock()
_idle: list[_Worker] = []


def start(body: Callable[[], None], name: str, cpu: Optional[int] = None) -> Task:
    """Give ``body`` to a pooled thread, to run as ``name`` (pinned to ``cpu`` if given) once
    ``task.baton`` is released. Returns once the thread's ident is known (``task.ident``)."""
    task = Task(body, name, cpu)
    with _lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker(task)
        started = allocate_lock()
        started.acquire()
        threading.Thread(target=_work, args=(worker, started), name=name, daemon=True).start()
        started.acquire()
    else:
        worker.task = task
    task.ident, task.baton = worker.ident, worker.baton
    return task


def _work(worker: _Worker, started: Any) -> None:
    me = threading.current_thread()
    worker.ident = threading.get_ident()
    # a goroutine handed the baton waits for the one that handed it to block, instead of
    # preempting it only to find the GIL taken (three context switches a handoff instead of one)
    speed_tricks.no_wakeup_preemption()
    started.release()
    while True:
        # wait for the first handoff to the next goroutine, IDLE_LINGER at most without one
        if not worker.baton.acquire(timeout=IDLE_LINGER):
            with _lock:
                if worker.task is None and worker in _idle:  # nobody picked this thread: end
                    _idle.remove(worker)
                    return
            worker.baton.acquire()  # it was picked just as we gave up: wait for the handoff
        task = worker.task
        if task is None:
            return  # let go of (release_idle)
        me.name = task.name
        _place(worker, task.cpu)
        _inherit_hooks()
        try:
            task.body()
        finally:
            if sys.gettrace() is not None or sys.getprofile() is not None:
                sys.settrace(None)  # a debugger or coverage followed this goroutine: not the next
                sys.setprofile(None)
            me.name = "sim:idle"
            worker.task = None
            with _lock:
                _idle.append(worker)
            task._exited.release()  # only now: a finished run finds every thread in _idle


def _inherit_hooks() -> None:
    """Give this thread the tracer and profiler a new thread would get now (``threading.settrace``)."""
    trace, profile = threading.gettrace(), threading.getprofile()
    if trace is not None:
        sys.settrace(trace)
    if profile is not None:
        sys.setprofile(profile)


def _place(worker: _Worker, cpu: Optional[int]) -> None:
    wanted = _ALL_CPUS if cpu is None else frozenset((cpu,))
    if wanted is None or worker.cpus == wanted:
        return
    if worker.cpus == "inherited" and cpu is None:
        return  # a new thread asked for no placement: leave it where it was started
    try:
        os.sched_setaffinity(0, wanted)
    except OSError:
        pass  # not allowed here: the thread stays where the OS puts it
    worker.cpus = wanted


def release_idle() -> None:
    """End every idle thread now rather than after ``IDLE_LINGER`` (a test's leak check)."""
    with _lock:
        idle, _idle[:] = list(_idle), []
    for worker in idle:
        worker.task = None
        worker.baton.release()


def idle_count() -> int:
    with _lock:
        return len(_idle)

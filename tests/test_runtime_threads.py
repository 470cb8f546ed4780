"""The threads runtime: standard primitives, its pool, and the placement of goroutine threads on CPUs."""

from __future__ import annotations

import contextvars
import errno
import os
import socket
import sys
import threading

import pytest

from genericserver import runtime as rt
from genericserver.runtime import _ThreadPool as ThreadPool
from genericserver.runtime import goroutines, speed_tricks
from genericserver.runtime.speed_tricks import SpawnerCPU, detect as cpu_placement

WAIT = 10.0


class FakePlacement:
    """A placement whose "current CPU" the test sets, recording every pin."""

    def __init__(self, cpu: int = 0):
        self.cpu = cpu
        self.pins: list[tuple[str, int]] = []
        self.fail = False

    def current(self) -> int:
        return self.cpu

    def pin(self, tid: int, cpu: int) -> None:
        if self.fail:
            raise OSError(22, "Invalid argument")
        who = "self" if tid == 0 else ("worker" if tid != threading.get_native_id() else "caller")
        self.pins.append((who, cpu))


def run_and_wait(pool: ThreadPool, fn=lambda: None) -> None:
    done = threading.Event()

    def body():
        try:
            fn()
        finally:
            done.set()

    pool.run(body, "go:test")
    assert done.wait(WAIT)


def wait_idle(pool: ThreadPool) -> None:
    # the worker files itself as idle right after its body returns; wait for that, not a time
    for _ in range(10000):
        with pool._lock:
            if pool._idle:
                return
        os.sched_yield()
    raise AssertionError("the worker never went idle")


def test_an_event_is_a_threading_event_and_a_semaphore_a_bounded_semaphore():
    ev = rt.THREADS.event("x")
    assert isinstance(ev, threading.Event) and isinstance(ev, rt.Event)
    assert ev.name == "x" and not ev.wait(0) and repr(ev) == "<_ThreadEvent 'x' open>"
    ev.set()
    assert threading.Event.wait(ev, 0) and repr(ev) == "<_ThreadEvent 'x' set>"
    sem = rt.THREADS.bounded_semaphore(2)
    assert isinstance(sem, threading.BoundedSemaphore)
    assert sem.acquire(blocking=False) and sem.acquire(blocking=False) and sem.taken() == 2
    assert not sem.acquire(blocking=False)  # Go's select default: full
    sem.release()
    assert sem.taken() == 1
    sem.release()
    with pytest.raises(ValueError):
        sem.release()  # more than was taken


def test_select_wakes_on_whichever_event_another_thread_sets_and_unregisters_itself():
    a, b, c = (rt.THREADS.event(n) for n in "abc")
    started = rt.THREADS.event("selecting")
    got = []

    def selector():
        started.set()
        got.append(rt.THREADS.select(a, b, c))

    g = rt.go(selector, name="selector")
    started.wait(WAIT)
    for _ in range(100000):  # once it registered with all three (it is parked then)
        if all(ev._selectors for ev in (a, b, c)):
            break
        os.sched_yield()
    b.set()
    assert g.join(WAIT) and got == [b]
    assert a._selectors == [] and c._selectors == []  # nothing left behind on the others
    assert rt.THREADS.select(a, c, timeout=0.001) is None and a._selectors == c._selectors == []
    assert rt.THREADS.select(a, b, timeout=0) is b  # already set: no wait at all


def test_a_late_set_from_an_earlier_select_of_the_thread_does_not_end_the_next_one():
    # select parks on one event per thread; an event that fired during an earlier select may
    # set it again after that select returned. Here the late set comes while the next select
    # registers: it must not return None (no timeout) but wait for b.
    class LateSetter(rt._ThreadEvent):
        def _watch(self, woken):
            woken.set()  # as the late set of an event an earlier select watched
            return super()._watch(woken)

    a, b = LateSetter("a"), rt.THREADS.event("b")
    got = []
    g = rt.go(lambda: got.append(rt.THREADS.select(a, b)), name="selector")
    for _ in range(100000):  # once it registered with both
        if a._selectors and b._selectors:
            break
        os.sched_yield()
    assert not got  # still waiting: the late set woke it for one more look only
    b.set()
    assert g.join(WAIT) and got == [b]
    assert a._selectors == [] and b._selectors == []
    # and with a timeout, a late set does not cut it short either
    a2 = LateSetter("a2")
    assert rt.THREADS.select(a2, timeout=0.05) is None and a2._selectors == []


def test_a_new_thread_pins_itself_and_a_reused_one_is_moved_before_it_wakes():
    placement = FakePlacement(cpu=1)
    pool = ThreadPool(SpawnerCPU((placement.current, placement.pin)))
    run_and_wait(pool)
    assert placement.pins == [("self", 1)]  # a new thread: it places itself first thing
    wait_idle(pool)
    run_and_wait(pool)
    assert placement.pins == [("self", 1)]  # same CPU as last time: no system call
    wait_idle(pool)
    placement.cpu = 0
    run_and_wait(pool)
    assert placement.pins == [("self", 1), ("worker", 0)]  # moved by the spawner, then woken


def test_placement_that_the_os_refuses_is_given_up_and_goroutines_still_run():
    placement = FakePlacement(cpu=1)
    placement.fail = True
    placer = SpawnerCPU((placement.current, placement.pin))
    pool = ThreadPool(placer)
    ran = []
    run_and_wait(pool, lambda: ran.append(1))
    wait_idle(pool)
    run_and_wait(pool, lambda: ran.append(2))
    assert ran == [1, 2]
    assert placer.placement is None


def test_without_placement_nothing_is_pinned():
    pool = ThreadPool()
    seen = []
    run_and_wait(pool, lambda: seen.append(os.sched_getaffinity(0)))
    assert seen == [os.sched_getaffinity(0)]


def test_on_this_machine_a_goroutine_runs_on_its_spawners_cpu():
    placement = cpu_placement()
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        assert placement is None  # one CPU: nothing to place
        return
    assert placement is not None
    current_cpu, _ = placement
    results = []

    def spawner(cpu: int) -> None:
        os.sched_setaffinity(0, {cpu})
        assert current_cpu() == cpu
        g = rt.go(lambda: results.append((cpu, os.sched_getaffinity(0), current_cpu())), name=f"placed-{cpu}")
        assert g.join(WAIT)

    for cpu in sorted(allowed)[:2]:  # the second round reuses the first round's thread
        t = threading.Thread(target=spawner, args=(cpu,))
        t.start()
        t.join(WAIT)
    assert [(cpu, affinity, on) for cpu, affinity, on in results] == [(c, {c}, c) for c in sorted(allowed)[:2]]


def test_a_goroutine_waits_without_changing_its_cpu_set():
    seen = []

    def body():
        before = os.sched_getaffinity(0)
        rt.after(0.001).wait(WAIT)
        seen.append((before, os.sched_getaffinity(0)))

    assert rt.go(body, name="waiter").join(WAIT)
    ((before, after),) = seen
    assert before == after  # pool threads are placed when started, not per wait


def test_goroutine_threads_keep_the_default_scheduling_policy():
    # not SCHED_BATCH: a woken goroutine may preempt its waker, as the shutdown's hops need
    # under load (speed_tricks' docstring has the measurement)
    seen = []
    assert rt.go(lambda: seen.append(os.sched_getscheduler(0)), name="policy").join(WAIT)
    assert seen == [os.SCHED_OTHER]


def test_a_refused_scheduling_policy_changes_nothing(monkeypatch):
    # the simulation's threads ask for SCHED_BATCH; an OS that refuses leaves them as they were
    def refuse(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(speed_tricks.os, "sched_setscheduler", refuse)
    seen = []

    def body():
        speed_tricks.no_wakeup_preemption()
        seen.append(os.sched_getscheduler(0))

    t = threading.Thread(target=body)
    t.start()
    t.join(WAIT)
    assert seen == [os.SCHED_OTHER]


def test_shutdown_socket_wakes_a_blocked_accept_and_fails_as_the_method_does():
    ln = socket.create_server(("127.0.0.1", 0))
    errors: list[OSError] = []

    def accept() -> None:
        try:
            ln.accept()
        except OSError as err:
            errors.append(err)

    t = threading.Thread(target=accept)
    t.start()  # blocked in accept, or about to be: a shut listener fails it either way
    speed_tricks.shutdown_socket(ln, socket.SHUT_RDWR)
    t.join(WAIT)
    assert [e.errno for e in errors] == [errno.EINVAL]  # what accept says once its listener is shut
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(ln.getsockname(), timeout=WAIT)
    ln.close()
    unconnected = socket.socket()
    with pytest.raises(OSError) as method:
        unconnected.shutdown(socket.SHUT_RDWR)
    with pytest.raises(OSError) as ours:
        speed_tricks.shutdown_socket(unconnected, socket.SHUT_RDWR)
    assert (ours.value.errno, str(ours.value)) == (method.value.errno, str(method.value)) and ours.value.errno == errno.ENOTCONN
    unconnected.close()


def test_close_socket_closes_the_descriptor_once_and_the_object_reads_closed():
    ln = socket.create_server(("127.0.0.1", 0))
    fd = ln.fileno()
    speed_tricks.close_socket(ln)
    assert ln.fileno() == -1 and "[closed]" in repr(ln)
    with pytest.raises(OSError) as err:
        os.fstat(fd)
    assert err.value.errno == errno.EBADF
    speed_tricks.close_socket(ln)  # closed already: a no-op, as close() is


def test_the_calls_that_cannot_block_keep_the_gil():
    # ctypes.PyDLL's functions are called holding the GIL (CDLL's let go of it, as socket
    # methods do): what speed_tricks' docstring says the relay's listener shutdown needs
    import ctypes

    pythonapi = ctypes._FUNCFLAG_PYTHONAPI
    assert speed_tricks._LIBC.shutdown._flags_ & pythonapi and speed_tricks._LIBC.close._flags_ & pythonapi
    placement = cpu_placement()
    if placement is not None:
        assert placement[0]._flags_ & pythonapi


def test_no_placement_where_the_os_will_not_tell_the_cpu_set(monkeypatch):
    def refuse(pid):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(speed_tricks.os, "sched_getaffinity", refuse)
    assert cpu_placement() is None


def test_release_idle_ends_idle_threads_at_once_instead_of_after_the_linger(monkeypatch):
    monkeypatch.setattr(rt, "IDLE_LINGER", 60.0)  # without release_idle they would stay a minute
    pool = ThreadPool()
    threads = []
    run_and_wait(pool, lambda: threads.append(threading.current_thread()))
    wait_idle(pool)
    timers = rt._TimerThread()
    fired = []
    timers.add(0.0, lambda: fired.append(threading.current_thread()))
    for _ in range(100000):  # the timer thread runs the timer, then waits for more
        if fired:
            break
        os.sched_yield()
    pool.release_idle()
    timers.release_idle()
    for t in threads + fired:
        t.join(WAIT)
        assert not t.is_alive(), t.name
    assert pool._idle == []


def test_a_goroutine_handed_to_an_idle_thread_is_in_a_dump_before_that_thread_runs(monkeypatch):
    # a SIGQUIT on a loaded CI came while the pooled thread handed go:drain-watches had not woken
    # yet: the dump showed a "go:idle" thread and no drain-watches. Go lists it as runnable.
    monkeypatch.setattr(rt, "IDLE_LINGER", 60.0)
    pool = ThreadPool()
    run_and_wait(pool)
    wait_idle(pool)
    release, done = threading.Event(), threading.Event()

    def body():
        release.wait(WAIT)
        done.set()

    switch = sys.getswitchinterval()
    sys.setswitchinterval(30.0)  # this thread keeps the GIL until it blocks: the worker cannot wake yet
    try:
        pool.run(body, "go:drain-watches")
        dump = goroutines.format_all_goroutines()
    finally:
        sys.setswitchinterval(switch)
    assert '"go:drain-watches" [runnable]:' in dump, dump
    assert '"go:idle"' not in dump, dump
    release.set()
    assert done.wait(WAIT)
    wait_idle(pool)
    pool.release_idle()


def test_without_tricks_the_runtime_leaves_threads_where_the_os_puts_them_and_selects_park_on_events():
    unplaced = rt.ThreadsRuntime(tricks=False)
    seen = []

    def look() -> None:
        seen.append((os.sched_getaffinity(0), os.sched_getscheduler(0)))
        a = unplaced.event("a")
        seen.append((unplaced.select(a, timeout=0.001), type(rt._selector.woken)))  # parked, timed out

    g = unplaced.go(look, name="unplaced")
    assert g.join(WAIT)
    assert seen[0] == (os.sched_getaffinity(0), os.SCHED_OTHER)
    assert seen[1] == (None, threading.Event)
    unplaced.release_idle()


def test_a_parked_lock_takes_a_deadline_already_past_as_a_poll_as_an_event_does():
    # select's loop computes what is left of its timeout; woken late on a loaded machine, that is
    # negative, which an Event takes as a poll and a lock refused ("timeout value must be
    # positive", a panic in the cluster's load client under two suites at once)
    p, ev = speed_tricks.ParkedLock(threading.Lock()), threading.Event()
    assert (p.wait(-0.5), ev.wait(-0.5)) == (False, False)
    p.set()
    ev.set()
    assert (p.wait(-0.5), ev.wait(-0.5)) == (True, True)


def test_a_parked_lock_is_set_waited_and_cleared_as_an_event_is_for_its_one_waiter():
    p = speed_tricks.ParkedLock(threading.Lock())
    assert not p.wait(0.001)  # clear: the wait times out
    p.set()
    p.set()  # a second set before the wait changes nothing (two events of one select)
    assert p.wait(0) and not p.wait(0)  # the wait takes the set with it
    p.set()
    p.clear()  # a set nobody waited for is dropped
    assert not p.wait(0)
    woke = []
    g = rt.go(lambda: woke.append(p.wait(WAIT)), name="parked")
    p.set()  # from another thread: wakes the one waiting
    assert g.join(WAIT) and woke == [True]


def test_with_tricks_a_select_parks_on_a_parked_lock():
    a, b = rt.THREADS.event("a"), rt.THREADS.event("b")
    got = []
    g = rt.go(lambda: got.append((rt.THREADS.select(a, b, timeout=0.001), type(rt._selector.woken))), name="selector")
    assert g.join(WAIT)
    assert got == [(None, speed_tricks.ParkedLock)] and a._selectors == b._selectors == []


# -- go_after: the call made by the thread that sets the event ------------------------------------


def test_with_tricks_go_afters_call_is_made_by_the_setter_before_set_returns():
    ev = rt.THREADS.event("time-to-stop")
    calls: list[str] = []
    g = rt.THREADS.go_after(ev, lambda what: calls.append(f"{what} on {threading.current_thread().name}"), "stop",
                            name="relay")
    assert g in rt.THREADS.live() and calls == []  # a goroutine waiting, as Go's would
    ev.set()
    # no thread wake-up between the set and the call: the setter made it
    assert calls == [f"stop on {threading.current_thread().name}"]
    assert g.join(WAIT) and calls == [f"stop on {threading.current_thread().name}"]  # once


def test_without_tricks_go_after_is_a_goroutine_that_waits_then_calls():
    plain = rt.ThreadsRuntime(tricks=False)
    ev, called = plain.event("time-to-stop"), threading.Event()
    names: list[str] = []
    g = plain.go_after(ev, lambda: (names.append(threading.current_thread().name), called.set()), name="relay")
    ev.set()
    assert called.wait(WAIT) and g.join(WAIT)
    assert names == ["go:relay"]
    plain.release_idle()


def test_go_after_on_an_event_set_already_calls_from_the_goroutine():
    ev = rt.THREADS.event("set-already")
    ev.set()
    called = threading.Event()
    names: list[str] = []
    g = rt.THREADS.go_after(ev, lambda: (names.append(threading.current_thread().name), called.set()), name="late")
    assert called.wait(WAIT) and g.join(WAIT) and names == ["go:late"]


def test_a_panic_in_go_afters_call_is_the_goroutines_not_the_setters():
    runtime = rt.ThreadsRuntime()
    ev = runtime.event("boom")

    def boom() -> None:
        raise RuntimeError("panic in a relay")

    g = runtime.go_after(ev, boom, name="relay-panics")
    ev.set()  # does not raise here
    assert g.join(WAIT)
    assert [(name, str(exc)) for name, exc in runtime.panics] == [("relay-panics", "panic in a relay")]
    runtime.release_idle()


# -- a goroutine's context variables --------------------------------------------------------------

WHO = contextvars.ContextVar("who", default="nobody")


def test_a_goroutine_and_an_after_func_start_with_their_spawners_context_variables():
    seen: dict[str, str] = {}
    done = [threading.Event(), threading.Event()]

    def child(key: str, i: int) -> None:
        seen[key] = WHO.get()
        WHO.set("changed-by-child")  # its own copy: neither the spawner nor the next goroutine sees it
        done[i].set()

    def spawner() -> None:
        WHO.set("replica-1")
        rt.go(child, "go", 0, name="ctx-child")
        rt.after_func(0.0, lambda: child("after_func", 1), name="ctx-timer")

    threading.Thread(target=spawner).start()
    assert all(d.wait(WAIT) for d in done)
    assert seen == {"go": "replica-1", "after_func": "replica-1"}
    # the pooled thread the child ran on is handed the next goroutine with that one's context
    again = threading.Event()
    rt.go(lambda: (seen.__setitem__("next", WHO.get()), again.set()), name="ctx-next")
    assert again.wait(WAIT)
    assert seen["next"] == "nobody" and WHO.get() == "nobody"


def test_a_condition_on_a_plain_lock_is_made_without_the_lookups_and_waits_and_wakes_as_threadings():
    plain = rt.ThreadsRuntime(tricks=False).condition(threading.Lock())
    tricked = rt.ThreadsRuntime(tricks=True).condition(threading.Lock())
    assert type(plain) is threading.Condition and type(tricked) is speed_tricks.PlainLockCondition
    # an RLock keeps threading's own condition, which uses the RLock's methods
    assert type(rt.ThreadsRuntime(tricks=True).condition(threading.RLock())) is threading.Condition
    for cond in (plain, tricked):
        assert not cond._is_owned()
        with cond:
            assert cond._is_owned()
            assert cond.wait(timeout=0) is False  # lets go of the lock and takes it back
            assert cond._is_owned()
        woken: list[bool] = []
        ready = threading.Event()

        def waiter() -> None:
            with cond:
                ready.set()
                woken.append(cond.wait_for(lambda: woken == [] and flag, timeout=WAIT))

        flag = False
        t = threading.Thread(target=waiter)
        t.start()
        assert ready.wait(WAIT)
        with cond:  # the waiter let go of the lock in wait(): it can be taken here
            flag = True
            cond.notify_all()
        t.join(WAIT)
        assert woken == [True]
        with pytest.raises(RuntimeError):
            cond.notify()  # not holding the lock, as threading's refuses

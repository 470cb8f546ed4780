"""The threads runtime: goroutines, events, select, timers, locks (the simulation has test_sim.py)."""

from __future__ import annotations

import threading

import pytest

from genericserver import runtime as rt

WAIT = 10.0


def test_a_goroutine_runs_under_its_name_and_its_handle_reports_the_end():
    seen = {}
    release = rt.event("release")

    def body(x):
        seen["name"] = threading.current_thread().name
        seen["x"] = x
        release.wait(WAIT)

    g = rt.go(body, 42, name="delayed-stop")
    assert not g.join(0)  # still running: it waits for us
    assert g in rt.THREADS.live()
    release.set()
    assert g.join(WAIT)
    assert seen == {"name": "go:delayed-stop", "x": 42}
    assert g not in rt.THREADS.live()


def test_goroutine_threads_are_reused():
    idents = []
    for i in range(3):
        g = rt.go(lambda: idents.append(threading.get_ident()), name=f"worker-{i}")
        assert g.join(WAIT)
    # back to back, the idle thread picks the next goroutine up instead of a new thread starting
    assert len(set(idents)) == 1


@pytest.mark.expect_goroutine_panic
def test_a_panicking_goroutine_is_recorded_and_logged(caplog):
    before = len(rt.THREADS.panics)

    def boom():
        raise RuntimeError("as designed")

    g = rt.go(boom, name="boom")
    assert g.join(WAIT)
    assert isinstance(g.exception, RuntimeError)
    assert rt.THREADS.panics[before:] == [("boom", g.exception)]
    assert "goroutine boom panicked" in caplog.text


def test_an_event_fires_once_and_stays_set():
    ev = rt.event("closed-channel")
    assert not ev.wait(0)
    ev.set()
    ev.set()  # idempotent, unlike closing a closed Go channel
    assert ev.is_set() and ev.wait(0) and ev.wait()


def test_select_returns_the_first_set_event_in_argument_order_or_none_on_timeout():
    a, b, c = rt.event("a"), rt.event("b"), rt.event("c")
    assert rt.select(a, b, timeout=0) is None
    b.set()
    c.set()
    assert rt.select(a, c, b) is c
    setter = rt.go(a.set, name="set-a")
    assert rt.select(a, rt.event("never"), timeout=WAIT) is a
    setter.join(WAIT)


def test_timers_fire_in_order_and_a_stopped_one_never_fires():
    fired = []
    done = rt.event("late-timer-fired")
    # stopped as soon as it is made: real time must not reach its due time first, so that is
    # 0.3 s away (0.02 s was too little for a test thread on a loaded machine)
    stopped = rt.after_func(0.3, lambda: fired.append("stopped"), name="stopped-timer")
    stopped.stop()
    rt.after_func(0.01, lambda: fired.append("early"), name="early-timer")
    rt.after_func(0.35, lambda: (fired.append("late"), done.set()), name="late-timer")
    assert done.wait(WAIT)
    # the late timer fired after the stopped one was due: had it not been stopped, it would be here
    assert fired == ["early", "late"]


def test_after_is_an_event_that_fires_after_the_duration():
    start = rt.now()
    ev = rt.after(0.03, name="after")
    assert ev.wait(WAIT)
    assert rt.now() - start >= 0.03


def test_rwlock_lets_readers_share_and_writers_wait():
    lk = rt.rwlock()
    lk.rlock()
    lk.rlock()  # two readers at once
    writer_in = rt.event("writer-in")

    def write():
        with lk.write_locked():
            writer_in.set()

    g = rt.go(write, name="writer")
    assert not writer_in.wait(0.05)  # readers hold it (a bounded wait: the negative can only be sampled)
    lk.runlock()
    lk.runlock()
    assert writer_in.wait(WAIT)
    g.join(WAIT)
    with pytest.raises(RuntimeError, match="RUnlock of unlocked RWMutex"):
        lk.runlock()


def test_once_runs_the_function_the_first_time_only():
    once = rt.once()
    calls = []
    once.do(lambda: calls.append(1))
    once.do(lambda: calls.append(2))
    assert calls == [1]


def test_use_installs_a_runtime_for_a_block():
    class Marker(rt.ThreadsRuntime):
        name = "marker"

    m = Marker()
    assert rt.current() is rt.THREADS
    with rt.use(m):
        assert rt.current() is m
    assert rt.current() is rt.THREADS

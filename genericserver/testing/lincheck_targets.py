"""The primitives lincheck checks: for each, how to call it and a plain sequential model (no Go twin).

Each :class:`~genericserver.testing.lincheck.Target` names one primitive the shutdown rests on,
builds it inside the simulation, performs one :class:`~genericserver.testing.lincheck.Op` on it
and compares with a model a reader can check by eye: a wait group is a counter and a flag, a
token bucket is (tokens, when last filled), a read-write lock is (readers, writer, writers
waiting). ``TARGETS`` lists them; ``scenarios`` is the Hypothesis strategy of scenarios for
one (in :mod:`genericserver.testing.lincheck_scenarios`). Results are what the call returned,
or the exception's class name when it raised.

Anchors (see :mod:`genericserver.testing.lincheck`): a part that never blocks happens at its
call's virtual instant (``"call"``); a timeout happens at its return (``"return"``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from genericserver import runtime as rt
from genericserver.apimachinery.waitgroup import RateLimitedSafeWaitGroup, SafeWaitGroup, WaitGroup
from genericserver.audit.buffered import BatchConfig, BufferedBackend
from genericserver.audit.event import Event as AuditEvent
from genericserver.context import context
from genericserver.filters.timeout import _Handoff
from genericserver.lifecycle_signals import LifecycleSignal
from genericserver.testing.lincheck import BLOCKED, FINISHED, Model, Op, Target
from genericserver.x.time.rate.rate import Limiter

NEGATIVE = "NegativeCounterError"
ADD_AFTER_WAIT = "AddAfterWaitError"


def _calls(obj: Any, op: Op, table: dict[str, Callable[..., Any]]) -> Any:
    return table[op.name](obj, *op.args)


class _Table(Model):
    """A model written as one method per operation, ``op_<name>(state, *args)`` (one part each),
    with the operations that never block listed in ``instant`` (anchored at their call)."""

    instant: frozenset[str] = frozenset()

    def anchor(self, op: Op, part: int, result: Any) -> Optional[str]:
        return "call" if op.name in self.instant else None

    def step(self, state: Any, op: Op, part: int, at: float) -> Optional[tuple]:
        return getattr(self, f"op_{op.name}")(state, *op.args)


# -- WaitGroup: a counter ------------------------------------------------------------------------


class WaitGroupModel(_Table):
    instant = frozenset({"add", "done"})

    def initial(self) -> int:
        return 0

    def op_add(self, n: int, delta: int) -> tuple:
        return (n, NEGATIVE) if n + delta < 0 else (n + delta, None)

    def op_done(self, n: int) -> tuple:
        return self.op_add(n, -1)

    def op_wait(self, n: int) -> Optional[tuple]:
        return (n, None) if n == 0 else BLOCKED


WAITGROUP_CALLS = {"add": lambda wg, d: wg.add(d), "done": lambda wg: wg.done(), "wait": lambda wg: wg.wait()}

# -- SafeWaitGroup: a counter and "wait began" ----------------------------------------------------


class SafeWaitGroupModel(Model):
    """``wait`` takes effect in two parts: it refuses further adds at once, then waits for zero."""

    def initial(self) -> tuple[int, bool]:
        return 0, False

    def parts(self, op: Op) -> int:
        return 2 if op.name == "wait" else 1

    def anchor(self, op: Op, part: int, result: Any) -> Optional[str]:
        return None if op.name == "wait" and part == 1 else "call"

    def step(self, state: Any, op: Op, part: int, at: float) -> Optional[tuple]:
        n, waiting = state
        if op.name == "wait":
            if part == 0:
                return (n, True), None
            return (state, None) if n == 0 else BLOCKED
        delta = op.args[0] if op.name == "add" else -1
        if waiting and delta > 0:
            return state, ADD_AFTER_WAIT
        if n + delta < 0:
            return state, NEGATIVE
        return (n + delta, waiting), None


# -- RateLimitedSafeWaitGroup: the count drops when done() starts, the counter when it ends --------


class RateLimitedModel(Model):
    """State: (count, counter, waiting, count when wait began, stopped). ``done`` is two parts:
    the count drops at once (Go's ``Done`` lowers it before the limiter wait), the counter after
    the limiter's token; ``wait`` too (it records the count and refuses adds at once, then waits
    for the counter to reach zero or for the hard stop). ``stop`` is the factory's context being
    cancelled (the grace period's end): a ``wait`` still waiting returns the count *then*,
    which leaves out every ``done`` that has begun, even one still parked on the limiter."""

    def initial(self) -> tuple:
        return 0, 0, False, 0, False

    def parts(self, op: Op) -> int:
        return 2 if op.name in ("done", "wait") else 1

    def anchor(self, op: Op, part: int, result: Any) -> Optional[str]:
        return "call" if part == 0 else None

    def step(self, state: Any, op: Op, part: int, at: float) -> Optional[tuple]:
        count, counter, waiting, before, stopped = state
        if op.name == "stop":
            return (count, counter, waiting, before, True), None
        if op.name == "add":
            delta = op.args[0]
            if waiting and delta > 0:
                return state, ADD_AFTER_WAIT
            if count + delta < 0:
                return state, NEGATIVE
            return (count + delta, counter + delta, waiting, before, stopped), None
        if op.name == "done":
            if part == 0:
                if count <= 0:
                    return state, NEGATIVE, FINISHED
                return (count - 1, counter, waiting, before, stopped), None
            return (count, counter - 1, waiting, before, stopped), None
        if part == 0:  # wait
            return (count, counter, True, count, stopped), None
        if counter == 0:
            return state, (before, count, None)
        return (state, (before, count, "Canceled")) if stopped else BLOCKED


class _RateLimitedBox:
    """The group, a limiter admitting one done() a second (burst 1), and the hard stop: the
    factory's context, cancelled by ``stop`` (as Go's test with a hard timeout cancels it)."""

    def __init__(self) -> None:
        self.group = RateLimitedSafeWaitGroup()
        self.stop_ctx, self.stop = context.with_cancel(context.background())

    def wait(self) -> tuple:
        before, after, err = self.group.wait(lambda count: (Limiter(1, 1), self.stop_ctx, lambda: None))
        return before, after, (None if err is None else type(err).__name__.replace("Error", ""))


RATE_LIMITED_CALLS = {
    "add": lambda b, d: b.group.add(d),
    "done": lambda b: b.group.done(),
    "wait": lambda b: b.wait(),
    "stop": lambda b: b.stop(),
}

# -- Limiter: a token bucket --------------------------------------------------------------------

LIMIT, BURST = 4.0, 2


class LimiterModel(_Table):
    """State: (tokens, when they were last counted). ``allow`` takes a token if one is there;
    ``wait`` takes one even if it has to wait for it, and returns how long it waited."""

    instant = frozenset({"allow", "wait"})

    def initial(self) -> tuple:
        return float(BURST), None

    def step(self, state: Any, op: Op, part: int, at: float) -> Optional[tuple]:
        tokens, last = state
        if last is not None:
            tokens = min(float(BURST), tokens + max(0.0, at - last) * LIMIT)
        if op.name == "allow":
            if tokens < 1:
                return state, False  # a refusal counts nothing (Go keeps the old time too)
            return (round(tokens - 1, 9), at), True
        tokens -= 1
        return (round(tokens, 9), at), round(max(0.0, -tokens / LIMIT), 6)


def _limiter_wait(lim: Limiter) -> float:
    started = rt.now()
    lim.wait(context.background())
    return round(rt.now() - started, 6)


LIMITER_CALLS = {"allow": lambda lim: lim.allow(), "wait": _limiter_wait}

# -- LifecycleSignal: fired or not, and how many times its observer ran ----------------------------


class SignalModel(_Table):
    instant = frozenset({"is_signaled", "observed"})

    def initial(self) -> bool:
        return False

    def op_signal(self, fired: bool) -> tuple:
        return True, None

    def op_wait(self, fired: bool) -> Optional[tuple]:
        return (fired, None) if fired else BLOCKED

    def op_is_signaled(self, fired: bool) -> tuple:
        return fired, fired

    def op_observed(self, fired: bool) -> tuple:
        return fired, 1 if fired else 0


def _signal() -> LifecycleSignal:
    sig = LifecycleSignal("ShutdownInitiated")
    sig.observed = 0  # type: ignore[attr-defined]

    def observe(s: LifecycleSignal, at: float) -> None:
        s.observed += 1  # type: ignore[attr-defined]

    sig.observe(observe)
    return sig


SIGNAL_CALLS = {
    "signal": lambda s: s.signal(),
    "wait": lambda s: s.signaled().wait() and None,
    "is_signaled": lambda s: s.is_signaled(),
    "observed": lambda s: s.observed,
}

# -- Once: ran or not -----------------------------------------------------------------------------


class OnceModel(_Table):
    instant = frozenset({"count"})

    def initial(self) -> bool:
        return False

    def op_do(self, ran: bool) -> tuple:
        return True, 1  # do() returns once the function ran, exactly once, whoever ran it

    def op_count(self, ran: bool) -> tuple:
        return ran, 1 if ran else 0


class _OnceBox:
    def __init__(self) -> None:
        self.once = rt.once()
        self.started = self.finished = 0

    def fn(self) -> None:
        self.started += 1
        rt.sleep(0)  # the function takes a step: another caller may come in meanwhile
        self.finished += 1

    def do(self) -> int:
        self.once.do(self.fn)
        return self.finished


ONCE_CALLS = {"do": lambda box: box.do(), "count": lambda box: box.started}

# -- RWLock: readers, writer, writers waiting ------------------------------------------------------


class RWLockModel(Model):
    """``lock`` announces a waiting writer at once (part 0), then takes the lock (part 1):
    from the announcement on, new readers wait."""

    def initial(self) -> tuple:
        return 0, False, 0

    def parts(self, op: Op) -> int:
        return 2 if op.name == "lock" else 1

    def anchor(self, op: Op, part: int, result: Any) -> Optional[str]:
        return None if op.name == "rlock" or (op.name == "lock" and part == 1) else "call"

    def step(self, state: Any, op: Op, part: int, at: float) -> Optional[tuple]:
        readers, writer, waiting = state
        if op.name == "rlock":
            return BLOCKED if writer or waiting else ((readers + 1, writer, waiting), None)
        if op.name == "runlock":
            return (state, "RuntimeError") if readers == 0 else ((readers - 1, writer, waiting), None)
        if op.name == "lock":
            if part == 0:
                return (readers, writer, waiting + 1), None
            return BLOCKED if writer or readers else ((readers, True, waiting - 1), None)
        return (state, "RuntimeError") if not writer else ((readers, False, waiting), None)  # unlock


RWLOCK_CALLS = {name: (lambda name: lambda lk: getattr(lk, name)())(name) for name in ("rlock", "runlock", "lock", "unlock")}

# -- select over several events --------------------------------------------------------------------


class SelectModel(Model):
    """State: the set of events that are set. ``select(a, b)`` returns the first of its cases
    that is set; ``select(a, b, timeout)`` returns None at its timeout if neither was."""

    def initial(self) -> frozenset:
        return frozenset()

    def anchor(self, op: Op, part: int, result: Any) -> Optional[str]:
        if op.name == "set":
            return "call"
        return "return" if op.name == "select" and len(op.args) == 3 and result is None else None

    def step(self, state: Any, op: Op, part: int, at: float) -> Optional[tuple]:
        if op.name == "set":
            return state | {op.args[0]}, None
        cases = op.args[:2]
        for i in cases:
            if i in state:
                return state, i
        return (state, None) if len(op.args) == 3 else BLOCKED


def _select(events: list, *args: Any) -> Optional[int]:
    timeout = args[2] if len(args) == 3 else None
    fired = rt.select(events[args[0]], events[args[1]], timeout=timeout)
    return None if fired is None else events.index(fired)


SELECT_CALLS = {"set": lambda evs, i: evs[i].set(), "select": _select}

# -- a bounded semaphore (max-in-flight's slots) ---------------------------------------------------

SLOTS = 2


class SemaphoreModel(_Table):
    instant = frozenset({"try_acquire", "release", "taken"})

    def initial(self) -> int:
        return 0

    def op_acquire(self, taken: int) -> Optional[tuple]:
        return BLOCKED if taken == SLOTS else (taken + 1, True)

    def op_try_acquire(self, taken: int) -> tuple:
        return (taken, False) if taken == SLOTS else (taken + 1, True)

    def op_release(self, taken: int) -> tuple:
        return (taken, "ValueError") if taken == 0 else (taken - 1, None)

    def op_taken(self, taken: int) -> tuple:
        return taken, taken


SEMAPHORE_CALLS = {
    "acquire": lambda s: s.acquire(),
    "try_acquire": lambda s: s.acquire(blocking=False),
    "release": lambda s: s.release(),
    "taken": lambda s: s.taken(),
}

# -- context: cancelled or not, and why ------------------------------------------------------------


class ContextModel(_Table):
    """State: the cause of the cancellation (None while not cancelled); the first one stays."""

    instant = frozenset({"cancel", "err", "cause", "child_err"})

    def initial(self) -> Optional[str]:
        return None

    def op_cancel(self, cause: Optional[str], why: int) -> tuple:
        return (cause if cause is not None else f"cause-{why}"), None

    def op_err(self, cause: Optional[str]) -> tuple:
        return cause, None if cause is None else "context canceled"

    op_child_err = op_err

    def op_cause(self, cause: Optional[str]) -> tuple:
        return cause, cause

    def op_wait(self, cause: Optional[str]) -> Optional[tuple]:
        return BLOCKED if cause is None else (cause, None)

    def op_child_wait(self, cause: Optional[str]) -> Optional[tuple]:
        return BLOCKED if cause is None else (cause, "context canceled")


def _child(parent: Any, wait: bool) -> Optional[str]:
    child, cancel = context.with_cancel(parent.ctx)
    if wait:
        child.done().wait()
    err = child.err()
    return None if err is None else str(err)


class _Parent:
    def __init__(self) -> None:
        self.ctx, self.cancel = context.with_cancel_cause(context.background())


CONTEXT_CALLS = {
    "cancel": lambda p, why: p.cancel(RuntimeError(f"cause-{why}")),
    "err": lambda p: None if p.ctx.err() is None else str(p.ctx.err()),
    "cause": lambda p: None if context.cause(p.ctx) is None else str(context.cause(p.ctx)),
    "wait": lambda p: p.ctx.done().wait() and None,
    "child_wait": lambda p: _child(p, True),
    "child_err": lambda p: _child(p, False),
}

# -- the buffered audit backend: what it accepted reaches the delegate by the end of shutdown ------


class AuditModel(Model):
    """State: (events accepted, closed). ``process(i)`` is accepted until the backend closed;
    ``shutdown()`` closes it and returns how many events the delegate got: every one accepted."""

    def initial(self) -> tuple:
        return 0, False

    def anchor(self, op: Op, part: int, result: Any) -> Optional[str]:
        return "call" if op.name == "process" else None

    def step(self, state: Any, op: Op, part: int, at: float) -> Optional[tuple]:
        accepted, closed = state
        if op.name == "process":
            return (state, False) if closed else ((accepted + 1, closed), True)
        return (accepted, True), accepted


class _CountingDelegate:
    def __init__(self) -> None:
        self.got = 0

    def run(self, stop: Any) -> None:
        pass

    def process_events(self, *events: Any) -> bool:
        self.got += len(events)
        return True

    def shutdown(self) -> None:
        pass

    def name(self) -> str:
        return "counting"


class _Audit:
    def __init__(self) -> None:
        self.delegate = _CountingDelegate()
        # batches of one: a batch that waits for company would tick on virtual time forever
        self.backend = BufferedBackend(self.delegate, BatchConfig(buffer_size=16, max_batch_size=1))
        self.stop = rt.event("audit-stop")
        self.backend.run(self.stop)

    def process(self, i: int) -> bool:
        return self.backend.process_events(AuditEvent(audit_id=f"event-{i}"))

    def shutdown(self) -> int:
        self.stop.set()
        self.backend.shutdown()
        return self.delegate.got


AUDIT_CALLS = {"process": lambda a, i: a.process(i), "shutdown": lambda a: a.shutdown()}

# -- the timeout filter's hand-off: items from the handler goroutine to the caller ----------------

TAKE_TIMEOUT = 1.0


class HandoffModel(Model):
    """State: (queued items, abandoned). ``take()`` returns the oldest item, or "timeout" at
    its timeout if none came; ``put`` is refused once the caller abandoned the hand-off."""

    def initial(self) -> tuple:
        return (), False

    def anchor(self, op: Op, part: int, result: Any) -> Optional[str]:
        if op.name == "take":
            return "return" if result == "timeout" else None
        return "call"

    def step(self, state: Any, op: Op, part: int, at: float) -> Optional[tuple]:
        items, abandoned = state
        if op.name == "put":
            return (state, False) if abandoned else ((items + (op.args[0],), abandoned), True)
        if op.name == "abandon":
            return (items, True), None
        if items:
            return (items[1:], abandoned), items[0]
        return state, "timeout"


def _take(h: _Handoff) -> Any:
    # the caller's side of the timeout filter: wait for the next item, up to a deadline
    if not h.pending() and rt.select(h.ready(), timeout=TAKE_TIMEOUT) is None:
        return "timeout"
    return h.take()


HANDOFF_CALLS = {"put": lambda h, x: h.put(x), "take": _take, "abandon": lambda h: h.abandon()}


def _target(name: str, make: Callable[[], Any], table: dict, model: Model, describe: str) -> Target:
    return Target(name, make, lambda obj, op: _calls(obj, op, table), model, describe)


TARGETS: dict[str, Target] = {t.name: t for t in (
    _target("WaitGroup", WaitGroup, WAITGROUP_CALLS, WaitGroupModel(), "sync.WaitGroup: add, done, wait"),
    _target("SafeWaitGroup", SafeWaitGroup, WAITGROUP_CALLS, SafeWaitGroupModel(), "adds refused once wait began"),
    _target("RateLimitedSafeWaitGroup", _RateLimitedBox, RATE_LIMITED_CALLS, RateLimitedModel(),
            "the watch wait group: done() takes a token once wait began"),
    _target("Limiter", lambda: Limiter(LIMIT, BURST), LIMITER_CALLS, LimiterModel(), "token bucket: allow, wait"),
    _target("LifecycleSignal", _signal, SIGNAL_CALLS, SignalModel(), "signal once, observers once, waiters wake"),
    _target("Once", _OnceBox, ONCE_CALLS, OnceModel(), "sync.Once: the function runs once, do() waits for it"),
    _target("RWLock", rt.rwlock, RWLOCK_CALLS, RWLockModel(), "sync.RWMutex with writer preference"),
    _target("select", lambda: [rt.event(f"e{i}") for i in range(3)], SELECT_CALLS, SelectModel(),
            "select over closed-once events, with a timeout"),
    _target("BoundedSemaphore", lambda: rt.bounded_semaphore(SLOTS, "slots"), SEMAPHORE_CALLS, SemaphoreModel(),
            "max-in-flight's slots"),
    _target("Context", _Parent, CONTEXT_CALLS, ContextModel(), "cancel with a cause; children follow"),
    _target("AuditBuffered", _Audit, AUDIT_CALLS, AuditModel(), "buffered audit backend: nothing accepted is lost"),
    _target("TimeoutHandoff", _Handoff, HANDOFF_CALLS, HandoffModel(), "the timeout filter's hand-off queue"),
)}


__all__ = ["TARGETS"]

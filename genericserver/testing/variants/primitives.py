"""Known-bad primitive variants: classic concurrency bugs planted in the primitives the shutdown rests on (no Go twin).

Each replaces one method with a copy of the real one that has a single, classic mistake, named
by its ``bug_class``: a check made outside the lock that guards the update, a wake-up that can
be lost, a notify a ``select`` can miss, a token counted twice, a release before the record it
announces, a cancel that forgets a child, a ``sync.Once`` that runs twice, a reader let in past
a waiting writer. Every one passes a test that runs one goroutine at a time in the obvious
order; only an interleaving shows it, which is what :mod:`genericserver.testing.lincheck`
explores. ``target`` names the lincheck target that catches it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from genericserver import runtime as rt
from genericserver.apimachinery.waitgroup import NO_FACTORY, AddAfterWaitError, NegativeCounterError, RateLimitedSafeWaitGroup, SafeWaitGroup, WaitGroup
from genericserver.audit.buffered import BufferedBackend, _handle_crash
from genericserver.context import context as gocontext
from genericserver.context.context import ContextError
from genericserver.filters.timeout import _Handoff
from genericserver.lifecycle_signals import LifecycleSignal
from genericserver.runtime import seam
from genericserver.testing.variants import Variant
from genericserver.x.time.rate.rate import Limiter


class _Primitive(Variant):
    kind = "primitive"
    owner: Any = None
    attribute = ""

    @staticmethod
    def replacement(*args: Any) -> Any:
        raise NotImplementedError

    def patches(self) -> list[tuple[Any, str, Any]]:
        return [(self.owner, self.attribute, type(self).replacement)]


class SafeWaitGroupCheckOutsideLock(_Primitive):
    name = "safe-wait-group-check-outside-lock"
    story = "SafeWaitGroup.add looks at the wait flag before taking the read lock, so an add can slip in after wait() returned"
    breaks = "waitgroup.SafeWaitGroup.add"
    bug_class = "check outside the lock"
    target = "SafeWaitGroup"
    owner, attribute = SafeWaitGroup, "add"

    @staticmethod
    def replacement(self: SafeWaitGroup, delta: int) -> None:
        if self._wait and delta > 0:  # the bug: checked before the lock that makes it atomic with wait()
            raise AddAfterWaitError()
        self._mu.rlock()
        try:
            self._wg.add(delta)
        finally:
            self._mu.runlock()


class WaitGroupLostWakeUp(_Primitive):
    name = "wait-group-lost-wake-up"
    story = "WaitGroup.zero reads the counter without the lock, so a wait can start just after the last done() and sleep forever"
    breaks = "waitgroup.WaitGroup.zero"
    bug_class = "lost wake-up"
    target = "WaitGroup"
    owner, attribute = WaitGroup, "zero"

    @staticmethod
    def replacement(self: WaitGroup) -> rt.Event:
        if self._n > 0:  # the bug: read outside the lock; the last done() may come before the event exists
            with self._lock:
                if self._zero is None:
                    self._zero = rt.event("waitgroup-zero")
                return self._zero
        ev = rt.event("waitgroup-zero")
        ev.set()
        return ev


class HandoffMissedNotify(_Primitive):
    name = "handoff-missed-notify"
    story = "the timeout filter's hand-off reads the caller's ready event before taking its lock, so a select can miss an item"
    breaks = "filters.timeout._Handoff.put"
    bug_class = "missed notify in select"
    target = "TimeoutHandoff"
    owner, attribute = _Handoff, "put"

    @staticmethod
    def replacement(self: _Handoff, item: Any, wait: bool = True) -> bool:
        ready = self._ready  # the bug: a ready() made between here and the append is never set
        room = None
        with self.lock:
            if self.abandoned:
                return False
            if self.first_put_at is None:
                self.first_put_at = rt.now()
            self._items.append(item)
            if wait and len(self._items) >= self.LIMIT:
                room = self._room = rt.event("timeout-handoff-room")
        if ready is not None:
            ready.set()
        if room is None:
            return True
        room.wait()
        return not self.abandoned


class LimiterDoubleCountsToken(_Primitive):
    name = "limiter-double-counts-token"
    story = "Limiter.allow_n looks at the tokens under the lock and takes one under it again later, so two callers spend one token"
    breaks = "ratelimit.Limiter.allow_n"
    bug_class = "double-counted token (check then act)"
    target = "Limiter"
    owner, attribute = Limiter, "allow_n"

    @staticmethod
    def replacement(self: Limiter, now: float, n: int) -> bool:
        if self.tokens_at(now) < n:  # the bug: another caller may take the token before the reserve below
            return False
        self.reserve_n(now, n)
        return True


class AuditFinishedBeforeFlush(_Primitive):
    name = "audit-finished-before-flush"
    story = "the buffered audit backend tells shutdown() it finished before it hands over the events still buffered"
    breaks = "audit.buffered.BufferedBackend._run"
    bug_class = "release before record"
    target = "AuditBuffered"
    owner, attribute = BufferedBackend, "_run"

    @staticmethod
    def replacement(self: BufferedBackend, stop: rt.Event) -> None:
        try:
            self._process_incoming_events(stop)
        finally:
            self._shutdown_ch.set()  # the bug: announced before the drain below
        while True:
            events = self._collect_events(None, None)
            _handle_crash(lambda: self._process_events(events))
            if not events:
                break


class CancelForgetsChildren(_Primitive):
    name = "cancel-forgets-children"
    story = "a context adopts a new child after checking, without its lock, that it is not cancelled; a cancel in between never reaches the child"
    breaks = "context._CancelCtx._adopt"
    bug_class = "cancel that forgets children (check outside the lock)"
    target = "Context"
    owner, attribute = gocontext._CancelCtx, "_adopt"

    @staticmethod
    def replacement(self: Any, child: Any) -> None:
        if self._err is None:  # the bug: the cancel may run between this check and the insert
            with self._lock:
                self._children[child] = None
            return
        with self._lock:
            err, cause = self._err, self._cause_err
        child._cancel(False, err, cause)


class OnceRunsTwice(_Primitive):
    name = "once-runs-twice"
    story = "sync.Once checks its done flag only before the lock, so a second caller that waited on the lock runs the function again"
    breaks = "seam.Once.do"
    bug_class = "Once running twice (no second check under the lock)"
    target = "Once"
    owner, attribute = seam.Once, "do"

    @staticmethod
    def replacement(self: seam.Once, fn: Callable[[], Any]) -> None:
        if self._done:
            return
        with self._lock:  # the bug: no second look at _done once the lock is ours
            try:
                fn()
            finally:
                self._done = True


class ReaderOvertakesWaitingWriter(_Primitive):
    name = "reader-overtakes-waiting-writer"
    story = "RWLock.rlock waits only for a writer holding the lock, not for one waiting, so readers can starve a writer"
    breaks = "seam.RWLock.rlock"
    bug_class = "a reader admitted while a writer waits"
    target = "RWLock"
    owner, attribute = seam.RWLock, "rlock"

    @staticmethod
    def replacement(self: seam.RWLock) -> None:
        with self._lock:
            while self._writer:  # the bug: forgets self._writers_waiting
                self._cond.wait()
            self._readers += 1


class SignalWakesBeforeRecord(_Primitive):
    name = "signal-wakes-before-record"
    story = "a lifecycle signal wakes its waiters before it records the firing and tells its observers"
    breaks = "lifecycle_signals.LifecycleSignal._fire"
    bug_class = "release before record"
    target = "LifecycleSignal"
    owner, attribute = LifecycleSignal, "_fire"

    @staticmethod
    def replacement(self: LifecycleSignal) -> None:
        self._event.set()  # the bug: waiters run before the observers below have seen it
        with self._lock:
            self._fired = True
            observers = list(self._observers)
        at = rt.now()
        for observe in observers:
            observe(self, at)


class RateLimitedCountOutsideLock(_Primitive):
    name = "rate-limited-count-outside-lock"
    story = "RateLimitedSafeWaitGroup.wait reads the request count before taking its lock, so it reports a count an add has changed"
    breaks = "waitgroup.RateLimitedSafeWaitGroup.wait"
    bug_class = "check outside the lock (count read on the wrong side)"
    target = "RateLimitedSafeWaitGroup"
    owner, attribute = RateLimitedSafeWaitGroup, "wait"

    @staticmethod
    def replacement(self: RateLimitedSafeWaitGroup, limiter_factory: Any) -> tuple[int, int, Optional[Exception]]:
        if limiter_factory is None:
            return 0, 0, ValueError(NO_FACTORY)
        count_before = self._count  # the bug: read before the lock, an add may come in between
        with self._mu:
            limiter, stop_ctx, cancel = limiter_factory(count_before)
            self._limiter, self._stop_ctx = limiter, stop_ctx
            self._wait = True
        try:
            drained = self._wg.zero()
            err: Optional[ContextError] = None
            if rt.select(drained, stop_ctx.done()) is not drained:
                err = stop_ctx.err()
            with self._mu:
                count_after = self._count
            return count_before, count_after, err
        finally:
            cancel()


class RateLimitedCountAfterLimiter(_Primitive):
    name = "rate-limited-count-after-limiter"
    story = ("RateLimitedSafeWaitGroup.done lowers the request count after its limiter wait, not before, so a wait "
             "that ends at the hard stop counts the watches still parked on the limiter as active (kubernetes#114925)")
    breaks = "waitgroup.RateLimitedSafeWaitGroup.done"
    bug_class = "a count dropped on the wrong side of a blocking wait"
    target = "RateLimitedSafeWaitGroup"
    owner, attribute = RateLimitedSafeWaitGroup, "done"

    @staticmethod
    def replacement(self: RateLimitedSafeWaitGroup) -> None:
        with self._mu:
            if self._count <= 0:
                raise NegativeCounterError()
            limiter, stop_ctx = (self._limiter, self._stop_ctx) if self._wait else (None, None)
        try:
            if limiter is not None:
                try:
                    limiter.wait(stop_ctx)  # type: ignore[arg-type]
                except Exception:
                    pass
        finally:
            with self._mu:
                self._count -= 1  # the bug: the request counts as active until its token came
            self._wg.done()


PRIMITIVE_VARIANTS: tuple[type[Variant], ...] = (
    SafeWaitGroupCheckOutsideLock, RateLimitedCountOutsideLock, RateLimitedCountAfterLimiter, WaitGroupLostWakeUp, HandoffMissedNotify,
    LimiterDoubleCountsToken, AuditFinishedBeforeFlush, SignalWakesBeforeRecord, CancelForgetsChildren,
    OnceRunsTwice, ReaderOvertakesWaitingWriter,
)

"""Port of k8s.io/apimachinery/pkg/util/waitgroup/waitgroup.go and ratelimited_waitgroup.go (v1.36.0).

Two wait groups that refuse new work once someone waits on them, so that "no request is in
flight" can be waited for without a request sneaking in between the check and the wait:

* :class:`SafeWaitGroup` counts the non-long-running requests (``with_wait_group``); the
  shutdown's ``wait()`` returns when the last one is done.
* :class:`RateLimitedSafeWaitGroup` counts watch requests. Its ``wait(factory)`` makes every
  later ``done()`` take a token from a rate limiter, so that closing thousands of watches does
  not stampede their clients into reconnecting at once, and it gives up when the factory's
  context ends even if some watches are still open.

Both rest on :class:`WaitGroup`, Go's ``sync.WaitGroup`` built from runtime locks and events.
Everything blocks through :mod:`genericserver.runtime`, so the simulation runtime can run it.

Two Go files in one module: the rate-limited group is the safe group with a limiter on its drain,
and both rest on the same :class:`WaitGroup`.
"""

from __future__ import annotations

from typing import Callable, Optional, Protocol

from genericserver import runtime as rt
from genericserver.context.context import CancelFunc, Context

ADD_AFTER_WAIT = "add with positive delta after Wait is forbidden"
NEGATIVE_COUNTER = "sync: negative WaitGroup counter"
NO_FACTORY = "rate limiter factory must be specified"


class AddAfterWaitError(Exception):
    """Go's ``Add`` error: new work arrived after ``Wait`` began."""

    def __init__(self) -> None:
        super().__init__(ADD_AFTER_WAIT)


class NegativeCounterError(RuntimeError):
    """Go panics when a wait group's counter drops below zero (more ``Done`` than ``Add``)."""

    def __init__(self) -> None:
        super().__init__(NEGATIVE_COUNTER)


class WaitGroup:
    """``sync.WaitGroup``: a counter; ``wait()`` blocks until it is zero.

    Go panics on a negative counter after the fact; here the offending ``add`` raises
    :class:`NegativeCounterError` and leaves the counter as it was.
    """

    def __init__(self) -> None:
        self._lock = rt.lock()
        self._n = 0
        # set when the counter next reaches zero; a new one per "busy period", made on demand
        self._zero: Optional[rt.Event] = None

    def add(self, delta: int) -> None:
        released = None
        with self._lock:
            n = self._n + delta
            if n < 0:
                raise NegativeCounterError()
            self._n = n
            if n == 0 and self._zero is not None:
                released, self._zero = self._zero, None
        if released is not None:
            released.set()

    def done(self) -> None:
        self.add(-1)

    def zero(self) -> rt.Event:
        """An event set once the counter is zero (already set if it is zero now)."""
        with self._lock:
            if self._n > 0:
                if self._zero is None:
                    self._zero = rt.event("waitgroup-zero")
                return self._zero
        ev = rt.event("waitgroup-zero")
        ev.set()
        return ev

    def wait(self) -> None:
        self.zero().wait()


class SafeWaitGroup:
    """A wait group whose ``add`` with a positive delta fails once ``wait`` has been called.

    ``add`` holds the read side of a read-write lock and ``wait`` flips its flag under the
    write side, so every ``add`` either finished before ``wait`` began (and is waited for)
    or sees the flag and fails. ``done`` needs no lock; ``wait`` may be called many times,
    from many goroutines.
    """

    def __init__(self) -> None:
        self._wg = WaitGroup()
        self._mu = rt.rwlock()
        self._wait = False

    def add(self, delta: int) -> None:
        """Add ``delta`` (may be negative); raises :class:`AddAfterWaitError` for a positive
        delta once ``wait`` began, :class:`NegativeCounterError` below zero."""
        self._mu.rlock()
        try:
            if self._wait and delta > 0:
                raise AddAfterWaitError()
            self._wg.add(delta)
        finally:
            self._mu.runlock()

    def done(self) -> None:
        self._wg.done()

    def wait(self) -> None:
        """Refuse further positive adds, then block until the counter is zero."""
        with self._mu.write_locked():
            self._wait = True
        self._wg.wait()


class RateLimiter(Protocol):
    """What ``RateLimitedSafeWaitGroup`` needs of a limiter; must be thread-safe.

    ``wait(ctx)`` blocks until the caller may proceed; Go returns an error, here it raises.
    """

    def wait(self, ctx: Context) -> None: ...


# factory(count) -> (limiter, stop context, cancel); count is how many requests will call done()
RateLimiterFactory = Callable[[int], tuple[Optional[RateLimiter], Context, CancelFunc]]


class RateLimitedSafeWaitGroup:
    """A safe wait group whose ``done()`` calls are rate limited once ``wait`` has begun.

    The request count drops when ``done()`` *starts*, before its wait for a token, so the
    count ``wait`` reports at the end is the requests that have not begun to leave.
    """

    def __init__(self) -> None:
        self._wg = WaitGroup()
        self._mu = rt.lock()
        self._wait = False
        self._count = 0  # requests currently using the group (drops as soon as done() starts)
        # set by wait(): every later done() takes a token from _limiter, bounded by _stop_ctx
        self._limiter: Optional[RateLimiter] = None
        self._stop_ctx: Optional[Context] = None

    def add(self, delta: int) -> None:
        """As ``SafeWaitGroup.add``; the request count follows the counter."""
        with self._mu:
            if self._wait and delta > 0:
                raise AddAfterWaitError()
            if self._count + delta < 0:
                raise NegativeCounterError()
            self._wg.add(delta)
            self._count += delta

    def done(self) -> None:
        """Leave the group; once ``wait`` began, first wait for the limiter (its error is ignored).

        More ``done()`` than ``add()`` raises :class:`NegativeCounterError` at once; Go panics
        a little later, in the inner wait group, after the limiter wait.
        """
        with self._mu:
            if self._count <= 0:
                raise NegativeCounterError()
            self._count -= 1
            limiter, stop_ctx = (self._limiter, self._stop_ctx) if self._wait else (None, None)
        try:
            if limiter is not None:
                # outside the lock: many done() calls queue on the limiter at the same time
                try:
                    limiter.wait(stop_ctx)  # type: ignore[arg-type]
                except Exception:
                    pass  # Go discards the limiter's error: the request leaves either way
        finally:
            self._wg.done()

    def wait(self, limiter_factory: Optional[RateLimiterFactory]) -> tuple[int, int, Optional[Exception]]:
        """Block until every request is done or the factory's context ends.

        Returns (requests in flight when ``wait`` began, requests still in flight at the end,
        error): the error is the stop context's when it ended first, else ``None``. Without a
        factory it returns at once with an error and does not start waiting.
        """
        if limiter_factory is None:
            return 0, 0, ValueError(NO_FACTORY)
        with self._mu:
            limiter, stop_ctx, cancel = limiter_factory(self._count)
            self._limiter, self._stop_ctx = limiter, stop_ctx
            count_before = self._count
            self._wait = True
        try:
            # the hard stop: requests that never call done() must not hold the shutdown forever
            drained = self._wg.zero()
            err: Optional[Exception] = None
            # Go's select picks at random when both are ready; here "drained" wins ties
            if rt.select(drained, stop_ctx.done()) is not drained:
                err = stop_ctx.err()
            with self._mu:
                count_after = self._count
            return count_before, count_after, err
        finally:
            cancel()

"""Port of Go's golang.org/x/time/rate package (rate.go, v0.14.0, as pinned by apimachinery v0.36.0): the Limiter.Wait part.

A token bucket of ``burst`` tokens, full at the start, refilled at ``limit`` tokens per
second. ``RateLimitedSafeWaitGroup`` takes one token per ``done()`` once its ``wait`` has
begun; the apiserver builds the limiter with burst 1 and a context whose deadline is the watch
grace period. Only what that needs is ported: ``wait``/``wait_n`` with their reservation and
its cancellation, ``reserve_n``, ``allow``/``allow_n`` (the linearizability checker's
non-blocking probe of the bucket) and the read accessors. Time comes from ``rt.now()``, so under the
simulation runtime the limiter runs on virtual time.

The semantics that matter to the shutdown:

* a wait whose token would only arrive after the context's deadline fails *at once* with
  ``rate: Wait(n=1) would exceed context deadline`` and takes no token, so near the end of the
  grace period every remaining ``done()`` goes through in one burst;
* a context that is already done fails at once with its error (``CANCELED`` or
  ``DEADLINE_EXCEEDED``); one that ends during the wait gives the token back and fails with it;
* ``INF`` never waits and ignores the burst.

Go returns these errors; here ``wait`` raises them (``RateLimitError`` or the context's error).
Durations are float seconds rather than integer nanoseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from genericserver import runtime as rt
from genericserver.context.context import Context

INF = math.inf
"""The infinite rate: every event is allowed at once, whatever the burst."""

INF_DURATION = math.inf
"""The delay of a reservation that cannot be honoured (Go's ``InfDuration``)."""

# A delay at least this long is waited for with no timeout at all; thread timeouts overflow
# near ``threading.TIMEOUT_MAX`` and about 31 years is forever for a server's purposes.
_FOREVER = 1e9


class RateLimitError(Exception):
    """An error of the limiter itself (burst exceeded, deadline would be passed)."""


def _duration_from_tokens(limit: float, tokens: float) -> float:
    """Seconds it takes to accumulate ``tokens`` at ``limit`` tokens per second."""
    if limit <= 0:
        return INF_DURATION
    return tokens / limit


def _tokens_from_duration(limit: float, seconds: float) -> float:
    """Tokens accumulated in ``seconds`` at ``limit`` tokens per second."""
    if limit <= 0:
        return 0.0
    return seconds * limit


@dataclass
class Reservation:
    """Tokens taken from a limiter, usable from ``time_to_act`` on; ``cancel_at`` gives them back."""

    ok: bool
    lim: "Limiter"
    tokens: int = 0
    time_to_act: float = 0.0
    limit: float = 0.0  # the limit when the reservation was made; the limiter's may change

    def delay_from(self, now: float) -> float:
        """How long to wait from ``now`` before acting (``INF_DURATION`` if not ok)."""
        if not self.ok:
            return INF_DURATION
        return max(0.0, self.time_to_act - now)

    def cancel_at(self, now: float) -> None:
        """Return the tokens, minus those that later reservations already count on."""
        if not self.ok:
            return
        lim = self.lim
        with lim._mu:
            if lim._limit == INF or self.tokens == 0 or self.time_to_act < now:
                return
            # reservations made after this one were queued behind it: their share stays taken
            restore = self.tokens - _tokens_from_duration(self.limit, lim._last_event - self.time_to_act)
            if restore <= 0:
                return
            now, _, tokens = lim._advance(now)
            lim._last = now
            lim._tokens = min(tokens + restore, float(lim._burst))
            if self.time_to_act == lim._last_event:
                previous = self.time_to_act - _duration_from_tokens(self.limit, self.tokens)
                if previous >= now:
                    lim._last_event = previous


class Limiter:
    """``rate.NewLimiter(limit, burst)``: ``limit`` events per second, bursts of ``burst``."""

    def __init__(self, limit: float, burst: int):
        self._mu = rt.lock()
        self._limit = float(limit)
        self._burst = burst
        self._tokens = float(burst)  # Go starts from an empty bucket last filled "long ago": full
        self._last: Optional[float] = None  # when _tokens was last brought up to date
        self._last_event = -math.inf  # the latest time a reservation may act at (past or future)

    def limit(self) -> float:
        with self._mu:
            return self._limit

    def burst(self) -> int:
        with self._mu:
            return self._burst

    def tokens(self) -> float:
        """Tokens available now (negative while reservations are queued)."""
        return self.tokens_at(rt.now())

    def tokens_at(self, now: float) -> float:
        with self._mu:
            return self._advance(now)[2]

    def allow(self) -> bool:
        """Whether one event may happen now; takes its token if so (``Allow``)."""
        return self.allow_n(rt.now(), 1)

    def allow_n(self, now: float, n: int) -> bool:
        """Whether ``n`` events may happen at ``now``; takes their tokens if so, never waits."""
        return self._reserve_n(now, n, 0.0).ok

    def reserve_n(self, now: float, n: int) -> Reservation:
        """Take ``n`` tokens for an event at ``now`` or later; the reservation says when."""
        return self._reserve_n(now, n, INF_DURATION)

    def wait(self, ctx: Context) -> None:
        """Block until one event may happen; raise if it cannot happen before ``ctx`` ends."""
        self.wait_n(ctx, 1)

    def wait_n(self, ctx: Context, n: int) -> None:
        with self._mu:
            burst, limit = self._burst, self._limit
        if n > burst and limit != INF:
            raise RateLimitError(f"rate: Wait(n={n}) exceeds limiter's burst {burst}")
        if ctx.done().is_set():
            raise ctx.err()  # type: ignore[misc]
        now = rt.now()
        deadline = ctx.deadline()
        wait_limit = INF_DURATION if deadline is None else deadline - now
        r = self._reserve_n(now, n, wait_limit)
        if not r.ok:
            raise RateLimitError(f"rate: Wait(n={n}) would exceed context deadline")
        delay = r.delay_from(now)
        if delay == 0:
            return
        if rt.select(ctx.done(), timeout=None if delay >= _FOREVER else delay) is None:
            return  # the token is ours now
        # the context ended first: give the token back so later waiters may go sooner
        r.cancel_at(rt.now())
        raise ctx.err()  # type: ignore[misc]

    # -- internals (self._mu held) --------------------------------------------------------
    def _reserve_n(self, now: float, n: int, max_future_reserve: float) -> Reservation:
        with self._mu:
            if self._limit == INF:
                return Reservation(ok=True, lim=self, tokens=n, time_to_act=now)
            if self._limit == 0:
                # a zero rate never refills: the burst is a one-off allowance
                ok = self._burst >= n
                if ok:
                    self._burst -= n
                return Reservation(ok=ok, lim=self, tokens=self._burst, time_to_act=now)
            now, last, tokens = self._advance(now)
            tokens -= n
            wait = _duration_from_tokens(self._limit, -tokens) if tokens < 0 else 0.0
            ok = n <= self._burst and wait <= max_future_reserve
            if not ok:
                self._last = last
                return Reservation(ok=False, lim=self, limit=self._limit)
            r = Reservation(ok=True, lim=self, tokens=n, time_to_act=now + wait, limit=self._limit)
            self._last, self._tokens, self._last_event = now, tokens, r.time_to_act
            return r

    def _advance(self, now: float) -> tuple[float, Optional[float], float]:
        """(now, last, tokens) as they would be at ``now``; changes nothing."""
        last = self._last
        if last is None:
            return now, last, self._tokens
        if now < last:
            last = now
        tokens = self._tokens + _tokens_from_duration(self._limit, now - last)
        return now, last, min(tokens, float(self._burst))

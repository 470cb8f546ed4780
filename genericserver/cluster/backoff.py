"""Port of k8s.io/apimachinery/pkg/util/wait/backoff.go (v1.36.0): Backoff, Jitter, ExponentialBackoff.

Only what Contour's ``envoy shutdown`` uses: ``Backoff.step`` (the wait before the next try),
``jitter``, ``exponential_backoff`` and client-go's ``retry.OnError`` (k8s.io/client-go/util/retry),
which calls a function up to ``steps`` times and sleeps ``step()`` between tries.

With Contour's ``Backoff(duration=0.2, factor=5, jitter=0.1, steps=4)`` that is four tries with
waits of 0.2 s, 1 s and 5 s in between, each stretched by up to 10 %: :func:`schedule` lists them.
Sleeps go through the runtime; the random source is a parameter so tests can pin it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Optional

from genericserver import runtime as rt


class WaitTimeout(Exception):
    """``wait.ErrWaitTimeout``: the condition never held within the allowed steps."""

    def __init__(self) -> None:
        super().__init__("timed out waiting for the condition")


def jitter(duration: float, max_factor: float, rand: Callable[[], float] = random.random) -> float:
    """``wait.Jitter``: ``duration`` plus up to ``max_factor`` times itself (1.0 if not positive)."""
    if max_factor <= 0.0:
        max_factor = 1.0
    return duration + rand() * max_factor * duration


@dataclass
class Backoff:
    """``wait.Backoff``; durations in seconds. ``step()`` mutates ``duration`` and ``steps``."""

    duration: float = 0.0
    factor: float = 0.0
    jitter: float = 0.0
    steps: int = 0
    cap: float = 0.0

    def step(self, rand: Callable[[], float] = random.random) -> float:
        wait, self.duration, self.steps = _delay(self.steps, self.duration, self.cap, self.factor, self.jitter, rand)
        return wait


def _delay(steps: int, duration: float, cap: float, factor: float, jit: float,
           rand: Callable[[], float]) -> tuple[float, float, int]:
    # once the steps are used up the base duration stays put (only jitter varies it)
    if steps < 1:
        return (jitter(duration, jit, rand) if jit > 0 else duration), duration, 0
    steps -= 1
    nxt = duration * factor if factor != 0 else duration
    if factor != 0 and cap > 0 and nxt > cap:
        nxt, steps = cap, 0
    # jitter stretches this wait only; the next base duration is computed without it
    wait = jitter(duration, jit, rand) if jit > 0 else duration
    return wait, nxt, steps


def exponential_backoff(backoff: Backoff, condition: Callable[[], bool],
                        rand: Callable[[], float] = random.random) -> None:
    """``wait.ExponentialBackoff``: call ``condition`` up to ``backoff.steps`` times until it is
    true, sleeping ``step()`` between calls; raises :class:`WaitTimeout` when the steps run out.
    An exception from ``condition`` ends the loop at once."""
    b = Backoff(backoff.duration, backoff.factor, backoff.jitter, backoff.steps, backoff.cap)
    while b.steps > 0:
        if condition():
            return
        if b.steps == 1:
            break  # no point sleeping after the last try
        rt.sleep(b.step(rand))
    raise WaitTimeout()


def on_error(backoff: Backoff, retriable: Callable[[BaseException], bool], fn: Callable[[], None],
             rand: Callable[[], float] = random.random) -> Optional[BaseException]:
    """client-go's ``retry.OnError``: retry ``fn`` while it raises a retriable error.

    Returns ``None`` on success, else the last error (Go returns it; here it is returned, not
    raised, as Contour only logs it)."""
    last: list[Optional[BaseException]] = [None]

    def condition() -> bool:
        try:
            fn()
        except Exception as err:
            if retriable(err):
                last[0] = err
                return False
            raise
        return True

    try:
        exponential_backoff(backoff, condition, rand)
    except WaitTimeout as timeout:
        return last[0] if last[0] is not None else timeout
    except Exception as err:
        return err
    return None


def schedule(backoff: Backoff, rand: Callable[[], float] = random.random) -> list[float]:
    """The waits ``exponential_backoff`` would sleep between its tries when every try fails."""
    b = Backoff(backoff.duration, backoff.factor, backoff.jitter, backoff.steps, backoff.cap)
    waits = []
    while b.steps > 1:
        waits.append(b.step(rand))
    return waits

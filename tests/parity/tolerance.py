"""How far a shutdown replay's times may be from Go's (tests/parity/README.md, "The HTTP/1 shutdown
corpus"): early only as far as Go's own ``Shutdown`` polling explains, late only as far as this
machine's load, measured while the replay ran.

**Early.** Go's ``Shutdown`` does not wake when a connection goes idle: it looks at its connections
at once, then after 1 ms, and each time twice as long after, at most 500 ms apart, each wait
stretched by up to a tenth at random (server.go, ``Shutdown``'s ``nextPollInterval``). So it returns
at the first look after the last connection went idle, where this server returns at the change
itself. A Go return at ``G`` ms came from some look ``k`` (the last nominal look time at or before
``G``); what let it return happened after look ``k - 1``, which came no earlier than its nominal
time. So ours may come as early as that time (:func:`earliest_shutdown`), and no earlier. Every
other time Go records follows an event (a handler's sleep, a close, the deadline), not a look.
Those, and a ``Shutdown`` that met its deadline, may come a little earlier than Go's
(``EARLY_MS``): the recorder keeps the latest of its runs, and a loaded machine made one of them
40 ms late.

**Late.** Nothing in Go explains a later time; this machine's load does. :class:`Lag` runs beside
the replay and measures how late a thread that asks to wake every few milliseconds is woken: on a
quiet machine about a millisecond, with both cores busy tens of milliseconds. A time may be late by
``LATE_MS`` plus the worst lag it measured (and plus any sleep step that overran).
"""

from __future__ import annotations

import threading
import time
from typing import Optional

POLL_BASE_MS = 1.0  # Go's first wait between looks at the connections
POLL_MAX_MS = 500.0  # shutdownPollIntervalMax
EARLY_MS = 50.0  # how much earlier than Go's (latest of three runs) an event's time may be
LATE_MS = 30.0  # how much later, on a quiet machine (what the Lag measured comes on top)
LAG_TICK = 0.005  # seconds between the Lag's wake-ups


def poll_times(until_ms: float) -> list[float]:
    """The nominal times (ms after the call) at which Go's ``Shutdown`` looks at its connections,
    up to ``until_ms``: 0, 1, 3, 7, ... 511, 1011, 1511, ... (each look's wait may run up to a
    tenth longer than this)."""
    times, at, wait = [0.0], 0.0, POLL_BASE_MS
    while at <= until_ms:
        at += wait
        times.append(at)
        wait = min(wait * 2, POLL_MAX_MS)
    return times


def earliest_shutdown(go_ms: float) -> float:
    """The earliest time a server that wakes on each change may return, given that Go's polling
    ``Shutdown`` returned at ``go_ms``: the nominal time of the look before the one that returned."""
    looks = [t for t in poll_times(go_ms) if t <= go_ms]
    return looks[-2] if len(looks) > 1 else 0.0


class Lag:
    """A thread that wakes every ``LAG_TICK`` seconds until :meth:`stop` and keeps the worst
    lateness of a wake-up, in ms: how long this machine kept a ready thread waiting."""

    def __init__(self):
        self.worst_ms = 0.0
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def __enter__(self) -> "Lag":
        self._thread = threading.Thread(target=self._run, name="lag-meter", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join()

    def _run(self) -> None:
        while True:
            before = time.monotonic()
            if self._stop.wait(LAG_TICK):
                return
            late = (time.monotonic() - before - LAG_TICK) * 1000
            self.worst_ms = max(self.worst_ms, late)


def late_allowance(lag_ms: float, overslept_ms: float = 0.0) -> float:
    """How much later than Go's a time may be, given the load measured while it was replayed."""
    return LATE_MS + lag_ms + overslept_ms

"""How far a shutdown replay's times may be from Go's, in the HTTP/1 and the HTTP/2 replay alike
(tests/parity/README.md, "The HTTP/1 shutdown corpus"): early only as far as Go's own ``Shutdown``
polling explains, late only as far as this machine's load, measured while the replay ran.

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
the replay and measures how long the process kept a thread that asks to wake every few
milliseconds waiting: each wake-up more than ``STALL_MS`` late counts, and their lateness adds up
(``stalled_ms``): nothing on a quiet machine, tens to hundreds of milliseconds with both cores
busy. A time is the end of a chain of wake-ups (a timer or a socket, the server's thread, the
client's reader or the thread that called ``Shutdown``), and each waits through the same stalls,
so a time may be late by ``LATE_MS`` plus the stalls measured (and plus any sleep step that
overran). The worst single wake-up was not enough: three suites of this file at once beside a
busy loop made Shutdown's return 450 ms late where one wake-up came at most 118 ms late. And the
wake-ups are the runtime's own timers', which a context's deadline waits on too: ticking on
``threading.Event.wait`` measured 43 ms of stalls during a run whose deadline fired 172 ms late.
"""

from __future__ import annotations

import time

from genericserver import runtime as rt

POLL_BASE_MS = 1.0  # Go's first wait between looks at the connections
POLL_MAX_MS = 500.0  # shutdownPollIntervalMax
EARLY_MS = 50.0  # how much earlier than Go's (latest of three runs) an event's time may be
LATE_MS = 30.0  # how much later, on a quiet machine (what the Lag measured comes on top)
STALL_MS = 2.0  # a wake-up later than this was held up by the load (less is the timer's own slack)
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
    """A goroutine that wakes every ``LAG_TICK`` seconds on the runtime's own timers (the ones a
    context's deadline and the server's waits use) until the ``with`` ends, and keeps the worst
    lateness of a wake-up and the stalls added up, in ms: how long this machine, and the
    runtime's timer thread, kept a ready thread waiting. A wake-up that comes with the end still
    counts, and so does a last one that had not come by then (a stall that held every thread of
    the process shows only there)."""

    def __init__(self):
        self.worst_ms = 0.0
        self.stalled_ms = 0.0  # the lateness of every wake-up later than STALL_MS, added up
        self._stop = rt.event("lag-stop")
        self._done = rt.event("lag-done")
        self._last = 0.0  # when the ticker last woke (or was started)

    def __enter__(self) -> "Lag":
        self._last = time.monotonic()
        rt.go(self._run, name="lag-meter")
        return self

    def __exit__(self, *exc) -> None:
        self._late(time.monotonic() - self._last)  # a wake-up overdue at the end
        self._stop.set()
        assert self._done.wait(10), "the lag meter did not stop"

    def _late(self, waited: float) -> None:
        late = (waited - LAG_TICK) * 1000
        self.worst_ms = max(self.worst_ms, late)
        if late > STALL_MS:
            self.stalled_ms += late

    def _run(self) -> None:
        try:
            while True:
                stopped = rt.select(self._stop, rt.after(LAG_TICK, name="lag-tick")) is self._stop
                now = time.monotonic()
                if not stopped:
                    self._late(now - self._last)
                self._last = now
                if stopped:
                    return
        finally:
            self._done.set()


class NoLag:
    """A :class:`Lag` that measured none: the verdict a quiet machine gets (a test that breaks a
    server on purpose is judged so, whatever the load)."""

    worst_ms = stalled_ms = 0.0

    def __enter__(self) -> "NoLag":
        return self

    def __exit__(self, *exc) -> None:
        pass


def late_allowance(lag_ms: float, overslept_ms: float = 0.0) -> float:
    """How much later than Go's a time may be, given the stalls measured while it was replayed
    (``Lag.stalled_ms``) and the sleep steps' overrun."""
    return LATE_MS + lag_ms + overslept_ms


def shutdown_bounds(go: dict, late: float) -> tuple[float, float]:
    """The bounds (low, high ms: ours minus Go's) of ``Shutdown``'s return, given Go's recorded
    result ``go`` (``at_ms``, and ``err`` if it met its deadline) and the ``late`` allowance: one
    that met its deadline returned at it, not at a look at the connections (``EARLY_MS``); one
    that returned nil, as early as Go's look before the one that returned."""
    early = EARLY_MS if go.get("err") else go["at_ms"] - earliest_shutdown(go["at_ms"])
    return (-round(early, 1), late)

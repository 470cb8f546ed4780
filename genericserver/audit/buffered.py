"""Port of k8s.io/apiserver/plugin/pkg/audit/buffered/buffered.go (v1.36.0): a batching queue in front of a backend.

``process_events`` never blocks a request: it copies each event into a bounded buffer, or drops
it with ``audit buffer queue blocked`` when the buffer is full (and returns True, as Go does).
One goroutine (``audit-buffered-batch``) collects batches of up to ``max_batch_size`` events,
waiting at most ``max_batch_wait`` for a batch to fill, optionally throttled to
``throttle_qps``, and hands each batch to the delegate backend, in its own goroutine
(``audit-buffered-delegate``) when ``async_delegate`` is set.

Shutdown loses nothing that was accepted. Once the ``stop`` event given to ``run`` is set the
batching loop finishes its batch, closes the buffer and drains it; ``shutdown`` then waits for
that loop, for every delegate call still running, and shuts the delegate down. Events offered
after the buffer closed are refused with ``audit backend shut down`` (``process_events`` returns
False); they can only come from requests that outlived the drain.

Go's buffer is a channel and the loop ``select``s on it, a timer and ``stop``. Here the buffer is
a small queue that hands a one-shot runtime event to a waiting receiver, so the same ``select``
works on both runtimes. A crash in a delegate is logged and re-raised, like Go's
``HandleCrash`` with its default ``ReallyCrash``; the loop still closes the buffer and marks
itself finished on the way out, so ``shutdown`` never hangs on it. A ``buffer_size`` below 1 is
not supported (Go would make an unbuffered channel).
"""

from __future__ import annotations

import collections
import logging
from dataclasses import dataclass
from typing import Any, Callable, Optional

from genericserver import runtime as rt
from genericserver.apimachinery.waitgroup import WaitGroup
from genericserver.audit.event import Event
from genericserver.audit.metrics import handle_plugin_error
from genericserver.x.time.rate.rate import Limiter

log = logging.getLogger("genericserver.audit")

PLUGIN_NAME = "buffered"


@dataclass(frozen=True)
class BatchConfig:
    """How events are buffered and batched; durations and rates in seconds."""

    buffer_size: int
    max_batch_size: int
    max_batch_wait: float = 0.0
    throttle_enable: bool = False
    throttle_qps: float = 0.0
    throttle_burst: int = 0
    async_delegate: bool = False


class _Closed(Exception):
    """A send on the closed buffer (Go: a send on a closed channel panics)."""


class _Buffer:
    """A bounded FIFO of events with Go channel semantics for one receiver."""

    def __init__(self, size: int):
        self._lock = rt.lock()
        self._items: collections.deque[Event] = collections.deque()
        self._size = size
        self._closed = False
        self._waiters: list[rt.Event] = []

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def try_send(self, ev: Event) -> bool:
        """Queue ``ev``; False when full; raises :class:`_Closed` once closed."""
        with self._lock:
            if self._closed:
                raise _Closed()
            if len(self._items) >= self._size:
                return False
            self._items.append(ev)
            waiters, self._waiters = self._waiters, []
        for w in waiters:
            w.set()
        return True

    def close(self) -> None:
        with self._lock:
            self._closed = True
            waiters, self._waiters = self._waiters, []
        for w in waiters:
            w.set()

    def try_recv(self) -> tuple[Optional[Event], bool, bool]:
        """``(event, True, _)`` if one was queued, else ``(None, False, closed)``."""
        with self._lock:
            if self._items:
                return self._items.popleft(), True, False
            return None, False, self._closed

    def ready(self) -> rt.Event:
        """An event set once something can be received (at once if something can already)."""
        ev = rt.event("audit-buffer-ready")
        with self._lock:
            if self._items or self._closed:
                ev.set()
            else:
                self._waiters.append(ev)
        return ev

    def forget(self, ev: rt.Event) -> None:
        with self._lock:
            if ev in self._waiters:
                self._waiters.remove(ev)


def _handle_crash(fn: Callable[[], Any]) -> Any:
    # utilruntime.HandleCrash with ReallyCrash: log the panic, then let it go on
    try:
        return fn()
    except BaseException:
        log.exception("Observed a panic in the buffered audit backend")
        raise


class BufferedBackend:
    def __init__(self, delegate: Any, config: BatchConfig, *, metrics: Any = None):
        self._delegate = delegate
        # where failures are counted: the server's AuditMetrics (None: the process-wide one)
        self.metrics = metrics
        self._buffer = _Buffer(config.buffer_size)
        self._max_batch_size = config.max_batch_size
        self._max_batch_wait = config.max_batch_wait
        self._async_delegate = config.async_delegate
        # set when the batching loop has handed over every event and exited
        self._shutdown_ch = rt.event("audit-buffered-shutdown")
        # counts delegate calls still running in their own goroutines
        self._wg = WaitGroup()
        self._throttle: Optional[Limiter] = None
        if config.throttle_enable:
            self._throttle = Limiter(config.throttle_qps, config.throttle_burst)

    def run(self, stop: rt.Event) -> None:
        rt.go(self._run, stop, name="audit-buffered-batch")
        self._delegate.run(stop)

    def _run(self, stop: rt.Event) -> None:
        try:
            self._process_incoming_events(stop)
            # The buffer is closed now: drain what came in since the last batch.
            while True:
                events = self._collect_events(None, None)
                _handle_crash(lambda: self._process_events(events))
                if not events:
                    break
        finally:
            self._shutdown_ch.set()

    def shutdown(self) -> None:
        """Block until ``stop`` was set and everything queued before it reached the delegate."""
        self._shutdown_ch.wait()
        # The loop has exited, so the buffer is closed and no new batch can start: the wait
        # group has its final count.
        self._wg.wait()
        self._delegate.shutdown()

    def _process_incoming_events(self, stop: rt.Event) -> None:
        try:
            while True:
                # the max-wait timer only matters when batching
                deadline = rt.now() + self._max_batch_wait if self._max_batch_size > 1 else None
                _handle_crash(lambda: self._process_events(self._collect_events(None, stop, deadline)))
                if stop.is_set():
                    return
        finally:
            self._buffer.close()

    def _collect_events(self, timer: Optional[rt.Event], stop: Optional[rt.Event], deadline: Optional[float] = None) -> list[Event]:
        """Up to a batch of events; fewer once the timer fires, ``stop`` is set or the buffer closes."""
        events: list[Event] = []
        stoppers = [e for e in (timer, stop) if e is not None]
        for _ in range(self._max_batch_size):
            while True:
                ev, ok, closed = self._buffer.try_recv()
                if ok:
                    assert ev is not None
                    events.append(ev)
                    break
                if closed or any(e.is_set() for e in stoppers):
                    return events
                ready = self._buffer.ready()
                timeout = None if deadline is None else max(0.0, deadline - rt.now())
                fired = rt.select(ready, *stoppers, timeout=timeout)
                if fired is not ready:
                    self._buffer.forget(ready)
                    return events  # the timer expired or stop was set: send what we have
        return events

    def _process_events(self, events: list[Event]) -> None:
        if not events:
            return
        if self._throttle is not None:
            # flowcontrol's Accept: reserve a token now, sleep until it is ours
            now = rt.now()
            rt.sleep(self._throttle.reserve_n(now, 1).delay_from(now))
        if self._async_delegate:
            self._wg.add(1)

            def deliver() -> None:
                try:
                    _handle_crash(lambda: self._delegate.process_events(*events))
                finally:
                    self._wg.done()

            rt.go(deliver, name="audit-buffered-delegate")
        else:
            _handle_crash(lambda: self._delegate.process_events(*events))

    def process_events(self, *events: Event) -> bool:
        for i, e in enumerate(events):
            # the caller reuses its events after we return: queue copies
            try:
                sent = self._buffer.try_send(e.deep_copy())
            except _Closed:
                handle_plugin_error(PLUGIN_NAME, "audit backend shut down", *events[i:], metrics=self.metrics)
                return False
            if not sent:
                handle_plugin_error(PLUGIN_NAME, "audit buffer queue blocked", *events[i:], metrics=self.metrics)
                return True
        return True

    def name(self) -> str:
        return f"{PLUGIN_NAME}<{self._delegate.name()}>"

    __str__ = name


def new_backend(delegate: Any, config: BatchConfig) -> BufferedBackend:
    """A buffered backend in front of ``delegate``; it runs and shuts the delegate down itself."""
    return BufferedBackend(delegate, config)

"""The observability event stream (no Go twin; design.md section 7).

One append-only stream per server, each event stamped with the runtime time (virtual under the
simulation). The server records what happens once per run: every lifecycle signal (kind
``signal``), the pre-shutdown hooks starting and ending (``hook``), the listener stopping
(``listener``) and the audit backend's shutdown (``audit``). Request-level events (sent,
admitted, answered with a status, completed) are recorded by whoever drives the server: the
fuzzing driver (``genericserver.testing.scenario``) adds them to the same stream, so its
invariant checkers read one ordered story; the demo keeps its clients' answers beside the
signals it observes. The server itself does not record every request: a long-running server
would grow the stream without bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from genericserver import runtime as rt


@dataclass(frozen=True)
class Event:
    """One thing that happened: ``kind`` (``signal``, ``hook``, ``request``...), a name, when."""

    seq: int
    at: float
    kind: str
    name: str
    fields: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


class EventStream:
    """Thread-safe, append-only; ``subscribe`` lets a live view follow along."""

    def __init__(self) -> None:
        self._lock = rt.lock()
        self._events: list[Event] = []
        self._subscribers: list[Callable[[Event], None]] = []

    def record(self, kind: str, name: str, *, at: Optional[float] = None, **fields: Any) -> Event:
        """Append an event stamped now, or at runtime time ``at`` (a simulated controller that
        acts as of when its work was due, see genericserver/cluster/workqueue.py)."""
        with self._lock:
            ev = Event(len(self._events), rt.now() if at is None else at, kind, name, fields)
            self._events.append(ev)
            subscribers = list(self._subscribers)
        for fn in subscribers:
            fn(ev)
        return ev

    def subscribe(self, fn: Callable[[Event], None]) -> None:
        with self._lock:
            self._subscribers.append(fn)

    def follow(self, fn: Callable[[Event], None]) -> None:
        """Give ``fn`` every event recorded from now on, one at a time and in the stream's order.

        A subscriber is called by the thread that recorded the event, after the stream's lock:
        two threads recording at once can reach it in the other order (a printed timeline then
        shows a line stamped earlier under a later one). Here an event that arrives before the
        one it follows waits for it, and whichever thread brings the missing one delivers both.
        ``fn`` must not record to this stream (it runs under the follower's lock)."""
        lock = rt.lock()
        early: dict[int, Event] = {}
        expected = 0

        def deliver(ev: Event) -> None:
            nonlocal expected
            with lock:
                early[ev.seq] = ev
                while expected in early:
                    fn(early.pop(expected))
                    expected += 1

        with self._lock:
            expected = len(self._events)  # the first event it will be given
            self._subscribers.append(deliver)

    def events(self, kind: Optional[str] = None) -> list[Event]:
        with self._lock:
            evs = list(self._events)
        return [e for e in evs if kind is None or e.kind == kind]

    def names(self, kind: str) -> list[str]:
        return [e.name for e in self.events(kind)]

    def first(self, kind: str, name: str) -> Optional[Event]:
        for e in self.events(kind):
            if e.name == name:
                return e
        return None

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events())

    def __len__(self) -> int:
        with self._lock:
            return len(self._events)

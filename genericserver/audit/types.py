"""Port of k8s.io/apiserver/pkg/audit/types.go (v1.36.0): the Sink and Backend interfaces.

A :class:`Sink` takes events (``process_events``); a :class:`Backend` is a sink with a life:
``run(stop)`` starts it without blocking (and raises if it cannot start), ``shutdown()`` blocks
until every event it accepted has been delivered, and ``name()`` is Go's ``String()``.
``RunWithContext`` calls ``run`` with the ``InFlightRequestsDrained`` event and ``shutdown``
after the drain, so no request that was served loses its audit record.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from genericserver import runtime as rt
from genericserver.audit.event import Event


@runtime_checkable
class Sink(Protocol):
    def process_events(self, *events: Event) -> bool:
        """Take the events; True on success. The events are the caller's: copy what you keep."""
        ...


@runtime_checkable
class Backend(Sink, Protocol):
    def run(self, stop: rt.Event) -> None:
        """Start (must not block); background work ends once ``stop`` is set."""
        ...

    def shutdown(self) -> None:
        """Block until every accepted event is delivered (called after ``stop`` is set)."""
        ...

    def name(self) -> str:
        ...

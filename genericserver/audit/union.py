"""Port of k8s.io/apiserver/pkg/audit/union.go (v1.36.0): one backend that feeds several.

``process_events`` hands the events to each backend in turn (success only if all succeed),
``run`` starts them all at once (one goroutine each, errors aggregated), ``shutdown`` shuts them
down in order.
"""

from __future__ import annotations

from typing import Any

from genericserver import runtime as rt
from genericserver.apimachinery import errors
from genericserver.audit.event import Event


class _Union:
    def __init__(self, backends: list[Any]):
        self.backends = backends

    def process_events(self, *events: Event) -> bool:
        ok = True
        for b in self.backends:
            ok = b.process_events(*events) and ok
        return ok

    def run(self, stop: rt.Event) -> None:
        def starter(backend: Any):
            def start() -> None:
                backend.run(stop)

            return start

        err = errors.aggregate_goroutines(*(starter(b) for b in self.backends))
        if err is not None:
            raise err

    def shutdown(self) -> None:
        for b in self.backends:
            b.shutdown()

    def name(self) -> str:
        return "union[" + ",".join(b.name() for b in self.backends) + "]"

    __str__ = name


def union(*backends: Any) -> Any:
    """A backend fanning out to ``backends`` (just the backend itself when there is one)."""
    if len(backends) == 1:
        return backends[0]
    return _Union(list(backends))

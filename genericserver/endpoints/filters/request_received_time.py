"""Port of k8s.io/apiserver/pkg/endpoints/filters/request_received_time.go (v1.36.0): when the request arrived.

:func:`with_request_received_timestamp` records the arrival time twice, because Go's single
``time.Time`` serves two purposes that need two clocks here:

* wall-clock seconds (``rt.wall()``) via ``request.with_received_timestamp``: what audit events
  show as ``requestReceivedTimestamp``;
* runtime seconds (``rt.now()``, virtual under the simulation) under :data:`RECEIVED_RUNTIME_KEY`:
  what the request-deadline filter adds the timeout to, on the clock contexts run on.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from genericserver import request
from genericserver import runtime as rt

RECEIVED_RUNTIME_KEY = "genericserver.received_runtime"
"""environ key: the runtime time (``rt.now()`` scale) the request was received at."""


def received_runtime_from(environ: dict) -> Optional[float]:
    return environ.get(RECEIVED_RUNTIME_KEY)


def with_received_runtime(environ: dict, when: float) -> None:
    environ[RECEIVED_RUNTIME_KEY] = when


def with_request_received_timestamp(app: Callable) -> Callable:
    return _with_request_received_timestamp_with_clock(app, rt.wall, rt.now)


def _with_request_received_timestamp_with_clock(app: Callable, wall: Callable[[], float], now: Callable[[], float]) -> Callable:
    def request_received(environ: dict, start_response: Callable) -> Iterable[bytes]:
        request.with_received_timestamp(environ, wall())
        with_received_runtime(environ, now())
        return app(environ, start_response)

    return request_received

"""Cluster seconds on the runtime clock, scaled so a 30 s grace period can run in 3 s (no Go twin).

Kubernetes counts grace periods in whole seconds and the kubelet truncates what a preStop hook
took to whole seconds too, so the cluster components compute in *cluster seconds* exactly as
Kubernetes does and only turn them into runtime seconds when they wait. ``scale`` is runtime
seconds per cluster second: 1.0 is real time, 0.1 runs ten times faster. Under the simulation
runtime time is virtual anyway and ``scale`` stays 1.0.
"""

from __future__ import annotations

from typing import Optional

from genericserver import runtime as rt


class ClusterClock:
    """``now()`` in cluster seconds since ``origin``; ``sleep``/``select``/``after`` take cluster seconds."""

    def __init__(self, scale: float = 1.0, origin: Optional[float] = None):
        if scale <= 0:
            raise ValueError(f"scale must be positive, got {scale}")
        self.scale = scale
        self.origin = rt.now() if origin is None else origin

    def now(self) -> float:
        return (rt.now() - self.origin) / self.scale

    def to_runtime(self, seconds: float) -> float:
        return seconds * self.scale

    def runtime_at(self, at: float) -> float:
        """Cluster time ``at`` as a runtime timestamp (the inverse of :meth:`from_runtime`)."""
        return self.origin + at * self.scale

    def from_runtime(self, at: float) -> float:
        """A runtime timestamp (``rt.now()``) as cluster seconds since the origin."""
        return (at - self.origin) / self.scale

    def sleep(self, seconds: float) -> None:
        rt.sleep(max(0.0, seconds) * self.scale)

    def select(self, *events: rt.Event, timeout: Optional[float] = None) -> Optional[rt.Event]:
        return rt.select(*events, timeout=None if timeout is None else max(0.0, timeout) * self.scale)

    def after(self, seconds: float, name: str = "after") -> rt.Event:
        return rt.after(max(0.0, seconds) * self.scale, name)

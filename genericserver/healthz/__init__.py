"""Port of k8s.io/apiserver/pkg/server/healthz.go (v1.36.0).

Where the two Go files named healthz.go live here: Go's ``pkg/server/healthz/healthz.go`` (the
healthz package: checks and handlers) is :mod:`genericserver.healthz.healthz`, in this folder, as
in Go; Go's ``pkg/server/healthz.go`` (the server's registries, in package ``server``) is this
``__init__.py``, so ``genericserver.healthz`` names it. Python cannot hold a module ``healthz.py``
and a folder ``healthz/`` side by side, as Go's tree does.

The server's three health endpoints, each a :class:`HealthCheckRegistry`: checks are added
until the endpoint is installed on the mux, then the list is frozen (adding more fails).

In Go the registries are fields of ``GenericAPIServer`` and the rest are its methods; here
:class:`HealthChecks` holds both, and the server keeps one (``server.health``), built in its
constructor (Go's ``New``) and shared with its :class:`genericserver.hooks.HookRegistry` (the
post-start hooks' checks). ``prepare_run`` then does, in Go's order::

    health.install_healthz(mux)
    health.install_livez(mux)
    health.add_readyz_shutdown_check(lifecycle_signals.shutdown_initiated.signaled())
    health.install_readyz(mux, lifecycle_signals.has_been_ready.signal)

so the ``shutdown`` check is the last readyz check, ``/readyz`` turns red (500,
``[-]shutdown failed: reason withheld``) the moment ShutdownInitiated fires, and its first
success signals HasBeenReady.

Go's livez grace period uses a clock; here a clock is a callable returning seconds
(``rt.now`` by default, so the simulation's virtual clock applies).
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from genericserver import runtime as rt
from genericserver.metrics import Metrics
from genericserver.slis import SLIMetrics
from genericserver.healthz.healthz import HealthChecker, Mux, install_path_handler_with_healthy_func, new_shutdown_healthz

Clock = Callable[[], float]


class HealthCheckRegistryError(Exception):
    """Adding checks failed (no clock for a delayed check, or the endpoint is already installed)."""


class HealthCheckRegistry:
    """The checks of one endpoint (``/healthz``, ``/livez`` or ``/readyz``)."""

    def __init__(
        self, path: str, checks: Iterable[HealthChecker] = (), clock: Optional[Clock] = None, *,
        metrics: Optional[Metrics] = None, sli: Optional[SLIMetrics] = None,
    ):
        self.path = path
        # where the endpoint's requests and check results are counted (None: process-wide)
        self.metrics = metrics
        self.sli = sli
        self._lock = rt.lock()
        self.checks: list[HealthChecker] = list(checks)
        self._checks_installed = False
        self._clock = clock

    def add_health_checks(self, *checks: HealthChecker) -> None:
        self.add_delayed_health_checks(0, *checks)

    def add_delayed_health_checks(self, delay: float, *checks: HealthChecker) -> None:
        """Add checks that stay healthy for ``delay`` seconds from now (no delay if ``delay`` <= 0)."""
        if delay > 0 and self._clock is None:
            raise HealthCheckRegistryError(f"nil clock in healthCheckRegistry for {self.path} endpoint")
        with self._lock:
            if self._checks_installed:
                raise HealthCheckRegistryError(f"unable to add because the {self.path} endpoint has already been created")
            clock = self._clock
            if delay > 0 and clock is not None:
                self.checks.extend(delayed_health_check(c, clock, delay) for c in checks)
            else:
                self.checks.extend(checks)

    def install_handler(self, mux: Mux) -> None:
        self.install_handler_with_healthy_func(mux, None)

    def install_handler_with_healthy_func(self, mux: Mux, first_time_healthy: Optional[Callable[[], None]]) -> None:
        """Freeze the checks and serve them on ``mux`` at ``path`` and ``path/<check>``."""
        with self._lock:
            self._checks_installed = True
            install_path_handler_with_healthy_func(mux, self.path, first_time_healthy, *self.checks, metrics=self.metrics, sli=self.sli)


class HealthChecks:
    """The three registries and Go's health methods of ``GenericAPIServer`` (see the module docstring)."""

    def __init__(
        self,
        *,
        healthz_checks: Iterable[HealthChecker] = (),
        livez_checks: Iterable[HealthChecker] = (),
        readyz_checks: Iterable[HealthChecker] = (),
        livez_grace_period: float = 0.0,
        clock: Clock = rt.now,
        metrics: Optional[Metrics] = None,
        sli: Optional[SLIMetrics] = None,
    ):
        # as Go's New: only livez gets a clock, for its grace period
        self.healthz_registry = HealthCheckRegistry("/healthz", healthz_checks, metrics=metrics, sli=sli)
        self.livez_registry = HealthCheckRegistry("/livez", livez_checks, clock=clock, metrics=metrics, sli=sli)
        self.readyz_registry = HealthCheckRegistry("/readyz", readyz_checks, metrics=metrics, sli=sli)
        self.livez_grace_period = livez_grace_period

    def healthz_checks(self) -> list[HealthChecker]:
        return self.healthz_registry.checks

    def add_health_checks(self, *checks: HealthChecker) -> None:
        """Add checks to healthz, livez and readyz, with no livez grace: unhealthy means unhealthy at once."""
        self._add_health_checks(0, *checks)

    def add_boot_sequence_health_checks(self, *checks: HealthChecker) -> None:
        """Add checks to all three endpoints, livez with the livez grace period.

        A slow boot then does not make the kubelet restart the server, while readyz (no grace)
        stays red until the boot is done.
        """
        self._add_health_checks(self.livez_grace_period, *checks)

    def _add_health_checks(self, livez_grace_period: float, *checks: HealthChecker) -> None:
        self.healthz_registry.add_health_checks(*checks)
        self.livez_registry.add_delayed_health_checks(livez_grace_period, *checks)
        self.readyz_registry.add_health_checks(*checks)

    def add_readyz_checks(self, *checks: HealthChecker) -> None:
        self.readyz_registry.add_health_checks(*checks)

    def add_livez_checks(self, delay: float, *checks: HealthChecker) -> None:
        self.livez_registry.add_delayed_health_checks(delay, *checks)

    def add_readyz_shutdown_check(self, stop: rt.Event) -> None:
        """readyz fails once ``stop`` is set, so load balancers stop sending traffic during shutdown."""
        self.add_readyz_checks(new_shutdown_healthz(stop))

    def install_healthz(self, mux: Mux) -> None:
        self.healthz_registry.install_handler(mux)

    def install_livez(self, mux: Mux) -> None:
        self.livez_registry.install_handler(mux)

    def install_readyz(self, mux: Mux, first_time_healthy: Optional[Callable[[], None]] = None) -> None:
        """The server passes ``lifecycle_signals.has_been_ready.signal``: the handler calls it once,
        at the first healthy answer."""
        self.readyz_registry.install_handler_with_healthy_func(mux, first_time_healthy)


def delayed_health_check(check: HealthChecker, clock: Clock, delay: float) -> HealthChecker:
    """``check``, but reporting healthy until ``delay`` seconds from now have passed."""
    return DelayedLivezCheck(check, clock() + delay, clock)


class DelayedLivezCheck:
    """Healthy until the clock is strictly past ``start_check``; then whatever ``check`` says."""

    def __init__(self, check: HealthChecker, start_check: float, clock: Clock):
        self.inner = check
        self.start_check = start_check
        self.clock = clock

    def name(self) -> str:
        return self.inner.name()

    def check(self, environ: Optional[dict] = None) -> None:
        if self.clock() > self.start_check:
            self.inner.check(environ)

"""Port of k8s.io/apiserver/pkg/server/healthz/healthz.go (v1.36.0).

Health checks and the handlers that serve them at ``/healthz``, ``/livez`` and ``/readyz``.

A check has a ``name()`` and a ``check(environ)`` that returns ``None`` when healthy and raises
an exception (whose message is Go's error text) when not; ``environ`` is the WSGI request, or
``None`` when a check is called outside a request. :func:`install_path_handler_with_healthy_func`
puts two kinds of handler on a mux (anything with ``handle(path, app)``):

* the root handler at ``path``: every check runs; any failure means 500 via ``http.Error`` with a
  line per check, ``[-]<name> failed: reason withheld`` for the failed ones (the real error only
  goes to the log: these endpoints are public) and ``<endpoint> check failed``. Success is a bare
  ``ok``, or with ``?verbose`` the lines and ``<endpoint> check passed``. ``?exclude=<name>`` may
  repeat and skips a check (or a group of checks); unknown names add a ``warn:`` line.
* one handler per check at ``path/<name>``: ``ok``, or 500 ``internal server error: <err>``.

Metrics, as in Go: the root handler is wrapped in ``InstrumentHandlerFunc`` (counted in
``apiserver_request_total{verb="GET",subresource="/healthz",...}``) and every check it runs is
observed in ``kubernetes_healthcheck`` and ``kubernetes_healthchecks_total`` (component-base's
slis). Go records into process-wide globals; here the installer passes the server's
:class:`genericserver.metrics.Metrics` and :class:`genericserver.slis.SLIMetrics` (None: the
process-wide ``LEGACY`` ones). Not ported: httplog's stack-trace predicate.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, Mapping, Optional, Protocol, runtime_checkable

from genericserver import klog, request, slis
from genericserver import metrics as epmetrics
from genericserver import runtime as rt
from genericserver.responsewriters import go_quote, http_error, status_line

log = logging.getLogger("genericserver.healthz")

DEFAULT_HEALTHZ_PATH = "/healthz"

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict, StartResponse], Iterable[bytes]]
CheckFunc = Callable[[Optional[dict]], None]


class HealthCheckError(Exception):
    """A failed check of this module (its message is Go's error text)."""


@runtime_checkable
class HealthChecker(Protocol):
    """A named check: ``check`` returns ``None`` when healthy, raises when not."""

    def name(self) -> str: ...

    def check(self, environ: Optional[dict]) -> None: ...


@runtime_checkable
class GroupedHealthChecker(HealthChecker, Protocol):
    """A check that ``?exclude=<group>`` can skip together with the rest of its group."""

    def group_name(self) -> str: ...


class Mux(Protocol):
    def handle(self, path: str, app: WSGIApp) -> None: ...


class _Ping:
    """The simplest check: always healthy."""

    def name(self) -> str:
        return "ping"

    def check(self, environ: Optional[dict] = None) -> None:
        return None


PingHealthz: HealthChecker = _Ping()


def _flush_logging() -> None:
    for handler in logging.getLogger().handlers:
        handler.flush()


class LogChecker:
    """Fails with ``logging blocked`` when flushing the logs has been stuck for a minute.

    Go starts a goroutine at the first check that flushes klog every minute, forever, and fails
    once the last finished flush is two minutes old, i.e. once a flush has hung for a minute.
    A goroutine that never ends would outlive every test here, so the flushing is lazy instead:
    a check made a minute or more after the last flush starts one ``log-flush`` goroutine, and a
    check fails while such a flush has been running for a minute or more. A slow log sink still
    turns the check red, and the probe itself never blocks on the logs. The first check only
    starts the clock (Go's first flush happens at that moment). The state follows the runtime
    in use, so the shared :data:`LogHealthz` works under the simulation's virtual clock too.
    """

    FLUSH_PERIOD = 60.0
    BLOCKED_AFTER = 120.0

    def __init__(self, flush: Callable[[], None] = _flush_logging):
        self._flush = flush
        self._runtime: Optional[rt.Runtime] = None
        self._last_verified = 0.0
        self._flushing = False

    def name(self) -> str:
        return "log"

    def check(self, environ: Optional[dict] = None) -> None:
        runtime = rt.current()
        now = runtime.now()
        if self._runtime is not runtime:
            self._runtime, self._last_verified, self._flushing = runtime, now, False
        elif not self._flushing and now - self._last_verified >= self.FLUSH_PERIOD:
            self._flushing = True
            rt.go(self._flush_once, runtime, name="log-flush")
        if now - self._last_verified < self.BLOCKED_AFTER:
            return None
        raise HealthCheckError("logging blocked")

    def _flush_once(self, runtime: rt.Runtime) -> None:
        try:
            self._flush()
        finally:
            if self._runtime is runtime:
                self._last_verified, self._flushing = runtime.now(), False


LogHealthz: HealthChecker = LogChecker()


class _Shutdown:
    def __init__(self, stop: rt.Event):
        self._stop = stop

    def name(self) -> str:
        return "shutdown"

    def check(self, environ: Optional[dict] = None) -> None:
        if self._stop.is_set():
            raise HealthCheckError("process is shutting down")


def new_shutdown_healthz(stop: rt.Event) -> HealthChecker:
    """A check named ``shutdown`` that fails once ``stop`` is set (readyz turns red at shutdown)."""
    return _Shutdown(stop)


class CacheSyncWaiter(Protocol):
    def wait_for_cache_sync(self, stop: rt.Event) -> Mapping[Any, bool]: ...


class _InformerSync:
    def __init__(self, waiter: CacheSyncWaiter):
        self._waiter = waiter

    def name(self) -> str:
        return "informer-sync"

    def check(self, environ: Optional[dict] = None) -> None:
        # an already-set stop event makes the waiter answer at once with what has started
        stop = rt.event("informer-sync-stop")
        stop.set()
        not_started = [_type_name(t) for t, started in self._waiter.wait_for_cache_sync(stop).items() if not started]
        if not_started:
            raise HealthCheckError(f"{len(not_started)} informers not started yet: [{' '.join(not_started)}]")


def _type_name(t: Any) -> str:
    return t.__name__ if isinstance(t, type) else str(t)


def new_informer_sync_healthz(waiter: CacheSyncWaiter) -> HealthChecker:
    """A check named ``informer-sync`` that passes once every informer of ``waiter`` has started."""
    return _InformerSync(waiter)


class _NamedCheck:
    def __init__(self, name: str, fn: CheckFunc):
        self._name = name
        self._fn = fn

    def name(self) -> str:
        return self._name

    def check(self, environ: Optional[dict] = None) -> None:
        self._fn(environ)


class _NamedGroupedCheck(_NamedCheck):
    def __init__(self, name: str, group: str, fn: CheckFunc):
        super().__init__(name, fn)
        self._group = group

    def group_name(self) -> str:
        return self._group


def named_check(name: str, fn: CheckFunc) -> HealthChecker:
    """A check called ``name`` that runs ``fn(environ)`` (``fn`` raises to fail)."""
    return _NamedCheck(name, fn)


def named_grouped_check(name: str, group_name: str, fn: CheckFunc) -> GroupedHealthChecker:
    return _NamedGroupedCheck(name, group_name, fn)


def install_handler(mux: Mux, *checks: HealthChecker, metrics: Optional[epmetrics.Metrics] = None, sli: Optional[slis.SLIMetrics] = None) -> None:
    install_path_handler(mux, DEFAULT_HEALTHZ_PATH, *checks, metrics=metrics, sli=sli)


def install_readyz_handler(mux: Mux, *checks: HealthChecker, metrics: Optional[epmetrics.Metrics] = None, sli: Optional[slis.SLIMetrics] = None) -> None:
    install_path_handler(mux, "/readyz", *checks, metrics=metrics, sli=sli)


def install_livez_handler(mux: Mux, *checks: HealthChecker, metrics: Optional[epmetrics.Metrics] = None, sli: Optional[slis.SLIMetrics] = None) -> None:
    install_path_handler(mux, "/livez", *checks, metrics=metrics, sli=sli)


def install_path_handler(
    mux: Mux, path: str, *checks: HealthChecker, metrics: Optional[epmetrics.Metrics] = None, sli: Optional[slis.SLIMetrics] = None
) -> None:
    install_path_handler_with_healthy_func(mux, path, None, *checks, metrics=metrics, sli=sli)


def install_path_handler_with_healthy_func(
    mux: Mux,
    path: str,
    first_time_healthy: Optional[Callable[[], None]],
    *checks: HealthChecker,
    metrics: Optional[epmetrics.Metrics] = None,
    sli: Optional[slis.SLIMetrics] = None,
) -> None:
    """Serve ``checks`` at ``path`` and each at ``path/<name>``; ``first_time_healthy`` runs once, at the first success.

    With no checks, ping is installed. All checks of a path go in one call: a second call for
    the same path registers the handlers again (the mux logs the duplicate). ``metrics`` and
    ``sli``: where the requests and the check results are counted (see the module docstring).
    """
    metrics = metrics if metrics is not None else epmetrics.LEGACY
    if not checks:
        klog.v(5).info("No default health checks specified. Installing the ping handler.")
        checks = (PingHealthz,)
    klog.v(5).infof("Installing health checkers for (%s): %s", path, format_quoted(*checker_names(*checks)))
    endpoint = path[1:] if path.startswith("/") else path
    endpoint = endpoint.split("/")[0]
    root = handle_root_health(endpoint, first_time_healthy, *checks, sli=sli)
    mux.handle(path, metrics.instrument_handler_func("GET", "", "", "", path, "", "", False, "", root))
    for check in checks:
        mux.handle(f"{path}/{check.name()}", adapt_check_to_handler(check.check))


def get_excluded_checks(environ: dict) -> set[str]:
    """The names given with ``?exclude=`` (the parameter may repeat)."""
    return set(_query(environ).get("exclude", []))


def _query(environ: dict) -> dict[str, list[str]]:
    return request.query(environ)


def handle_root_health(
    name: str, first_time_healthy: Optional[Callable[[], None]], *checks: HealthChecker, sli: Optional[slis.SLIMetrics] = None
) -> WSGIApp:
    """The WSGI app answering ``/<name>``: all checks, or those not excluded, must pass.

    Each check run is observed in ``sli`` (None: ``slis.LEGACY``) with type ``name``.
    """
    notify_once = rt.once()
    observe = (sli if sli is not None else slis.LEGACY).observe_healthcheck

    def app(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        excluded = get_excluded_checks(environ)
        unknown_excluded = set(excluded)
        lines: list[str] = []
        failed_log: list[str] = []
        failed: list[str] = []
        for check in checks:
            check_name = check.name()
            if check_name in excluded:
                unknown_excluded.discard(check_name)
                lines.append(f"[+]{check_name} excluded: ok\n")
                continue
            if isinstance(check, GroupedHealthChecker) and check.group_name() in excluded:
                unknown_excluded.discard(check.group_name())
                lines.append(f"[+]{check_name} excluded with {check.group_name()}: ok\n")
                continue
            try:
                check.check(environ)
            except Exception as err:
                observe(check_name, name, slis.ERROR)
                # the reason stays out of the public body; the log gets it
                lines.append(f"[-]{check_name} failed: reason withheld\n")
                failed_log.append(f"[-]{check_name} failed: {err}\n")
                failed.append(check_name)
            else:
                observe(check_name, name, slis.SUCCESS)
                lines.append(f"[+]{check_name} ok\n")
        if unknown_excluded:
            quoted = format_quoted(*sorted(unknown_excluded))
            lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
            klog.v(6).infof("cannot exclude some health checks, no health checks are installed matching %s", quoted)
        if failed:
            # always verbose on failure, but at V(2): a probe that fails every second during a
            # shutdown would flood the log otherwise
            klog.v(2).infof("%s check failed: %s\n%s", ",".join(failed), name, "".join(failed_log))
            return http_error(start_response, f"{''.join(lines)}{name} check failed", 500)

        if first_time_healthy is not None:
            notify_once.do(first_time_healthy)

        if "verbose" not in _query(environ):
            body = b"ok"
        else:
            body = f"{''.join(lines)}{name} check passed\n".encode()
        start_response(
            status_line(200),
            # no length of its own: net/http gives one to a body within its 2 KiB buffer, and
            # chunks a longer one (a verbose answer of many checks)
            [
                ("Content-Type", "text/plain; charset=utf-8"),
                ("X-Content-Type-Options", "nosniff"),
            ],
        )
        return [body]

    return app


def adapt_check_to_handler(fn: CheckFunc) -> WSGIApp:
    """The WSGI app answering ``/<endpoint>/<check>``: ``ok`` or 500 with the error itself."""

    def app(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        try:
            fn(environ)
        except Exception as err:
            return http_error(start_response, f"internal server error: {err}", 500)
        # Go writes no Content-Type here; net/http sniffs "ok" as plain text
        start_response(status_line(200), [("Content-Type", "text/plain; charset=utf-8")])
        return [b"ok"]

    return app


def checker_names(*checks: HealthChecker) -> list[str]:
    """The checks' names, in the order given."""
    return [c.name() for c in checks]


def format_quoted(*names: str) -> str:
    """The names double-quoted (Go's ``%q``) and comma-separated, in the order given."""
    return ",".join(go_quote(n) for n in names)


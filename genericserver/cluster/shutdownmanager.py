"""Contour's envoy shutdown-manager: ``shutdown-manager`` serves /healthz and /shutdown, ``shutdown`` drains Envoy (no Go twin: models projectcontour/contour cmd/contour/shutdownmanager.go, as seed 002 describes it).

Two halves that meet at a file (the *ok file*):

* :class:`ShutdownManager` (``contour envoy shutdown-manager``, port 8090 by default): ``/healthz``
  answers ``OK``; ``/shutdown`` answers ``OK`` only once the ok file exists, checking every
  second, or returns with nothing written when the caller goes away. Envoy's preStop hook is an
  httpGet on it, so Envoy gets SIGTERM only after the drain.
* :func:`shutdown` (``contour envoy shutdown``, the shutdown-manager container's exec preStop):
  waits ``--drain-delay``, fails Envoy's health check (``POST /healthcheck/fail``) retrying with
  the backoff of the seed (4 tries, 0.2 s, factor 5, jitter 0.1), waits ``--check-delay``, then
  reads ``envoy_http_downstream_cx_active`` for the ``ingress_http`` and ``ingress_https``
  listeners from ``/stats/prometheus`` every ``--check-interval`` until the sum is at most
  ``--min-open-connections``, and writes the ok file.

Defaults are the seed's: check-delay 60 s, drain-delay 0 s, check-interval 5 s, no minimum.
The shutdown-manager's lines are its container's log too (``kubectl logs POD -c
shutdown-manager``), as Contour's logrus writes them (:func:`logrus_line`).

When the ok file cannot be created (the shutdown-manager container's root filesystem is
read-only, projectcontour/contour#3771), ``shutdown`` logs ``open /ok: read-only file system``
and returns as if it were done; ``/shutdown`` keeps answering nothing, checking every second,
until its caller gives up: the kubelet's preStop httpGet of Envoy (and of the app) waits out the
whole grace period, the hook is reported not completed, and the containers get SIGTERM with
the kubelet's minimum 2 s. The drain itself happened (Envoy's health check failed); what is
lost is the grace period, every time a pod is deleted. Contour's fix made the file's path a
flag (``--ready-file``) pointing into an emptyDir.
Durations are cluster seconds (see :mod:`genericserver.cluster.clock`). What later Contour
versions changed, and why, is in the cluster section of walkthrough.md.
"""

from __future__ import annotations

import errno
import http.client
import os
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Optional

from genericserver import patherror
from genericserver.klog import go_quote
from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.cluster import backoff
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.containers import Container, Sandbox
from genericserver.cluster.logs import ContainerLog
from genericserver.cluster.envoy import ENVOY_HTTP_LISTENER, ENVOY_HTTPS_LISTENER, PROMETHEUS_STAT
from genericserver.context import context as gocontext
from genericserver.events import EventStream
from genericserver.net.http.server import ERR_ABORT_HANDLER, Server, ServerClosed, listen

DEFAULT_SERVE_PORT = 8090
SHUTDOWN_READY_FILE = "ok"
SHUTDOWN_READY_CHECK_INTERVAL = 1.0
# the retry of the health check failure (Contour PR #3136): waits 0.2 s, 1 s, 5 s (+ up to 10 %)
HEALTHCHECK_FAIL_BACKOFF = backoff.Backoff(duration=0.2, factor=5.0, jitter=0.1, steps=4)


def logrus_line(level: str, msg: str, **fields: Any) -> str:
    """A line as logrus's text formatter writes it when not to a terminal (Contour's default
    ``--log-format text``): ``time``, ``level``, ``msg``, then the fields by name; a value is
    quoted as Go's ``%q`` unless it is all letters, digits and ``-._/@^+``."""
    stamp = datetime.fromtimestamp(rt.wall(), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    pairs = [("time", stamp), ("level", level), ("msg", msg), *sorted((k, str(v)) for k, v in fields.items())]
    return " ".join(f"{k}={_logrus_value(v)}" for k, v in pairs)


def _logrus_value(text: str) -> str:
    plain = text and all(c.isascii() and (c.isalnum() or c in "-._/@^+") for c in text)
    return text if plain else go_quote(text)


class ShutdownManager:
    """The /healthz and /shutdown server. ``serve(listener)`` blocks; ``close()`` stops it.
    What it logs is on the timeline, and in ``log`` (its container's, for ``kubectl logs``)."""

    def __init__(self, ready_file: str, *, clock: Optional[ClusterClock] = None, events: Optional[EventStream] = None,
                 check_interval: float = SHUTDOWN_READY_CHECK_INTERVAL, name: str = "shutdown-manager",
                 display_name: Optional[str] = None):
        self.ready_file, self.check_interval, self.name = ready_file, check_interval, name
        self.display_name = display_name or ready_file  # the path the logs show
        self.clock = clock if clock is not None else ClusterClock()
        self.events = events if events is not None else EventStream()
        self.record = self.events.record  # its container's, fenced once the process is killed
        self._closed = rt.event(f"{name}-closed")
        self.server = Server(self.app, idle_timeout=60.0)
        self.log: Optional[ContainerLog] = None

    def info(self, msg: str, **kv: Any) -> None:
        """``log.Info`` of Contour's logger (its ``context`` field names the command)."""
        self.record("shutdown-manager", f"{self.name}: {msg}", **kv)
        if self.log is not None:
            self.log.write(logrus_line("info", msg, context="shutdown-manager"))

    def serve(self, ln: Any) -> None:
        self.info("started envoy shutdown manager")
        try:
            self.server.serve(ln)
        except ServerClosed:
            pass

    def close(self) -> None:
        self._closed.set()
        self.server.close()

    def app(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        path = environ["PATH_INFO"]
        if path == "/healthz":
            return self.healthz_handler(environ, start_response)
        if path == "/shutdown":
            return self.shutdown_ready_handler(environ, start_response)
        start_response("404 Not Found", [("Content-Length", "19")])
        return [b"404 page not found\n"]

    def healthz_handler(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        """The shutdown-manager's liveness probe (later removed from Contour's manifests, #4967)."""
        start_response("200 OK", [("Content-Length", "2")])
        return [b"OK"]

    def shutdown_ready_handler(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        """``/shutdown``: answers once the ok file exists; Envoy's preStop hook waits on it."""
        while True:
            if os.path.exists(self.ready_file):
                self.info(f"detected file {self.display_name}; sending HTTP response")
                start_response("200 OK", [("Content-Length", "2")])
                return [b"OK"]
            self.info(f"file {self.display_name} does not exist; checking again in {self.check_interval:g}s", waiting=True)
            # the request's context ends when the caller goes away (the server's background read)
            gone = reqctx.context_from(environ).done()
            woke = self.clock.select(self._closed, gone, timeout=self.check_interval)
            if woke is self._closed:
                raise ERR_ABORT_HANDLER  # the process is going away: the connection just drops
            if woke is gone:
                self.info("client request cancelled")
                start_response("200 OK", [("Content-Length", "0")])  # Go writes nothing: an empty 200
                return [b""]


@dataclass
class ShutdownOptions:
    """``contour envoy shutdown``'s flags (cluster seconds), and where it runs: with
    ``read_only_root_filesystem`` (the container's ``securityContext``) the ok file at the root
    cannot be created."""

    ready_file: str = "/" + SHUTDOWN_READY_FILE
    check_interval: float = 5.0
    check_delay: float = 60.0
    drain_delay: float = 0.0
    min_open_connections: int = 0
    read_only_root_filesystem: bool = False
    display_name: str = "/" + SHUTDOWN_READY_FILE  # the path as the container sees it


def create_ready_file(opts: ShutdownOptions) -> None:
    """Go's ``os.Create`` of the ok file; an error is Go's ``*PathError`` (its text as the
    ``strerror``, the path as the container sees it). On a read-only root filesystem it fails as
    the kernel makes it fail (EROFS)."""
    try:
        if opts.read_only_root_filesystem:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        with open(opts.ready_file, "w"):
            pass
    except OSError as err:
        raise OSError(err.errno, patherror.text("open", opts.display_name, err)) from None


class EnvoyAdmin:
    """The two admin calls ``shutdown`` makes, over HTTP to Envoy's admin port."""

    def __init__(self, host: str, port: int, timeout: float = 5.0):
        self.host, self.port, self.timeout = host, port, timeout

    def _do(self, method: str, path: str) -> tuple[int, str, bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request(method, path)
            resp = conn.getresponse()
            return resp.status, f"{resp.status} {resp.reason}", resp.read()
        finally:
            conn.close()

    def healthcheck_fail(self) -> None:
        url = f"http://{self.host}:{self.port}/healthcheck/fail"
        try:
            code, status, _ = self._do("POST", "/healthcheck/fail")
        except OSError as err:
            raise RuntimeError(f"creating healthcheck fail POST request failed: {err}") from err
        if code != 200:
            raise RuntimeError(f'POST for "{url}" returned HTTP status {status}')

    def stats(self) -> str:
        url = f"http://{self.host}:{self.port}/stats/prometheus"
        try:
            code, status, body = self._do("GET", "/stats/prometheus")
        except OSError as err:
            raise RuntimeError(f"creating metrics GET request failed: {err}") from err
        if code != 200:
            raise RuntimeError(f'GET for "{url}" returned HTTP status {status}')
        return body.decode()


def parse_open_connections(stats: str) -> int:
    """Sum the gauge over the two ingress listeners (the admin listener's own is left out)."""
    found, total = False, 0
    for line in stats.splitlines():
        if not line.startswith(PROMETHEUS_STAT + "{") and line.split(" ")[0] != PROMETHEUS_STAT:
            continue
        found = True
        labels, _, value = line.rpartition(" ")
        if any(f'"{prefix}"' in labels for prefix in (ENVOY_HTTP_LISTENER, ENVOY_HTTPS_LISTENER)):
            total += int(float(value))
    if not found:
        raise RuntimeError(f'error finding Prometheus stat "{PROMETHEUS_STAT}" in the request result')
    return total


def shutdown(opts: ShutdownOptions, admin: Any, *, clock: Optional[ClusterClock] = None,
             events: Optional[EventStream] = None, ctx: Optional[gocontext.Context] = None,
             rand: Callable[[], float] = random.random) -> bool:
    """``contour envoy shutdown``; True once the ok file is written, False if ``ctx`` ended first
    or the file could not be created (logged, and the command still ends as if it succeeded)."""
    clock = clock if clock is not None else ClusterClock()
    events = events if events is not None else EventStream()
    done = (ctx or gocontext.background()).done()

    def log(msg: str, **kv: Any) -> None:
        events.record("shutdown-manager", f"shutdown: {msg}", **kv)

    log(f"waiting {opts.drain_delay:g}s before draining connections")
    if clock.select(done, timeout=opts.drain_delay) is not None:
        return False
    scaled = backoff.Backoff(HEALTHCHECK_FAIL_BACKOFF.duration * clock.scale, HEALTHCHECK_FAIL_BACKOFF.factor,
                             HEALTHCHECK_FAIL_BACKOFF.jitter, HEALTHCHECK_FAIL_BACKOFF.steps)

    def attempt() -> None:
        log("attempting to shutdown (POST /healthcheck/fail)")
        admin.healthcheck_fail()

    err = backoff.on_error(scaled, lambda e: True, attempt, rand)
    if err is not None:
        log(f"error sending envoy healthcheck fail: {err}")
    log(f"waiting {opts.check_delay:g}s before polling for draining connections")
    if clock.select(done, timeout=opts.check_delay) is not None:
        return False
    while True:
        try:
            n = parse_open_connections(admin.stats())
        except Exception as e:
            log(str(e))
        else:
            if n <= opts.min_open_connections:
                log(f"min number of open connections found, shutting down (open_connections={n} min_connections={opts.min_open_connections})", open_connections=n)
                try:
                    create_ready_file(opts)
                except OSError as err:
                    # Contour logs the error and returns as if it were done (projectcontour/contour
                    # #3771): the preStop hook succeeds, and /shutdown waits for a file that never comes
                    log(err.strerror or str(err), error=True)
                    return False
                return True
            log(f"polled open connections (open_connections={n} min_connections={opts.min_open_connections})", open_connections=n)
        if clock.select(done, timeout=opts.check_interval) is not None:
            return False


class ShutdownManagerContainer(Container):
    """The shutdown-manager sidecar: serves on sandbox port ``shutdown-manager``; its preStop
    (see :func:`shutdown_hook`) drains the pod's Envoy. SIGTERM ends it at once, as Go's default."""

    def __init__(self, name: str, pod_name: str, sandbox: Sandbox, *, clock: Optional[ClusterClock] = None,
                 events: Optional[EventStream] = None, check_interval: float = SHUTDOWN_READY_CHECK_INTERVAL):
        super().__init__(name, pod_name, events)
        self.sandbox = sandbox
        self.manager = ShutdownManager(sandbox.path(SHUTDOWN_READY_FILE), clock=clock, events=self.events,
                                       check_interval=check_interval, name=f"{pod_name}/{name}",
                                       display_name="/" + SHUTDOWN_READY_FILE)
        self.manager.log, self.manager.record = self.log, self.record
        self._serving: Optional[rt.Goroutine] = None

    def start(self) -> None:
        ln = listen("127.0.0.1", 0)
        self.sandbox.ports["shutdown-manager"] = ln.getsockname()[1]
        self._serving = rt.go(self.manager.serve, ln, name=f"{self.pod_name}-shutdown-manager")
        super().start()

    def on_sigterm(self) -> None:
        self.on_sigkill()

    def on_sigkill(self) -> None:
        self.manager.close()
        self.exit(0)

    def join(self, timeout: Optional[float] = None) -> bool:
        return self._serving is None or self._serving.join(timeout)


def shutdown_hook(opts: ShutdownOptions, clock: ClusterClock, events: EventStream) -> Callable[[gocontext.Context, Sandbox], None]:
    """The exec preStop of the shutdown-manager container: ``contour envoy shutdown`` against
    this pod's Envoy admin port, writing the ok file (``/ok``, kept in the pod's volume so the
    containers share it, as the seed's manifest shares it)."""

    def run(ctx: gocontext.Context, sandbox: Sandbox) -> None:
        o = ShutdownOptions(sandbox.path(SHUTDOWN_READY_FILE), opts.check_interval, opts.check_delay,
                            opts.drain_delay, opts.min_open_connections, opts.read_only_root_filesystem)
        shutdown(o, EnvoyAdmin("127.0.0.1", sandbox.ports["admin"]), clock=clock, events=events, ctx=ctx)

    return run

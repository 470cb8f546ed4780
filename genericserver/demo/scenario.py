"""The workshop demo's scenario: a real server under a small client load, shut down (no Go twin).

One run starts a server on 127.0.0.1 (a free port), the sample API and a pre-shutdown hook,
then drives a load while the shutdown goes by: a keep-alive client and a new-connection client
sending ``/echo`` every ``tick``, a ``/readyz`` probe, one ``/slow`` request and one watch held
across the shutdown. At T0 the run context is cancelled (what SIGTERM does). Every lifecycle
signal and every client answer is recorded with its offset from T0, so the timeline and the
table of answers per phase can be printed afterwards, and tests can check them.

The server's own log is kept too, at ``--v=1`` (where Go logs the ``[graceful-termination]``
lines), in klog's text format: :attr:`DemoResult.log`, the lines kube-apiserver would print.

A scraper reads ``/metrics`` and ``/metrics/slis`` as Prometheus would, every other tick, for as
long as the server listens: :class:`MetricsView` keeps a few of kube-apiserver's metrics (the
in-flight watermark, the ``/readyz`` answers by code, the ``shutdown`` health check) for the
live view, and the last values are read from the server's own registries once it has stopped.
"""

from __future__ import annotations

import http.client
import logging
from dataclasses import dataclass, field
from typing import Callable, Optional

from prometheus_client import generate_latest

from genericserver import klog
from genericserver import runtime as rt
from genericserver import sampleapi
from genericserver.audit.memory import MemoryBackend
from genericserver.config import new_config
from genericserver.context import context as gocontext
from genericserver.net.http.server import listen
from genericserver.scrape import Samples, parse, scrape
from genericserver.secure_serving import SecureServingInfo
from genericserver.testing.client import Client, Result

PHASES = ("before shutdown", "shutdown initiated", "not accepting", "drained")


@dataclass(frozen=True)
class DemoSettings:
    """Durations in seconds; the defaults make one mode last about 6 s."""

    retry_after: bool = False
    shutdown_delay: float = 1.5
    hook_duration: float = 0.5
    watch_grace: float = 2.0
    slow_request: float = 3.0
    tick: float = 0.1
    lead_in: float = 0.8
    tail: float = 0.6


@dataclass
class Answer:
    client: str
    path: str
    sent_at: float
    outcome: str  # "200", "429", "503", "refused", "reset", ...
    phase: str = ""  # by sent_at
    answered_at: Optional[float] = None  # when the outcome was known (seconds after T0)


@dataclass
class MetricsView:
    """A few metrics as a scrape saw them (None: not exposed yet)."""

    inflight_read_only: Optional[float] = None  # apiserver_current_inflight_requests{request_kind="readOnly"}
    inflight_mutating: Optional[float] = None
    readyz_by_code: dict = field(default_factory=dict)  # apiserver_request_total{subresource="/readyz"} per code
    shutdown_check: Optional[float] = None  # kubernetes_healthcheck{name="shutdown",type="readyz"}: 1 passing, 0 failing
    scrapes: int = 0

    # the families it reads, all a scrape needs to parse
    METRICS = ("apiserver_current_inflight_requests", "apiserver_request_total")
    SLIS = ("kubernetes_healthcheck",)

    @classmethod
    def of(cls, metrics: Samples, slis: Samples, scrapes: int) -> "MetricsView":
        return cls(
            inflight_read_only=metrics.value("apiserver_current_inflight_requests", request_kind="readOnly"),
            inflight_mutating=metrics.value("apiserver_current_inflight_requests", request_kind="mutating"),
            readyz_by_code={s.labels["code"]: int(s.value) for s in metrics.select("apiserver_request_total", subresource="/readyz")},
            shutdown_check=slis.value("kubernetes_healthcheck", name="shutdown", type="readyz"),
            scrapes=scrapes,
        )


@dataclass
class DemoResult:
    settings: DemoSettings
    port: int
    signals: list[tuple[str, float]] = field(default_factory=list)  # (name, seconds after T0)
    answers: list[Answer] = field(default_factory=list)
    slow: Optional[Answer] = None
    watch_events: int = 0
    watch_outcome: str = ""
    run_returned_at: Optional[float] = None
    audited_complete: int = 0
    metrics: MetricsView = field(default_factory=MetricsView)  # the latest scrape, then the final values
    log: list[str] = field(default_factory=list)  # the server's klog lines at --v=1

    def signal_names(self) -> list[str]:
        return [n for n, _ in self.signals]

    def at(self, name: str) -> Optional[float]:
        for n, t in self.signals:
            if n == name:
                return t
        return None

    def counts(self) -> dict[tuple[str, str], dict[str, int]]:
        """Outcome counts per (phase, client), phases in order."""
        table: dict[tuple[str, str], dict[str, int]] = {}
        for phase in PHASES:
            for a in sorted(self.answers, key=lambda a: a.client):
                if a.phase == phase:
                    row = table.setdefault((phase, a.client), {})
                    row[a.outcome] = row.get(a.outcome, 0) + 1
        return table


def outcome_of(r: Result) -> str:
    if r.error is None:
        return str(r.status)
    if r.refused:
        return "refused"
    if isinstance(r.error, (ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError)):
        return "reset"
    return type(r.error).__name__


class Demo:
    """Builds the server, runs the load and the shutdown, and fills a :class:`DemoResult`."""

    def __init__(self, settings: DemoSettings, on_event: Optional[Callable[[str, float], None]] = None):
        self.settings = settings
        self.on_event = on_event or (lambda what, at: None)
        self.audit = MemoryBackend()
        config = new_config()
        config.shutdown_delay_duration = settings.shutdown_delay
        config.shutdown_send_retry_after = settings.retry_after
        config.shutdown_watch_termination_grace_period = settings.watch_grace
        config.audit_backend = self.audit
        config.audit_policy_rule_evaluator = self.audit
        config.secure_serving = SecureServingInfo(listener=listen("127.0.0.1", 0))
        self.port = config.secure_serving.listener.getsockname()[1]
        self.config = config
        self.server = config.complete().new("demo")
        sampleapi.install(self.server.handler.non_go_restful_mux, metrics=self.server.metrics)
        self.server.add_pre_shutdown_hook("demo-hook", lambda: rt.sleep(settings.hook_duration))
        self.result = DemoResult(settings, self.port)
        self.t0: Optional[float] = None
        self._lock = rt.lock()
        self.server.lifecycle_signals.observe(self._signal)

    def offset(self) -> float:
        return rt.now() - self.t0 if self.t0 is not None else -(self.settings.lead_in)

    def _signal(self, sig, at: float) -> None:
        if sig.name in ("HasBeenReady", "MuxAndDiscoveryComplete"):
            return
        t = at - self.t0 if self.t0 is not None else 0.0
        with self._lock:
            self.result.signals.append((sig.name, t))
        self.on_event(sig.name, t)

    def _record(self, client: str, path: str, sent_at: float, r: Result) -> Answer:
        a = Answer(client, path, sent_at, outcome_of(r), answered_at=self.offset())
        with self._lock:
            self.result.answers.append(a)
        return a

    def _ticker(self, name: str, path: str, new_connection: bool, stop: rt.Event) -> None:
        client = Client("127.0.0.1", self.port, new_connection=new_connection)
        try:
            while not stop.is_set():
                sent = self.offset()
                self._record(name, path, sent, client.get(path, timeout=2.0))
                stop.wait(self.settings.tick)
        finally:
            client.close()

    def _scraper(self, stop: rt.Event) -> None:
        scrapes = 0
        while not stop.is_set():
            try:
                got = (scrape("127.0.0.1", self.port, families=MetricsView.METRICS),
                       scrape("127.0.0.1", self.port, "/metrics/slis", families=MetricsView.SLIS))
            except (OSError, http.client.HTTPException, RuntimeError):
                got = None  # not listening (any more): nothing to read
            if got is not None:
                scrapes += 1
                self.result.metrics = MetricsView.of(*got, scrapes)
            stop.wait(2 * self.settings.tick)

    def _final_metrics(self) -> None:
        # the listener is closed by now: read the server's registries directly
        c = self.config
        view = MetricsView.of(parse(generate_latest(c.metrics_registry).decode()), parse(generate_latest(c.sli_registry).decode()),
                              self.result.metrics.scrapes)
        self.result.metrics = view

    def _slow(self) -> None:
        sent = self.offset()
        with Client("127.0.0.1", self.port, new_connection=True) as c:
            r = c.get(f"/slow?seconds={self.settings.slow_request:g}", timeout=30.0)
        self.result.slow = Answer("slow", "/slow", sent, outcome_of(r))
        self.on_event("slow request answered", self.offset())

    def _watch(self, started: rt.Event) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30.0)
        try:
            # create one object so the watch has something to send at once
            conn.request("POST", "/api/v1/namespaces/demo/configmaps", body=b'{"metadata":{"name":"hello"},"data":{"k":"v"}}',
                         headers={"Content-Type": "application/json"})
            conn.getresponse().read()
            conn.request("GET", "/api/v1/namespaces/demo/configmaps?watch=true")
            resp = conn.getresponse()
            started.set()
            while resp.readline():
                self.result.watch_events += 1
            self.result.watch_outcome = str(resp.status)
        except (OSError, http.client.HTTPException) as err:
            self.result.watch_outcome = type(err).__name__
            started.set()
        finally:
            conn.close()
        self.on_event("watch ended", self.offset())

    def run(self) -> DemoResult:
        """Run the scenario with the server's log kept in :attr:`DemoResult.log` (and nowhere else)."""
        capture = _Capture(self.result.log)
        logger = logging.getLogger("genericserver")
        saved = logger.propagate, logger.level, klog.set_verbosity(1)
        logger.addHandler(capture)
        logger.propagate, logger.level = False, logging.INFO
        try:
            return self._run()
        finally:
            logger.removeHandler(capture)
            logger.propagate, logger.level = saved[0], saved[1]
            klog.set_verbosity(saved[2])

    def _run(self) -> DemoResult:
        s = self.settings
        ctx, cancel = gocontext.with_cancel(gocontext.background())
        returned = rt.event("demo-run-returned")
        errors: list[BaseException] = []

        def run_server() -> None:
            try:
                self.server.prepare_run().run_with_context(ctx)
            except BaseException as err:  # shown in the summary
                errors.append(err)
            finally:
                self.result.run_returned_at = self.offset()
                returned.set()

        rt.go(run_server, name="demo-server")
        stop_load = rt.event("demo-stop-load")
        watch_started = rt.event("demo-watch-started")
        rt.go(self._watch, watch_started, name="demo-watch")
        watch_started.wait(10.0)
        loaders = [
            rt.go(self._ticker, "/echo, keep-alive", "/echo?message=keep-alive", False, stop_load, name="demo-keep-alive"),
            rt.go(self._ticker, "/echo, new conn", "/echo?message=new-connection", True, stop_load, name="demo-new-conn"),
            rt.go(self._ticker, "/readyz probe", "/readyz", True, stop_load, name="demo-probe"),
            rt.go(self._scraper, stop_load, name="demo-metrics-scraper"),
        ]
        rt.sleep(s.lead_in / 2)
        slow = rt.go(self._slow, name="demo-slow")
        rt.sleep(s.lead_in / 2)

        self.t0 = rt.now()
        self.on_event("SIGTERM: run context cancelled", 0.0)
        cancel()
        returned.wait(60.0)
        rt.sleep(s.tail)  # keep the load going a little: every request is refused now
        stop_load.set()
        for g in loaders + [slow]:
            g.join(30.0)
        self._classify()
        self._final_metrics()
        self.result.audited_complete = sum(1 for e in self.audit.events() if getattr(e.stage, "value", e.stage) == "ResponseComplete")
        if errors:
            raise errors[0]
        return self.result

    def _classify(self) -> None:
        r = self.result
        initiated = r.at("ShutdownInitiated") or 0.0
        not_accepting = r.at("NotAcceptingNewRequest")
        drained = r.at("InFlightRequestsDrained")
        for a in r.answers:
            if a.sent_at < initiated:
                a.phase = PHASES[0]
            elif not_accepting is None or a.sent_at < not_accepting:
                a.phase = PHASES[1]
            elif drained is None or a.sent_at < drained:
                a.phase = PHASES[2]
            else:
                a.phase = PHASES[3]


class _Capture(logging.Handler):
    """Keeps the server's lines, as klog prints them (the demo's clients' errors are not the server's)."""

    def __init__(self, lines: list[str]):
        super().__init__(logging.INFO)
        self.lines = lines
        self.setFormatter(klog.TextFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(("genericserver.genericapiserver", "genericserver.secure_serving")):
            self.lines.append(self.format(record))


def run_demo(settings: DemoSettings, on_event: Optional[Callable[[str, float], None]] = None) -> DemoResult:
    return Demo(settings, on_event).run()

"""A service of N replicas of our server behind kube-proxy, under steady load, and one deletion or a rollout (no Go twin).

:func:`run_scenario` builds the world on 127.0.0.1 - the store, a kubelet, the endpoints
controller, kube-proxy, a service ``web`` with N pods, a load client - then either deletes one
pod with ``kubectl delete``, or (``roll``) rolls the pods as a Deployment does: the pods belong
to a :class:`~genericserver.cluster.deployment.DeploymentController` and a new revision of their
template replaces them within ``max_surge``/``max_unavailable`` (new pods first, an old one
deleted whenever enough pods are available). It waits until the deleted pods are gone and out
of the routing table, and reports one timeline of everything that happened plus the client's
outcomes, each failure with its cause (:mod:`.losses`).

What is configurable is what decides whether requests are lost: the endpoints controller's and
kube-proxy's lags, the preStop hook (none; ``sleep N``; Contour-style: an Envoy in front of the
server drained by the shutdown-manager), the server's ``ShutdownDelayDuration``, retry-after
mode and request timeout, the grace period, the readiness probe. All durations are cluster
seconds, run at ``scale`` runtime seconds each. :mod:`.manifest` fills the same config from a
Deployment manifest.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from genericserver import runtime as rt
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.containers import Container, FakeContainer, Sandbox, ServerContainer, ServerOptions
from genericserver.cluster.deployment import DEFAULT_MAX_SURGE, DEFAULT_MAX_UNAVAILABLE, DeploymentController
from genericserver.cluster.disruption import DisruptionController
from genericserver.cluster.endpoints import EndpointsController, new_service
from genericserver.cluster.envoy import EnvoyContainer
from genericserver.cluster.handlers import ExecAction, HTTPGetAction, SleepAction
from genericserver.cluster.kubectl import DeleteFlags, delete_pod
from genericserver.cluster.kubelet import Kubelet
from genericserver.cluster.loadclient import OUTCOMES, LoadClient, Sample
from genericserver.cluster.losses import CAUSES, Outcome, cause_of, tally
from genericserver.cluster.nodelifecycle import NodeLifecycleController
from genericserver.cluster.proxy import KubeProxy
from genericserver.cluster.scheduler import Scheduler
from genericserver.cluster.shutdownmanager import ShutdownManagerContainer, ShutdownOptions, shutdown_hook
from genericserver.cluster.store import Store, new_pod
from genericserver.events import Event, EventStream
from genericserver.scrape import Samples, fetch, parse

PRE_STOPS = ("none", "sleep", "contour")
SERVICE = "web"
STARTUP_SIGNALS = {"HasBeenReady", "MuxAndDiscoveryComplete"}
POD_METRICS = ("apiserver_request_total",)  # what the timeline reads of each replica's /metrics


@dataclass
class ScenarioConfig:
    replicas: int = 3
    endpoints_lag: float = 1.0
    proxy_lag: float = 1.0
    pre_stop: str = "none"
    pre_stop_sleep: int = 5
    shutdown_delay: float = 0.0
    retry_after: bool = False
    request_timeout: float = 60.0  # the server's --request-timeout: the longest a drain can take
    grace_period: int = 30
    roll: bool = False
    # the Deployment's spec.strategy.rollingUpdate, for roll (an int or "25%")
    max_surge: Union[int, str] = DEFAULT_MAX_SURGE
    max_unavailable: Union[int, str] = DEFAULT_MAX_UNAVAILABLE
    delete_flags: DeleteFlags = field(default_factory=DeleteFlags)
    probe_period: int = 1  # the readiness probe's periodSeconds (0: no probe)
    probe_path: str = "/readyz"
    pod_start: float = 1.0  # from a pod's creation to its server listening (sandbox, image, process)
    exit_after: float = 0.0  # from the server's return to its process's exit (ServerOptions.exit_after)
    # Contour's `envoy shutdown` flags, for pre_stop == "contour" (the seed's defaults but check-delay)
    drain_delay: float = 0.0
    check_delay: float = 0.0
    check_interval: float = 1.0
    min_open_connections: int = 0
    read_only_root_filesystem: bool = False  # the shutdown-manager container's securityContext
    # the run itself
    scale: float = 1.0
    workers: int = 4
    interval: float = 0.005  # runtime seconds between one worker's requests
    keep_alive: bool = False
    warmup: float = 1.0
    tail: float = 1.0
    scrape_period: float = 1.0  # cluster seconds between two scrapes of each replica's /metrics (0: none)
    source: str = ""  # where the pod settings came from (a manifest's path), for the heading
    # from a manifest: its server container's name and image, and its Deployment's spec (JSON), which
    # the served Deployment shows as written (so `kubectl apply -f` of the same file changes nothing)
    container_name: str = "app"
    image: str = "genericserver"
    deployment_spec: str = ""
    nodes: int = 1  # node-1, node-2...: more than one only where a scheduler places pods (--serve-api)

    def __post_init__(self) -> None:
        if self.pre_stop not in PRE_STOPS:
            raise ValueError(f"pre_stop must be one of {PRE_STOPS}, got {self.pre_stop!r}")


@dataclass
class Row:
    at: float  # cluster seconds since the delete (or the start of the rollout)
    component: str
    text: str


@dataclass
class ScenarioResult:
    """The timeline ``rows``, every request's :class:`Sample`, and the events (for pictures).

    ``t0`` is the runtime time of the delete (or of the rollout's start); :meth:`rel` turns a
    runtime time into cluster seconds after it."""

    config: ScenarioConfig
    rows: list[Row]
    samples: list[Sample]
    events: list[Event]
    t0: float
    duration: float
    # each replica's own /metrics, as its last scrape before it stopped listening saw it
    pod_metrics: dict[str, Samples] = field(default_factory=dict)
    outcome: Outcome = field(init=False)

    def __post_init__(self) -> None:
        self.outcome = tally(self.samples)

    def rel(self, at: float) -> float:
        return (at - self.t0) / self.config.scale

    @property
    def counts(self) -> Counter:
        """Outcomes as the client classes them: ok, 429, 503, refused, reset, other."""
        c = Counter(s.outcome for s in self.samples)
        return Counter({k: c.get(k, 0) for k in OUTCOMES})

    @property
    def total(self) -> int:
        return self.outcome.sent

    @property
    def lost(self) -> int:
        return self.outcome.lost


def pod_template(cfg: ScenarioConfig, name: str, clock: ClusterClock, events: EventStream,
                 labels: Optional[dict] = None) -> dict:
    server = {"name": cfg.container_name, "image": cfg.image, "portName": "http",
              "options": ServerOptions(shutdown_delay=cfg.shutdown_delay, retry_after=cfg.retry_after,
                                       request_timeout=cfg.request_timeout, exit_after=cfg.exit_after)}
    probe = {"httpGet": {"path": cfg.probe_path, "port": "http"}, "periodSeconds": cfg.probe_period, "timeoutSeconds": 1}
    containers = [server]
    if cfg.pre_stop == "sleep":
        server["lifecycle"] = {"preStop": SleepAction(cfg.pre_stop_sleep)}
    elif cfg.pre_stop == "contour":
        wait_for_drain = {"preStop": HTTPGetAction("/shutdown", "shutdown-manager")}
        server.update(portName="app-http", lifecycle=wait_for_drain)
        opts = ShutdownOptions(check_interval=cfg.check_interval, check_delay=cfg.check_delay,
                               drain_delay=cfg.drain_delay, min_open_connections=cfg.min_open_connections,
                               read_only_root_filesystem=cfg.read_only_root_filesystem)
        containers = [server,
                      {"name": "envoy", "image": "envoy", "lifecycle": wait_for_drain},
                      {"name": "shutdown-manager", "image": "shutdown-manager",
                       "lifecycle": {"preStop": ExecAction(shutdown_hook(opts, clock, events), ["contour", "envoy", "shutdown"])},
                       "securityContext": {"readOnlyRootFilesystem": cfg.read_only_root_filesystem}}]
        probe = {"httpGet": {"path": "/ready", "port": "admin"}, "periodSeconds": cfg.probe_period, "timeoutSeconds": 1}
    pod = new_pod(name, labels=labels or {"app": SERVICE}, containers=containers, termination_grace_period_seconds=cfg.grace_period)
    if cfg.probe_period > 0:
        pod["spec"]["readinessProbe"] = probe
    return pod


def image_name(reference: str) -> str:
    """The program an image reference runs: its last path component without tag or digest, so that any
    registry and tag of an image runs the same program (``localhost/genericserver:node``, the real
    node's, is ``genericserver``; ``localhost:5000/envoy@sha256:...`` is ``envoy``)."""
    return reference.rsplit("/", 1)[-1].partition("@")[0].partition(":")[0]


def container_factory(clock: ClusterClock, events: EventStream, servers: Optional[list] = None) -> Any:
    """Containers for the kubelet; each replica of our server is also added to ``servers``."""

    def make(pod: dict, spec: dict, sandbox: Sandbox) -> Container:
        name, pod_name = spec["name"], pod["metadata"]["name"]
        image = image_name(spec["image"])
        if image == "genericserver":
            c = ServerContainer(name, pod_name, sandbox, spec["options"], clock=clock, events=events, port_name=spec["portName"])
            if servers is not None:
                servers.append(c)
            return c
        if image == "envoy":
            return EnvoyContainer(name, pod_name, sandbox, events=events)
        if image == "shutdown-manager":
            return ShutdownManagerContainer(name, pod_name, sandbox, clock=clock, events=events)
        return FakeContainer(name, pod_name, term_after=spec.get("termAfter", 0.0), clock=clock, events=events)

    return make


class World:
    """Everything a scenario runs; ``close()`` tears it all down (no thread or socket left)."""

    def __init__(self, cfg: ScenarioConfig, *, template_settings: Optional[Callable[[ScenarioConfig, dict], ScenarioConfig]] = None):
        """``template_settings`` (``manifest.config_for_template``) makes each revision's pods from
        its own template, as a client may have edited it; without it every revision runs ``cfg``."""
        self.cfg = cfg
        self.template_settings = template_settings
        self.clock = ClusterClock(cfg.scale)
        self.events = EventStream()
        self.store = Store(self.clock, self.events)
        self.store.create(new_service(SERVICE, {"app": SERVICE}))
        self.servers: list[ServerContainer] = []
        factory = container_factory(self.clock, self.events, self.servers)
        self.kubelets = [Kubelet(self.store, factory, clock=self.clock, start_delay=cfg.pod_start, node_name=f"node-{i + 1}")
                         for i in range(max(1, cfg.nodes))]
        self.kubelet = self.kubelets[0]
        self.endpoints = EndpointsController(self.store, lag=cfg.endpoints_lag)
        self.proxy = KubeProxy(self.store, SERVICE, lag=cfg.proxy_lag)
        self.load = LoadClient(self.dial, workers=cfg.workers, interval=cfg.interval, keep_alive=cfg.keep_alive)
        self.deployment: Optional[DeploymentController] = None
        # served to kubectl (apiserver.py), the cluster also schedules and keeps budgets
        self.scheduler: Optional[Scheduler] = None
        self.disruption: Optional[DisruptionController] = None
        self.node_lifecycle: Optional[NodeLifecycleController] = None
        if cfg.roll:
            self.deployment = DeploymentController(
                self.store, SERVICE, cfg.replicas, self._new_pod, max_surge=cfg.max_surge, max_unavailable=cfg.max_unavailable,
                written_spec=json.loads(cfg.deployment_spec) if cfg.deployment_spec else None,
                revision_template=self._revision_pod if template_settings is not None else None)
        for part in (*self.kubelets, self.endpoints, self.proxy):
            part.run()
        self.scraped: dict[str, str] = {}  # pod -> the text of its last /metrics
        self._stop_scraping = rt.event("scraper-stop")
        self._scraper = rt.go(self._scrape_loop, name="metrics-scraper") if cfg.scrape_period > 0 else None

    def _revision_pod(self, name: str, labels: dict, template: dict) -> dict:
        """A pod of a revision of a manifest's Deployment: its template (as a client may have
        edited it) decides the grace, the preStop sleep, the server's flags and the probe, as the
        manifest did for the first; one the simulation cannot run keeps the first's settings,
        and the timeline says why."""
        assert self.template_settings is not None
        try:
            cfg = self.template_settings(self.cfg, template)
        except ValueError as err:  # a ManifestError
            # (a real container would exit with the error; here the pod runs as the manifest said)
            self.events.record("replicaset", f"{name}: {err}; it runs the manifest's settings", pod=name)
            cfg = self.cfg
        return self._new_pod(name, labels, cfg)

    def _new_pod(self, name: str, labels: dict, cfg: Optional[ScenarioConfig] = None) -> dict:
        return pod_template(cfg or self.cfg, name, self.clock, self.events, labels)

    def start_api_controllers(self) -> None:
        """What a cluster served to kubectl needs besides: a scheduler that honours ``kubectl
        cordon`` (and the node lifecycle controller's taint that shows it), and the disruption
        controller that ``kubectl drain``'s evictions consult."""
        self.scheduler = Scheduler(self.store, [k.node_name for k in self.kubelets])
        if self.deployment is not None:
            self.deployment.place = self.scheduler.node_for
        self.disruption = DisruptionController(self.store)
        self.node_lifecycle = NodeLifecycleController(self.store)
        for controller in (self.scheduler, self.disruption, self.node_lifecycle):
            controller.run()

    def dial(self, timeout: Optional[float] = None) -> tuple[socket.socket, str]:
        """The load client's connect: kube-proxy's DNAT, with both controllers brought up to
        their lags first (a stalled controller thread is the host's delay, not the model's)."""
        self.endpoints.catch_up()
        self.proxy.catch_up()
        return self.proxy.dial(timeout)

    def _scrape_loop(self) -> None:
        """Prometheus's part: every ``scrape_period`` scrape each replica that listens; keep the
        last (as text: only the last is parsed, by :meth:`pod_metrics`)."""
        while self.clock.select(self._stop_scraping, timeout=self.cfg.scrape_period) is None:
            for c in list(self.servers):
                port = c.sandbox.ports.get(c.port_name)
                if port is None:
                    continue
                try:
                    self.scraped[c.pod_name] = fetch("127.0.0.1", port, timeout=5.0)
                except (OSError, RuntimeError, http.client.HTTPException):
                    pass  # not listening (yet, or any more): the last scrape stands

    def pod_metrics(self) -> dict[str, Samples]:
        """Each replica's last scrape, parsed: the families the timeline reads (its /readyz
        answers by code)."""
        return {pod: parse(text, families=POD_METRICS) for pod, text in self.scraped.items()}

    def start_pods(self, timeout: float) -> list[str]:
        """Create the replicas (bare pods, or the Deployment's first revision) and wait until
        kube-proxy routes to every one of them; their names."""
        names = [f"{SERVICE}-{i}" for i in range(self.cfg.replicas)]
        if self.deployment is not None:
            self.deployment.run()
        else:
            for name in names:
                self.store.create(pod_template(self.cfg, name, self.clock, self.events))
        if not self.proxy.wait_for(lambda table: set(names) <= {e.pod for e in table if e.ready}, timeout):
            raise TimeoutError(f"pods {names} never all became ready endpoints")
        return names

    def wait_gone(self, name: str, timeout: float) -> None:
        w = self.kubelet_of(name).worker(name)
        if not w.terminated.wait(timeout):
            raise TimeoutError(f"pod {name} still Terminating after {timeout:g}s")
        if not self.proxy.wait_for(lambda table: all(e.pod != name for e in table), timeout):
            raise TimeoutError(f"pod {name} still in kube-proxy's table after {timeout:g}s")

    def close(self) -> None:
        self._stop_scraping.set()
        if self._scraper is not None:
            self._scraper.join()
        self.load.stop()
        if self.deployment is not None:
            self.deployment.stop()
        for controller in (self.scheduler, self.disruption, self.node_lifecycle):
            if controller is not None:
                controller.stop()
        for part in (self.proxy, self.endpoints, *self.kubelets):
            part.stop()
        for kubelet in self.kubelets:
            kubelet.kill_all()

    def kubelet_of(self, pod: str) -> Kubelet:
        """The kubelet of the node the newest pod called ``pod`` runs on (the first node's if none)."""
        for kubelet in self.kubelets:
            try:
                kubelet.worker(pod)
            except KeyError:
                continue
            return kubelet
        return self.kubelet

    def container_log(self, namespace: str, pod: str, container: str, previous: bool = False) -> Any:
        """``kubectl logs``: the log the pod's own kubelet keeps."""
        return self.kubelet_of(pod).container_log(namespace, pod, container, previous)


def run_scenario(cfg: ScenarioConfig) -> ScenarioResult:
    quiet = logging.getLogger("genericserver")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the replicas' klog lines would drown the timeline
    world = World(cfg)
    try:
        start_timeout = 30.0 + 10 * cfg.scale
        names = world.start_pods(start_timeout)
        world.load.start()
        world.clock.sleep(cfg.warmup)
        t0 = rt.now()
        gone_timeout = world.clock.to_runtime(cfg.grace_period + cfg.endpoints_lag + cfg.proxy_lag + 10) + 10
        if world.deployment is not None:
            world.deployment.roll()
            # every old pod is deleted by the time the rollout completes
            if not world.deployment.wait_complete(cfg.replicas * gone_timeout):
                raise TimeoutError("the rollout did not complete")
            deleted = world.deployment.deleted_pods()
        else:
            delete_pod(world.store, names[0], cfg.delete_flags)
            deleted = names[:1]
        for old in deleted:
            world.wait_gone(old, gone_timeout)
        world.clock.sleep(cfg.tail)
        world.load.stop()
        end = rt.now()
    finally:
        try:
            world.close()
        finally:
            quiet.setLevel(level)
    samples = list(world.load.samples)
    events = world.events.events()
    return ScenarioResult(cfg, timeline_rows(cfg, events, samples, t0, end), samples, events, t0, (end - t0) / cfg.scale,
                          world.pod_metrics())


def timeline_rows(cfg: ScenarioConfig, events: list[Event], samples: list[Sample], t0: float, end: float) -> list[Row]:
    """The events from the delete to the end of the load, plus what the client saw, in cluster
    seconds; each failure is placed when it happened (its answer or refusal), by cause."""
    rel = lambda at: (at - t0) / cfg.scale  # noqa: E731
    rows = [Row(rel(e.at), e.kind, e.name) for e in events
            if t0 <= e.at <= end and e.get("signal") not in STARTUP_SIGNALS]
    failures: dict[str, list[Sample]] = {}
    for s in sorted(samples, key=lambda s: s.done):
        cause = cause_of(s)
        if cause and s.done >= t0:
            failures.setdefault(cause, []).append(s)
    for cause in CAUSES:
        got = failures.get(cause)
        if got:
            pods = ", ".join(sorted({s.pod for s in got if s.pod})) or "-"
            label = CAUSES[cause][0]
            rows.append(Row(rel(got[0].done), "client", f"first {label} ({len(got)} in all, pods: {pods})"))
            rows.append(Row(rel(got[-1].done), "client", f"last {label}"))
    rows.sort(key=lambda r: r.at)
    return rows

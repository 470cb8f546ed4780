"""A service of N replicas of our server behind kube-proxy, under steady load, and one deletion (no Go twin).

:func:`run_scenario` builds the world on 127.0.0.1 - the store, a kubelet, the endpoints
controller, kube-proxy, a service ``web`` with N pods, a load client - then deletes one pod with
``kubectl delete`` (or rolls every pod: a new one first, the old one deleted once the new one is
routed to), waits until the deleted pods are gone and out of the routing table, and reports one
timeline of everything that happened plus the client's outcomes.

What is configurable is what decides whether requests are lost: the endpoints controller's and
kube-proxy's lags, the preStop hook (none; ``sleep N``; Contour-style: an Envoy in front of the
server drained by the shutdown-manager), the server's ``ShutdownDelayDuration`` and retry-after
mode, the grace period. All durations are cluster seconds, run at ``scale`` runtime seconds each.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from genericserver import runtime as rt
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.containers import Container, FakeContainer, Sandbox, ServerContainer, ServerOptions
from genericserver.cluster.endpoints import EndpointsController, new_service, pod_is_ready
from genericserver.cluster.envoy import EnvoyContainer
from genericserver.cluster.handlers import ExecAction, HTTPGetAction, SleepAction
from genericserver.cluster.kubectl import DeleteFlags, delete_pod
from genericserver.cluster.kubelet import Kubelet
from genericserver.cluster.loadclient import OUTCOMES, LoadClient
from genericserver.cluster.proxy import KubeProxy
from genericserver.cluster.shutdownmanager import ShutdownManagerContainer, ShutdownOptions, shutdown_hook
from genericserver.cluster.store import POD, Store, new_pod
from genericserver.events import EventStream

PRE_STOPS = ("none", "sleep", "contour")
SERVICE = "web"
STARTUP_SIGNALS = {"HasBeenReady", "MuxAndDiscoveryComplete"}


@dataclass
class ScenarioConfig:
    replicas: int = 3
    endpoints_lag: float = 1.0
    proxy_lag: float = 1.0
    pre_stop: str = "none"
    pre_stop_sleep: int = 5
    shutdown_delay: float = 0.0
    retry_after: bool = False
    grace_period: int = 30
    roll: bool = False
    delete_flags: DeleteFlags = field(default_factory=DeleteFlags)
    probe_period: int = 1
    # Contour's `envoy shutdown` flags, for pre_stop == "contour" (the seed's defaults but check-delay)
    drain_delay: float = 0.0
    check_delay: float = 0.0
    check_interval: float = 1.0
    min_open_connections: int = 0
    # the run itself
    scale: float = 1.0
    workers: int = 4
    interval: float = 0.005  # runtime seconds between one worker's requests
    keep_alive: bool = False
    warmup: float = 1.0
    tail: float = 1.0

    def __post_init__(self) -> None:
        if self.pre_stop not in PRE_STOPS:
            raise ValueError(f"pre_stop must be one of {PRE_STOPS}, got {self.pre_stop!r}")


@dataclass
class Row:
    at: float  # cluster seconds since the (first) delete
    component: str
    text: str


@dataclass
class ScenarioResult:
    config: ScenarioConfig
    rows: list[Row]
    counts: Counter
    duration: float

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def lost(self) -> int:
        return self.total - self.counts["ok"]


def pod_template(cfg: ScenarioConfig, name: str, clock: ClusterClock, events: EventStream) -> dict:
    server = {"name": "app", "image": "genericserver", "portName": "http",
              "options": ServerOptions(shutdown_delay=cfg.shutdown_delay, retry_after=cfg.retry_after)}
    probe = {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": cfg.probe_period, "timeoutSeconds": 1}
    containers = [server]
    if cfg.pre_stop == "sleep":
        server["lifecycle"] = {"preStop": SleepAction(cfg.pre_stop_sleep)}
    elif cfg.pre_stop == "contour":
        wait_for_drain = {"preStop": HTTPGetAction("/shutdown", "shutdown-manager")}
        server.update(portName="app-http", lifecycle=wait_for_drain)
        opts = ShutdownOptions(check_interval=cfg.check_interval, check_delay=cfg.check_delay,
                               drain_delay=cfg.drain_delay, min_open_connections=cfg.min_open_connections)
        containers = [server,
                      {"name": "envoy", "image": "envoy", "lifecycle": wait_for_drain},
                      {"name": "shutdown-manager", "image": "shutdown-manager",
                       "lifecycle": {"preStop": ExecAction(shutdown_hook(opts, clock, events), ["contour", "envoy", "shutdown"])}}]
        probe = {"httpGet": {"path": "/ready", "port": "admin"}, "periodSeconds": cfg.probe_period, "timeoutSeconds": 1}
    pod = new_pod(name, labels={"app": SERVICE}, containers=containers, termination_grace_period_seconds=cfg.grace_period)
    if cfg.probe_period > 0:
        pod["spec"]["readinessProbe"] = probe
    return pod


def container_factory(clock: ClusterClock, events: EventStream) -> Any:
    def make(pod: dict, spec: dict, sandbox: Sandbox) -> Container:
        name, pod_name = spec["name"], pod["metadata"]["name"]
        if spec["image"] == "genericserver":
            return ServerContainer(name, pod_name, sandbox, spec["options"], clock=clock, events=events, port_name=spec["portName"])
        if spec["image"] == "envoy":
            return EnvoyContainer(name, pod_name, sandbox, events=events)
        if spec["image"] == "shutdown-manager":
            return ShutdownManagerContainer(name, pod_name, sandbox, clock=clock, events=events)
        return FakeContainer(name, pod_name, term_after=spec.get("termAfter", 0.0), clock=clock, events=events)

    return make


class World:
    """Everything a scenario runs; ``close()`` tears it all down (no thread or socket left)."""

    def __init__(self, cfg: ScenarioConfig):
        self.cfg = cfg
        self.clock = ClusterClock(cfg.scale)
        self.events = EventStream()
        self.store = Store(self.clock, self.events)
        self.store.create(new_service(SERVICE, {"app": SERVICE}))
        self.kubelet = Kubelet(self.store, container_factory(self.clock, self.events), clock=self.clock)
        self.endpoints = EndpointsController(self.store, lag=cfg.endpoints_lag)
        self.proxy = KubeProxy(self.store, SERVICE, lag=cfg.proxy_lag)
        self.load = LoadClient(self.proxy.dial, workers=cfg.workers, interval=cfg.interval, keep_alive=cfg.keep_alive)
        for part in (self.kubelet, self.endpoints, self.proxy):
            part.run()

    def add_pods(self, names: list[str], timeout: float) -> None:
        """Create the pods and wait until kube-proxy routes to every one of them."""
        for name in names:
            self.store.create(pod_template(self.cfg, name, self.clock, self.events))
        if not self.proxy.wait_for(lambda table: set(names) <= {e.pod for e in table if e.ready}, timeout):
            raise TimeoutError(f"pods {names} never all became ready endpoints")

    def add_pod_and_wait_ready(self, name: str, timeout: float) -> None:
        """A Deployment's step: the new pod counts once it is Ready, whatever the proxies know."""
        watch = self.store.watch(POD)
        try:
            self.store.create(pod_template(self.cfg, name, self.clock, self.events))
            deadline = rt.now() + timeout
            while not pod_is_ready(self.store.get(POD, name)):
                if watch.next(max(0.0, deadline - rt.now())) is None and rt.now() >= deadline:
                    raise TimeoutError(f"pod {name} never became Ready")
        finally:
            watch.stop()

    def wait_gone(self, name: str, timeout: float) -> None:
        w = self.kubelet.worker(name)
        if not w.terminated.wait(timeout):
            raise TimeoutError(f"pod {name} still Terminating after {timeout:g}s")
        if not self.proxy.wait_for(lambda table: all(e.pod != name for e in table), timeout):
            raise TimeoutError(f"pod {name} still in kube-proxy's table after {timeout:g}s")

    def close(self) -> None:
        self.load.stop()
        for part in (self.proxy, self.endpoints, self.kubelet):
            part.stop()
        self.kubelet.kill_all()


def run_scenario(cfg: ScenarioConfig) -> ScenarioResult:
    quiet = logging.getLogger("genericserver")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the replicas' klog lines would drown the timeline
    world = World(cfg)
    try:
        start_timeout = 30.0 + 10 * cfg.scale
        names = [f"{SERVICE}-{i}" for i in range(cfg.replicas)]
        world.add_pods(names, start_timeout)
        world.load.start()
        world.clock.sleep(cfg.warmup)
        t0 = rt.now()
        if cfg.roll:
            for i, old in enumerate(names):
                world.add_pod_and_wait_ready(f"{SERVICE}-{i}-v2", start_timeout)
                delete_pod(world.store, old, cfg.delete_flags)
        else:
            delete_pod(world.store, names[0], cfg.delete_flags)
        gone_timeout = world.clock.to_runtime(cfg.grace_period + cfg.endpoints_lag + cfg.proxy_lag + 10) + 10
        for old in names if cfg.roll else names[:1]:
            world.wait_gone(old, gone_timeout)
        world.clock.sleep(cfg.tail)
        world.load.stop()
        end = rt.now()
    finally:
        try:
            world.close()
        finally:
            quiet.setLevel(level)
    return ScenarioResult(cfg, timeline_rows(world, t0, end), world.load.counts(), (end - t0) / cfg.scale)


def timeline_rows(world: World, t0: float, end: float) -> list[Row]:
    """The events from the delete to the end of the load, plus what the client saw, in cluster seconds."""
    rel = lambda at: (at - t0) / world.cfg.scale  # noqa: E731
    rows = [Row(rel(e.at), e.kind, e.name) for e in world.events.events()
            if t0 <= e.at <= end and e.get("signal") not in STARTUP_SIGNALS]
    failures: dict[str, list] = {}
    for s in world.load.samples:
        if s.outcome != "ok" and s.at >= t0:
            failures.setdefault(s.outcome, []).append(s)
    for outcome in OUTCOMES:
        got = failures.get(outcome)
        if got:
            pods = ", ".join(sorted({s.pod for s in got if s.pod})) or "-"
            rows.append(Row(rel(got[0].at), "client", f"first {outcome} ({len(got)} in all, pods: {pods})"))
            rows.append(Row(rel(got[-1].at), "client", f"last {outcome}"))
    rows.sort(key=lambda r: r.at)
    return rows

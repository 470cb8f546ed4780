"""The kind manifests as the simulated world's source of truth, and the checks of their shutdown timing (no Go twin).

``deploy/deployment.yaml`` is what a real cluster runs; :func:`config_from_manifest` reads the
same file into a :class:`~genericserver.cluster.scenario.ScenarioConfig`: replicas, rolling
update strategy, ``terminationGracePeriodSeconds``, the server container's preStop hook and
readiness probe, and the server's flags from its container ``args``, parsed by the very option
parser ``genericserver serve`` uses (so a flag the server would refuse is refused here, with the
same message). ``genericserver cluster --manifest FILE`` runs it. Only a ``RollingUpdate``
strategy is modelled: ``Recreate`` (every old pod gone before a new one starts) is refused with
a one-line error rather than rolled as something it is not.

:func:`check_manifests` holds the timing rules of walkthrough.md section 6.9, so an edit that
breaks one fails ``make test``:

* the pod keeps accepting connections until the endpoints and kube-proxy have caught up, with
  a margin: preStop sleep + ``--shutdown-delay-duration`` >= endpoints lag + kube-proxy lag +
  :data:`MARGIN` (:data:`ENDPOINTS_LAG` + :data:`PROXY_LAG`, the numbers section 6.9 assumes for
  a kind cluster; the margin is one more kube-proxy sync period, see below);
* the whole shutdown fits the grace period: preStop + delay + ``--request-timeout`` (the
  longest a request in flight can take to drain) < ``terminationGracePeriodSeconds``;
* the probes ask paths our server serves (``/readyz``, ``/livez``), on the port the server
  listens on, with the scheme it speaks (HTTP unless ``--tls-cert-file`` is given);
* the container port is the ``--secure-port``, the server binds all interfaces, and the Service's
  ``targetPort`` and the PodDisruptionBudget's selector point at these pods.

:func:`rollout_outcome` is the workshop's entry point: roll a manifest's Deployment under load
and get the counts back.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Union

import yaml

from genericserver.apimachinery import version
from genericserver.cluster.deployment import DEFAULT_MAX_SURGE, DEFAULT_MAX_UNAVAILABLE, validate_strategy
from genericserver.options import LogsOptions, new_server_run_options
from genericserver.sampleapi import SampleAPIOptions
from genericserver.serving_options import AuditOptions, AuthenticationOptions, AuthorizationOptions, SecureServingOptions

ENDPOINTS_LAG = 1.0  # seconds; walkthrough.md 6.9: the EndpointSlice controller's reaction
PROXY_LAG = 1.0  # seconds; walkthrough.md 6.9: kube-proxy's minSyncPeriod (1 s) and rule writes
# seconds: one more kube-proxy --iptables-min-sync-period (1 s by default). kube-proxy runs its
# syncs through a BoundedFrequencyRunner (k8s.io/kubernetes pkg/util/async) at most once a
# period: a slice change that arrives while a sync is being written waits for the next one, so a
# busy node routes to a deleted pod up to a period longer than P says. deploy/ keeps more (5 s
# against 2 s); the checker asks at least this.
MARGIN = 1.0
SERVED_PROBE_PATHS = ("/readyz", "/livez", "/healthz")
DEFAULT_PROBE_PERIOD = 10  # the API's default periodSeconds
Manifest = Union[str, os.PathLike, dict, list]


class ManifestError(ValueError):
    """A manifest that cannot be read or run; the message names the file and field."""


class _ServeParser(argparse.ArgumentParser):
    """``genericserver serve``'s flags, but a bad one raises instead of exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ManifestError(f"{self.prog}: error: {message}")


@dataclass
class ServerFlags:
    """The option groups of ``genericserver serve`` (cmd.py's ``ServeOptions``, built here from
    options.py and serving_options.py: cmd.py imports this package, so this one cannot import
    cmd.py; tests/test_cluster_manifest.py checks that both know the same flags)."""

    run: Any = field(default_factory=new_server_run_options)
    serving: SecureServingOptions = field(default_factory=SecureServingOptions)
    audit: AuditOptions = field(default_factory=AuditOptions)
    authentication: AuthenticationOptions = field(default_factory=AuthenticationOptions)
    authorization: AuthorizationOptions = field(default_factory=AuthorizationOptions)
    logs: LogsOptions = field(default_factory=LogsOptions)
    sample: SampleAPIOptions = field(default_factory=SampleAPIOptions)

    def add_flags(self, parser: argparse.ArgumentParser) -> None:
        self.serving.add_flags(parser)
        self.run.add_universal_flags(parser)
        for group in (self.audit, self.authentication, self.authorization, self.logs, self.sample):
            group.add_flags(parser)
        version.add_version_flag(parser)

    def validate(self) -> list[str]:
        return [e for g in (self.serving, self.run, self.audit, self.authentication, self.authorization, self.sample)
                for e in g.validate()]


def server_flags_parser(flags: ServerFlags) -> argparse.ArgumentParser:
    parser = _ServeParser(prog="genericserver serve", add_help=False)
    flags.add_flags(parser)
    return parser


def parse_server_args(args: list[str]) -> ServerFlags:
    """The server's options from its container args, checked as ``genericserver serve`` checks them."""
    flags = ServerFlags()
    server_flags_parser(flags).parse_args([str(a) for a in args])
    errs = flags.validate()
    if errs:
        raise ManifestError(f"genericserver serve: error: {'; '.join(errs)}")
    return flags


def load_documents(manifest: Manifest) -> list[dict]:
    """Every object of ``manifest``: a YAML file's path (one or more documents), a dict or a list."""
    if isinstance(manifest, dict):
        return [manifest]
    if isinstance(manifest, list):
        return list(manifest)
    try:
        with open(manifest) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
    except OSError as err:
        raise ManifestError(f"cannot read {manifest}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise ManifestError(f"{manifest} is not valid YAML: {err}") from None
    if not all(isinstance(d, dict) for d in docs):
        raise ManifestError(f"{manifest}: every YAML document must be a Kubernetes object")
    return docs


def find(docs: list[dict], kind: str) -> Optional[dict]:
    return next((d for d in docs if d.get("kind") == kind), None)


def is_server_container(c: dict) -> bool:
    """Our image runs ``genericserver serve`` (its ENTRYPOINT), or the command says so."""
    cmd = c.get("command") or []
    return list(cmd[:2]) == ["genericserver", "serve"] or (not cmd and str(c.get("image", "")).split(":")[0].endswith("genericserver"))


@dataclass
class PodSpecFacts:
    """What the timing rules and the simulation need from a Deployment."""

    name: str
    replicas: int
    grace: int
    pre_stop_sleep: int  # 0: no preStop sleep
    container: dict
    server: ServerFlags  # the parsed flags
    readiness: Optional[dict]
    liveness: Optional[dict]
    max_surge: Union[int, str]
    max_unavailable: Union[int, str]
    labels: dict

    @property
    def delay(self) -> float:
        return self.server.run.shutdown_delay_duration

    @property
    def request_timeout(self) -> float:
        return self.server.run.request_timeout


def _pre_stop_sleep(container: dict, where: str) -> int:
    hook = ((container.get("lifecycle") or {}).get("preStop")) or {}
    if not hook:
        return 0
    if "sleep" in hook:
        return int(hook["sleep"]["seconds"])
    cmd = (hook.get("exec") or {}).get("command") or []
    if len(cmd) == 2 and os.path.basename(str(cmd[0])) == "sleep" and str(cmd[1]).isdigit():
        return int(cmd[1])
    raise ManifestError(f"{where}: lifecycle.preStop: only a sleep (sleep.seconds, or exec [sleep, N]) can be simulated")


def deployment_facts(docs: list[dict], source: str = "manifest") -> PodSpecFacts:
    d = find(docs, "Deployment")
    if d is None:
        raise ManifestError(f"{source}: no Deployment in it")
    name = d.get("metadata", {}).get("name", "?")
    where = f"{source}: Deployment {name}"
    spec = d.get("spec") or {}
    template = spec.get("template") or {}
    pod = template.get("spec") or {}
    servers = [c for c in pod.get("containers") or [] if is_server_container(c)]
    if len(servers) != 1:
        raise ManifestError(f"{where}: expected one container running genericserver serve, found {len(servers)}")
    c = servers[0]
    try:
        server = parse_server_args(c.get("args") or [])
    except ManifestError as err:
        raise ManifestError(f"{where}: container {c.get('name')} args: {err}") from None
    strategy = spec.get("strategy") or {}
    kind = strategy.get("type", "RollingUpdate")
    if kind == "Recreate":  # every old pod goes before a new one starts: a model of its own
        raise ManifestError(f"{where}: spec.strategy.type Recreate is not modelled (the simulation rolls pods "
                            "within maxSurge and maxUnavailable); use RollingUpdate")
    if kind != "RollingUpdate":  # kube's validation message
        raise ManifestError(f'{where}: spec.strategy.type: Unsupported value: "{kind}": supported values: '
                            '"Recreate", "RollingUpdate"')
    rolling = strategy.get("rollingUpdate") or {}
    return PodSpecFacts(
        name=name, replicas=int(spec.get("replicas", 1)), grace=int(pod.get("terminationGracePeriodSeconds", 30)),
        pre_stop_sleep=_pre_stop_sleep(c, f"{where}: container {c.get('name')}"), container=c, server=server,
        readiness=c.get("readinessProbe"), liveness=c.get("livenessProbe"),
        max_surge=rolling.get("maxSurge", DEFAULT_MAX_SURGE), max_unavailable=rolling.get("maxUnavailable", DEFAULT_MAX_UNAVAILABLE),
        labels=dict((template.get("metadata") or {}).get("labels") or {}))


def _selects(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_manifests(docs: list[dict], *, endpoints_lag: float = ENDPOINTS_LAG, proxy_lag: float = PROXY_LAG,
                    source: str = "manifest") -> list[str]:
    """Every broken timing or wiring rule of the module docstring, one message each (empty: all good)."""
    try:
        f = deployment_facts(docs, source)
    except ManifestError as err:
        return [str(err)]
    where = f"{source}: Deployment {f.name}"
    problems = [f"{where}: {e}" for e in validate_strategy(f.max_surge, f.max_unavailable)]
    s, d, t, g = f.pre_stop_sleep, f.delay, f.request_timeout, f.grace
    if s + d < endpoints_lag + proxy_lag + MARGIN:
        problems.append(f"{where}: preStop sleep {s}s + --shutdown-delay-duration {d:g}s is shorter than the endpoints lag "
                        f"{endpoints_lag:g}s + kube-proxy lag {proxy_lag:g}s + a margin of {MARGIN:g}s (one more kube-proxy "
                        "sync period): new connections may reach a closed listener (walkthrough 6.1, 6.9)")
    if s + d + t >= g:
        problems.append(f"{where}: preStop sleep {s}s + --shutdown-delay-duration {d:g}s + --request-timeout {t:g}s does not fit "
                        f"in terminationGracePeriodSeconds {g}: a request in flight may be SIGKILLed (walkthrough 6.3, 6.9)")
    serving = f.server.serving
    if serving.bind_address in ("127.0.0.1", "localhost", "::1"):
        problems.append(f"{where}: --bind-address {serving.bind_address} listens on loopback only: "
                        "the kubelet's probes and the Service cannot reach it (use 0.0.0.0)")
    ports = {p.get("name"): p.get("containerPort") for p in f.container.get("ports") or []}
    if serving.bind_port not in ports.values():
        problems.append(f"{where}: no containerPort is the --secure-port {serving.bind_port} (ports: {ports})")
    scheme = "HTTPS" if serving.cert_file else "HTTP"
    for kind, probe, path in (("readinessProbe", f.readiness, "/readyz"), ("livenessProbe", f.liveness, "/livez")):
        if probe is None:
            problems.append(f"{where}: no {kind} (it should GET {path})")
            continue
        http = probe.get("httpGet") or {}
        port = ports.get(http.get("port"), http.get("port"))
        if http.get("path") != path:
            problems.append(f"{where}: {kind} asks {http.get('path')!r}; our server answers it on {path}")
        if port != serving.bind_port:
            problems.append(f"{where}: {kind} port {http.get('port')!r} is not the --secure-port {serving.bind_port}")
        if http.get("scheme", "HTTP") != scheme:
            problems.append(f"{where}: {kind} scheme {http.get('scheme', 'HTTP')} but the server speaks {scheme}")
    svc = find(docs, "Service")
    if svc is not None:
        sname = svc["metadata"]["name"]
        if not _selects(svc["spec"].get("selector") or {}, f.labels):
            problems.append(f"{source}: Service {sname}: its selector does not select the Deployment's pods")
        for p in svc["spec"].get("ports") or []:
            target = p.get("targetPort", p.get("port"))
            if ports.get(target, target) != serving.bind_port:
                problems.append(f"{source}: Service {sname}: targetPort {target!r} is not the server's port {serving.bind_port}")
    pdb = find(docs, "PodDisruptionBudget")
    if pdb is not None and not _selects(((pdb.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}, f.labels):
        problems.append(f"{source}: PodDisruptionBudget {pdb['metadata']['name']}: its selector does not select the Deployment's pods")
    return problems


def as_stored(spec: dict) -> dict:
    """A Deployment spec as the API keeps it: what a Go round trip leaves (``minReadySeconds: 0``
    and other empty ``omitempty`` fields dropped), so a later ``kubectl apply`` of the same file
    compares equal to it."""
    from genericserver.api.apps.v1.types import DEPLOYMENT_SPEC
    from genericserver.apimachinery.runtime.serializer import json as json_serializer

    return json_serializer.decode(json.dumps(spec).encode(), DEPLOYMENT_SPEC)[1]


def config_from_manifest(manifest: Manifest, base: Optional[Any] = None, **overrides: Any) -> Any:
    """A :class:`ScenarioConfig` with the pod settings of ``manifest``'s Deployment on top of
    ``base`` (its lags, scale, clients...), then ``overrides``."""
    from genericserver.cluster.scenario import ScenarioConfig

    source = str(manifest) if isinstance(manifest, (str, os.PathLike)) else "manifest"
    docs = load_documents(manifest)
    f = deployment_facts(docs, source)
    errs = validate_strategy(f.max_surge, f.max_unavailable)
    if errs:
        raise ManifestError(f"{source}: {errs[0]}")
    try:
        stored = as_stored(find(docs, "Deployment")["spec"])
    except ValueError as err:  # a DecodeError: what the API would refuse the file for (kubectl apply's 400)
        raise ManifestError(f'{source}: Deployment in version "v1" cannot be handled as a Deployment: {err}') from None
    cfg = replace(base if base is not None else ScenarioConfig(),
                  replicas=f.replicas, max_surge=f.max_surge, max_unavailable=f.max_unavailable, source=source,
                  deployment_spec=json.dumps(stored), **pod_settings(f))
    return replace(cfg, **overrides)


def pod_settings(f: PodSpecFacts) -> dict[str, Any]:
    """The settings of a :class:`ScenarioConfig` that a pod template decides: the grace, the
    preStop sleep, the server's flags, the readiness probe, the container's name and image."""
    probe = f.readiness or {}
    return dict(grace_period=f.grace, pre_stop="sleep" if f.pre_stop_sleep else "none", pre_stop_sleep=f.pre_stop_sleep or 5,
                shutdown_delay=f.delay, retry_after=f.server.run.shutdown_send_retry_after, request_timeout=f.request_timeout,
                probe_period=int(probe.get("periodSeconds", DEFAULT_PROBE_PERIOD)) if probe else 0,
                probe_path=(probe.get("httpGet") or {}).get("path", "/readyz"),
                container_name=f.container["name"], image=f.container.get("image") or "genericserver")


def config_for_template(cfg: Any, template: dict) -> Any:
    """``cfg`` with the pod settings of a Deployment's pod ``template`` (a revision a client
    wrote: ``kubectl edit``, ``set env``, ``patch``); a template the simulation cannot run (no
    container running ``genericserver serve``, a flag serve refuses) raises :class:`ManifestError`."""
    f = deployment_facts([{"kind": "Deployment", "metadata": {"name": "web"}, "spec": {"template": template}}], "its template")
    return replace(cfg, **pod_settings(f))


def without_shutdown_time(manifest: Manifest) -> list[dict]:
    """A copy of ``manifest`` with the server's preStop hook and ``--shutdown-delay-duration``
    removed: what happens to a rollout with neither (the lab's "before")."""
    docs = copy.deepcopy(load_documents(manifest))
    d = find(docs, "Deployment")
    if d is None:
        raise ManifestError("no Deployment in the manifest")
    for c in d["spec"]["template"]["spec"]["containers"]:
        if is_server_container(c):
            (c.get("lifecycle") or {}).pop("preStop", None)
            args, kept = list(c.get("args") or []), []
            while args:
                a = str(args.pop(0))
                if a == "--shutdown-delay-duration" and args:
                    args.pop(0)  # the value, given as a separate word
                elif not a.startswith("--shutdown-delay-duration="):
                    kept.append(a)
            c["args"] = kept
    return docs


def rollout(manifest: Manifest, *, endpoints_lag: float = ENDPOINTS_LAG, proxy_lag: float = PROXY_LAG,
            scale: float = 0.1, workers: int = 3, interval: float = 0.02) -> Any:
    """Roll the Deployment of ``manifest`` under load in the simulated world: the run's
    :class:`~genericserver.cluster.scenario.ScenarioResult` (its timeline rows, the load
    client's samples, ``.outcome``). The arguments are :func:`rollout_outcome`'s."""
    from genericserver.cluster.scenario import ScenarioConfig, run_scenario

    base = ScenarioConfig(endpoints_lag=endpoints_lag, proxy_lag=proxy_lag, scale=scale, workers=workers, interval=interval, roll=True)
    return run_scenario(config_from_manifest(manifest, base))


def rollout_outcome(manifest: Manifest, *, endpoints_lag: float = ENDPOINTS_LAG, proxy_lag: float = PROXY_LAG,
                    scale: float = 0.1, workers: int = 3, interval: float = 0.02) -> Any:
    """Roll the Deployment of ``manifest`` under load in the simulated world; what the clients saw.

    ``manifest`` is a YAML file's path, one object (a dict) or a list of them; only its
    Deployment is read. The rollout replaces every pod as the deployment controller would
    (the manifest's ``strategy``, grace period, preStop, readiness probe and server flags), with
    the given endpoints controller and kube-proxy lags (cluster seconds), time running at
    ``scale`` real seconds per cluster second (0.1: a rollout takes a couple of seconds), and
    ``workers`` load clients each sending a request every ``interval`` real seconds (every
    20 ms: a few dozen inside a 0.2 s window, and a fraction of the CPU time of a denser load).

    Returns a :class:`~genericserver.cluster.losses.Outcome`: ``.sent``, ``.ok``, ``.lost``,
    ``.loss_percent``, ``.by_cause`` (a Counter: ``closed-but-routed``, ``no-endpoints``,
    ``dropped``, ``shutting-down``, ``envoy-upstream``, ``retry-later``, ``other``), ``.why()``
    and ``.as_dict()``. A lab checks "this rollout loses nothing" with
    ``rollout_outcome("deploy/deployment.yaml").lost == 0``. Raises :class:`ManifestError` for a
    manifest that cannot be run (no Deployment, a flag the server refuses, a preStop that is not
    a sleep)."""
    return rollout(manifest, endpoints_lag=endpoints_lag, proxy_lag=proxy_lag, scale=scale, workers=workers,
                   interval=interval).outcome


def margin(manifest: Manifest, *, endpoints_lag: float = ENDPOINTS_LAG, proxy_lag: float = PROXY_LAG) -> float:
    """Cluster seconds by which the pod's preStop sleep and shutdown delay outlast the two lags
    (negative: they do not)."""
    f = deployment_facts(load_documents(manifest))
    return f.pre_stop_sleep + f.delay - endpoints_lag - proxy_lag

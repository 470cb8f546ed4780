"""The model held to the real node: genericserver cluster runs each recorded scenario of real-node.json (no Go twin).

For each scenario record_node.py recorded on the real node, :func:`model_run` runs the simulated world
(`genericserver cluster`) with the same pod (the Deployment the node ran, read by the model's own
manifest reader), the same kubectl action, the same load but a quarter as often (4 clients, a new
connection per request, 40 ms apart where the node's were 10 ms: :data:`INTERVAL`), and the lags the
node showed: the model's endpoints and kube-proxy lags are parameters,
so they are set to the medians of the recorded runs (the pod's deletionTimestamp to its
EndpointSlice terminating, and that to kube-proxy's rules without it), and so is the time our server's
process takes to exit after its last line (its replicas here are threads, which exit at once; in a
container, Python's teardown and the runtime's reaping took 0.2-1.5 s).

Two checks (:func:`check`):
- the order: for each pod that goes (the deleted one, or each old pod of a rollout), every two of the
  :data:`MILESTONES` that the node showed in the same order, at least :data:`MIN_GAP` apart, in all its
  runs, the model must show in that order (and show both). Pairs the node swapped between runs, or
  kept closer, are races (the kubelet's kill and the EndpointSlice's update, both tens of milliseconds
  after the delete) and fix nothing;
- the loss: the model's lost requests after t = 0, as seconds of the Service's traffic (lost divided
  by requests per second: neither the clients' rate, which differs, nor how long a run went on after
  t = 0 changes it), must lie within the real runs' range [min, max], widened by what the model's own
  timing noise (:data:`MIN_GAP`) can move it: MIN_GAP / replicas, 0.067 s of traffic.

A drain on a one-node cluster evicts one pod (the PodDisruptionBudget holds the others, and the
replacement waits for the cordoned node): the model runs it as what an eviction is, a delete with the
pod's own grace. Events are named as record_node.py names them.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

from genericserver.cluster.kubectl import DeleteFlags
from genericserver.cluster.manifest import config_from_manifest
from genericserver.cluster.scenario import ScenarioConfig, ScenarioResult, run_scenario

CORPUS = Path(__file__).resolve().parent / "real-node.json"
# the events whose order is compared, in the order of the pod's termination as deploy/ runs it
MILESTONES = ("terminating", "prestop", "kill", "slice-terminating", "proxy-out", "sigterm", "ShutdownInitiated",
              "NotAcceptingNewRequest", "sigkill", "exit", "pod-gone", "slice-removed")
SCALE = 1.0  # real seconds per cluster second: the node runs in real time, and so do its races
WORKERS = 4
# the model's clients send a request every 40 ms, where the node's (genericserver load's default) sent
# one every 10: the loss is compared as seconds of the Service's traffic (lost over requests a second),
# which the rate does not change, and a quarter of the requests cost make test a quarter of the CPU
# (the eight replays: 9 CPU-seconds against 18); a lost request is then 0.01 s of traffic, well
# within the 0.067 s the range is widened by. The orders do not depend on it.
INTERVAL = 0.04
# seconds: two events the node kept this far apart in all its runs are in a fixed order. Closer than
# that, the model's own threads on a busy 2-core machine move an event by up to ~0.15 s (its kubelet
# killed the container 5 to 173 ms after the delete in replays beside the recorder and other builds)
MIN_GAP = 0.2
# and the loss: that much noise in when the model's kube-proxy drops a pod sends one pod's share of the
# requests (1 of 3) to it for that long, so the node's range is widened by MIN_GAP / replicas (0.067 s)


def load_corpus(path: Path = CORPUS) -> dict:
    return json.loads(path.read_text())


def first(events: list[dict], pod: str, event: str) -> Optional[float]:
    return next((e["t"] for e in events if e["pod"] == pod and e["event"] == event), None)


def going(run: dict) -> list[str]:
    """The pods that go in a run: the victim, or the old pods of a rollout or a drain."""
    return sorted({e["pod"] for e in run["events"] if e["pod"] == "victim" or e["pod"].startswith("old-")})


def measured_lags(entry: dict) -> tuple[float, float]:
    """(endpoints lag, kube-proxy lag): the medians over the runs and the pods that went."""
    e, p = [], []
    for run in entry["runs"]:
        for pod in going(run):
            term, sl, out = (first(run["events"], pod, k) for k in ("terminating", "slice-terminating", "proxy-out"))
            if term is not None and sl is not None:
                e.append(max(0.0, sl - term))
            if sl is not None and out is not None:
                p.append(max(0.0, out - sl))
    return round(statistics.median(e), 3) if e else 1.0, round(statistics.median(p), 3) if p else 1.0


def measured_exit_after(entry: dict) -> float:
    """The median time from the server's last line ("apiserver is exiting") to its container's exit."""
    gaps = []
    for run in entry["runs"]:
        for pod in going(run):
            last, out = first(run["events"], pod, "server-exiting"), first(run["events"], pod, "exit")
            if last is not None and out is not None and first(run["events"], pod, "sigkill") is None:
                gaps.append(max(0.0, out - last))
    return round(statistics.median(gaps), 3) if gaps else 0.0


def model_config(entry: dict, **overrides) -> ScenarioConfig:
    endpoints_lag, proxy_lag = measured_lags(entry)
    grace = entry["grace_period_flag"]
    base = ScenarioConfig(endpoints_lag=endpoints_lag, proxy_lag=proxy_lag, exit_after=measured_exit_after(entry),
                          scale=SCALE, workers=WORKERS,
                          interval=INTERVAL, roll=entry["action"] == "roll",
                          delete_flags=DeleteFlags(grace_period=-1 if grace is None else grace))
    return replace(config_from_manifest(entry["deployment"], base), **overrides)


# the model's timeline rows as record_node.py's events: (its component, a pattern) -> event
ROW_EVENTS = [
    ("store", re.compile(r"^pod (\S+) updated: deletionTimestamp="), "terminating"),
    ("kubelet", re.compile(r"^([^/\s]+)/\S+: Running preStop hook"), "prestop"),
    ("kubelet", re.compile(r"^([^/\s]+)/\S+: PreStop hook (?:not )?completed"), "prestop-done"),
    ("kubelet", re.compile(r"^([^/\s]+)/\S+: StopContainer with "), "kill"),
    ("container", re.compile(r"^([^/\s]+)/\S+: SIGTERM$"), "sigterm"),
    ("container", re.compile(r"^([^/\s]+)/\S+: SIGKILL$"), "sigkill"),
    ("container", re.compile(r"^([^/\s]+)/\S+: exited with code (\d+)$"), "exit"),
    ("pod", re.compile(r"^(\S+): (ShutdownInitiated|AfterShutdownDelayDuration|NotAcceptingNewRequest|"
                       r"HTTPServerStoppedListening|InFlightRequestsDrained)$"), None),
    ("endpoints", re.compile(r"^\S+: (\S+) leaves the ready endpoints"), "slice-terminating"),
    ("endpoints", re.compile(r"^\S+: (\S+) now ready=false serving=false terminating=true"), "slice-not-serving"),
    ("endpoints", re.compile(r"^\S+: (\S+) removed from the slice"), "slice-removed"),
    ("store", re.compile(r"^pod (\S+) deleted$"), "pod-gone"),
]
SYNC = re.compile(r"^\S+: rules synced: new connections go to (.*?)(?:; not to .*)?$")


def model_events(result: ScenarioResult, action: str = "delete") -> list[dict]:
    """The model's run as record_node.py's events, the pods named by role as the recorder names them."""
    out: list[tuple[float, str, str]] = []
    routed: Optional[set[str]] = None
    for e in sorted(result.events, key=lambda e: e.at):
        t = result.rel(e.at)
        if e.kind == "kube-proxy":
            m = SYNC.match(e.name)
            if m:
                now = {p.strip() for p in m.group(1).split(",") if p.strip() and p.strip() != "nobody"}
                if routed is not None:
                    out += [(t, pod, "proxy-out") for pod in routed - now]
                    out += [(t, pod, "proxy-in") for pod in now - routed]
                routed = now
            continue
        for kind, pattern, event in ROW_EVENTS:
            if e.kind == kind and (m := pattern.match(e.name)):
                out.append((t, m.group(1), event or m.group(2)))
                break
    # roles: the pods there before t = 0 that got deleted are old-1.. (victim for a lone delete), in name order
    deleted = sorted({pod for t, pod, ev in out if ev == "terminating" and t >= 0})
    role = {pod: f"old-{i + 1}" for i, pod in enumerate(deleted)}
    if action == "delete" and len(deleted) == 1:
        role[deleted[0]] = "victim"  # the recorder's name for the pod of a lone delete (a drain's is old-1)
    seen: set[tuple[str, str]] = set()
    events = []
    for t, pod, ev in out:
        if t < 0 or pod not in role or (role[pod], ev) in seen:
            continue
        seen.add((role[pod], ev))
        events.append({"t": round(t, 3), "pod": role[pod], "event": ev})
    return events


def sequence(events: list[dict], pod: str, among: Optional[set[str]] = None) -> list[str]:
    """The pod's milestones in the order they happened (first of each), limited to ``among``."""
    seq = []
    for e in sorted(events, key=lambda e: e["t"]):
        if e["pod"] == pod and e["event"] in MILESTONES and e["event"] not in seq and (among is None or e["event"] in among):
            seq.append(e["event"])
    return seq


@dataclass
class Verdict:
    orders_ok: bool
    loss_ok: bool
    model_loss: float
    real_loss: tuple[float, float]
    model_orders: dict[str, list[str]] = field(default_factory=dict)
    real_orders: dict[str, list[list[str]]] = field(default_factory=dict)
    why: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.orders_ok and self.loss_ok


def times(events: list[dict], pod: str) -> dict[str, float]:
    """When each milestone first happened to the pod."""
    out: dict[str, float] = {}
    for e in sorted(events, key=lambda e: e["t"]):
        if e["pod"] == pod and e["event"] in MILESTONES:
            out.setdefault(e["event"], e["t"])
    return out


def fixed_pairs(real_runs: list[dict[str, float]]) -> set[tuple[str, str]]:
    """(a, b): in every run a came at least :data:`MIN_GAP` before b (and every run showed both).
    What the node reverses from one run to another, or keeps closer than that, is a race it does not
    fix (the kubelet's kill against the EndpointSlice's update, both tens of milliseconds after the
    delete), so no order of those is wrong."""
    pairs: Optional[set[tuple[str, str]]] = None
    for t in real_runs:
        here = {(a, b) for a in t for b in t if t[b] - t[a] >= MIN_GAP}
        pairs = here if pairs is None else pairs & here
    return pairs or set()


def check(entry: dict, model: list[dict], model_loss: float) -> Verdict:
    """The model's events and loss against the recorded runs of one scenario: every order of two
    milestones that the node kept in all its runs, the model must keep; its loss must be in range."""
    runs = entry["runs"]
    losses = [r["load"]["lost_seconds"] for r in runs]
    slack = MIN_GAP / entry["deployment"]["spec"]["replicas"]
    v = Verdict(True, min(losses) - slack <= model_loss <= max(losses) + slack, model_loss, (min(losses), max(losses)))
    if not v.loss_ok:
        v.why.append(f"loss {model_loss:.3f} s of traffic outside the node's [{min(losses):.3f}, {max(losses):.3f}] s "
                     f"(+- {slack:.3f} s)")
    for pod in sorted({e["pod"] for e in model}):
        reals = [times(run["events"], pod) for run in runs if pod in going(run)]
        mine = sequence(model, pod)
        v.model_orders[pod] = mine
        v.real_orders[pod] = [sorted(r, key=r.get) for r in reals]
        if not reals:
            v.orders_ok = False
            v.why.append(f"{pod}: the node recorded no such pod")
            continue
        for a, b in sorted(fixed_pairs(reals)):
            if a in mine and b in mine and mine.index(b) < mine.index(a):
                v.orders_ok = False
                v.why.append(f"{pod}: the model has {b} before {a}; the node had {a} first in all {len(reals)} runs")
            elif (a in mine) != (b in mine) and all(a in r and b in r for r in reals):
                v.orders_ok = False
                v.why.append(f"{pod}: the model shows {a if a in mine else b} without {b if a in mine else a}; the node always both")
    return v


def model_run(entry: dict, **overrides) -> tuple[list[dict], float, ScenarioResult]:
    result = run_scenario(model_config(entry, **overrides))
    # as the recorder counts: the requests whose outcome came after t = 0, the loss in seconds of traffic
    after = [s for s in result.samples if s.done >= result.t0]
    lost = sum(s.outcome != "ok" for s in after) * result.duration / len(after) if after else 0.0
    return model_events(result, entry["action"]), lost, result

"""Records the pod's termination on the real node into tests/parity/real-node.json (no Go twin: a recorder).

Run by `make parity-node` (root; it brings the node up with reference/node.py and takes it down from a
trap). The recorder itself runs inside the node's network namespace (`nsenter --net`), where the
apiserver, the ClusterIP and kube-proxy's iptables are. For each scenario of node_scenarios.py, --runs
times:

1. the scenario's Deployment variant, deploy/'s Service (and PodDisruptionBudget) are applied fresh,
   and the recorder waits for 3 Ready pods, in the EndpointSlice and in kube-proxy's rules;
2. it watches the pods and the EndpointSlices, polls `iptables-save -t nat` every 20 ms (which pod IPs
   the Service's KUBE-SVC chain jumps to), follows every container's log file, and starts
   `genericserver load` against the ClusterIP (4 clients, a new connection per request, each request
   written to a samples file);
3. after 2 s of load it acts (the delete is t = 0): a DELETE of one pod (with gracePeriodSeconds for
   --grace-period), a rollout restart (the template annotation kubectl sets), or `kubectl drain`;
4. when it is over (the pod gone from the API and the slice, or the rollout complete) and 2 s more,
   it reads the kubelet's and containerd's logs for the kill, SIGTERM, SIGKILL and exit of each
   container, and writes the run: every event with its time after t = 0, each pod's
   [graceful-termination] lines, and the load's answers and losses.

The events (the same words as node_replay.py gives the model's):
terminating (the pod's deletionTimestamp), prestop and prestop-done (the kubelet runs the container's
preStop hook), kill (the kubelet's StopContainer, after the hook), sigterm and sigkill (containerd signals the task), exit (the task's
exit, with its code), the server's lifecycle signals (ShutdownInitiated, AfterShutdownDelayDuration,
NotAcceptingNewRequest, HTTPServerStoppedListening, InFlightRequestsDrained, from its klog lines),
not-ready (the pod's Ready condition turns False), slice-terminating, slice-not-serving, slice-removed
(the pod's endpoint in the EndpointSlice), proxy-out (the pod's IP leaves the KUBE-SVC chain), pod-gone.
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "reference"))

import node  # noqa: E402  reference/node.py: the node's names and its state folder

from tests.parity.node_scenarios import SCENARIOS, manifests, node_variant  # noqa: E402

OUT = HERE / "real-node.json"
NAMESPACE = "default"
WARMUP = 2.0
TAIL = 2.0
POLL = 0.02
LIFECYCLE = re.compile(r'^([IWEF])(\d{4}) (\d\d:\d\d:\d\d\.\d{6})\s+\d+ [^\]]+\] (.*)$')
SIGNAL_NAME = re.compile(r'name="(\w+)"')
SIGNALS = ("ShutdownInitiated", "AfterShutdownDelayDuration", "NotAcceptingNewRequest", "HTTPServerStoppedListening",
           "InFlightRequestsDrained")


def klog_time(month_day: str, clock: str) -> float:
    """A klog header's time (UTC on this machine) as seconds since the epoch."""
    year = dt.datetime.now(dt.timezone.utc).year
    stamp = dt.datetime.strptime(f"{year}{month_day} {clock}", "%Y%m%d %H:%M:%S.%f").replace(tzinfo=dt.timezone.utc)
    return stamp.timestamp()


def rfc3339_time(text: str) -> float:
    """containerd's and the CRI log's RFC 3339 times (nanoseconds cut to microseconds)."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", text)
    base = dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
    tz = dt.timezone.utc if m.group(3) == "Z" else dt.datetime.strptime(m.group(3).replace(":", ""), "%z").tzinfo
    frac = float("0." + (m.group(2) or "0"))
    return base.replace(tzinfo=tz).timestamp() + frac


class Api:
    def __init__(self, lay: node.Layout) -> None:
        self.ctx = ssl.create_default_context(cafile=str(lay.pki / "ca.crt"))
        self.headers = {"Authorization": f"Bearer {node.TOKEN}", "Accept": "application/json"}

    def conn(self, timeout: Optional[float] = 10) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(node.NODE_IP, node.API_PORT, context=self.ctx, timeout=timeout)

    def call(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> tuple[int, Any]:
        c = self.conn()
        try:
            headers = dict(self.headers)
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                headers["Content-Type"] = content_type
            c.request(method, path, body=data, headers=headers)
            r = c.getresponse()
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
        finally:
            c.close()

    def get(self, path: str) -> Any:
        status, body = self.call("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body}")
        return body

    def watch(self, path: str, on_event: Callable[[float, dict], None], stop: threading.Event) -> threading.Thread:
        listing = self.get(path)
        rv = listing["metadata"]["resourceVersion"]
        for item in listing["items"]:
            on_event(time.time(), {"type": "ADDED", "object": item})

        def loop() -> None:
            sep = "&" if "?" in path else "?"
            c = self.conn(timeout=None)
            c.request("GET", f"{path}{sep}watch=1&resourceVersion={rv}&allowWatchBookmarks=false", headers=self.headers)
            r = c.getresponse()
            while not stop.is_set():
                line = r.readline()
                if not line:
                    break
                on_event(time.time(), json.loads(line))
            c.close()

        t = threading.Thread(target=loop, daemon=True, name=f"watch {path}")
        t.start()
        return t


class Recorder:
    """One run: the events, as (wall time, pod, event, detail)."""

    def __init__(self, api: Api, lay: node.Layout) -> None:
        self.api = api
        self.lay = lay
        self.events: list[tuple[float, str, str, str]] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.pod_ip: dict[str, str] = {}
        self.ip_pod: dict[str, str] = {}
        self.pods: dict[str, dict] = {}  # the last seen object of each pod
        self.created: dict[str, str] = {}  # pod -> creationTimestamp
        self.first_seen: dict[str, float] = {}  # pod -> when the watch first showed it
        self.exit_codes: dict[str, str] = {}
        self.seen: set[tuple[str, str]] = set()
        self.slice_state: dict[str, tuple] = {}
        self.in_proxy: set[str] = set()
        self.lifecycle: dict[str, list[str]] = {}
        self.threads: list[threading.Thread] = []

    def add(self, at: float, pod: str, event: str, detail: str = "", once: bool = True) -> None:
        with self.lock:
            if once and (pod, event) in self.seen:
                # two sources of one event (the DELETE's answer and the watch): the earlier is when it was so
                for i, (t, p, e, d) in enumerate(self.events):
                    if p == pod and e == event and at < t:
                        self.events[i] = (at, pod, event, detail or d)
                return
            self.seen.add((pod, event))
            self.events.append((at, pod, event, detail))

    # -- the API's view
    def on_pod(self, at: float, ev: dict) -> None:
        pod = ev["object"]
        name = pod["metadata"]["name"]
        if ev["type"] == "DELETED":
            self.add(at, name, "pod-gone")
            return
        self.pods[name] = pod
        self.created.setdefault(name, pod["metadata"].get("creationTimestamp", ""))
        self.first_seen.setdefault(name, at)
        ip = pod.get("status", {}).get("podIP")
        if ip:
            self.pod_ip[name] = ip
            self.ip_pod[ip] = name
        if pod["metadata"].get("deletionTimestamp"):
            self.add(at, name, "terminating", f"grace {pod['metadata'].get('deletionGracePeriodSeconds')}")
        ready = {c["type"]: c["status"] for c in pod.get("status", {}).get("conditions", [])}.get("Ready")
        if ready == "True":
            self.add(at, name, "ready")
        elif ready == "False" and (name, "ready") in self.seen:
            self.add(at, name, "not-ready")
        for cs in pod.get("status", {}).get("containerStatuses", []):
            term = cs.get("state", {}).get("terminated")
            if term:
                self.exit_codes[name] = f"code {term.get('exitCode')} {term.get('reason', '')}".strip()

    def on_slice(self, at: float, ev: dict) -> None:
        sl = ev["object"]
        present = set()
        for ep in sl.get("endpoints") or []:
            for ip in ep.get("addresses", []):
                present.add(ip)
                cond = ep.get("conditions", {})
                state = (cond.get("ready"), cond.get("serving"), cond.get("terminating"))
                pod = (ep.get("targetRef") or {}).get("name") or self.ip_pod.get(ip, ip)
                if state == self.slice_state.get(pod):
                    continue
                self.slice_state[pod] = state
                if state[0] and not state[2]:
                    self.add(at, pod, "slice-ready")
                elif state[2] and state[1]:
                    self.add(at, pod, "slice-terminating", "ready=false serving=true terminating=true")
                elif state[2]:
                    self.add(at, pod, "slice-terminating", "ready=false serving=false terminating=true")
                    self.add(at, pod, "slice-not-serving")
        if ev["type"] != "DELETED":
            for pod in list(self.slice_state):
                ip = self.pod_ip.get(pod)
                if ip and ip not in present:
                    self.add(at, pod, "slice-removed")

    # -- kube-proxy's rules
    def poll_iptables(self) -> None:
        rule = re.compile(r'^-A KUBE-SVC-\S+ .*--comment "?default/web:http -> (\d+\.\d+\.\d+\.\d+):\d+"? .*-j KUBE-SEP-')
        while not self.stop.is_set():
            out = subprocess.run(["iptables-save", "-t", "nat"], capture_output=True, text=True).stdout
            at = time.time()
            now = {m.group(1) for line in out.splitlines() if (m := rule.match(line))}
            for ip in now - self.in_proxy:
                self.add(at, self.ip_pod.get(ip, ip), "proxy-in")
            for ip in self.in_proxy - now:
                self.add(at, self.ip_pod.get(ip, ip), "proxy-out")
            self.in_proxy = now
            self.stop.wait(POLL)

    # -- the containers' own logs (the kubelet's files: readable while open after the pod is gone)
    def follow_logs(self) -> None:
        files: dict[Path, Any] = {}
        root = self.lay.node / "kubelet" / "pod-logs"
        while not self.stop.is_set():
            try:
                for path in root.glob(f"{NAMESPACE}_web-*/*/*.log"):
                    if path not in files:
                        files[path] = open(path, errors="replace")
            except OSError:
                pass  # a pod's folder removed while listed (the kubelet cleans up the previous run's)
            for path, f in files.items():
                pod = path.parent.parent.name.split("_")[1]
                for line in f.readlines():
                    self.on_log_line(pod, line.rstrip("\n"))
            self.stop.wait(0.05)
        for path, f in files.items():
            pod = path.parent.parent.name.split("_")[1]
            for line in f.readlines():
                self.on_log_line(pod, line.rstrip("\n"))
            f.close()

    def on_log_line(self, pod: str, line: str) -> None:
        # the CRI format: <RFC 3339 time> <stream> <F|P> <the line>
        parts = line.split(" ", 3)
        if len(parts) < 4:
            return
        text = parts[3]
        m = LIFECYCLE.match(text)
        if not m or "[graceful-termination]" not in text:
            return
        self.lifecycle.setdefault(pod, []).append(m.group(4))
        name = SIGNAL_NAME.search(text)
        if name and name.group(1) in SIGNALS:
            self.add(klog_time(m.group(2), m.group(3)), pod, name.group(1))
        if "apiserver is exiting" in text:
            self.add(klog_time(m.group(2), m.group(3)), pod, "server-exiting")

    def start(self) -> None:
        self.threads.append(self.api.watch(f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=app%3Dweb", self.on_pod, self.stop))
        self.threads.append(self.api.watch(
            f"/apis/discovery.k8s.io/v1/namespaces/{NAMESPACE}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb",
            self.on_slice, self.stop))
        for target in (self.poll_iptables, self.follow_logs):
            t = threading.Thread(target=target, daemon=True, name=target.__name__)
            t.start()
            self.threads.append(t)

    def finish(self) -> None:
        self.stop.set()
        for t in self.threads[2:]:
            t.join(10)

    # -- the kubelet's and containerd's logs, read once at the end
    def read_component_logs(self, since: float) -> None:
        containers = {}  # container id -> pod
        for name, pod in self.pods.items():
            for cs in pod.get("status", {}).get("containerStatuses", []):
                cid = cs.get("containerID", "").split("//")[-1]
                if cid:
                    containers[cid] = name
                last = (cs.get("lastState") or {}).get("terminated") or {}
                if last.get("containerID"):
                    containers[last["containerID"].split("//")[-1]] = name
        # kubelet --v=3: "Running preStop hook" when the hook starts, "Killing container with a grace
        # period" (V(2)) when StopContainer starts, after the hook
        kubelet = re.compile(r'^I(\d{4}) (\d\d:\d\d:\d\d\.\d{6}) .*"(Killing container with a grace period|Running preStop hook|'
                             r'PreStop hook completed|PreStop hook not completed in grace period)".*pod="default/([^"]+)"')
        names = {"Killing container with a grace period": "kill", "Running preStop hook": "prestop",
                 "PreStop hook completed": "prestop-done", "PreStop hook not completed in grace period": "prestop-done"}
        for line in (self.lay.logs / "kubelet.log").read_text(errors="replace").splitlines():
            m = kubelet.match(line)
            if m:
                at = klog_time(m.group(1), m.group(2))
                if at >= since:
                    grace = re.search(r"gracePeriod=(\d+)", line)
                    self.add(at, m.group(4), names[m.group(3)], f"grace {grace.group(1)}" if grace else "")
        stamp = re.compile(r'^time="([^"]+)" level=\w+ msg="(.*)"$')
        for line in (self.lay.logs / "containerd.log").read_text(errors="replace").splitlines():
            m = stamp.match(line)
            if not m:
                continue
            at = rfc3339_time(m.group(1))
            if at < since:
                continue
            msg = m.group(2)
            cid = next((c for c in containers if c in msg), None)
            if cid is None:
                continue
            pod = containers[cid]
            if "with signal terminated" in msg:
                self.add(at, pod, "sigterm")
            elif msg.startswith("Kill container") or "with signal killed" in msg:
                self.add(at, pod, "sigkill")
            elif msg.startswith("StopContainer for") and msg.endswith("returns successfully"):
                # containerd 1.6 logs a task's exit only at debug level: its StopContainer returns once
                # the task has exited (on its own or by the SIGKILL); the code is the pod status's
                self.add(at, pod, "exit", self.exit_codes.get(pod, ""))


def kubectl(*args: str, stdin: Optional[str] = None, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    lay = node.Layout(ROOT / ".cluster-real")
    return subprocess.run([str(ROOT / ".venv" / "bin" / "kubectl"), "--kubeconfig", str(lay.kubeconfig), *args],
                          input=stdin, capture_output=True, text=True, check=check, timeout=timeout)


def wait(what: str, check: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)  # the real node's components, seen only through their API and logs: polled
    raise TimeoutError(f"timed out waiting for {what}")


def web_pods(api: Api) -> list[dict]:
    return api.get(f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=app%3Dweb")["items"]


def ready(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", []))


def proxy_ips() -> set[str]:
    out = subprocess.run(["iptables-save", "-t", "nat"], capture_output=True, text=True).stdout
    return set(re.findall(r'default/web:http -> (\d+\.\d+\.\d+\.\d+):\d+', out))


def fresh(api: Api, scenario: str) -> None:
    """No web pod left, then the scenario's objects applied and 3 pods Ready everywhere."""
    kubectl("delete", "deployment/web", "pdb/web", "--ignore-not-found", "--wait=false")
    for pod in web_pods(api):
        api.call("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/{pod['metadata']['name']}", {"gracePeriodSeconds": 0})
    wait("the old pods gone", lambda: not web_pods(api))
    kubectl("uncordon", node.NODE_NAME)
    kubectl("apply", "-f", "-", stdin=manifests(scenario))
    wait("3 pods Ready", lambda: sum(ready(p) for p in web_pods(api)) == 3)
    wait("3 pods in kube-proxy's rules", lambda: len(proxy_ips() & {p["status"].get("podIP") for p in web_pods(api)}) == 3)


def expected_length(scenario: str) -> float:
    """The most the load may have to run after t = 0 (the recorder stops it earlier with SIGTERM)."""
    return 180.0


def run_once(api: Api, lay: node.Layout, scenario: str, samples: Path) -> dict:
    spec = SCENARIOS[scenario]
    fresh(api, scenario)
    svc = api.get(f"/api/v1/namespaces/{NAMESPACE}/services/web")
    url = f"http://{svc['spec']['clusterIP']}/echo?message=load"
    rec = Recorder(api, lay)
    rec.start()
    length = expected_length(scenario)
    load = subprocess.Popen([str(ROOT / ".venv" / "bin" / "genericserver"), "load", "--url", url,
                             "--duration", f"{WARMUP + length:.0f}s", "--workers", "4", "--report-every", "500ms",
                             "--samples", str(samples)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: os.nice(10))  # back to the default priority: the recorder runs at -10
    # the load is sending once it prints its first progress line (a Python process starts slowly here)
    first_line = load.stdout.readline()
    assert first_line.startswith("  sent "), first_line
    time.sleep(WARMUP)  # the scenario's own real time: the load runs this long before the action
    victims = sorted(rec.pods, key=lambda n: rec.created[n])
    drain_out = ""
    t0 = time.time()
    if spec["action"] == "delete":
        victims = victims[:1]
        body = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if spec["grace"] is not None:
            body["gracePeriodSeconds"] = spec["grace"]
        status, answer = api.call("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/{victims[0]}", body)
        assert status == 200, (status, answer)
        # the answer carries the deletionTimestamp: it is written by then (the watch may tell later)
        rec.add(time.time(), victims[0], "terminating", f"grace {answer['metadata'].get('deletionGracePeriodSeconds')}")
        wait("the pod gone", lambda: (victims[0], "pod-gone") in rec.seen and (victims[0], "slice-removed") in rec.seen, 90)
    elif spec["action"] == "roll":
        patch = {"spec": {"template": {"metadata": {"annotations": {
            "kubectl.kubernetes.io/restartedAt": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}}}}}
        status, answer = api.call("PATCH", f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/web", patch,
                                  "application/strategic-merge-patch+json")
        assert status == 200, (status, answer)
        wait("the old pods gone", lambda: all((v, "pod-gone") in rec.seen for v in victims), length)
        wait("3 new pods Ready", lambda: sum(ready(p) for p in web_pods(api)) == 3, 60)
    else:
        drain = kubectl("drain", node.NODE_NAME, "--pod-selector=app=web", "--ignore-daemonsets", "--delete-emptydir-data",
                        "--timeout=20s", check=False, timeout=60)
        drain_out = (drain.stdout + drain.stderr).strip()
        kubectl("uncordon", node.NODE_NAME)
        victims = [v for v in victims if (v, "terminating") in rec.seen]
        wait("the evicted pods gone", lambda: all((v, "pod-gone") in rec.seen for v in victims), 60)
        wait("3 pods Ready again", lambda: sum(ready(p) for p in web_pods(api)) == 3, 60)
    time.sleep(TAIL)  # the scenario's own real time: the load goes on this long after it
    end = time.time()
    load.send_signal(signal.SIGTERM)  # genericserver load ends early and still writes its samples
    out, _ = load.communicate(timeout=60)
    out = out.strip().splitlines()[-1] if out.strip() else ""
    rec.finish()
    rec.read_component_logs(t0 - WARMUP)
    got = [json.loads(line) for line in samples.read_text().splitlines()]
    return summarize(scenario, rec, got, t0, end, victims, out.strip(), drain_out)


def summarize(scenario: str, rec: Recorder, samples: list[dict], t0: float, end: float, victims: list[str],
              load_line: str, drain_out: str) -> dict:
    role = {}
    before = sorted((n for n in rec.first_seen if rec.first_seen[n] < t0), key=lambda n: (rec.created[n], n))
    after_t0 = sorted((n for n in rec.first_seen if rec.first_seen[n] >= t0), key=lambda n: (rec.first_seen[n], n))
    for i, name in enumerate(v for v in before if v in victims):
        role[name] = f"old-{i + 1}"
    for i, name in enumerate(v for v in before if v not in victims):
        role[name] = f"kept-{i + 1}"
    for i, name in enumerate(after_t0):
        role[name] = f"new-{i + 1}"
    if len(victims) == 1 and SCENARIOS[scenario]["action"] == "delete":
        role[victims[0]] = "victim"
    events = sorted(({"t": round(at - t0, 3), "pod": role.get(pod, pod), "event": event, **({"detail": d} if d else {})}
                     for at, pod, event, d in rec.events if t0 - 0.001 <= at <= end and pod in role),
                    key=lambda e: e["t"])
    after = [s for s in samples if s["done"] >= t0]
    counts: dict[str, int] = {}
    for s in after:
        counts[s["outcome"]] = counts.get(s["outcome"], 0) + 1
    failures: dict[str, list[float]] = {}
    for s in after:
        if s["outcome"] != "ok":
            failures.setdefault(s["outcome"], []).append(round(s["done"] - t0, 3))
    lost = sum(n for o, n in counts.items() if o != "ok")
    window = end - t0
    return {
        "events": events,
        "graceful_termination": {role.get(p, p): lines for p, lines in sorted(rec.lifecycle.items()) if p in role},
        # lost_seconds: the loss as seconds of the Service's traffic (lost / requests per second), which
        # neither the client's rate nor how long the run went on after t = 0 changes
        "load": {"sent": len(after), "ok": counts.get("ok", 0), "lost": lost, "window": round(window, 3),
                 "lost_percent": round(100 * lost / len(after), 3) if after else 0.0,
                 "lost_seconds": round(lost * window / len(after), 4) if after else 0.0,
                 "outcomes": dict(sorted(counts.items())),
                 "failures": {o: {"first": ts[0], "last": ts[-1], "count": len(ts)} for o, ts in sorted(failures.items())},
                 "client_line": load_line.splitlines()[-1] if load_line else ""},
        **({"drain": drain_out.splitlines()} if drain_out else {}),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), help="only these (default: all)")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    # its watches and its iptables poll are the measurement: ahead of the pods and the load on 2 shared cores
    os.nice(-10)
    lay = node.Layout(ROOT / ".cluster-real")
    if not lay.ready.exists():
        raise SystemExit("the node is not up: make cluster-real (or make parity-node)")
    api = Api(lay)
    out = Path(args.out)
    corpus = json.loads(out.read_text()) if out.exists() else {"scenarios": {}}
    versions = api.get("/version")
    corpus["node"] = {
        "kubernetes": versions["gitVersion"],
        "containerd": subprocess.run(["containerd", "--version"], capture_output=True, text=True).stdout.split()[2],
        "runc": subprocess.run(["runc", "--version"], capture_output=True, text=True).stdout.split()[2],
        "kube-proxy": "iptables mode, default sync periods",
        "cgroups": "v1 (failCgroupV1: false)",
    }
    for scenario in args.scenario or list(SCENARIOS):
        spec = SCENARIOS[scenario]
        runs = []
        for i in range(args.runs):
            print(f"{time.strftime('%H:%M:%S')} {scenario} run {i + 1} of {args.runs}", flush=True)
            result = run_once(api, lay, scenario, lay.node / f"samples-{scenario}-{i}.jsonl")
            print("   " + "; ".join(f"{e['t']:+.3f} {e['pod']} {e['event']}" for e in result["events"]
                                    if e["pod"] in ("victim", "old-1")), flush=True)
            print(f"   {result['load']['client_line']}", flush=True)
            runs.append(result)
        corpus["scenarios"][scenario] = {
            "about": spec["about"], "manifest": f"deploy/{spec['manifest']}", "flags": spec["flags"],
            "action": spec["action"], "grace_period_flag": spec["grace"],
            "deployment": node_variant(scenario),
            "runs": runs,
        }
        out.write_text(json.dumps(corpus, indent=1, sort_keys=False) + "\n")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main(sys.argv[1:]))

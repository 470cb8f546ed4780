"""The fair performance anchor: our chain beside kube-apiserver's own, on the same requests (no Go twin).

Three servers run at once, each a process serving TLS with the test certificate
(``tests/data/localhost-cert.pem``) and the same token file (``reference/pair.py``'s, whose admin
token every request carries), each authorizing with AlwaysAllow:

* ``genericserver serve`` (this project: the default v1.36.0 chain, its in-memory store);
* kube-apiserver v1.36.0 on its etcd (``reference/pair.py``'s ``KubeAPIServer``), with priority and
  fairness off, so that its in-flight limit is ``--max-requests-inflight`` (400, as ours) and its
  chain is the generic chain plus kube's own filters;
* genericserver-go, a ``GenericAPIServer`` of k8s.io/apiserver v0.36.0 (``GenericServerGo``): the
  generic chain without kube's extra filters.

One Go load client (``bench/goload``'s ``load``) measures the servers together: it keeps
connections of its own to each, and sends GETs one at a time per connection, on one and on four
keep-alive HTTP/1.1 connections and on one HTTP/2 connection (``SETTINGS``); each answer must be a
200 with the text the request is about. The requests go through the whole chain on each server:
``/version``, and a GET of a configmap made first on each (``configmaps/NAME``; kube-apiserver reads
it from etcd, since a GET without a resourceVersion is a quorum read; with ``?resourceVersion=0`` it
answers from its watch cache, as ours answers from memory). genericserver-go serves no configmaps, so
it is measured on ``/version`` only. Each number is printed with ours over it, all measured in this
run, in three tables:

* requests per second: the servers take turns of ``SLICE`` until each had ``SECONDS`` of load, so
  that whatever else this shared machine runs meanwhile slows them alike, and each rate is the
  median of a server's turns (a turn the machine gave to something else counts once). Before,
  medians of three rounds, each server loaded for 0.7 s after the other, swung ours over
  kube-apiserver's on ``/version`` from 0.57x to 0.84x on one connection, and from 0.52x to 1.65x
  on four, in three runs. Rates still move with the machine's load (printed): our request path
  hands off between threads (a connection's, the timeout filter's goroutine), and each hand-off
  waits for a core and the GIL, where Go's goroutines share a few threads;
* requests per CPU-second of the server (from ``/proc/PID/stat``; kube-apiserver's with its etcd's,
  which the quorum read costs; less what each uses idle, measured for ``IDLE`` first: kube-apiserver
  about 1% of a core, etcd 0.5%, ours none), every answer counted, the warm-up's too: each server's
  CPU time is its own, so this holds where the machine is busy;
* thread switches a request on ``/version``, each server loaded alone for ``SWITCHES_SECONDS``: how
  often its threads waited (voluntary) and were preempted (involuntary), summed over its threads from
  ``/proc/PID/task/*/status``, less what they do idle. With one connection Go's threads switch as
  often as ours, or more (an idle M sleeps and is woken for each request); with four they hardly
  switch at all, where ours still wait about four times a request (walkthrough 8.8).

Measured on the 2-core development VM, shared with six other developers' suites and a Go build (load
average 10 to 27), in six runs of about 45 s each (ranges over the runs, ours over kube-apiserver's;
one HTTP/1.1 connection, four, one HTTP/2 connection). Per CPU-second: ``/version`` 0.64-0.76x,
0.50-0.60x, 0.38-0.51x; a configmap GET from kube-apiserver's watch cache (``?resourceVersion=0``)
0.78-0.92x, 0.59-0.68x, 0.56-0.65x; one it reads from etcd 2.6-3.0x, 1.7-2.0x, 1.6-1.9x (the read
through etcd costs kube-apiserver and etcd more CPU than our whole request). genericserver-go's
chain costs a little less than kube-apiserver's on ``/version`` (ours over it 0.62-0.70x,
0.47-0.52x, 0.35-0.43x). Per second (the rates, noisier): ``/version`` 0.27-0.65x, 0.48-0.53x,
0.28-0.47x; from the watch cache 0.67-0.83x, 0.52-0.84x, 0.56-0.63x; from etcd 1.9-2.5x, 1.35-1.54x,
1.20-1.47x.

The Go load client is built with ``bench.versus_go``'s toolchain (``GO``, or the one ``make parity``
installs) or else the ``go`` on the path, which ``make reference`` uses. Without the reference
binaries (``make reference`` builds them into ``.reference-bin/``) their columns are skipped with a
line saying so; without any Go toolchain the whole anchor is. Run: ``python -m bench anchor``.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Optional

from bench import versus_go

ROOT = Path(__file__).resolve().parent.parent
SECONDS = 1.5  # of load per server, request and setting
SLICE = 0.1  # the turns the servers take within it
IDLE = 1.0  # seconds to measure what the servers use with no load
SWITCHES_SECONDS = 1.0  # of load on each server alone, and of idle before it, to count thread switches
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# (protocol, connections): kubectl and client-go speak HTTP/2 to kube-apiserver, curl and most
# load balancers' health checks HTTP/1.1
SETTINGS = (("HTTP/1.1", 1), ("HTTP/1.1", 4), ("HTTP/2", 1))
CONFIGMAP = "bench-anchor"
RATIO_LABELS = {"kube-apiserver": "ours/kube", "genericserver-go": "ours/generic-go"}


def _pair():
    """reference/pair.py, which is a script beside the Go modules, not a package."""
    spec = importlib.util.spec_from_file_location("reference_pair", ROOT / "reference" / "pair.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


pair = _pair()

# name -> (how pair.py starts it, the binaries it needs in its BIN folder, .reference-bin/)
REFERENCES = {"kube-apiserver": (pair.KubeAPIServer, ("kube-apiserver", "etcd")),
              "genericserver-go": (pair.GenericServerGo, ("genericserver-go",))}
SERVE_CONFIGMAPS = ("genericserver", "kube-apiserver")  # genericserver-go's configmaps path is a sample watch

# (label, path, the text every answer's body must hold, servers that serve it)
REQUESTS = [
    ("/version", "/version", '"minor": "36"', ("genericserver", "kube-apiserver", "genericserver-go")),
    ("configmap GET", f"/api/v1/namespaces/default/configmaps/{CONFIGMAP}", CONFIGMAP, SERVE_CONFIGMAPS),
    ("configmap GET ?resourceVersion=0", f"/api/v1/namespaces/default/configmaps/{CONFIGMAP}?resourceVersion=0",
     CONFIGMAP, SERVE_CONFIGMAPS),
]


class GenericServer(pair.Program):
    """``genericserver serve`` started as pair.py starts the reference programs: the same
    certificate, token file and readiness wait."""

    name = "genericserver"

    def __init__(self) -> None:
        super().__init__(binary=Path(sys.executable))

    def command(self) -> list[str]:
        return [str(self.binary), "-m", "genericserver", "serve", "--bind-address=127.0.0.1",
                f"--secure-port={self.port}", f"--tls-cert-file={pair.CERT}", f"--tls-private-key-file={pair.KEY}",
                f"--token-auth-file={self.dir / 'tokens.csv'}", "--authorization-mode=AlwaysAllow"]


def go_binary() -> Optional[str]:
    return versus_go.go_binary() or shutil.which(os.environ.get("REF_GO", "go"))


def create_configmap(url: str, wait: float = 30.0) -> None:
    """POST the configmap (kube-apiserver makes the default namespace a moment after it is ready)."""
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIGMAP},
                       "data": {"what": "the fair anchor's configmap"}}).encode()
    ctx = ssl.create_default_context(cafile=str(pair.CERT))
    deadline = time.monotonic() + wait
    while True:
        req = urllib.request.Request(f"{url}/api/v1/namespaces/default/configmaps", data=body, method="POST",
                                     headers={"Authorization": f"Bearer {pair.TOKEN}",
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
                r.read()
                return
        except urllib.error.HTTPError as e:
            if e.code == 409:  # there already
                return
            if e.code != 404 or time.monotonic() > deadline:
                raise RuntimeError(f"creating the configmap on {url}: {e.code} {e.read()[:300]!r}") from e
        time.sleep(0.2)


def cpu_seconds(program: "pair.Program") -> float:
    """The CPU time a server has used, user and system; kube-apiserver's with its etcd's."""
    total = 0.0
    for proc in (program.proc, getattr(getattr(program, "etcd", None), "proc", None)):
        if proc is not None:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime
    return total


def idle_cpu(servers: dict[str, "pair.Program"]) -> dict[str, float]:
    """CPU seconds per second each server uses with no load (kube-apiserver's controllers, etcd)."""
    before, started = {name: cpu_seconds(p) for name, p in servers.items()}, time.monotonic()
    time.sleep(IDLE)
    wall = time.monotonic() - started
    return {name: (cpu_seconds(p) - before[name]) / wall for name, p in servers.items()}


def goload(binary: Path, servers: dict[str, "pair.Program"], path: str, has: str, protocol: str, connections: int,
           seconds: float, turn: float) -> str:
    """What ``bench/goload``'s ``load`` prints for ``path`` on each server, taking turns of ``turn``
    until each had ``seconds``: a line per server, its rate and how many answers it gave."""
    h2 = ["-h2"] if protocol == "HTTP/2" else []
    out = subprocess.run([str(binary), "load", *(a for p in servers.values() for a in ("-url", p.url + path)),
                          "-d", f"{seconds}s", "-slice", f"{turn}s", "-c", str(connections), "-count",
                          "-token", pair.TOKEN, "-ca", str(pair.CERT), "-has", has, *h2],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"goload on {path}: {out.stderr.strip()[-500:]}")
    return out.stdout


def load(binary: Path, servers: dict[str, "pair.Program"], idle: dict[str, float], path: str, has: str,
         protocol: str, connections: int) -> dict[str, tuple[float, float]]:
    """Each server's requests per second (the median of its turns) and requests per CPU-second of
    the server (less what it uses idle), the servers taking turns of SLICE until each had SECONDS."""
    before, started = {name: cpu_seconds(p) for name, p in servers.items()}, time.monotonic()
    out = goload(binary, servers, path, has, protocol, connections, SECONDS, SLICE)
    wall = time.monotonic() - started
    measured = {}
    for (name, program), line in zip(servers.items(), out.splitlines()):
        rate, answers = line.split()
        cpu = cpu_seconds(program) - before[name] - idle[name] * wall
        measured[name] = (float(rate), int(answers) / cpu if cpu > 0 else float("nan"))
    return measured


def thread_switches(pid: int) -> dict[str, tuple[int, int]]:
    """Each thread's context switches so far, (voluntary, involuntary), by thread id: a voluntary one
    is the thread waiting (a read with nothing to read, a lock, the GIL), an involuntary one the
    thread preempted. A thread that ends between two looks is missing from the second."""
    counts = {}
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            lines = status.read_text().splitlines()
        except (FileNotFoundError, ProcessLookupError):  # the thread ended as we looked
            continue
        fields = dict(line.split(":", 1) for line in lines if "ctxt_switches" in line)
        counts[status.parent.name] = (int(fields["voluntary_ctxt_switches"]), int(fields["nonvoluntary_ctxt_switches"]))
    return counts


def switches_between(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> tuple[int, int]:
    """The (voluntary, involuntary) switches of the threads alive at ``after`` since ``before``: a thread
    started meanwhile counts from zero; one that ended meanwhile is lost (the server's goroutine threads
    outlive a gap between requests, so under load none ends)."""
    voluntary = involuntary = 0
    for tid, (v, i) in after.items():
        v0, i0 = before.get(tid, (0, 0))
        voluntary, involuntary = voluntary + v - v0, involuntary + i - i0
    return voluntary, involuntary


def switches_a_request(binary: Path, servers: dict[str, "pair.Program"], protocol: str,
                       connections: int) -> dict[str, tuple[float, float]]:
    """Each server's thread switches a request on ``/version``, (voluntary, involuntary), loaded alone
    for ``SWITCHES_SECONDS`` (a server waiting its turn would count its threads' idle wake-ups);
    less what its threads do idle over the same time (kube-apiserver's controllers and leases)."""
    _, path, has, _ = REQUESTS[0]  # /version
    measured = {}
    for name, program in servers.items():
        pid = program.proc.pid
        idle_before = thread_switches(pid)
        time.sleep(SWITCHES_SECONDS)
        idle = switches_between(idle_before, thread_switches(pid))
        before = thread_switches(pid)
        out = goload(binary, {name: program}, path, has, protocol, connections, SWITCHES_SECONDS, SWITCHES_SECONDS)
        loaded = switches_between(before, thread_switches(pid))
        answers = int(out.split()[1])
        measured[name] = ((loaded[0] - idle[0]) / answers, (loaded[1] - idle[1]) / answers)
    return measured


def report_switches(measured: dict[tuple[str, int], dict[str, tuple[float, float]]], names: list[str]) -> None:
    print(f"  {'thread switches a request, /version':44s}" + "".join(f"{n:>18s}" for n in names))
    for (protocol, connections), row in measured.items():
        plural = "s" if connections > 1 else ""
        cells = [f"{row[n][0]:9.1f} +{row[n][1]:5.1f}  " if n in row else f"{'-':>18s}" for n in names]
        print(f"    {f'{protocol}, {connections} connection{plural}':42s}" + "".join(cells))


def reference_programs() -> dict[str, type]:
    """The reference programs whose binaries are built, by name; a line for each one that is not."""
    programs = {}
    for name, (make, binaries) in REFERENCES.items():
        missing = [b for b in binaries if not (pair.BIN / b).exists()]
        if missing:
            print(f"  {name}: skipped, {', '.join(missing)} not in {pair.BIN}: run `make reference`")
        else:
            programs[name] = make
    return programs


def start_servers(programs: dict[str, type]) -> dict[str, "pair.Program"]:
    """Ours and the given reference programs, each serving, with the configmap made where it is read."""
    servers: dict[str, pair.Program] = {}
    try:
        for name, make in {"genericserver": GenericServer, **programs}.items():
            started = time.perf_counter()
            program = make()
            try:
                program.start()
            except BaseException:
                program.stop()
                raise
            servers[name] = program
            print(f"  {name} serving on {program.url} in {time.perf_counter() - started:.1f} s", flush=True)
        for name, program in servers.items():
            if name in SERVE_CONFIGMAPS:
                create_configmap(program.url)
    except BaseException:
        stop(servers)
        raise
    return servers


def stop(servers: dict[str, "pair.Program"]) -> None:
    for program in servers.values():
        program.stop()


Key = tuple[str, tuple[str, int], str]  # (request label, (protocol, connections), server)


def measure(binary: Path, servers: dict) -> tuple[dict[Key, float], dict[Key, float]]:
    """For each request, setting and server: requests per second, and per CPU-second of the server."""
    idle = idle_cpu(servers)
    rate: dict[Key, float] = {}
    per_cpu: dict[Key, float] = {}
    for setting in SETTINGS:
        for label, path, has, serving in REQUESTS:
            these = {name: servers[name] for name in serving if name in servers}
            for name, (r, c) in load(binary, these, idle, path, has, *setting).items():
                rate[(label, setting, name)], per_cpu[(label, setting, name)] = r, c
    return rate, per_cpu


def _known(value: Optional[float]) -> bool:
    """A number was measured (not missing, and not NaN: no CPU time seen, a clock tick being 10 ms)."""
    return value is not None and not math.isnan(value)


def report(measured: dict[Key, float], names: list[str], unit: str = "req/s") -> None:
    ratios = [other for other in RATIO_LABELS if other in names]
    header = "".join(f"{n:>18s}" for n in names) + "".join(f"{RATIO_LABELS[n]:>18s}" for n in ratios)
    for setting in SETTINGS:
        protocol, connections = setting
        plural = "s" if connections > 1 else ""
        print(f"  {f'{protocol}, {connections} connection{plural}, {unit}':44s}{header}")
        for label, *_ in REQUESTS:
            cells, ours = [], measured.get((label, setting, "genericserver"))
            for name in names:
                value = measured.get((label, setting, name))
                cells.append(f"{value:18.0f}" if _known(value) else f"{'-':>18s}")
            for other in ratios:
                value = measured.get((label, setting, other))
                cells.append(f"{ours / value:17.2f}x" if _known(ours) and _known(value) and value else f"{'-':>18s}")
            print(f"    {label:42s}" + "".join(cells))


def main() -> None:
    print("the fair anchor: our chain beside kube-apiserver's on the same requests, under the same Go load "
          "client (bench/goload); TLS with the test certificate, an admin's bearer token, AlwaysAllow on all;\n"
          "  kube-apiserver v1.36.0 with priority and fairness off (--enable-priority-and-fairness=false: "
          "--max-requests-inflight=400 is its limit, as ours), on an etcd on loopback", flush=True)
    programs = reference_programs()
    if not programs:
        print("  skipped: nothing to compare ours with (run `make reference`)")
        return
    go = go_binary()
    if go is None:
        print("  skipped: no Go toolchain for the load client: install Go (`make reference` needs it too) "
              "or set GO=/path/to/go")
        return
    try:
        binary = versus_go.build(go)
    except versus_go.NoGoload as err:
        print(f"  skipped: {err}")
        return
    servers = start_servers(programs)
    before = os.getloadavg()[0]
    try:
        rate, per_cpu = measure(binary, servers)
        switches = {setting: switches_a_request(binary, servers, *setting) for setting in SETTINGS}
    finally:
        stop(servers)
    # the rates move with what else runs here: Python's threads suffer more from a busy core than Go's
    print(f"  load average {before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores")
    print(f"  each connection sends GETs one at a time, each answer a 200 with what was asked for; {SECONDS:g} s "
          f"of load on each server, in turns of {SLICE * 1000:.0f} ms (the median turn's rate), all servers "
          f"up throughout. kube-apiserver reads a configmap GET from etcd (no resourceVersion: a quorum read), "
          f"one with ?resourceVersion=0 from its watch cache; ours reads both from memory. Ratios over 1x: "
          f"ours is faster.")
    report(rate, list(servers))
    print("  requests per CPU-second of the server (kube-apiserver's with its etcd's; less what each uses idle): "
          "steadier than the rates where the machine is busy, as each server's CPU time is its own")
    report(per_cpu, list(servers), "req/CPU-s")
    print("  how often the server's threads were switched out for each request, waiting (voluntary) + preempted "
          f"(involuntary), each server loaded alone for {SWITCHES_SECONDS:g} s, less its idle switches: Go parks a "
          "goroutine without its thread, where each of our waits is a thread's")
    report_switches(switches, list(servers))


if __name__ == "__main__":
    main()

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

The same Go load client (``bench/goload``, ``load -d``) sends GETs for ``SECONDS`` per measurement,
one at a time per connection, on one and on four keep-alive HTTP/1.1 connections and on one HTTP/2
connection (``SETTINGS``), and each answer must be a 200 with the text the request is about. The requests are ones that go through the whole chain on each server:
``/version``, and a GET of a configmap made first on each (``configmaps/NAME``; kube-apiserver reads it
from etcd, since a GET without a resourceVersion is a quorum read; with ``?resourceVersion=0`` it
answers from its watch cache, as ours answers from memory). genericserver-go serves no configmaps, so
it is measured on ``/version`` only. Rounds alternate between the servers and the medians are
printed with their ratios, all measured in this run.

The Go load client is built with ``bench.versus_go``'s toolchain (``GO``, or the one ``make parity``
installs) or else the ``go`` on the path, which ``make reference`` uses. Without the reference
binaries (``make reference`` builds them into ``.reference-bin/``) their columns are skipped with a
line saying so; without any Go toolchain the whole anchor is. Run: ``python -m bench anchor``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Optional

from bench import versus_go

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 3
SECONDS = 0.7
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


def rate(binary: Path, url: str, has: str, protocol: str, connections: int) -> float:
    h2 = ["-h2"] if protocol == "HTTP/2" else []
    out = subprocess.run([str(binary), "load", "-url", url, "-d", f"{SECONDS}s", "-c", str(connections),
                          "-token", pair.TOKEN, "-ca", str(pair.CERT), "-has", has, *h2],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"goload on {url}: {out.stderr.strip()[-500:]}")
    return float(out.stdout)


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


def measure(binary: Path, servers: dict) -> dict[Key, float]:
    """The median rate of ROUNDS rounds, for each request, setting and server."""
    rows: dict[Key, list[float]] = {}
    for _ in range(ROUNDS):
        for setting in SETTINGS:
            for label, path, has, serving in REQUESTS:
                for name in serving:
                    if name in servers:
                        value = rate(binary, servers[name].url + path, has, *setting)
                        rows.setdefault((label, setting, name), []).append(value)
    return {key: statistics.median(v) for key, v in rows.items()}


def report(medians: dict[Key, float], names: list[str]) -> None:
    ratios = [other for other in RATIO_LABELS if other in names]
    header = "".join(f"{n:>18s}" for n in names) + "".join(f"{RATIO_LABELS[n]:>18s}" for n in ratios)
    for setting in SETTINGS:
        protocol, connections = setting
        plural = "s" if connections > 1 else ""
        print(f"  {f'{protocol}, {connections} connection{plural}, req/s':44s}{header}")
        for label, *_ in REQUESTS:
            cells, ours = [], medians.get((label, setting, "genericserver"))
            for name in names:
                value = medians.get((label, setting, name))
                cells.append(f"{value:18.0f}" if value is not None else f"{'-':>18s}")
            for other in ratios:
                value = medians.get((label, setting, other))
                cells.append(f"{ours / value:17.2f}x" if value and ours else f"{'-':>18s}")
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
    binary = versus_go.build(go)
    servers = start_servers(programs)
    try:
        medians = measure(binary, servers)
    finally:
        stop(servers)
    print(f"  each connection sends GETs one at a time for {SECONDS:g} s, each answer a 200 with what was asked "
          f"for; median of {ROUNDS} rounds, the servers alternating, all up throughout. kube-apiserver reads "
          f"a configmap GET from etcd (no resourceVersion: a quorum read), one with ?resourceVersion=0 from "
          f"its watch cache; ours reads both from memory. Ratios over 1x: ours is faster.")
    report(medians, list(servers))

if __name__ == "__main__":
    main()

"""Our server and its chain beside a bare Go net/http handler, under the same Go load client (no Go twin).

``bench/goload/`` is built with the Go toolchain ``make parity`` installs (``.venv-go-1.27.3``, or
the ``GO`` environment variable): the standard library, and ``golang.org/x/net/http2`` for the
HTTP/2 keep-alive load of ``bench_hops`` (exact versions in its ``go.sum``; the module proxy serves
them the first time, as for ``make reference``). The load client sends GETs one after the other on one keep-alive connection; it measures
a bare Go handler (``goload serve``), our server with a bare WSGI app and our server with the
default v1.36.0 chain, in alternating rounds, and the medians are printed with their ratios to
Go's. Without a toolchain it prints how to get one.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import statistics
import subprocess
from typing import Callable, Optional

ROOT = pathlib.Path(__file__).resolve().parent.parent
GO_REFERENCE = ROOT / ".venv-go-1.27.3" / "bin" / "go"
ROUNDS = 5
REQUESTS = 2000
PATH = "/api/v1/namespaces/default/pods/p1"


def go_binary() -> Optional[str]:
    go = os.environ.get("GO") or (str(GO_REFERENCE) if GO_REFERENCE.exists() else None)
    return shutil.which(go) if go else None


class NoGoload(RuntimeError):
    """goload did not build (no module proxy and x/net not in the module cache, say): the rows
    that need it say so and the others run."""


def build(go: str) -> pathlib.Path:
    from tests.parity.record import BUILD, go_version

    BUILD.mkdir(exist_ok=True)
    binary = BUILD / f"goload-{go_version(go)}"
    # the user's module cache and proxy (x/net), the go.sum's versions, this toolchain only
    env = dict(os.environ, GOTOOLCHAIN="local", GOTELEMETRY="off", CGO_ENABLED="0", GOCACHE=str(BUILD / "cache"))
    out = subprocess.run([go, "build", "-mod=readonly", "-o", str(binary), "."], cwd=ROOT / "bench" / "goload",
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no message"])[-1]
        raise NoGoload(f"bench/goload did not build with {go}: {last}")
    return binary


def rate(binary: pathlib.Path, port: int) -> float:
    out = subprocess.run([str(binary), "load", "-url", f"http://127.0.0.1:{port}{PATH}", "-n", str(REQUESTS)],
                         capture_output=True, text=True, check=True, timeout=120)
    return float(out.stdout)


def report(servers: dict[str, Callable[[], tuple[int, Callable[[], None]]]]) -> None:
    """``servers``: name -> a function that starts one (its port, and a function that stops it)."""
    go = go_binary()
    if go is None:
        print("versus Go: skipped, no Go toolchain: `make parity` installs Go 1.27.3 in .venv-go-1.27.3 "
              "(or set GO=/path/to/go)")
        return
    try:
        binary = build(go)
    except NoGoload as err:
        print(f"versus Go: skipped, {err}")
        return
    bare_go = subprocess.Popen([str(binary), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        go_port = int(bare_go.stdout.readline())  # type: ignore[union-attr]
        rows: dict[str, list[float]] = {"bare Go net/http handler": [], **{name: [] for name in servers}}
        for _ in range(ROUNDS):
            rows["bare Go net/http handler"].append(rate(binary, go_port))
            for name, start in servers.items():
                port, stop = start()
                try:
                    rows[name].append(rate(binary, port))
                finally:
                    stop()
    finally:
        bare_go.stdin.close()  # type: ignore[union-attr]
        bare_go.wait(10)
    medians = {name: statistics.median(v) for name, v in rows.items()}
    go_rate = medians["bare Go net/http handler"]
    print(f"versus Go: the same Go load client (one keep-alive connection, {REQUESTS} GETs; median of {ROUNDS} rounds):")
    for name, value in medians.items():
        print(f"  {name:50s} {value:8.0f} req/s   {value / go_rate:5.2f}x Go's")

"""Our server at a git revision beside the work tree's, under one Go load client: what a change buys per request (no Go twin).

``python -m bench.against REV [SETTING ...]`` (SETTING: ``h1x1``, ``h1x4``, ``h2``; all three by
default). The revision's files (``git archive``) go to a temporary folder, and two ``genericserver
serve`` processes start as :mod:`bench.bench_anchor` starts ours, one importing the revision and
one the work tree (``PYTHONSAFEPATH``, so the current folder does not come first). The anchor's
``load`` then has the two take turns under ``bench/goload`` on ``/version`` and the watch-cache
configmap GET, ``ROUNDS`` times after a warm-up, and each line is the median of the rounds in
microseconds of the server's CPU a request, and work tree over revision. Taking turns under one
load client is what makes a few per cent visible on this VM: two runs of the anchor, minutes apart,
differ by more than that. The same tree against itself came out at 0.98-1.02.

Stop 62 measured with it, among others: the HPACK encoder port against ``60bd0e1`` (HTTP/2, 0.95x);
and, in trees patched for the measurement only, what the timeout filter and its goroutine cost
(walkthrough 8.8). It needs Go for the load client, as the anchor does, not the reference programs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import bench_anchor, versus_go

ROUNDS = 3
SECONDS = 2.0  # of load per server and round
SETTINGS = {"h1x1": ("HTTP/1.1", 1), "h1x4": ("HTTP/1.1", 4), "h2": ("HTTP/2", 1)}
REQUESTS = (("/version", "/version"),
            ("configmap GET ?resourceVersion=0",
             f"/api/v1/namespaces/default/configmaps/{bench_anchor.CONFIGMAP}?resourceVersion=0"))


class TreeServer(bench_anchor.GenericServer):
    """``genericserver serve`` importing the package from ``tree``."""

    def __init__(self, tree: Path) -> None:
        super().__init__()
        self.tree = tree

    def command(self) -> list[str]:
        return ["env", "PYTHONSAFEPATH=1", f"PYTHONPATH={self.tree}", *super().command()]


def export(rev: str, into: Path) -> None:
    """The revision's files, as ``git archive`` gives them, into ``into``."""
    out = subprocess.run(["git", "archive", "--format=tar", rev], cwd=bench_anchor.ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=out.stdout, check=True)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m bench.against REV [h1x1|h1x4|h2 ...]", file=sys.stderr)
        return 2
    rev, settings = argv[0], argv[1:] or list(SETTINGS)
    go = bench_anchor.go_binary()
    if go is None:
        print("against: no Go toolchain for the load client (see bench_anchor)")
        return 1
    binary = versus_go.build(go)
    bench_anchor.SECONDS = SECONDS
    with tempfile.TemporaryDirectory(prefix="bench-against-") as d:
        export(rev, Path(d))
        servers = {rev: TreeServer(Path(d)), "work tree": TreeServer(bench_anchor.ROOT)}
        started: dict = {}
        try:
            for name, server in servers.items():
                server.start()
                started[name] = server
                bench_anchor.create_configmap(server.url)
            idle = {name: 0.0 for name in servers}  # (ours uses no CPU idle: bench_anchor)
            print(f"CPU a request (median of {ROUNDS} rounds of {SECONDS:g} s, taking turns), {rev} and the work tree:")
            for setting in settings:
                protocol, connections = SETTINGS[setting]
                for label, path in REQUESTS:
                    bench_anchor.load(binary, servers, idle, path, "e", protocol, connections)  # warm up
                    us: dict[str, list[float]] = {name: [] for name in servers}
                    for _ in range(ROUNDS):
                        for name, (_rate, per_cpu) in bench_anchor.load(binary, servers, idle, path, "e", protocol,
                                                                          connections).items():
                            us[name].append(1e6 / per_cpu)
                    before, after = (statistics.median(us[name]) for name in servers)
                    print(f"  {protocol}, {connections} conn., {label:34s} {before:7.1f} us  {after:7.1f} us"
                          f"   work tree / {rev}: {after / before:.3f}x", flush=True)
        finally:
            bench_anchor.stop(started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``genericserver load``: steady GETs against a URL for a while, then what they got (no Go twin).

The load-client Job of ``deploy/load-job.yaml`` runs it inside a kind cluster, against the web
Service, while a rollout replaces the pods (walkthrough.md section 6.9). It is the simulated
world's :class:`~genericserver.cluster.loadclient.LoadClient` pointed at a real address: each of
``--workers`` clients sends ``GET`` on a new connection (so every request asks kube-proxy for a
pod), ``--interval`` apart, for ``--duration``. Every ``--report-every`` it prints a progress
line, and at the end one line::

    sent 9876 ok 9876 failed 0 (refused 0, reset 0, 503 0, 429 0, other 0) in 60.0s

SIGTERM ends the run early with the same summary and samples (a Job's pod gets it when deleted; the
real node's recorder stops the load so once the pod is gone); Ctrl-C ends it at once, as any command.
Exit code 0 when nothing failed, 1 when a request failed, 2 for a bad flag. Plain HTTP only, as
our pods serve it (walkthrough 6.9).
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
import urllib.parse
from typing import Any, Optional, TextIO

from genericserver import godur
from genericserver import runtime as rt
from genericserver.cluster.loadclient import LoadClient
from genericserver.options import duration_flag, int_flag

HELP = "send steady GETs to a URL for a while and report how many failed (the load-client Job)"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("load", help=HELP, description=HELP + ".")
    p.add_argument("--url", required=True, help="http://host[:port]/path?query to GET")
    p.add_argument("--duration", type=duration_flag("--duration"), default=60.0, metavar="duration",
                   help="how long to send (a Go duration; default 1m0s)")
    p.add_argument("--workers", type=int_flag("--workers"), default=4, metavar="int", help="concurrent clients (default 4)")
    p.add_argument("--interval", type=duration_flag("--interval"), default=0.01, metavar="duration",
                   help="pause between one client's requests (default 10ms)")
    p.add_argument("--timeout", type=duration_flag("--timeout"), default=5.0, metavar="duration",
                   help="connect and read timeout of one request (default 5s; 0: none)")
    p.add_argument("--report-every", type=duration_flag("--report-every"), default=10.0, metavar="duration",
                   help="print a progress line this often (default 10s; 0: never)")
    p.add_argument("--samples", metavar="FILE", default="",
                   help="also write each request to FILE, one JSON object a line: when it was sent and when its "
                        "outcome happened (seconds since the Unix epoch) and the outcome (the real node's recorder "
                        "reads them: tests/parity/record_node.py)")
    return p


def write_samples(path: str, samples: list, wall_offset: float) -> None:
    """Each sample as a JSON line, its runtime times moved to the wall clock by ``wall_offset``."""
    with open(path, "w") as f:
        for s in sorted(samples, key=lambda s: s.at):
            f.write(json.dumps({"sent": round(s.at + wall_offset, 6), "done": round(s.done + wall_offset, 6),
                                "outcome": s.outcome}) + "\n")


class _StoppedEarly(Exception):
    """SIGTERM arrived: the run ends now, with its summary."""


def _stop_early(signum: int, frame: Any) -> None:
    raise _StoppedEarly()


def summary(counts: dict, elapsed: float) -> str:
    failed = sum(n for o, n in counts.items() if o != "ok")
    parts = ", ".join(f"{o} {counts[o]}" for o in ("refused", "reset", "503", "429", "other"))
    return f"sent {sum(counts.values())} ok {counts['ok']} failed {failed} ({parts}) in {elapsed:.1f}s"


def target(url: str) -> tuple[str, int, str]:
    """(host, port, path with query) of an http:// URL; ValueError naming what is wrong."""
    u = urllib.parse.urlsplit(url)
    if u.scheme != "http" or not u.hostname:
        raise ValueError(f"--url {url!r}: want http://host[:port]/path (plain HTTP, as the pods serve)")
    return u.hostname, u.port or 80, (u.path or "/") + (f"?{u.query}" if u.query else "")


def run(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    out = out if out is not None else sys.stdout
    try:
        host, port, path = target(args.url)
        if args.workers < 1 or args.duration <= 0:
            raise ValueError("--workers must be at least 1 and --duration positive")
        for flag, value in (("--timeout", args.timeout), ("--interval", args.interval), ("--report-every", args.report_every)):
            if value < 0:
                raise ValueError(f"{flag} {godur.format_go_duration(value)} can not be negative")
    except ValueError as err:
        print(f"genericserver load: error: {err}", file=sys.stderr)
        return 2

    def dial(timeout: Optional[float]) -> tuple[socket.socket, str]:
        return socket.create_connection((host, port), timeout=timeout), ""

    # a zero timeout is none, as in Go's http.Client and net.Dialer (Python's would not wait at all)
    client = LoadClient(dial, workers=args.workers, interval=args.interval, path=path, timeout=args.timeout or None,
                        host=host, port=port)
    start = rt.now()
    wall_offset = rt.wall() - start  # the runtime's clock is monotonic; --samples wants the wall clock
    client.start()
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _stop_early)
    except ValueError:
        pass  # not the main thread (a test calling run): no early end by signal
    try:
        end = start + args.duration
        while (left := end - rt.now()) > 0:
            step = min(left, args.report_every) if args.report_every > 0 else left
            rt.sleep(step)
            if args.report_every > 0 and end - rt.now() > 0:
                print(f"  {summary(client.counts(), rt.now() - start)}", file=out, flush=True)
    except _StoppedEarly:
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        client.stop()
    counts = client.counts()
    if args.samples:
        write_samples(args.samples, list(client.samples), wall_offset)
    print(summary(counts, rt.now() - start), file=out, flush=True)
    return 0 if counts["ok"] == sum(counts.values()) else 1

"""``genericserver cluster``: run the pod-termination scenario or the what-if sweep (no Go twin).

The lead's ``genericserver/__main__.py`` wires it: ``add_parser(subparsers)`` registers the
subcommand and its flags, ``run(args)`` runs it and returns the exit code (0, or 1 on a usage
error such as kubectl's flag conflicts). Durations are cluster seconds; ``--time-scale`` runs them
faster (real seconds per cluster second; 1 for one scenario, 0.2 for ``--sweep``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from rich.console import Console

from genericserver.cluster.kubectl import DeleteFlags, KubectlError, complete_delete_flags
from genericserver.cluster.scenario import PRE_STOPS, ScenarioConfig, run_scenario
from genericserver.cluster.sweep import DEFAULT_SWEEP_SCALE, cases, render_sweep, run_sweep
from genericserver.cluster.timeline import render

HELP = "run replicas of the server behind kube-proxy, delete one under load, and show the timeline"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("cluster", help=HELP, description=HELP + ". Durations are cluster seconds.")
    p.add_argument("--replicas", type=int, default=3, help="pods behind the service (default 3)")
    p.add_argument("--roll", action="store_true", help="replace every pod (one new pod, then delete an old one) instead of deleting one")
    g = p.add_argument_group("lags")
    g.add_argument("--endpoints-lag", type=float, default=1.0, metavar="S", help="endpoints controller's processing lag (default 1)")
    g.add_argument("--proxy-lag", type=float, default=1.0, metavar="S", help="kube-proxy's sync lag after the slice changed (default 1)")
    g = p.add_argument_group("the pod")
    g.add_argument("--pre-stop", choices=PRE_STOPS, default="none", help="preStop hook: none, sleep (see --pre-stop-sleep), or contour (Envoy + shutdown-manager)")
    g.add_argument("--pre-stop-sleep", type=int, default=5, metavar="N", help="seconds of the sleep preStop (default 5)")
    g.add_argument("--termination-grace-period", type=int, default=30, metavar="N", help="the pod's terminationGracePeriodSeconds (default 30)")
    g.add_argument("--shutdown-delay", type=float, default=0.0, metavar="S", help="the server's ShutdownDelayDuration (default 0)")
    g.add_argument("--retry-after", action="store_true", help="the server's ShutdownSendRetryAfter mode")
    g.add_argument("--probe-period", type=int, default=1, metavar="N", help="readiness probe period (default 1; 0: no probe)")
    g = p.add_argument_group("kubectl delete")
    g.add_argument("--grace-period", type=int, default=-1, metavar="N", help="kubectl's --grace-period (default -1: the pod's own)")
    g.add_argument("--now", action="store_true", help="kubectl's --now (grace 1)")
    g.add_argument("--force", action="store_true", help="kubectl's --force (with grace 0: remove from the API at once)")
    g = p.add_argument_group("contour envoy shutdown (with --pre-stop contour)")
    g.add_argument("--drain-delay", type=float, default=0.0, metavar="S", help="wait before failing Envoy's health check (default 0)")
    g.add_argument("--check-delay", type=float, default=0.0, metavar="S", help="wait before polling connections (default 0; the seed's Contour had 60)")
    g.add_argument("--check-interval", type=float, default=1.0, metavar="S", help="poll interval of the open connections (default 1)")
    g.add_argument("--min-open-connections", type=int, default=0, metavar="N", help="connections that may stay open (default 0)")
    g = p.add_argument_group("the run")
    g.add_argument("--workers", type=int, default=4, help="concurrent clients (default 4)")
    g.add_argument("--keep-alive", action="store_true", help="clients keep their connections (default: one per request)")
    g.add_argument("--time-scale", type=float, default=None, metavar="X", help="real seconds per cluster second (default 1; 0.2 with --sweep)")
    g.add_argument("--sweep", action="store_true", help="print the what-if table instead (about a minute)")
    return p


def config_from_args(args: argparse.Namespace) -> ScenarioConfig:
    scale = args.time_scale if args.time_scale is not None else (DEFAULT_SWEEP_SCALE if args.sweep else 1.0)
    return ScenarioConfig(
        replicas=args.replicas, endpoints_lag=args.endpoints_lag, proxy_lag=args.proxy_lag, pre_stop=args.pre_stop,
        pre_stop_sleep=args.pre_stop_sleep, shutdown_delay=args.shutdown_delay, retry_after=args.retry_after,
        grace_period=args.termination_grace_period, roll=args.roll,
        delete_flags=DeleteFlags(grace_period=args.grace_period, now=args.now, force=args.force),
        probe_period=args.probe_period, drain_delay=args.drain_delay, check_delay=args.check_delay,
        check_interval=args.check_interval, min_open_connections=args.min_open_connections, scale=scale,
        workers=args.workers, keep_alive=args.keep_alive)


def run(args: argparse.Namespace, console: Optional[Console] = None) -> int:
    if console is None:
        console = Console() if sys.stdout.isatty() else Console(width=120)
    try:
        cfg = config_from_args(args)
        complete_delete_flags(cfg.delete_flags)  # kubectl's usage errors before anything starts
        if cfg.replicas < 1 or cfg.scale <= 0:
            raise ValueError("--replicas must be at least 1 and --time-scale positive")
    except (KubectlError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.sweep:
        console.print(f"Sweep: {len(cases(cfg))} scenarios, "
                      f"time scaled down to {cfg.scale:g} real s per cluster s")
        results = run_sweep(cfg, lambda i, n, r: console.print(f"  [{i}/{n}] lost {r.lost} of {r.total}", style="dim"))
        render_sweep(results, console)
        return 0
    render(run_scenario(cfg), console)
    return 0

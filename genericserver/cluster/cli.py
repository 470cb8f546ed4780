"""``genericserver cluster``: run the pod-termination scenario, a rollout, or the what-if sweep (no Go twin).

``genericserver/cmd.py`` wires it: ``add_parser(subparsers, serve_options)`` registers the subcommand and its
flags, ``run(args)`` runs it and returns the exit code (0; 1 on a usage error such as kubectl's
flag conflicts; 2 for a bad flag value or manifest). Durations are cluster seconds;
``--time-scale`` runs them faster (real seconds per cluster second; 1 for one scenario, 0.2 for
``--sweep``). ``--serve-api --kubeconfig PATH`` serves the cluster to kubectl instead
(:mod:`.apiserver`), with ``serve``'s flags for its API server. ``--manifest FILE`` takes the pod settings from a Deployment manifest
(:mod:`.manifest`) instead of the pod flags; ``--svg FILE`` also draws the run (or the sweep) as
a picture (:mod:`.pictures`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from dataclasses import replace
from typing import Any, Optional

from rich.console import Console

from genericserver.argtypes import at_least, between, writable
from genericserver.cluster.apiview import MAX_NODES, NODE_ADDRESSES
from genericserver.cluster.deployment import DEFAULT_MAX_SURGE, DEFAULT_MAX_UNAVAILABLE, FencepostError, parse_int_or_percent
from genericserver.cluster.kubectl import DeleteFlags, KubectlError, complete_delete_flags
from genericserver.cluster.losses import format_loss
from genericserver.cluster.scenario import PRE_STOPS, ScenarioConfig, run_scenario
from genericserver.cluster.sweep import DEFAULT_SWEEP_SCALE, cases, manifest_cases, render_sweep, run_sweep, sweep_points
from genericserver.cluster.timeline import render

HELP = "run replicas of the server behind kube-proxy, delete one (or roll them) under load, and show the timeline"
# the pod settings: their defaults, and the flags --manifest replaces
POD_DEFAULTS = {"replicas": 3, "pre_stop": "none", "pre_stop_sleep": 5, "termination_grace_period": 30,
                "shutdown_delay": 0.0, "retry_after": False, "probe_period": 1,
                "max_surge": DEFAULT_MAX_SURGE, "max_unavailable": DEFAULT_MAX_UNAVAILABLE}


def int_or_percent(value: str) -> Any:
    """``3`` or ``25%``, as a Deployment's maxSurge/maxUnavailable."""
    try:
        return parse_int_or_percent(int(value) if value.isdigit() else value)
    except FencepostError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_parser(subparsers: Any, serve_options: Any = None) -> argparse.ArgumentParser:
    """The ``cluster`` subcommand; ``serve_options`` (``serve``'s option groups) adds the flags
    of the API server ``--serve-api`` runs."""
    p = subparsers.add_parser("cluster", help=HELP, description=HELP + ". Durations are cluster seconds.")
    p.add_argument("--replicas", type=int, default=None, help="pods behind the service (default 3)")
    p.add_argument("--roll", action="store_true", help="replace every pod as a Deployment's rolling update does, instead of deleting one")
    p.add_argument("--max-surge", type=int_or_percent, default=None, metavar="N|P%",
                   help="with --roll: pods above the replicas during the rollout (default 25%%, rounded up)")
    p.add_argument("--max-unavailable", type=int_or_percent, default=None, metavar="N|P%",
                   help="with --roll: pods below the replicas that may be unavailable (default 25%%, rounded down)")
    p.add_argument("--manifest", metavar="FILE", help="take the pod settings from this Deployment manifest (deploy/deployment.yaml)")
    g = p.add_argument_group("lags")
    g.add_argument("--endpoints-lag", type=at_least(0), default=1.0, metavar="S", help="endpoints controller's processing lag (default 1)")
    g.add_argument("--proxy-lag", type=at_least(0), default=1.0, metavar="S", help="kube-proxy's sync lag after the slice changed (default 1)")
    g = p.add_argument_group("the pod (or --manifest)", "each replica's settings; the API server that --serve-api runs "
                             "takes flags of its own, at the end")
    g.add_argument("--pre-stop", choices=PRE_STOPS, default=None, help="preStop hook: none, sleep (see --pre-stop-sleep), or contour (Envoy + shutdown-manager)")
    g.add_argument("--pre-stop-sleep", type=at_least(0, int), default=None, metavar="N", help="seconds of the sleep preStop (default 5)")
    g.add_argument("--termination-grace-period", type=at_least(0, int), default=None, metavar="N", help="the pod's terminationGracePeriodSeconds (default 30)")
    g.add_argument("--shutdown-delay", type=at_least(0), default=None, metavar="S",
                   help="each pod's server's ShutdownDelayDuration, in cluster seconds (default 0); "
                        "not --shutdown-delay-duration, which is the --serve-api API server's own")
    g.add_argument("--retry-after", action="store_const", const=True, default=None,
                   help="each pod's server's ShutdownSendRetryAfter mode (not --shutdown-send-retry-after, the API server's)")
    g.add_argument("--probe-period", type=at_least(0, int), default=None, metavar="N", help="readiness probe period (default 1; 0: no probe)")
    g = p.add_argument_group("kubectl delete")
    g.add_argument("--grace-period", type=int, default=-1, metavar="N", help="kubectl's --grace-period (default -1: the pod's own)")
    g.add_argument("--now", action="store_true", help="kubectl's --now (grace 1)")
    g.add_argument("--force", action="store_true", help="kubectl's --force (with grace 0: remove from the API at once)")
    g = p.add_argument_group("contour envoy shutdown (with --pre-stop contour)")
    g.add_argument("--drain-delay", type=at_least(0), default=0.0, metavar="S", help="wait before failing Envoy's health check (default 0)")
    g.add_argument("--check-delay", type=at_least(0), default=0.0, metavar="S", help="wait before polling connections (default 0; Contour's shutdown-manager once waited 60)")
    g.add_argument("--check-interval", type=at_least(0, strict=True), default=1.0, metavar="S", help="poll interval of the open connections (default 1)")
    g.add_argument("--min-open-connections", type=at_least(0, int), default=0, metavar="N", help="connections that may stay open (default 0)")
    g.add_argument("--read-only-root-filesystem", action="store_true",
                   help="the shutdown-manager's root filesystem is read-only: the ok file cannot be written (contour#3771)")
    g = p.add_argument_group("the run")
    g.add_argument("--workers", type=int, default=4, help="concurrent clients of the load (default 4; 0: no load, the cluster only)")
    g.add_argument("--interval", type=float, default=0.005, metavar="S",
                   help="each load client's pause between requests, in real seconds: --time-scale leaves it alone (default 0.005)")
    g.add_argument("--keep-alive", action="store_true", help="clients keep their connections (default: one per request)")
    g.add_argument("--time-scale", type=float, default=None, metavar="X", help="real seconds per cluster second (default 1; 0.2 with --sweep)")
    g.add_argument("--sweep", action="store_true", help="print the what-if table instead (about a minute and a half)")
    g.add_argument("--svg", metavar="FILE", help="also draw the run (or, with --sweep, loss against lag) into this SVG file")
    g = p.add_argument_group("kubectl in the room")
    g.add_argument("--serve-api", action="store_true",
                   help="serve the cluster to kubectl (pods, deployments, endpointslices) until SIGTERM or SIGINT, under load, "
                        "instead of one deletion; the API server takes serve's flags below")
    g.add_argument("--kubeconfig", metavar="PATH", help="with --serve-api: write a kubeconfig for it here once it answers")
    g.add_argument("--nodes", type=between(1, MAX_NODES, NODE_ADDRESSES), default=1, metavar="N",
                   help="with --serve-api: nodes node-1...node-N, each with its kubelet; a new pod goes to the schedulable one "
                        "running the fewest (so kubectl drain node-1 moves pods to another; default 1, at most 253)")
    if serve_options is not None:
        serve_options.add_flags(p, whose=" of the API server --serve-api runs (not the pods')")
        p.set_defaults(serve_options=serve_options)
    return p


class UsageError(ValueError):
    """A bad combination of flags: exit code 2."""


def config_from_args(args: argparse.Namespace) -> ScenarioConfig:
    scale = args.time_scale if args.time_scale is not None else (DEFAULT_SWEEP_SCALE if args.sweep else 1.0)
    given = {k: getattr(args, k) for k in POD_DEFAULTS if getattr(args, k, None) is not None}
    pod = {**POD_DEFAULTS, **given}
    base = ScenarioConfig(
        replicas=pod["replicas"], endpoints_lag=args.endpoints_lag, proxy_lag=args.proxy_lag, pre_stop=pod["pre_stop"],
        pre_stop_sleep=pod["pre_stop_sleep"], shutdown_delay=pod["shutdown_delay"], retry_after=pod["retry_after"],
        grace_period=pod["termination_grace_period"], roll=args.roll, max_surge=pod["max_surge"], max_unavailable=pod["max_unavailable"],
        delete_flags=DeleteFlags(grace_period=args.grace_period, now=args.now, force=args.force),
        probe_period=pod["probe_period"], drain_delay=args.drain_delay, check_delay=args.check_delay,
        check_interval=args.check_interval, min_open_connections=args.min_open_connections,
        read_only_root_filesystem=args.read_only_root_filesystem, scale=scale,
        workers=args.workers, interval=args.interval, keep_alive=args.keep_alive)
    if getattr(args, "manifest", None):
        from genericserver.cluster.manifest import config_from_manifest

        if given:
            flag = "--" + next(iter(given)).replace("_", "-")
            raise UsageError(f"{flag} cannot be used with --manifest: the manifest sets the pod")
        return config_from_manifest(args.manifest, base)
    return base


def serve_api(args: argparse.Namespace, cfg: ScenarioConfig, serve: Any) -> int:
    """``--serve-api``: the flags it cannot go with, then :func:`.apiserver.run`."""
    for flag, given in (("--sweep", args.sweep), ("--roll", args.roll), ("--svg", args.svg)):
        if given:
            print(f"error: {flag} cannot be used with --serve-api: kubectl drives the cluster", file=sys.stderr)
            return 2
    cfg = replace(cfg, nodes=args.nodes)
    if not args.kubeconfig:
        print("error: --serve-api needs --kubeconfig PATH: where to write kubectl's configuration", file=sys.stderr)
        return 2
    from genericserver.cluster import apiserver

    if not writable("--kubeconfig", args.kubeconfig):
        return 2
    args.serve_options.logs.read(args)
    return apiserver.run(cfg, args.serve_options, args.kubeconfig, serve)


def default_console() -> Console:
    """The terminal's width; piped, ``COLUMNS`` when it is set (a projector's 60), else 120."""
    if sys.stdout.isatty():
        return Console()
    columns = os.environ.get("COLUMNS", "")
    return Console(width=int(columns) if columns.isdigit() and int(columns) > 0 else 120)


def run(args: argparse.Namespace, console: Optional[Console] = None, serve: Any = None) -> int:
    """Run what the flags ask for; ``serve`` is ``genericserver.cmd.serve``, for ``--serve-api``."""
    if console is None:
        console = default_console()
    from genericserver.cluster.manifest import ManifestError

    try:
        cfg = config_from_args(args)
        complete_delete_flags(cfg.delete_flags)  # kubectl's usage errors before anything starts
        if cfg.replicas < 1 or cfg.scale <= 0:
            raise ValueError("--replicas must be at least 1 and --time-scale positive")
        if cfg.workers < 0 or cfg.interval < 0:
            raise ValueError("--workers and --interval must be 0 or more")
    except (UsageError, ManifestError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (KubectlError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if getattr(args, "serve_api", False):
        return serve_api(args, cfg, serve)
    if getattr(args, "nodes", 1) != 1:
        print("error: --nodes needs --serve-api: the printed runs have one node", file=sys.stderr)
        return 2
    if args.svg:
        # asked, not imported: importing matplotlib costs half a CPU-second, paid only if it draws
        if importlib.util.find_spec("matplotlib") is None:
            print("error: --svg needs matplotlib: pip install 'genericserver[plot]'", file=sys.stderr)
            return 1
        if not writable("--svg", args.svg):
            return 2
    if args.sweep:
        todo = manifest_cases(replace(cfg, roll=True)) if args.manifest else cases(cfg)
        console.print(f"Sweep: {len(todo)} scenarios, time scaled down to {cfg.scale:g} real s per cluster s")
        results = run_sweep(todo, lambda i, n, r: console.print(f"  [{i}/{n}] lost {format_loss(r.outcome)}", style="dim"))
        render_sweep(results, console)
        if args.svg:
            from genericserver.cluster.pictures import draw_sweep

            draw_sweep(sweep_points(results), args.svg, "Requests lost against the lag, for each preStop / delay choice")
            console.print(f"Picture: {args.svg}")
        return 0
    result = run_scenario(cfg)
    render(result, console)
    if args.svg:
        from genericserver.cluster.pictures import draw_timeline

        draw_timeline(result, args.svg)
        console.print(f"Picture: {args.svg}")
    return 0


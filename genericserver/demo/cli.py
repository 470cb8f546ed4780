"""``genericserver demo`` and ``make demo``: both shutdown modes, live and then as tables (no Go twin)."""

from __future__ import annotations

import argparse
import logging
from typing import Any, Optional

from rich.console import Console
from rich.live import Live

from genericserver import runtime as rt
from genericserver.argtypes import at_least, writable
from genericserver.demo.render import LivePanel, report
from genericserver.demo.scenario import Demo, DemoResult, DemoSettings, run_demo

MODES = {"default": False, "retry-after": True}


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "demo",
        help="start a server, put it under load, shut it down, and show every step",
        description="Runs the graceful shutdown twice on a real server in this process: once in the "
        "default mode, once with --shutdown-send-retry-after, and prints the timeline of lifecycle "
        "signals and the answers clients got in each phase.",
    )
    p.add_argument("--svg", metavar="PATH", help="also save the output as an SVG picture")
    p.add_argument("--mode", choices=["default", "retry-after", "both"], default="both", help="which shutdown mode(s) to run (default: both)")
    p.add_argument("--shutdown-delay", type=at_least(0), default=1.5, metavar="SECONDS", help="the server's --shutdown-delay-duration (default 1.5)")
    p.add_argument("--no-live", action="store_true", help="no live view, only the final tables")


def run_mode(console: Console, mode: str, settings: DemoSettings, live: bool) -> DemoResult:
    if not live:
        return run_demo(settings)
    lines: list[tuple[float, str]] = []
    lock = rt.lock()

    def on_event(what: str, at: float) -> None:
        with lock:
            lines.append((at, what))

    demo = Demo(settings, on_event)
    with Live(LivePanel(lines, mode, demo.result), console=console, refresh_per_second=12, transient=True):
        return demo.run()


def run(args: argparse.Namespace, console: Optional[Console] = None) -> int:
    if args.svg and not writable("--svg", args.svg):
        return 2
    console = console or Console(record=bool(args.svg))
    # the tables tell the story; the server's own log is shown after them (DemoResult.log)
    logger = logging.getLogger("genericserver")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        modes = ["default", "retry-after"] if args.mode == "both" else [args.mode]
        for mode in modes:
            settings = DemoSettings(retry_after=MODES[mode], shutdown_delay=args.shutdown_delay)
            console.rule(f"[bold]mode: {mode}" + (" (--shutdown-send-retry-after)" if MODES[mode] else ""))
            result = run_mode(console, mode, settings, live=not args.no_live and console.is_terminal)
            report(console, result, mode)
    finally:
        logger.setLevel(level)
    if args.svg:
        console.save_svg(args.svg, title="genericserver demo")
        console.print(f"saved {args.svg}")
    return 0

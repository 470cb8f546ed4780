"""The ``genericserver serve`` command (no Go twin in apiserver: plays cmd/kube-apiserver/app/server.go).

``serve`` builds the server from kube-apiserver-style flags, installs the sample API
(:mod:`genericserver.sampleapi`), logs ``Serving insecurely on HOST:PORT`` (or ``securely``,
with a certificate) once it listens, and runs until SIGTERM or SIGINT starts the graceful
shutdown; a second signal exits at once with code 1. Exit codes: 0 after a graceful shutdown,
1 when the server fails, 2 for a bad flag or value (one line naming the flag).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from datetime import datetime
from typing import Any, Optional, Sequence

from genericserver import runtime as rt
from genericserver import sampleapi, signal_handler
from genericserver.config import new_config
from genericserver.options import new_server_run_options
from genericserver.serving_options import (
    AuditOptions,
    AuthenticationOptions,
    AuthorizationOptions,
    OptionsError,
    SecureServingOptions,
)

SERVE_DESCRIPTION = """\
Run a generic apiserver with a sample API (configmaps, /echo, /slow) and shut it down the way
kube-apiserver does: on SIGTERM or SIGINT /readyz turns red at once, requests keep being served
for --shutdown-delay-duration, then new requests are refused (or answered 429 with
--shutdown-send-retry-after) while the ones in flight drain. A second signal exits at once."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad flag or value is one line on stderr and exit code 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


class KlogFormatter(logging.Formatter):
    """``I1122 02:15:04.123456   4242 file.py:12] message``: klog's header, so logs read alike."""

    LEVELS = {logging.DEBUG: "I", logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E", logging.CRITICAL: "F"}

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created)
        head = f"{self.LEVELS.get(record.levelno, 'I')}{when:%m%d %H:%M:%S.%f} {os.getpid():>7} {record.filename}:{record.lineno}]"
        text = f"{head} {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def setup_logging(stream: Any = None, level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(KlogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # one access line per request is Go's -v=3; keep the default output readable
    logging.getLogger("genericserver.httplog").setLevel(logging.WARNING)


class ServeOptions:
    """All the option groups of ``serve``."""

    def __init__(self) -> None:
        self.run = new_server_run_options()
        self.serving = SecureServingOptions()
        self.audit = AuditOptions()
        self.authentication = AuthenticationOptions()
        self.authorization = AuthorizationOptions()

    def groups(self) -> list[tuple[str, Any]]:
        return [
            ("Secure serving flags", self.serving),
            ("Generic flags", self.run),
            ("Auditing flags", self.audit),
            ("Authentication flags", self.authentication),
            ("Authorization flags", self.authorization),
        ]

    def add_flags(self, parser: argparse.ArgumentParser) -> None:
        for title, group in self.groups():
            g = parser.add_argument_group(title)
            if group is self.run:
                group.add_universal_flags(g)
            else:
                group.add_flags(g)

    def validate(self) -> list[str]:
        errs: list[str] = []
        for _, group in self.groups():
            errs += group.validate()
        return errs


def add_serve_parser(subparsers: Any) -> ServeOptions:
    opts = ServeOptions()
    p = subparsers.add_parser(
        "serve",
        help="run the server until SIGTERM/SIGINT, then shut down gracefully",
        description=SERVE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    opts.add_flags(p)
    p.set_defaults(serve_options=opts)
    return opts


def build_server(opts: ServeOptions) -> Any:
    """Config from the options, then the server with the sample API installed."""
    config = new_config()
    opts.run.apply_to(config)
    opts.authentication.apply_to(config)
    opts.authorization.apply_to(config)
    opts.audit.apply_to(config)
    opts.serving.apply_to(config)  # binds the listener last, so nothing above can leak it
    server = config.complete().new("genericserver")
    sampleapi.install(server.handler.non_go_restful_mux, min_request_timeout=config.min_request_timeout)
    return server


def serve(opts: ServeOptions, prog: str = "genericserver serve") -> int:
    errs = opts.validate()
    if errs:
        print(f"{prog}: error: {'; '.join(errs)}", file=sys.stderr)
        return 2
    setup_logging()
    log = logging.getLogger("genericserver.cmd")
    try:
        server = build_server(opts)
    except (OptionsError, OSError, ValueError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 1
    ctx = signal_handler.setup_signal_context()
    try:
        server.prepare_run().run_with_context(ctx)
    except Exception as err:
        log.error("%s", err, exc_info=err)
        return 1
    # run_with_context returns once the listener stopped; the HTTPServerStoppedListening line
    # is logged by its own goroutine, which may not have finished yet: let it, before exiting
    for g in rt.THREADS.live():
        if g.name == "listener-stopped":
            g.join(1.0)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = OneLineParser(
        prog="genericserver",
        description="The Kubernetes generic apiserver's graceful shutdown, in Python (k8s.io/apiserver v1.36.0).",
    )
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command", parser_class=OneLineParser)
    add_serve_parser(sub)
    from genericserver.demo import cli as demo_cli

    demo_cli.add_parser(sub)
    from genericserver.cluster import cli as cluster_cli
    from genericserver.cluster import loadcmd

    cluster_cli.add_parser(sub)
    loadcmd.add_parser(sub)
    args = parser.parse_args(argv)
    command = getattr(args, "command", None)
    if command is None:
        parser.print_help()
        return 2
    if command == "serve":
        return serve(args.serve_options)
    if command == "demo":
        return demo_cli.run(args)
    if command == "cluster":
        return cluster_cli.run(args)
    if command == "load":
        return loadcmd.run(args)
    parser.error(f"unknown command {command!r}")
    return 2

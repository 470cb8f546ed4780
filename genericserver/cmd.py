"""The ``genericserver serve`` command (no Go twin in apiserver: plays cmd/kube-apiserver/app/server.go).

``serve`` builds the server from kube-apiserver-style flags, installs the sample API
(:mod:`genericserver.sampleapi`), logs ``Serving insecurely on HOST:PORT`` (or ``securely``,
with a certificate) once it listens, and runs until SIGTERM or SIGINT starts the graceful
shutdown; a second signal exits at once with code 1.

Logging is component-base's: ``-v``/``--v`` sets klog's verbosity (0 by default, as Go's; the
``[graceful-termination]`` lines are logged at 1, so ``--v=1`` shows them, ``--v=3`` adds an
access line per request) and ``--logging-format`` is ``text`` (klog's lines) or ``json``; see
:mod:`genericserver.klog`. ``--version`` prints the version and exits.

The process dies as a Go binary does: a goroutine's panic that nobody recovers (serving that
stops unexpectedly, a post-start or pre-shutdown hook's panic: see :mod:`genericserver.apimachinery.utilruntime`) prints
``panic: ...`` and that goroutine's stack and exits with status 2, and SIGQUIT prints every
goroutine's stack and exits with status 2 (:mod:`genericserver.runtime.goroutines`).

Exit codes: 0 after a graceful shutdown, 1 on a second signal or when the server fails, 2 for
a bad flag or value (one line naming the flag), and 2 for a panic or SIGQUIT, as in Go.

The other commands live beside their code: ``demo`` (:mod:`genericserver.demo.cli`), ``cluster``
and ``load`` (:mod:`genericserver.cluster`), ``fuzz`` and ``replay``
(:mod:`genericserver.testing.hunt`), ``lab`` (:mod:`genericserver.labs.cli`). A lab started in
the current directory (``genericserver lab start NAME``) has its bug switched in for every
command but ``lab`` itself, for the whole process (:func:`genericserver.labs.state.activated`);
``fuzz`` hunts it instead, switching it in for each run it tries, and ``replay`` plays one
variant and says which: its ``--variant``, else the file's, else (a file of the server as it is)
the active lab's bug.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Optional, Sequence

from genericserver import klog, sampleapi, signal_handler
from genericserver import runtime as rt
from genericserver.apimachinery import utilruntime, version
from genericserver.config import new_config
from genericserver.options import LogsOptions, new_server_run_options
from genericserver.runtime import goroutines
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


def setup_logging(stream: Any = None, logging_format: str = "text", verbosity: int = 0) -> None:
    """klog's output on ``stream`` (stderr by default): what ``serve`` sets up before anything logs."""
    klog.setup(stream, logging_format, verbosity)


class ServeOptions:
    """All the option groups of ``serve``."""

    def __init__(self) -> None:
        self.run = new_server_run_options()
        self.serving = SecureServingOptions()
        self.audit = AuditOptions()
        self.authentication = AuthenticationOptions()
        self.authorization = AuthorizationOptions()
        self.logs = LogsOptions()
        self.sample = sampleapi.SampleAPIOptions()

    def groups(self) -> list[tuple[str, Any]]:
        return [
            ("Secure serving flags", self.serving),
            ("Generic flags", self.run),
            ("Auditing flags", self.audit),
            ("Authentication flags", self.authentication),
            ("Authorization flags", self.authorization),
            ("Logs flags", self.logs),
        ]

    def add_flags(self, parser: argparse.ArgumentParser, whose: str = "") -> None:
        """Every group's flags on ``parser``; ``whose`` follows each group's title (``cluster``
        says the flags are its API server's, not its pods')."""
        for title, group in self.groups():
            g = parser.add_argument_group(title + whose)
            if group is self.run:
                group.add_universal_flags(g)
            else:
                group.add_flags(g)

    def validate(self) -> list[str]:
        errs: list[str] = []
        for _, group in self.groups():
            errs += group.validate()
        return errs + self.sample.validate()


def add_serve_parser(subparsers: Any) -> ServeOptions:
    opts = ServeOptions()
    p = subparsers.add_parser(
        "serve",
        help="run the server until SIGTERM/SIGINT, then shut down gracefully",
        description=SERVE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    opts.add_flags(p)
    # serve's own (the cluster's served API server has no sample API to take it)
    opts.sample.add_flags(p.add_argument_group("Sample API flags"))
    version.add_version_flag(p)
    p.set_defaults(serve_options=opts)
    return opts


def install_sample_api(server: Any, config: Any, external_address: str) -> None:
    """What ``serve`` serves: :mod:`genericserver.sampleapi`."""
    sampleapi.install(server.handler.non_go_restful_mux, min_request_timeout=config.min_request_timeout, metrics=server.metrics,
                      external_address=external_address, authorizer=config.authorizer)


def build_server(opts: ServeOptions, install: Callable[[Any, Any, str], None] = install_sample_api,
                 configure: Optional[Callable[[Any], None]] = None) -> Any:
    """Config from the options (then ``configure(config)``, a server of its own's settings), then
    the server with an API installed (``install(server, config, external_address)``; the sample
    API unless given)."""
    config = new_config()
    opts.run.apply_to(config)
    opts.authentication.apply_to(config)
    opts.authorization.apply_to(config)
    opts.audit.apply_to(config)
    if configure is not None:
        configure(config)
    opts.serving.apply_to(config)  # binds the listener last, so nothing above can leak it
    server = config.complete().new("genericserver")
    host, port = config.secure_serving.listener.getsockname()[:2] if config.secure_serving else ("", 0)
    # Go's ExternalAddress: the advertised host and the serving port, which /api names
    install(server, config, f"{host}:{port}")
    opts.sample.apply_to(server)
    return server


def serve(opts: ServeOptions, prog: str = "genericserver serve", install: Callable[[Any, Any, str], None] = install_sample_api,
          built: Optional[Callable[[Any], None]] = None, configure: Optional[Callable[[Any], None]] = None) -> int:
    """Run the server until SIGTERM or SIGINT, then shut it down gracefully; the exit code.
    ``install`` and ``configure`` are :func:`build_server`'s, ``built(server)`` runs before it starts."""
    errs = opts.validate()
    if errs:
        print(f"{prog}: error: {'; '.join(errs)}", file=sys.stderr)
        return 2
    opts.logs.apply()
    # a goroutine's panic that nobody recovered ends this process, as Go's runtime does
    rt.THREADS.on_panic = goroutines.die_of_panic
    try:
        server = build_server(opts, install, configure)
    except (OptionsError, OSError, ValueError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 1
    if built is not None:
        built(server)
    ctx = signal_handler.setup_signal_context()
    try:
        server.prepare_run().run_with_context(ctx)
    except Exception as err:
        # kube-apiserver's main: the error goes to stderr, the exit status is 1
        klog.errorf("%s", err)
        return 1
    except utilruntime.Panic as exc:
        # a panic on the main goroutine (a pre-shutdown hook's, which HandleCrash logs and panics
        # again) ends the process as Go's runtime ends it: the report and exit status 2
        goroutines.die_of_panic("main", exc)
    # run_with_context returned after its own goroutines logged the last shutdown lines; any
    # other server in this process (the cluster's replicas) is not ours to wait for
    return 0


COMMANDS = ("serve", "demo", "cluster", "load", "fuzz", "replay", "lab")


def build_parser(command: Optional[str] = None) -> OneLineParser:
    """The ``genericserver`` command line: every command and its flags (the docs test parses the
    commands the docs show with it). With ``command``, that command's parser alone, so a
    ``serve`` process does not import the cluster, the demo and the labs to start."""
    parser = OneLineParser(
        prog="genericserver",
        description="The Kubernetes generic apiserver's graceful shutdown, in Python (k8s.io/apiserver v1.36.0).",
    )
    version.add_version_flag(parser)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command", parser_class=OneLineParser)
    wanted = (command,) if command in COMMANDS else COMMANDS
    if "serve" in wanted:
        add_serve_parser(sub)
    if "demo" in wanted:
        from genericserver.demo import cli as demo_cli

        demo_cli.add_parser(sub)
    if "cluster" in wanted:
        from genericserver.cluster import cli as cluster_cli

        cluster_cli.add_parser(sub, ServeOptions())
    if "load" in wanted:
        from genericserver.cluster import loadcmd

        loadcmd.add_parser(sub)
    if "fuzz" in wanted or "replay" in wanted:
        from genericserver.testing import hunt

        hunt.add_parsers(sub)
    if "lab" in wanted:
        from genericserver.labs import cli as lab_cli

        lab_cli.add_parser(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    from genericserver.labs import state as lab_state

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    command = getattr(args, "command", None)
    if command is None:
        parser.print_help()
        return 2
    if command == "lab":
        from genericserver.labs import cli as lab_cli

        return lab_cli.run(args)
    try:
        active_lab, bug = lab_state.active_bug(announce=command != "replay")  # replay's variant line says it
    except lab_state.LabStateError as err:
        print(f"genericserver: error: {err}", file=sys.stderr)
        return 2
    if command == "fuzz":
        from genericserver.testing import hunt

        # the hunt switches in the variant it hunts, and only that: it also judges what it found
        # as 'lab check' does, with the bug and on the server as it is
        return hunt.run_fuzz(args, bug.name if active_lab else "")
    if command == "replay":
        from genericserver.testing import hunt

        # the replay switches in the one variant it plays, and says which (its --variant, the
        # file's, or the active lab's bug for a file of the server as it is)
        return hunt.run_replay(args, bug.name if active_lab else "")
    with bug.switched_in():
        if command == "serve":
            args.serve_options.logs.read(args)
            return serve(args.serve_options)
        if command == "demo":
            from genericserver.demo import cli as demo_cli

            return demo_cli.run(args)
        if command == "cluster":
            from genericserver.cluster import cli as cluster_cli

            return cluster_cli.run(args, serve=serve)
        if command == "load":
            from genericserver.cluster import loadcmd

            return loadcmd.run(args)
    parser.error(f"unknown command {command!r}")
    return 2

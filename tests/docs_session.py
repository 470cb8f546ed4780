"""Run the commands docs/workshop.md, walkthrough.md and README.md show, as a room types them (no Go twin).

A *session* is the command blocks under one heading of a document, run in order in one fresh
directory (``deploy/`` and ``genericserver/`` linked in, as in a checkout) with one environment,
as a pair would type them into two terminals. A block of commands that cannot run here says why
in a marker right above it, ``<!-- commands not run: REASON -->`` (a kind cluster, ``make test``
itself); tests/test_docs_run.py fails on a command it cannot run and on a block without one.

How each command runs:

* ``genericserver`` runs in this process (``cmd.main``), so a usage error or a traceback fails
  here; a ``> FILE`` after it gets its output; ``VAR=value`` before it is its environment.
* A command that serves (``serve``, ``cluster --serve-api``) starts in the background, ``&`` or
  not, and serves until ``kill -TERM <pid>``, the next server or the session's end sends it
  SIGTERM: it must exit 0. ``kubectl ... -w`` runs in the background too (the second terminal)
  and must end by itself, exit 0, once its server has gone.
* ``kubectl`` is the official binary of ``.venv/bin``, with the session's ``KUBECONFIG`` and a
  home of its own; it must exit 0. ``curl`` is ``urllib``; ``export`` sets the session's
  environment; ``pytest`` runs in a child process.

What the runner changes, and why (the docs' tolerance; the outputs are compared by
tests/docs_output.py, where the docs mark a number that varies, such as a time, with ``~``):

* time: every ``cluster`` runs at a twentieth of real time (``--time-scale 0.05``, the docs' own
  value replaced) with one load client sending every 50 ms, and ``--sweep`` runs its first and
  last case only (of thirty); a ``serve``'s shutdown delay and watch grace shrink as much, and
  ``demo`` shuts down after 0.4 s instead of 1.5: what a command prints is checked elsewhere,
  here that it runs;
* addresses: ``--secure-port N`` becomes 0 and ``--bind-address 0.0.0.0`` 127.0.0.1 (tests
  bind loopback, on a free port); a path under ``/tmp/`` lands in the session's directory;
* a server without a watch-termination grace gets ``--request-timeout 1s``: a watch open at
  SIGTERM otherwise holds the shutdown for the default 60 s, as it would kube-apiserver's;
* placeholders: ``PORT`` and ``<pid>`` are the running server's, ``NAME`` a pod it serves;
* a ``pytest`` it starts, directly or through ``lab check``, loads no installed plugin by itself
  (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``): the room's tests need none, and Hypothesis's costs a
  quarter of a CPU-second in each process (``lab check`` forks one per bug).
"""

from __future__ import annotations

import io
import os
import pathlib
import re
import shlex
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from typing import Optional

from genericserver import godur
import zygote
from kubectl import KUBECTL
from serverprocess import ServerProcess

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ("docs/workshop.md", "walkthrough.md", "README.md")
NOT_RUN = re.compile(r"^<!-- commands not run: (.+) -->$")
PROGRAMS = ("genericserver", "kubectl", "curl", "kill", "export", "pytest", "make", "python", "kind", "docker")
SERVING = r"Serving (securely|insecurely) on 127\.0\.0\.1:(\d+)"
CLUSTER_READY = r"API server on (127\.0\.0\.1):(\d+); kubeconfig written to"
SCALE, INTERVAL = "0.05", "0.05"


@dataclass
class Command:
    doc: str
    line: int
    text: str  # as typed, continuations joined, the comment cut off


@dataclass
class Block:
    doc: str
    line: int
    not_run: Optional[str]  # the marker's reason
    commands: list[Command]


@dataclass
class Section:
    doc: str
    heading: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.blocks[0].line}"


def is_command(text: str) -> bool:
    words = text.split()
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        words = words[1:]
    return bool(words) and words[0].removeprefix(".venv/bin/") in PROGRAMS


def sections(doc: str) -> list[Section]:
    """The document's headings that have command blocks, each with its blocks in order."""
    lines = (ROOT / doc).read_text().splitlines()
    out: list[Section] = []
    heading, i = "", 0
    while i < len(lines):
        if lines[i].startswith("#"):
            heading = lines[i].lstrip("#").strip()
        if lines[i].startswith("```"):
            j = next(k for k in range(i + 1, len(lines)) if lines[k].startswith("```"))
            above = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            m = NOT_RUN.match(above)
            commands, pending, start = [], "", 0
            for n in range(i + 1, j):
                text = lines[n].strip()
                if not pending:
                    start = n + 1
                text = pending + text
                if text.endswith("\\"):
                    pending = text[:-1].rstrip() + " "
                    continue
                pending = ""
                text = " ".join(shlex.split(text, comments=True, posix=False)) if text else ""
                if is_command(text):
                    commands.append(Command(doc, start, text))
            if commands:
                if not out or out[-1].heading != heading:
                    out.append(Section(doc, heading))
                out[-1].blocks.append(Block(doc, i + 1, m and m.group(1), commands))
            i = j
        i += 1
    return out


class Session:
    """One section's directory, environment, server and watches."""

    def __init__(self, directory: pathlib.Path, monkeypatch) -> None:
        self.dir = directory
        directory.mkdir(parents=True, exist_ok=True)
        for name in ("deploy", "genericserver"):
            (directory / name).symlink_to(ROOT / name)
        monkeypatch.chdir(directory)
        # and for the pytest processes that `pytest` and `lab check` start from here
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        self.monkeypatch = monkeypatch
        self.env = {**os.environ, "HOME": str(directory), "KUBECACHEDIR": str(directory / ".kube-cache"),
                    "GOGC": "400", "PWD": str(directory), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        self.env.pop("KUBECONFIG", None)
        self.server: Optional[ServerProcess] = None
        self.watches: list[Watch] = []
        self.ran: list[str] = []

    # -- the words of a command -------------------------------------------------------------
    def words(self, c: Command) -> list[list[str]]:
        """The command's simple commands (split at ``;`` and ``&&``), placeholders filled in."""
        text = c.text.replace("$PWD", str(self.dir)).replace("<pid>", str(self.server.proc.pid) if self.server else "<pid>")
        if self.server is not None:
            text = re.sub(r"\bPORT\b", str(self.server.port), text)
        text = re.sub(r"(?<![\w.])/tmp/", f"{self.dir}/", text)
        if re.search(r"\bNAME\b", text):
            text = re.sub(r"\bNAME\b", self.a_pod(), text)
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|>")
        lexer.whitespace_split = True
        out, cur = [], []
        for w in lexer:
            if w in (";", "&&"):
                out.append(cur)
                cur = []
            else:
                cur.append(w)
        return [*out, cur] if cur else out

    def a_pod(self) -> str:
        names = self.kubectl(["get", "pods", "-o", "name"]).stdout.split()
        assert names, "NAME: the server has no pods"
        return names[0].split("/")[-1]

    # -- running ---------------------------------------------------------------------------
    def run(self, c: Command) -> None:
        for words in self.words(c):
            env: dict[str, str] = {}
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                k, _, v = words.pop(0).partition("=")
                env[k] = v
            background = words[-1:] == ["&"]
            words = [w for w in words if w != "&"]
            program = words[0].removeprefix(".venv/bin/")
            where = f"{c.doc}:{c.line}: `{c.text}`"
            self.ran.append(" ".join(words))
            if program == "genericserver":
                self.genericserver(words[1:], env, where)
            elif program == "kubectl":
                if background or "-w" in words or "--watch" in words:
                    self.watches.append(Watch(c, [KUBECTL, *words[1:]], {**self.env, **env}))
                else:
                    proc = self.kubectl(words[1:], env)
                    assert proc.returncode == 0, f"{where} exited {proc.returncode}: {proc.stderr}"
            elif program == "export":
                k, _, v = words[1].partition("=")
                self.env[k] = v
            elif program == "curl":
                # curl without -f exits 0 on any answer (a /readyz still 500 before the
                # post-start hooks finish is an answer); only no answer fails it
                url = next(w for w in words[1:] if not w.startswith("-"))
                try:
                    urllib.request.urlopen(url if "://" in url else f"http://{url}", timeout=30).close()
                except urllib.error.HTTPError as answer:
                    answer.close()
            elif program == "kill":
                assert words[1] == "-TERM" and self.server is not None, where
                self.stop_server(where)
            elif program == "pytest":
                proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *words[1:]],
                                      capture_output=True, text=True, env={**self.env, **env}, timeout=120)
                # 0 or 1 (tests ran, passed or failed); 2-5 mean pytest could not run them
                assert proc.returncode in (0, 1), f"{where} exited {proc.returncode}: {proc.stdout[-2000:]}"
            else:
                raise AssertionError(f"{where}: the runner does not know {program!r}; mark the block"
                                     " <!-- commands not run: REASON --> if it cannot run here")

    def kubectl(self, args: list[str], env: Optional[dict] = None) -> subprocess.CompletedProcess:
        return subprocess.run([KUBECTL, *args], capture_output=True, text=True, env={**self.env, **(env or {})}, timeout=120)

    def genericserver(self, argv: list[str], env: dict, where: str) -> None:
        if ">" in argv:
            argv, target = argv[:argv.index(">")], argv[argv.index(">") + 1]
        else:
            target = None
        argv = fit(argv)
        if argv[0] == "serve" or argv[:1] == ["cluster"] and "--serve-api" in argv:
            self.start_server(argv, where)
            return
        if "--break" in argv:
            self.debug(argv, where)
            return
        from genericserver import cmd
        from genericserver.cluster import cli as cluster_cli

        full = cluster_cli.cases
        self.monkeypatch.setattr(cluster_cli, "cases", lambda base: [full(base)[0], full(base)[-1]])
        for k, v in env.items():
            self.monkeypatch.setenv(k, v)
        out, err = io.StringIO(), io.StringIO()
        try:
            with redirect_stdout(out), redirect_stderr(err):
                try:
                    code = cmd.main(argv)
                except SystemExit as exc:  # argparse's usage error
                    code = exc.code
        finally:
            for k in env:
                self.monkeypatch.delenv(k)
            self.monkeypatch.setattr(cluster_cli, "cases", full)
        assert code in (0, 1), f"{where} exited {code}: {err.getvalue()}"
        assert "Traceback" not in err.getvalue(), f"{where}: {err.getvalue()}"
        if target is not None:
            (self.dir / target).write_text(out.getvalue())

    def debug(self, argv: list[str], where: str) -> None:
        """``--break``: at the debugger's prompt, two of the commands the workshop has the room type
        (``p rt.now()``, ``goroutines``), then ``c``; it must have stopped there."""
        proc = zygote.Process(argv, env=self.env, input="p rt.now()\ngoroutines\nc\n")
        out, err = proc.communicate(120)
        assert proc.returncode in (0, 1) and "(Pdb)" in out, f"{where} exited {proc.returncode}: {out}{err}"

    def start_server(self, argv: list[str], where: str) -> None:
        if self.server is not None:
            self.stop_server(where)
        command = ("serve",) if argv[0] == "serve" else ("cluster",)
        self.server = ServerProcess(*argv[1:], command=command, ready=SERVING if argv[0] == "serve" else CLUSTER_READY)

    def stop_server(self, where: str) -> None:
        assert self.server is not None
        self.server.signal(signal.SIGTERM)
        code = self.server.wait()
        self.server = None
        assert code == 0, f"{where}: the server exited {code}"

    def close(self) -> None:
        """SIGTERM the server; every watch must then end by itself, exit 0."""
        try:
            if self.server is not None:
                self.stop_server("the session's end")
            for w in self.watches:
                w.ended()
        finally:
            for w in self.watches:
                w.close()
            if self.server is not None:
                self.server.kill()


class Watch:
    """``kubectl ... -w`` in the second terminal, run at ``-v=6`` so that its log says when the
    watch request has its 200 (a person sees the list, then waits): only then does the session
    go on, so a SIGTERM never comes before the watch it is meant to end."""

    def __init__(self, c: Command, argv: list[str], env: dict) -> None:
        self.command = c
        self.proc = subprocess.Popen([*argv, "-v=6"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert self.proc.stderr is not None
        log = []
        for line in self.proc.stderr:
            log.append(line)
            if "watch=true" in line and "200 OK" in line:
                break
        else:
            raise AssertionError(f"{c.doc}:{c.line}: `{c.text}` never watched: {''.join(log)}")

    def ended(self) -> None:
        c = self.command
        try:
            # what the watch prints after its first line is read to the end, so it never blocks
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{c.doc}:{c.line}: `{c.text}` still running after its server exited")
        assert self.proc.returncode == 0, f"{c.doc}:{c.line}: `{c.text}` exited {self.proc.returncode}: {err}"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def run_section(section: Section, directory: pathlib.Path, monkeypatch) -> list[str]:
    """Run the section's blocks that are not marked; the commands run, as run."""
    session = Session(directory, monkeypatch)
    try:
        for block in section.blocks:
            if block.not_run is None:
                for command in block.commands:
                    session.run(command)
    finally:
        session.close()
    return session.ran


def fit(argv: list[str]) -> list[str]:
    """The runner's changes to a ``genericserver`` command (see the module docstring)."""
    argv = list(argv)

    def put(flag: str, value: str) -> None:
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv.extend([flag, value])

    if "--secure-port" in argv:
        put("--secure-port", "0")
    if "--bind-address" in argv:
        put("--bind-address", "127.0.0.1")
    if argv[:1] == ["serve"]:
        for flag in ("--shutdown-delay-duration", "--shutdown-watch-termination-grace-period"):
            if flag in argv:
                put(flag, f"{godur.parse_go_duration(argv[argv.index(flag) + 1])[0] * float(SCALE):g}s")
    if argv[:1] == ["demo"] and "--shutdown-delay" not in argv:
        argv.extend(["--shutdown-delay", "0.4"])
    serves = argv[:1] == ["serve"] or argv[:1] == ["cluster"] and "--serve-api" in argv
    if serves and "--shutdown-watch-termination-grace-period" not in argv and "--request-timeout" not in argv:
        argv.extend(["--request-timeout", "1s"])
    if argv[:1] == ["cluster"]:
        put("--time-scale", SCALE)
        for flag, value in (("--workers", "1"), ("--interval", INTERVAL)):
            if flag not in argv:
                argv.extend([flag, value])
    return argv

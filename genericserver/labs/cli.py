"""The ``genericserver lab`` command: list, show, start, new-test, hint, check, solution, stop (no Go twin).

``start NAME`` makes the lab active in the current directory (:mod:`genericserver.labs.state`)
and prints what the learner needs: the story and its upstream links, the Go file and function
to open and the Python twin beside it (file and line), the tools with the exact commands, and
the task; a what-if lab also writes its exercise file here. ``new-test FILE`` writes a starter
test for a lab whose answer is a test (:mod:`genericserver.labs.starter`). ``check FILE`` judges an answer
(:mod:`genericserver.labs.check`), ``hint`` and ``solution`` help, ``stop`` ends the lab. Text is
wrapped to the terminal, at most 78 columns, so it reads on a projector at 60.

Exit status: 0, or for ``check`` 0 when the answer is right and 1 when not; 2 for an unknown lab,
a file the check cannot read, or ``check``/``hint``/``solution`` with no lab active or named.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import sys
import textwrap
from typing import Any, Callable, Optional

from genericserver.labs import state
from genericserver.labs.check import LabCheckError, check
from genericserver.labs.gosource import offline
from genericserver.labs.registry import LABS, Lab, lab
from genericserver.labs.starter import has_starter, starter
from genericserver.testing.variants import variant

PYTEST_PLUGIN = "-p genericserver.labs.pytest_plugin"


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "lab", help="workshop labs: bug hunts from the shutdown's real history",
        description="Bug hunts from the real history of kube-apiserver, the kubelet, kubectl and Contour, "
                    "and a what-if exercise. 'start' switches a lab's bug in for everything run from this "
                    "directory; 'check FILE' says whether your test catches it.")
    sub = p.add_subparsers(dest="lab_command", metavar="ACTION", parser_class=type(p))
    sub.add_parser("list", help="the labs (the default); * marks the active one")
    for action, text in (("show", "a lab's story, Go file, tools and task, without starting it"),
                         ("start", "start a lab: switch its bug in for what runs from this directory")):
        sub.add_parser(action, help=text).add_argument("name", metavar="NAME")
    for action, text in (("hint", "a hint for the active (or named) lab"),
                         ("solution", "print the project's answer file")):
        sub.add_parser(action, help=text).add_argument("name", metavar="NAME", nargs="?")
    n = sub.add_parser("new-test", help="write a starter test for the active (or named) lab: its imports, "
                                         "its set-up, one placeholder assertion to replace")
    n.add_argument("file", metavar="FILE")
    n.add_argument("--lab", default=None, metavar="NAME", help="a starter for this lab instead of the active one")
    c = sub.add_parser("check", help="does FILE catch the bug? (a test file, a replay file or, what-if, a manifest)")
    c.add_argument("file", metavar="FILE")
    c.add_argument("--lab", default=None, metavar="NAME", help="check against this lab instead of the active one")
    sub.add_parser("stop", help="stop the active lab: the server is itself again")


def width() -> int:
    return max(40, min(78, shutil.get_terminal_size((80, 24)).columns - 1))


def wrap(text: str, indent: str = "", first: Optional[str] = None) -> str:
    return textwrap.fill(text, width(), initial_indent=first if first is not None else indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def short(url: str) -> str:
    """``https://github.com/kubernetes/kubernetes/pull/88911`` -> ``kubernetes#88911``."""
    parts = url.rstrip("/").split("/")
    return f"{parts[-3]}#{parts[-1]}" if len(parts) >= 4 and parts[-2] in ("pull", "issues") else url


def run(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    action = args.lab_command or "list"
    try:
        if action == "list":
            return list_labs(out)
        if action == "check":
            return check_file(args.file, args.lab, out)
        if action == "new-test":
            return new_test(args.file, args.lab, out)
        if action == "stop":
            name = state.remove()
            if name == "":
                out(f"removed an unreadable {state.STATE_FILE}: the server is itself again")
            else:
                out(f"lab {name} stopped: the server is itself again" if name else "no lab was active here")
            return 0
        name = args.name
        if name is None:
            name = state.active_lab()
            if name is None:
                return _error(f"lab {action}: no lab is active here: name one, or 'genericserver lab start NAME'")
        the_lab = lab(name)
    except KeyError as err:
        return _error(f"lab: no lab called {err.args[0]!r}: 'genericserver lab list' shows them")
    except (state.LabStateError, LabCheckError) as err:
        return _error(f"lab {action}: {err}")
    if action == "show":
        out(describe(the_lab))
    elif action == "start":
        start(the_lab, out)
    elif action == "hint":
        out(wrap(the_lab.hint, "  ", "Hint: "))
    elif action == "solution":
        # the file alone on stdout, so that 'genericserver lab solution NAME > FILE' gives a file that runs
        print(f"genericserver lab solution: {the_lab.answer_path}", file=sys.stderr)
        out(the_lab.answer_path.read_text().rstrip("\n"))
    return 0


def _error(message: str) -> int:
    print(f"genericserver {message}", file=sys.stderr)
    return 2


def list_labs(out: Callable[[str], None]) -> int:
    active = state.active_lab()
    out(f"{len(LABS)} labs: genericserver lab start NAME  (* active)")
    for n, the_lab in enumerate(LABS, 1):
        mark = "*" if the_lab.name == active else " "
        out(f"{mark}{n:2d} {the_lab.name}" + ("  (what-if)" if not the_lab.variant else ""))
        out(wrap(f"{the_lab.title} ({', '.join(short(u) for u in the_lab.upstream)})", "     "))
    return 0


def describe(the_lab: Lab) -> str:
    """Everything a learner needs to start: story, links, Go and Python, tools, task."""
    lines = [f"{the_lab.name} ({the_lab.kind})", wrap(the_lab.title), "", wrap(the_lab.story), "", "Upstream:"]
    lines += [f"  {url}" for url in the_lab.upstream]
    lines += ["", "Open the Go source:", wrap(the_lab.go_file, "  "), wrap(the_lab.go_function, "  "), wrap(the_lab.go_url, "  ")]
    copy = offline(the_lab.go_url)
    if copy is not None:
        lines += [wrap(f"offline: {copy} (make go-source, in the clone)", "  ")]
    lines += ["Beside it, the Python:", wrap(str(the_lab.python), "  "), "", "Tools:"]
    brk = the_lab.breakpoint.location() if the_lab.breakpoint is not None else ""
    lines += [wrap(tool.replace("{break}", brk), "      ", "  ") for tool in the_lab.tools]
    lines += ["", wrap(the_lab.task, "  ", "Task: ")]
    if the_lab.variant:
        files = "a test file" if variant(the_lab.variant).kind == "cluster" else "a test file, or a replay file"
        lines += [wrap(f"genericserver lab check FILE ({files}); to run your test with the "
                       f"bug: pytest {PYTEST_PLUGIN} FILE", "  ", "Check: ")]
    else:
        lines += [wrap(f"genericserver lab check {the_lab.exercise}", "  ", "Check: ")]
    lines += [wrap("genericserver lab hint; the project's answer: genericserver lab solution", "  ", "Stuck? ")]
    return "\n".join(lines)


def start(the_lab: Lab, out: Callable[[str], None]) -> None:
    previous = state.active_lab()
    if previous and previous != the_lab.name:
        out(f"lab {previous} stopped")
    state.write(the_lab.name)
    if the_lab.variant:
        out(wrap(f"lab {the_lab.name} started: its bug is switched in for what runs from this directory "
                 f"(genericserver demo, serve, cluster, fuzz, replay; pytest {PYTEST_PLUGIN}) "
                 "until 'genericserver lab stop'."))
    else:
        out(wrap(f"lab {the_lab.name} started: nothing is switched in; the exercise is a file."))
        exercise = the_lab.exercise_path
        assert exercise is not None
        target = state.state_path().parent / the_lab.exercise
        if target.exists():
            out(wrap(f"{the_lab.exercise} is already here: kept as it is."))
        else:
            shutil.copyfile(exercise, target)
            out(wrap(f"wrote {the_lab.exercise}: edit it until the check passes."))
    if has_starter(the_lab):
        out(wrap("'genericserver lab new-test test_mine.py' writes a starter test: the imports and "
                 "set-up this lab needs and one placeholder assertion to replace with yours."))
    out("")
    out(describe(the_lab))


def new_test(path: str, name: Optional[str], out: Callable[[str], None]) -> int:
    name = name or state.active_lab()
    if name is None:
        return _error("lab new-test: no lab is active here: 'genericserver lab start NAME', or --lab NAME")
    the_lab = lab(name)
    if not has_starter(the_lab):
        kind = "a manifest (the exercise file 'lab start' wrote)" if not the_lab.variant else \
            "a replay file: 'genericserver fuzz --variant " + the_lab.variant + " --out FILE' hunts one"
        return _error(f"lab new-test: lab {name}'s answer is {kind}, not a test file")
    target = pathlib.Path(path)
    if target.exists():
        return _error(f"lab new-test: {path} exists: name a new file")
    target.write_text(starter(the_lab))
    out(wrap(f"wrote {path}: replace its placeholder assertion with what the task asks, then "
             f"'pytest {PYTEST_PLUGIN} {path}' runs it with the bug and 'genericserver lab check {path}' judges it."))
    return 0


def check_file(path: str, name: Optional[str], out: Callable[[str], None]) -> int:
    name = name or state.active_lab()
    if name is None:
        return _error("lab check: no lab is active here: 'genericserver lab start NAME', or --lab NAME")
    verdict = check(lab(name), path)
    for line in verdict.lines():
        out(wrap(line, "      ", "") if line.startswith("  ") else wrap(line, "  ", ""))
    return 0 if verdict.caught else 1

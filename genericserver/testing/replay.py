"""Replaying a fuzzing failure: save it, print a one-line command, run it again exactly (no Go twin).

A run is fully determined by (scenario, schedule, variant): the simulation reads no real time.
When a property finds a violated invariant, :func:`check_run` writes those three to a JSON file
under ``replays/`` (or ``$GENERICSERVER_REPLAYS``) and fails with the scenario, the schedule
(its non-zero entries by position, ``{17: 2, 40: 1}``), the violations and the command that
replays it, with the interpreter that ran the test::

    python -m genericserver.testing.replay replays/3f2a9c1d.json            # timeline + violations
    python -m genericserver.testing.replay replays/3f2a9c1d.json --trace    # + every scheduling decision
    python -m genericserver.testing.replay replays/3f2a9c1d.json --break genericserver/filters/waitgroup.py:51

The same command replays a linearizability failure (a ``lincheck-*.json`` file written by
:mod:`genericserver.testing.lincheck`): it prints the history, one column per goroutine, and
whether an order of it fits the model.

``--break FILE:LINE`` stops in pdb in whichever goroutine reaches that line (each goroutine is a
real thread; the others wait for the baton, so nothing moves while you look around). FILE is a
path, or the end of one under ``genericserver/`` in whole folder names (``genericapiserver.py``,
``filters/waitgroup.py``), which the command names in full before the run. As pdb says when a
breakpoint cannot be set, the run's last line says when FILE names no file or several, or LINE
is past the end or has no code; or that no goroutine reached it, and when the variant replaces
the function the line is in, that this is why (:func:`find_breakpoint`, :func:`breakpoint_said`).
``goroutines`` at the prompt lists them all, each with its state and its line
(:mod:`genericserver.testing.debugger`). The
simulation switches its watchdog off under a debugger and never reads real time, so the run
ends the same way however long you stay at the prompt. ``breakpoint()`` in any server code
works the same way.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import inspect
import json
import os
import pathlib
import sys
import textwrap
import threading
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from genericserver.testing import lincheck
from genericserver.testing.choosers import compact
from genericserver.testing.debugger import prompt_at
from genericserver.testing.invariants import PHASE_ABBREVIATIONS, Violation, check
from genericserver.testing.scenario import Run, Scenario, run_scenario
from genericserver.testing.sim import format_trace
from genericserver.testing.variants import variant as make_variant

REPLAY_DIR_ENV = "GENERICSERVER_REPLAYS"


class InvariantViolation(AssertionError):
    """A run broke an invariant; the message says how to replay it."""

    def __init__(self, message: str, path: pathlib.Path, violations: list[Violation]):
        super().__init__(message)
        self.path, self.violations = path, violations


def replay_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get(REPLAY_DIR_ENV) or "replays")


def trim(schedule: list[int]) -> list[int]:
    """``schedule`` without trailing zeros: Scripted picks 0 once the list runs out anyway."""
    schedule = list(schedule)
    while schedule and schedule[-1] == 0:
        schedule.pop()
    return schedule


def to_json(scenario: Scenario, schedule: list[int], variant: str = "real", violations: Optional[list[Violation]] = None) -> str:
    doc = {"variant": variant, "schedule": trim(schedule), "scenario": scenario.to_dict()}
    if violations:
        doc["violations"] = [str(v) for v in violations]
    return json.dumps(doc, indent=1, sort_keys=True)


def save(run: Run, violations: list[Violation], directory: Optional[pathlib.Path] = None) -> pathlib.Path:
    """Write the run's (scenario, schedule, variant) to a file named after its content."""
    text = to_json(run.scenario, run.schedule, run.variant, violations)
    key = hashlib.sha256(to_json(run.scenario, run.schedule, run.variant).encode()).hexdigest()[:12]
    directory = directory or replay_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{key}.json"
    path.write_text(text + "\n")
    return path


class NotAReplay(ValueError):
    """The file is not a replay file (the message names it and what is wrong): a command says
    so in one line instead of a traceback."""


def read(path: os.PathLike | str) -> dict:
    """A replay file's document (a lifecycle run's, or lincheck's); :class:`NotAReplay` if it is
    not one."""
    try:
        doc = json.loads(pathlib.Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise NotAReplay(f"{path}: not a replay file: {err}") from None
    if not isinstance(doc, dict) or not ("lincheck" in doc or {"scenario", "schedule"} <= doc.keys()):
        raise NotAReplay(f"{path}: not a replay file: it has no scenario and schedule")
    return doc


def load(path: os.PathLike | str) -> tuple[Scenario, list[int], str]:
    return _lifecycle_run(read(path), path)


def _lifecycle_run(doc: dict, path: os.PathLike | str) -> tuple[Scenario, list[int], str]:
    """A lifecycle replay's (scenario, schedule, variant), from the document :func:`read` gave."""
    try:
        return Scenario.from_dict(doc["scenario"]), [int(c) for c in doc["schedule"]], doc.get("variant", "real")
    except (KeyError, TypeError, ValueError) as err:
        raise NotAReplay(f"{path}: not a replay file: its scenario or schedule does not read ({err!r})") from None


def command(path: pathlib.Path) -> str:
    """The command that replays ``path``, with the interpreter running now (a venv's, say)."""
    return f"{sys.executable} -m genericserver.testing.replay {path}"


def event_order(run: Run) -> tuple:
    """The order of the run's recorded events, as (kind, name, request): what "distinct
    interleavings" counts for the lifecycle fuzzer."""
    return tuple((e.kind, e.name, e.fields.get("rid", "")) for e in run.events)


def check_run(run: Run, family: str = "lifecycle") -> None:
    """Raise :class:`InvariantViolation` (saving a replay file) if ``run`` breaks an invariant.

    The run's event order is counted in :data:`genericserver.testing.lincheck.coverage` under
    ``family`` (``make fuzz`` prints how many distinct ones each family explored).
    """
    lincheck.coverage.add_order(family, event_order(run))
    violations = check(run)
    if not violations:
        return
    path = save(run, violations)
    lines = [
        f"{len(violations)} invariant violation(s) in a {run.scenario.mode}-mode run"
        + ("" if run.variant == "real" else f" of variant {run.variant!r}") + ":",
        *[f"  - {v}" for v in violations],
        f"scenario: {run.scenario!r}",
        f"schedule: {compact(run.schedule)} ({sum(1 for c in run.schedule if c)} non-zero entries, {run.decisions} decisions)",
        f"replay:   {command(path)}",
    ]
    raise InvariantViolation("\n".join(lines), path, violations)


def replay(path: os.PathLike | str, *, watchdog: Optional[float] = 10.0) -> Run:
    scenario, schedule, variant = load(path)
    return run_scenario(scenario, schedule, make_variant(variant), watchdog=watchdog)


REQUESTS_LEGEND = textwrap.fill(
    "(the scenario's server serves no pods: a test app under /api/ answers every request, after its ?d= "
    "seconds; a request is named as a pod get (p0 for request 0), a watch or a configmap create only so that "
    "the server's filters classify it as they would a real one: long-running, mutating, exempt)", 100)


def format_events(run: Run) -> str:
    """The event stream as a timeline, one event a line."""
    lines = []
    for e in run.events:
        fields = " ".join(f"{k}={_short(v)}" for k, v in e.fields.items() if v not in (None, "", ()))
        lines.append(f"{e.seq:5d} {e.at:10.3f}  {e.kind:<9} {e.name:<28} {fields}".rstrip())
    return "\n".join(lines)


def _short(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ",".join(PHASE_ABBREVIATIONS.get(p, p) for p in value) + "]"
    text = str(value).replace("\n", "\\n")
    return text if len(text) <= 60 else text[:57] + "..."


PACKAGE_TREE = pathlib.Path(__file__).resolve().parent.parent.parent  # the folder genericserver/ is in


@dataclass
class Breakpoint:
    """Where ``--break FILE:LINE`` stops: what was asked, the file it names (None when it names
    none), why it cannot be set ("" when it can), and how many times a goroutine reached it.

    pdb says at once when a breakpoint cannot be set; a run that never stops, for a line that
    is not there or never runs, would leave a learner waiting for a prompt that never comes."""

    asked: str
    line: int
    path: Optional[pathlib.Path] = None
    problem: str = ""
    hits: int = 0

    @property
    def shown(self) -> str:
        """``genericserver/x.py:LINE`` for a file of this package, else the path as resolved."""
        if self.path is None:
            return self.asked
        try:
            where = self.path.relative_to(PACKAGE_TREE).as_posix()
        except ValueError:
            where = str(self.path)
        return f"{where}:{self.line}"


def find_breakpoint(value: str) -> Breakpoint:
    """``FILE:LINE`` resolved: FILE is a path here, or the end of one in this package, whole
    folder names only (``genericapiserver.py``, ``filters/waitgroup.py``); it must name one file,
    and LINE a line of it with code. ``problem`` says why not."""
    filename, _, line = value.rpartition(":")
    bp = Breakpoint(value, int(line))
    if os.path.isfile(filename):
        bp.path = pathlib.Path(filename).resolve()
    else:
        parts = pathlib.PurePath(os.path.normpath(filename)).parts
        found = sorted(f for f in PACKAGE_TREE.glob("genericserver/**/*.py")
                       if f.relative_to(PACKAGE_TREE).parts[-len(parts):] == parts)
        if not found:
            bp.problem = f"no file {filename} here or in genericserver/"
            return bp
        if len(found) > 1:
            names = [f.relative_to(PACKAGE_TREE).as_posix() for f in found]
            more = f" and {len(names) - 3} more" if len(names) > 3 else ""
            bp.problem = f"{filename} is {len(names)} files ({', '.join(names[:3])}{more}): name its folder too"
            return bp
        bp.path = found[0]
    try:
        source = bp.path.read_text()
        lines = code_lines(compile(source, str(bp.path), "exec"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as err:
        bp.problem = f"{bp.path.name} is not a Python file it can read ({type(err).__name__})"
        return bp
    count = len(source.splitlines())
    if bp.line > count:
        bp.problem = f"{bp.shown.rpartition(':')[0]} has {count} lines"
    elif bp.line not in lines:
        after = min((n for n in lines if n > bp.line), default=None)
        bp.problem = (f"line {bp.line} has no code to stop at (a blank line, a comment or a docstring)"
                      + (f"; the next line with code is {after}" if after else ""))
    return bp


def code_lines(code: types.CodeType) -> set[int]:
    """Every line that has code in ``code`` and the functions and classes inside it."""
    lines: set[int] = set()
    todo = [code]
    while todo:
        c = todo.pop()
        lines.update(n for _, _, n in c.co_lines() if n is not None)
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return lines


def never_reached(bp: Breakpoint, variant: Any) -> str:
    """Why ``bp`` may not have been reached: the function it is in is one ``variant`` replaces
    (a method of a class, or a function a module looks up), so the run never enters it."""
    names = enclosing_functions(bp)
    for owner, attr, _ in variant.patches():
        name = f"{owner.__qualname__}.{attr}" if inspect.isclass(owner) else attr
        if name in names:
            return f" - the variant {variant.name} replaces {name}, the function it is in"
    for name in names:  # replaced for the whole process (a lab started here: cmd.main)
        elsewhere = _replaced_from(bp, name)
        if elsewhere:
            return f" - {name}, the function it is in, is replaced in this process by one in {elsewhere} (a lab's bug?)"
    return " - no goroutine ran that line"


def _replaced_from(bp: Breakpoint, qualname: str) -> str:
    """The file of the function that stands in ``qualname``'s place now, if not ``bp``'s own."""
    assert bp.path is not None
    try:
        module = ".".join(bp.path.relative_to(PACKAGE_TREE).with_suffix("").parts)
    except ValueError:
        return ""
    value: Any = sys.modules.get(module.removesuffix(".__init__"))
    for part in qualname.split("."):
        if value is None:
            return ""
        value = inspect.getattr_static(value, part, None)
    code = getattr(getattr(value, "__func__", value), "__code__", None)
    if code is None or os.path.realpath(code.co_filename) == str(bp.path):
        return ""
    try:
        return pathlib.Path(code.co_filename).resolve().relative_to(PACKAGE_TREE).as_posix()
    except ValueError:
        return code.co_filename


def enclosing_functions(bp: Breakpoint) -> list[str]:
    """The qualified names of the functions around ``bp``'s line, innermost last."""
    assert bp.path is not None
    names: list[str] = []
    body, prefix = ast.parse(bp.path.read_text()).body, ""
    while True:
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.lineno <= bp.line <= (n.end_lineno or n.lineno)), None)
        if node is None:
            return names
        prefix = f"{prefix}{node.name}"
        if not isinstance(node, ast.ClassDef):
            names.append(prefix)
        body, prefix = node.body, prefix + "."


@contextlib.contextmanager
def stop_at(location: str | Breakpoint, action: Callable[[Any], None]) -> Iterator[Breakpoint]:
    """Call ``action(frame)`` each time any thread reaches ``FILE:LINE`` (see
    :func:`find_breakpoint`); yields the :class:`Breakpoint`, which counts the hits. A breakpoint
    that cannot be set traces nothing.

    It traces every thread started inside the block, which is what lets a breakpoint catch a
    goroutine: pdb alone only traces the thread it was started in.
    """
    bp = find_breakpoint(location) if isinstance(location, str) else location
    if bp.problem or bp.path is None:
        yield bp
        return
    target, target_line = str(bp.path), bp.line
    ours: dict[str, bool] = {}  # co_filename -> is it the file (resolved once per name)

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line" and frame.f_lineno == target_line:
            bp.hits += 1
            action(frame)
            if sys.gettrace() is None:  # the debugger was told to continue: trace this thread again
                sys.settrace(global_trace)
                return local
            return frame.f_trace  # stepping: the debugger's tracer goes on in this frame
        return local

    def global_trace(frame: Any, event: str, arg: Any) -> Any:
        if event != "call":
            return None
        name = frame.f_code.co_filename
        if name not in ours:
            ours[name] = os.path.realpath(name) == target
        return local if ours[name] else None

    threading.settrace(global_trace)
    sys.settrace(global_trace)
    try:
        yield bp
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]


def break_location(value: str) -> str:
    """``--break``'s argparse type: ``FILE:LINE`` with a line number. Whether FILE and LINE can
    be found is for :func:`find_breakpoint` to say, in one line, with the run's end."""
    filename, sep, line = value.rpartition(":")
    if not (sep and filename and line.isdigit() and int(line) > 0):
        raise argparse.ArgumentTypeError(f"{value!r}: want FILE:LINE, such as genericserver/filters/waitgroup.py:51")
    return value


def breakpoint_said(bp: Breakpoint, variant: Any) -> Optional[str]:
    """The last line of a run with ``--break``: a breakpoint not set, or never reached (else None)."""
    if bp.problem:
        return f"--break {bp.asked}: not set: {bp.problem}"
    if not bp.hits:
        return f"--break {bp.shown}: never reached in this run{never_reached(bp, variant)}"
    return None


VARIANT_HELP = ("play this variant instead of the file's ('real': the server as it is; a lab's name: its bug). "
                "Default: the file's, or the active lab's bug when the file's is real")


def main(argv: Optional[list[str]] = None, prog: str = "python -m genericserver.testing.replay", active: str = "") -> int:
    """``active``: the bug of the lab active here ("" when none), played when the file is of the
    server as it is and ``--variant`` names none."""
    parser = argparse.ArgumentParser(prog=prog, description="Replay a saved fuzzing run.")
    parser.add_argument("file", help="a replay file written by a failing property")
    parser.add_argument("--trace", action="store_true", help="also print every scheduling decision")
    parser.add_argument("--quiet", action="store_true", help="print only the violations")
    parser.add_argument("--break", dest="brk", type=break_location, metavar="FILE:LINE",
                        help="stop in pdb when any goroutine reaches FILE:LINE (FILE: a path, or its end under "
                             "genericserver/ such as waitgroup.py; the last line says if it never stopped)")
    parser.add_argument("--variant", default=None, metavar="NAME", help=VARIANT_HELP)
    args = parser.parse_args(argv)
    try:
        doc = read(args.file)
        if "lincheck" not in doc:
            scenario, schedule, recorded = _lifecycle_run(doc, args.file)  # the file read once
        else:
            recorded = lincheck.load(doc)[3]
    except NotAReplay as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    variant = args.variant or (active if recorded == "real" and active else recorded)
    try:
        make_variant(variant)
    except KeyError:
        print(f"{prog}: error: --variant: unknown variant {variant!r} ('real', or a lab's name: "
              "'genericserver lab list' shows them)", file=sys.stderr)
        return 2
    if "lincheck" in doc:
        return _replay_lincheck(doc, args, variant, variant_said(variant, recorded, active))
    print(f"scenario: {scenario!r}\nschedule: {compact(schedule)}\nvariant:  {variant_said(variant, recorded, active)}")
    bp = _announced(args.brk)
    with stop_at(bp, prompt_at) if bp else contextlib.nullcontext():
        run = run_scenario(scenario, schedule, make_variant(variant), watchdog=None if args.brk else 10.0)
    if args.trace:
        print("\n-- scheduling decisions (step, virtual time, goroutine, what it resumed from)")
        print(format_trace(run.trace))
    if not args.quiet:
        print("\n-- events")
        print(REQUESTS_LEGEND)
        print(format_events(run))
    violations = check(run)
    print(f"\n-- {run.decisions} decisions, {len(run.choices)} with a choice; simulation ended: {run.error or 'cleanly'}")
    for v in violations:
        print(f"VIOLATED {v}")
    if not violations:
        print("all invariants hold")
    _say_if_never_stopped(bp, make_variant(variant))
    return 1 if violations else 0


def variant_said(variant: str, recorded: str, active: str) -> str:
    """The ``variant:`` line's text: what plays, and where that differs from the file (``recorded``)
    or from the lab active here (``active``, "" for none), how to play the other."""
    said = [variant]
    if variant != recorded:
        said.append(f"(the file's: {recorded})")
    if active and variant != active:
        said.append(f"- lab {active} is active here: --variant {active} plays its bug")
    elif not active and variant != "real":
        said.append("- no lab is active here: --variant real plays the server as it is")
    return " ".join(said)


def _announced(location: Optional[str]) -> Optional[Breakpoint]:
    """The breakpoint of ``--break`` (None without one); a file found from the end of its path
    is named in full first, so the prompt's path is no surprise."""
    if not location:
        return None
    bp = find_breakpoint(location)
    if not bp.problem and bp.shown != location:
        print(f"break:    {bp.shown} (for {location})")
    return bp


def _say_if_never_stopped(bp: Optional[Breakpoint], variant: Any) -> None:
    said = breakpoint_said(bp, variant) if bp is not None else None
    if said:
        print(said)


def _replay_lincheck(doc: dict, args: argparse.Namespace, variant: str, said: str) -> int:
    from genericserver.testing.lincheck_targets import TARGETS

    name, scenario, schedule, _ = lincheck.load(doc)
    target = TARGETS[name]
    print(f"lincheck: {name} ({target.describe})\nschedule: {compact(schedule)}\nvariant:  {said}")
    bp = _announced(args.brk)
    with stop_at(bp, prompt_at) if bp else contextlib.nullcontext():
        with make_variant(variant).switched_in():
            history = lincheck.run_history(target, scenario, schedule, variant=variant, watchdog=None if args.brk else 10.0)
    if args.trace:
        print("\n-- scheduling decisions (step, virtual time, goroutine, what it resumed from)")
        print(format_trace(history.trace))
    print("\n-- history")
    print(lincheck.format_history(history))
    why = lincheck.verdict(target, history)
    print(f"\n-- {len(history.trace)} decisions, {len(history.choices)} with a choice")
    print(f"NOT LINEARIZABLE: {why}" if why else "linearizable: an order of these calls fits the model")
    _say_if_never_stopped(bp, make_variant(variant))
    return 1 if why else 0


if __name__ == "__main__":
    from genericserver.labs.state import active_bug  # a lab started in this directory applies here too

    active_lab, bug = active_bug(announce=False)  # the variant line says it
    sys.exit(main(active=bug.name if active_lab else ""))

"""``genericserver lab check FILE``: does the learner's file catch the lab's bug? (no Go twin)

For a bug hunt the file is run with the lab's bug switched in and on the server as it is, and it
is right when it **fails with the bug and passes without it**, and then also **passes with every
other lab's bug that changes something else**: a test that fails whatever changed is looking at
the switch (where a function's source lives, what is in the environment), not at the behaviour.
Which bugs change the same behaviour is the lab's own answer's to say: those it fails with are
left out. A pytest file is then run once more on the server as it is, with what the bug
replaces compiled again from its source with one unused local more (the same behaviour, other
bytecode: :func:`genericserver.labs.disguise.recompiled`), and must pass: one that fails compares
bytecode. Any other result gets one line saying what to change. Three kinds of file:

* a pytest test file (``*.py``): run by pytest in a subprocess (the learner's code runs in a
  process of its own, with real pytest: fixtures, ``pytest.raises``, conftest files; one
  pytest process per bug, forked from one warm one: :mod:`genericserver.labs.forkrun`). It
  runs from a copy in a fresh directory, with no lab variable, state file or plugin, and the
  bug disguised as what it replaces (:mod:`genericserver.labs.disguise`), so a test that looks
  for the switch (the environment, the plugin's state, where a function's source lives, its
  module, the stack) sees the same in both runs and is not "caught";
* a replay file (``*.json``) of :mod:`genericserver.testing.replay`: a lifecycle run (it passes
  when every invariant holds) or a lincheck history (it passes when it is linearizable). The
  file's own ``variant`` is ignored: the check decides what is switched in. With a bug switched
  in, a lifecycle run is judged by the invariants the lab's bug breaks (:attr:`Lab.invariants
  <genericserver.labs.registry.Lab.invariants>`): some bug breaks another invariant in every
  run (audit-shutdown-before-drain does), and that says nothing about this lab's. A run in
  which another bug breaks the lab's own invariant too cannot tell the two apart: the check
  says so, in those words. These run in this process, on the simulation runtime, in
  milliseconds;
* for a what-if lab, a manifest (``*.yaml``): it passes when the timing rules of
  :func:`genericserver.cluster.manifest.check_manifests` hold and rolling it under load in the
  simulated world (:func:`~genericserver.cluster.manifest.rollout`, time scaled by
  :data:`WHAT_IF_SCALE`) loses no request (every refusal counts, however late it came). There is
  no bug to switch in: it runs once.

``isolate=False`` runs a pytest file in this process instead, with a small runner that imports
it and calls each ``test_*`` function that takes no arguments: what the project's own tests use
to check every lab's answer in milliseconds (a test with fixtures needs the real pytest run).
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import itertools
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Optional

from genericserver.labs.registry import Lab
from genericserver.labs.state import LAB_ENV
from genericserver.testing.variants import Variant, variant

# real seconds per cluster second for a what-if rollout: five seconds or so, and a margin of 3 s
# is 0.6 s of real time (at a tenth, 0.3 s, two suites at once on two cores lost requests)
WHAT_IF_SCALE = 0.2
PYTEST_TIMEOUT = 300.0  # seconds one pytest run of a learner's file may take
_module_names = itertools.count()
_TB_LINE = re.compile(r"^\S*?([^/\\\s]+\.py:\d+): (.*)$")
_ERROR_LINE = re.compile(r"^E\s+(\w*(?:Error|Exception)\b.*)$")
_SYNTAX_AT = re.compile(r'^E\s+File ".*?([^/\\]+\.py)", line (\d+)')
_OWN_FRAME = re.compile(r"^([^/\s<][^\s:]*\.py:\d+): in ")


class LabCheckError(Exception):
    """The check itself cannot run (a file of no kind it knows, a test that needs fixtures)."""


@dataclass
class Outcome:
    """One run of the file: ``passed``, and one line saying what happened. ``ran`` is False when
    the file did not run at all (no test in it, a syntax error, not a replay file...)."""

    passed: bool
    summary: str
    ran: bool = True


@dataclass
class Verdict:
    lab: Lab
    path: pathlib.Path
    with_bug: Outcome
    without_bug: Optional[Outcome]  # None for a what-if lab
    caught: bool
    message: str
    other_bugs: str = ""  # how it did with the other labs' bugs (run only once it is caught)
    recompiled: str = ""  # how it failed with the replaced code recompiled (said only when it did)

    def lines(self) -> list[str]:
        out = [f"lab {self.lab.name}: checking {self.path}"]
        if self.without_bug is None:
            out.append(f"  the rollout:     {self.with_bug.summary}")
        else:
            out.append(f"  with the bug:    {self.with_bug.summary}")
            out.append(f"  without the bug: {self.without_bug.summary}")
        if self.other_bugs:
            out.append(f"  other bugs:      {self.other_bugs}")
        if self.recompiled:
            out.append(f"  recompiled:      {self.recompiled}")
        out.append(self.message)
        return out


def file_kind(path: pathlib.Path) -> str:
    """``pytest``, ``replay`` (a lifecycle or lincheck replay file) or ``manifest``."""
    suffix = path.suffix.lower()
    if suffix == ".py":
        return "pytest"
    if suffix == ".json":
        return "replay"
    if suffix in (".yaml", ".yml"):
        return "manifest"
    raise LabCheckError(f"{path}: a lab answer is a pytest file (.py), a replay file (.json) or a manifest (.yaml)")


def check(lab: Lab, path: os.PathLike | str, *, isolate: bool = True) -> Verdict:
    """Judge ``path`` as an answer to ``lab`` (see the module docstring)."""
    path = pathlib.Path(path)
    if not path.exists():
        raise LabCheckError(f"{path}: no such file")
    kind = file_kind(path)
    if not lab.variant:
        if kind != "manifest":
            raise LabCheckError(f"{path}: lab {lab.name} is a what-if lab: its answer is a manifest (.yaml)")
        outcome = run_what_if(path)
        message = ("fixed: the rollout loses nothing and the shutdown fits the grace period" if outcome.passed
                   else "not yet: the rollout must lose nothing, and the shutdown fit the grace period")
        return Verdict(lab, path, outcome, None, outcome.passed, message)
    if kind == "manifest":
        raise LabCheckError(f"{path}: lab {lab.name} is a bug hunt: its answer is a test (.py) or a replay file (.json)")
    with_bug, without_bug = run_with(path, [lab.name, ""], isolate=isolate, judged_by=lab.invariants)
    caught = with_bug.ran and without_bug.ran and not with_bug.passed and without_bug.passed
    verdict = Verdict(lab, path, with_bug, without_bug, caught, explain(lab, path, with_bug, without_bug))
    if caught:
        others = other_bugs(lab)
        for other, outcome in zip(others, run_with(path, [o.name for o in others], isolate=isolate, judged_by=lab.invariants)):
            if not outcome.passed:
                verdict.caught = False
                verdict.other_bugs = f"fails with {other.name}'s: {outcome.summary}"
                verdict.message = (f"not caught: it fails with another lab's bug too ({other.name}: {other.title}) - "
                                   "it notices that something changed, not what this bug changes")
                if kind == "replay":  # no code of theirs looked at anything: the run is what it is
                    verdict.message = (f"not caught: in this run {other.name}'s bug ({other.title}) breaks "
                                       f"{_what_it_breaks(lab)} too, so the run cannot tell the two bugs apart - "
                                       "a run where only this lab's bug breaks it is the answer "
                                       "(another schedule or scenario; 'genericserver fuzz' hunts one)")
                break
        else:
            verdict.other_bugs = f"passes with each of the {len(others)} that change something else"
        if verdict.caught and kind == "pytest":
            recompiled = run_recompiled(path, lab, isolate=isolate)
            if not recompiled.passed:
                verdict.caught = False
                verdict.recompiled = f"fails: {recompiled.summary}"
                verdict.message = ("not caught: it fails on the server as it is once the code the bug replaces is "
                                   "compiled again from its source with one unused variable more (the same behaviour, "
                                   "other bytecode) - it reads the bytecode, not what the code does")
    return verdict


def run_recompiled(path: pathlib.Path, lab: Lab, *, isolate: bool = True) -> Outcome:
    """A pytest file's run on the server as it is with what ``lab``'s bug replaces recompiled
    (:class:`genericserver.labs.disguise.Recompiled`)."""
    from genericserver.labs.disguise import RECOMPILED, Recompiled

    if isolate:
        return run_pytest(path, [RECOMPILED + lab.name])[0]
    return run_tests_here(path, Recompiled(variant(lab.variant)))


def _what_it_breaks(lab: Lab) -> str:
    return " and ".join(lab.invariants) if lab.invariants else "the invariants"


def other_bugs(lab: Lab) -> list[Lab]:
    """The other labs' bugs an answer to ``lab`` must pass with: all but those the lab's own
    answer fails with (they change the same behaviour)."""
    from genericserver.labs.registry import LABS

    others = [o for o in LABS if o.variant and o.name != lab.name]
    return [o for o in others if _answer_passes_with(lab.answer_path, o.name, lab.invariants)]


@functools.lru_cache(maxsize=None)
def _answer_passes_with(answer: pathlib.Path, other: str, judged_by: tuple[str, ...]) -> bool:
    # A shipped answer run on virtual time: the same every time, so a process that checks many
    # files (the project's tests: some forty checks, thirteen other bugs each) runs each pair once.
    return run_with(answer, [other], isolate=False, judged_by=judged_by)[0].passed


def run_with(path: pathlib.Path, labs: list[str], *, isolate: bool = True, judged_by: tuple[str, ...] = ()) -> list[Outcome]:
    """Run ``path`` once with each of ``labs``' bugs switched in ("": none): a pytest file in
    forked pytest processes (or, with ``isolate=False``, here), a replay file here. A lifecycle
    replay run with a bug is judged by the invariants ``judged_by`` names (the lab's own), when
    it names some; without a bug, by every invariant."""
    from genericserver.labs.registry import lab as lab_named

    kind = file_kind(path)
    if kind == "manifest":
        raise LabCheckError(f"{path}: a manifest is the answer of a what-if lab only")
    if kind == "pytest" and isolate:
        return run_pytest(path, labs)
    if kind == "pytest":
        return [run_tests_here(path, variant(lab_named(name).variant) if name else Variant()) for name in labs]
    return [run_replay(path, variant(lab_named(name).variant), judged_by) if name else run_replay(path, Variant())
            for name in labs]


def explain(lab: Lab, path: pathlib.Path, with_bug: Outcome, without_bug: Outcome) -> str:
    if not with_bug.ran or not without_bug.ran:
        why = with_bug.summary if not with_bug.ran else without_bug.summary
        return f"not caught: {path.name} does not run: {why}"
    if not with_bug.passed and without_bug.passed:
        return "caught: fails with the bug, passes without it"
    if with_bug.passed and without_bug.passed:
        return (f"not caught: it passes with the bug too - does it reach what {lab.python.qualname} "
                "does, and assert on it?")
    if not with_bug.passed and not without_bug.passed:
        return "not caught: it fails without the bug too - make it pass on the server as it is first"
    return "backwards: it passes with the bug and fails without it - assert what the server as it is does"


# -- pytest files --------------------------------------------------------------------------------


def run_pytest(path: pathlib.Path, labs: list[str]) -> list[Outcome]:
    """pytest on ``path`` once per name in ``labs`` (that lab's bug switched in; "": none), each
    run a fresh pytest process forked from one warm one (:mod:`genericserver.labs.forkrun`).

    The test must judge behaviour, not the switch, and the runs look alike from the inside: it
    runs from a copy in a directory of its own, with the Python files beside it (no lab state
    file to read), without :data:`LAB_ENV` or the lab plugin; the names of the bugs reach the
    forked runs on stdin, one each, and each bug is disguised as what it replaces
    (:mod:`genericserver.labs.disguise`): no variable, frame, module name or source location
    says which run it is."""
    env = {k: v for k, v in os.environ.items() if k != LAB_ENV}
    with tempfile.TemporaryDirectory(prefix="genericserver-lab-check-") as where:
        copy = pathlib.Path(where) / path.name
        for module in {path, *path.parent.glob("*.py")}:  # its helpers and conftest come along
            shutil.copyfile(module, pathlib.Path(where) / module.name)
        argv = [sys.executable, "-m", "genericserver.labs.forkrun", "--timeout", str(PYTEST_TIMEOUT), where, str(copy)]
        done = subprocess.run(argv, env=env, input="".join(f"{name}\n" for name in labs), capture_output=True, text=True,
                              cwd=where)
    try:
        results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    except ValueError:
        results = []
    if len(results) != len(labs):
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [Outcome(False, f"pytest could not run it: {why}", ran=False) for _ in labs]
    return [pytest_outcome(r["status"], r["output"]) for r in results]


def pytest_outcome(status: int, output: str) -> Outcome:
    """What one pytest run's exit status and output say."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    summary = lines[-1].strip("= ") if lines else "no output"
    if status == 0:
        return Outcome(True, summary)
    if status == 1:
        return Outcome(False, f"{summary}: {first_failure(lines)}".rstrip(": "))
    if status == 5:
        return Outcome(False, "no test in it (a test is a function whose name starts with test_)", ran=False)
    if status == -signal.SIGALRM:
        return Outcome(False, f"pytest did not finish within {PYTEST_TIMEOUT:g} s")
    return Outcome(False, f"pytest could not run it: {collection_error(lines) or summary}", ran=False)


def collection_error(lines: list[str]) -> str:
    """``SyntaxError: invalid syntax (test_x.py, line 1)`` from pytest's report of a file it
    could not import ("1 error in 0.3s" alone sends a pair to run pytest themselves)."""
    error = next((m.group(1) for m in map(_ERROR_LINE.match, reversed(lines)) if m), "")
    if not error:
        return ""
    # where: a syntax error's own line, else the deepest frame in the pair's files (relative
    # paths: pytest runs in their directory; its own frames and the library's are absolute)
    syntax = next((m for m in map(_SYNTAX_AT.match, lines) if m), None)
    if syntax is not None:
        return f"{error} ({syntax.group(1)}, line {syntax.group(2)})"
    frames = [m.group(1) for m in map(_OWN_FRAME.match, lines) if m]
    return f"{error} ({frames[-1]})" if frames else error


def first_failure(lines: list[str]) -> str:
    """``test_x.py:14: AssertionError: ok (assert 200 == 500)`` from pytest's ``--tb=line`` output."""
    where = next((m for m in map(_TB_LINE.match, lines) if m), None)
    detail = next((line for line in lines if line.startswith("assert ")), "")
    if where is None:
        return detail
    return f"{where.group(1)}: {where.group(2)}" + (f" ({detail})" if detail else "")


def run_tests_here(path: pathlib.Path, bug: Variant) -> Outcome:
    """Import ``path`` with ``bug`` switched in and call its ``test_*`` functions, in this process."""
    spec = importlib.util.spec_from_file_location(f"_genericserver_lab_answer_{next(_module_names)}", path)
    if spec is None or spec.loader is None:
        raise LabCheckError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    failed, passed = [], 0
    with bug.switched_in():
        try:
            spec.loader.exec_module(module)
        except Exception as err:
            return Outcome(False, f"importing it failed: {type(err).__name__}: {err}", ran=False)
        tests = [fn for name, fn in vars(module).items() if name.startswith("test") and inspect.isfunction(fn)]
        if not tests:
            return Outcome(False, "no test in it (a test is a function whose name starts with test_)", ran=False)
        for fn in tests:
            if inspect.signature(fn).parameters:
                raise LabCheckError(f"{path}: {fn.__name__} takes fixtures: check it with pytest (isolate=True)")
            try:
                fn()
                passed += 1
            except Exception as err:
                failed.append(f"{fn.__name__}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}".rstrip(": "))
    if failed:
        return Outcome(False, f"{len(failed)} failed, {passed} passed: {failed[0]}")
    return Outcome(True, f"{passed} passed")


# -- replay files ----------------------------------------------------------------------------------


def run_replay(path: pathlib.Path, bug: Variant, judged_by: tuple[str, ...] = ()) -> Outcome:
    """A lifecycle replay file passes when every invariant holds (every one ``judged_by``
    names, when it names some); a lincheck one when its history is linearizable. Its recorded
    variant is replaced by ``bug``.

    Why a lab's replay is judged by the lab's own invariants: a run checks all fourteen, and
    some bugs break one in every run (audit-shutdown-before-drain shuts the audit backend down
    early whatever the requests). A run that shows this lab's bug also shows that one, and that
    is no fault of the run; it cannot single this bug out only when another bug breaks *this*
    lab's invariant in it too."""
    from genericserver.testing import lincheck
    from genericserver.testing.invariants import check as check_invariants
    from genericserver.testing.lincheck_targets import TARGETS
    from genericserver.testing.scenario import Scenario, run_scenario

    try:
        doc = json.loads(path.read_text())
        if "lincheck" in doc:
            name, lin_scenario, schedule, _ = lincheck.load(doc)
            target = TARGETS[name]
        else:
            scenario, schedule = Scenario.from_dict(doc["scenario"]), [int(c) for c in doc.get("schedule", [])]
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        return Outcome(False, f"not a replay file ({type(err).__name__}: {err})", ran=False)
    if "lincheck" in doc:
        with bug.switched_in():
            history = lincheck.run_history(target, lin_scenario, schedule, variant=bug.name)
        why = lincheck.verdict(target, history)
        return Outcome(why is None, "linearizable" if why is None else f"not linearizable: {why}")
    violations = check_invariants(run_scenario(scenario, schedule, bug))
    counted = [v for v in violations if not judged_by or v.invariant in judged_by]
    if counted:
        return Outcome(False, f"{len(counted)} invariant(s) broken: {counted[0]}")
    if violations:  # only ones this lab's bug does not break
        return Outcome(True, f"{' and '.join(judged_by)} hold(s); {len(violations)} other(s) broken: {violations[0]}")
    return Outcome(True, "all invariants hold")


# -- what-if manifests -----------------------------------------------------------------------------


def run_what_if(path: pathlib.Path, scale: float = WHAT_IF_SCALE) -> Outcome:
    """The timing rules (instant, and they say why), then the rollout under load (what it costs)."""
    from genericserver.cluster.manifest import ManifestError, check_manifests, load_documents, rollout

    try:
        problems = check_manifests(load_documents(path), endpoints_lag=1.0, proxy_lag=1.0, source=path.name)
        run = rollout(path, endpoints_lag=1.0, proxy_lag=1.0, scale=scale)
    except (ManifestError, OSError, ValueError) as err:
        return Outcome(False, str(err), ran=False)
    outcome = run.outcome
    lost = outcome.lost  # every refusal, however late it came
    rollout_text = (f"the rollout lost {outcome.lost} of {outcome.sent} requests: {outcome.why()}" if lost
                    else f"the rollout lost nothing ({outcome.sent} requests sent)")
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return Outcome(False, f"{problems[0]}{more}; {rollout_text}")
    return Outcome(not lost, rollout_text)

"""Tests for genericserver.labs: the labs, ``genericserver lab``, the state file and the pytest plugin.

For every lab: ``lab start`` writes the state file and makes the lab active, the project's
answer is caught (it fails with the bug and passes without it; a what-if answer's rollout loses
nothing), an empty answer is not, and ``lab stop`` removes the file. The answers' pytest files
run in this process (the check's small runner) so the fourteen labs cost well under a second;
one test runs a pytest file the way ``genericserver lab check`` does for a learner, in forked
pytest processes, and one shows the state file switching the bug in for a
``genericserver`` subprocess.
"""

from __future__ import annotations

import ast
import json
import os
import pathlib
import re
import subprocess
import sys
import types

import pytest

from genericserver import cmd
from genericserver.cluster.manifest import check_manifests, load_documents
from genericserver.genericapiserver import PreparedGenericAPIServer
from genericserver.labs import LABS, lab, pytest_plugin, state
from genericserver.labs.check import LabCheckError, check, pytest_outcome
from docs_output import assert_shows, expected
from genericserver.labs.registry import EXERCISES
from genericserver.testing import replay
from genericserver.testing.invariants import INVARIANTS
from genericserver.testing.variants import HISTORY_VARIANTS, VARIANTS, Variant, variant

NAMES = [the_lab.name for the_lab in LABS]
UPSTREAM = re.compile(r"^https://github\.com/(kubernetes/kubernetes|projectcontour/contour)/(pull|issues)/\d+$")


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A learner's empty directory, and no lab named by the environment."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(state.LAB_ENV, raising=False)
    return tmp_path


def lab_cmd(*argv: str) -> int:
    return cmd.main(["lab", *argv])


def test_lab_list_shows_every_lab_and_marks_the_active_one(here, capsys):
    assert len(LABS) >= 10
    assert lab_cmd("list") == 0
    listed = capsys.readouterr().out
    assert listed.startswith(f"{len(LABS)} labs: genericserver lab start NAME")
    assert re.findall(r"^[ *]\s*\d+ (\S+)", listed, re.M) == NAMES
    state.write("watches-not-drained")
    assert lab_cmd() == 0  # list is the default
    assert re.findall(r"^\*\s*\d+ (\S+)", capsys.readouterr().out, re.M) == ["watches-not-drained"]


@pytest.mark.parametrize("name", NAMES)
def test_every_lab_names_its_history_its_go_and_python_and_its_bug(name):
    the_lab = lab(name)
    assert the_lab.upstream and all(UPSTREAM.match(url) for url in the_lab.upstream), the_lab.upstream
    assert all(f"#{url.rsplit('/', 1)[1]}" in the_lab.story for url in the_lab.upstream[:1])  # the story cites it
    assert the_lab.go_url.startswith("https://github.com/kubernetes/kubernetes/blob/v1.36.0/") or "projectcontour" in the_lab.go_url
    assert the_lab.python.line() > 0 and the_lab.python.path.exists()
    if the_lab.breakpoint is not None:  # replay --break FILE:LINE, at a line of code the bug leaves alone
        assert re.fullmatch(r"genericserver/\S+\.py:\d+", the_lab.breakpoint.location())
    assert the_lab.tools and the_lab.task and the_lab.hint and len(the_lab.title) <= 56
    assert the_lab.answer_path.exists()
    if the_lab.variant:
        bug = variant(the_lab.variant)
        assert bug.name == the_lab.variant and bug.kind in ("lifecycle", "primitive", "cluster")
        # what a replay is judged by: invariants that exist, and the ones its fuzz tool names
        fuzz_tool = " ".join(tool for tool in the_lab.tools if tool.startswith("fuzz:"))
        assert set(the_lab.invariants) <= {inv.__name__ for inv in INVARIANTS}
        assert all(inv in fuzz_tool for inv in the_lab.invariants)
        assert bool(the_lab.invariants) == (bug.kind == "lifecycle" and "finds nothing" not in fuzz_tool)
    else:
        assert the_lab.exercise_path is not None and the_lab.exercise_path.exists()


@pytest.mark.parametrize("name", NAMES)
def test_lab_show_reads_on_a_60_column_projector(name, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "61")
    assert lab_cmd("show", name) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{name} ({lab(name).kind})\n{lab(name).title}\n") and lab(name).go_url in text
    too_wide = [line for line in text.splitlines() if len(line) > 60 and " " in line.strip()]
    assert not too_wide  # only a lone URL may run past the edge


@pytest.mark.parametrize("name", NAMES)
def test_the_answer_is_caught_and_an_empty_answer_is_not(name, here, capsys):
    the_lab = lab(name)
    assert lab_cmd("start", name) == 0
    assert f"lab {name} started" in capsys.readouterr().out
    assert state.active_lab() == name and (here / state.STATE_FILE).exists()

    verdict = check(the_lab, the_lab.answer_path, isolate=False)
    assert verdict.caught, "\n".join(verdict.lines())
    if the_lab.variant:
        assert verdict.message == "caught: fails with the bug, passes without it"
        assert not verdict.with_bug.passed and verdict.without_bug is not None and verdict.without_bug.passed
    else:
        assert verdict.message.startswith("fixed: the rollout loses nothing")
        shown = expected("workshop-lab-check-rollout")  # as docs/workshop.md shows it, past its header line
        assert_shows(shown[1:], "\n".join(verdict.lines()))
        # the exercise 'start' wrote here breaks the timing rule the answer fixes
        assert (here / the_lab.exercise).read_text() == (EXERCISES / the_lab.exercise).read_text()
        assert any("shorter than the endpoints lag" in p for p in check_manifests(load_documents(here / the_lab.exercise)))

    empty = here / f"empty{the_lab.answer_path.suffix}"
    empty.write_text("")
    verdict = check(the_lab, empty, isolate=False)
    assert not verdict.caught
    assert verdict.message.startswith("not caught: empty") or verdict.message.startswith("not yet")

    assert lab_cmd("stop") == 0
    assert f"lab {name} stopped" in capsys.readouterr().out
    assert not (here / state.STATE_FILE).exists() and state.active_lab() is None


WRONG_ANSWERS = {
    "passes both ways": ("def test_nothing():\n    assert True\n", "not caught: it passes with the bug too"),
    "fails both ways": ("def test_wrong():\n    assert 1 == 2\n", "not caught: it fails without the bug too"),
    "backwards": (
        "from genericserver.testing.scenario import RequestSpec, Scenario, run_scenario\n"
        "def test_backwards():\n"
        "    run = run_scenario(Scenario(shutdown_delay=0.5, requests=(RequestSpec('readyz', 'ShutdownInitiated', 0.1),)))\n"
        "    assert run.of('client', 'answer')[0].fields['status'] == 200\n",
        "backwards: it passes with the bug and fails without it",
    ),
    "does not import": ("import no_such_module\ndef test_x():\n    pass\n", "not caught: answer.py does not run: importing it failed"),
}


@pytest.mark.parametrize("case", sorted(WRONG_ANSWERS))
def test_a_wrong_answer_gets_one_line_saying_what_to_change(case, here):
    source, message = WRONG_ANSWERS[case]
    (here / "answer.py").write_text(source)
    verdict = check(lab("readyz-red-too-late"), here / "answer.py", isolate=False)
    assert not verdict.caught and verdict.message.startswith(message)
    if case == "passes both ways":  # docs/workshop.md's weak test: its verdict, as shown there
        shown = expected("workshop-lab-check-weak")
        assert_shows(shown[next(i for i, line in enumerate(shown) if line.startswith("not caught")):], verdict.message)


# what pytest -q --tb=line prints of a file it cannot import (abridged: the library's frames)
SYNTAX_ERROR = """
_______________________ ERROR collecting test_mine.py ________________________
/work/.venv/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule
    mod = import_path(
<frozen importlib._bootstrap>:1204: in _gcd_import
    ???
E     File "/tmp/genericserver-lab-check-x1/test_mine.py", line 7
E       def test_x(:
E                  ^
E   SyntaxError: invalid syntax
1 error in 0.31s
"""
IMPORT_ERROR = """
_________________________ ERROR collecting test_mine.py _________________________
ImportError while importing test module '/tmp/genericserver-lab-check-x1/test_mine.py'.
/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
test_mine.py:1: in <module>
    import helpers
helpers.py:3: in <module>
    import nosuchmodule
E   ModuleNotFoundError: No module named 'nosuchmodule'
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.38s
"""


@pytest.mark.parametrize("output, why", [
    (SYNTAX_ERROR, "SyntaxError: invalid syntax (test_mine.py, line 7)"),
    (IMPORT_ERROR, "ModuleNotFoundError: No module named 'nosuchmodule' (helpers.py:3)"),
    ("Interrupted\n2 errors in 0.1s\n", "2 errors in 0.1s"),
])
def test_a_file_pytest_cannot_import_is_reported_with_its_error_and_line(output, why):
    # the verdict said "pytest could not run it: 1 error in 0.31s", and a pair had to run
    # pytest themselves to learn what
    outcome = pytest_outcome(2, output)
    assert (outcome.passed, outcome.ran, outcome.summary) == (False, False, f"pytest could not run it: {why}")


def test_check_refuses_files_it_cannot_judge(here):
    (here / "notes.txt").write_text("x")
    with pytest.raises(LabCheckError, match="a pytest file"):
        check(lab("readyz-red-too-late"), here / "notes.txt")
    (here / "a.yaml").write_text("")
    with pytest.raises(LabCheckError, match="is a bug hunt"):
        check(lab("readyz-red-too-late"), here / "a.yaml")
    with pytest.raises(LabCheckError, match="no such file"):
        check(lab("readyz-red-too-late"), here / "missing.py")
    (here / "fixture.py").write_text("def test_x(tmp_path):\n    pass\n")
    with pytest.raises(LabCheckError, match="takes fixtures"):
        check(lab("readyz-red-too-late"), here / "fixture.py", isolate=False)


def test_a_replay_file_is_judged_with_the_labs_bug_whatever_variant_it_records(here):
    # the file says "no-shutdown-delay": the check replaces that with the lab's choice each time
    doc = json.loads(lab("no-shutdown-delay").answer_path.read_text())
    doc["variant"] = "no-shutdown-delay"
    (here / "mine.json").write_text(json.dumps(doc))
    assert check(lab("no-shutdown-delay"), here / "mine.json").caught
    (here / "broken.json").write_text("{\"schedule\": []}")
    verdict = check(lab("no-shutdown-delay"), here / "broken.json")
    assert verdict.message.startswith("not caught: broken.json does not run: not a replay file")


def test_lab_commands_without_an_active_lab_or_with_an_unknown_one_exit_2(here, capsys):
    assert lab_cmd("check", "x.py") == 2
    assert lab_cmd("hint") == 2
    assert lab_cmd("start", "no-such-lab") == 2
    assert capsys.readouterr().err.splitlines() == [
        "genericserver lab check: no lab is active here: 'genericserver lab start NAME', or --lab NAME",
        "genericserver lab hint: no lab is active here: name one, or 'genericserver lab start NAME'",
        "genericserver lab: no lab called 'no-such-lab': 'genericserver lab list' shows them",
    ]
    (here / state.STATE_FILE).write_text("not json")
    assert cmd.main(["replay", "x.json"]) == 2
    assert "not a lab state file" in capsys.readouterr().err
    assert lab_cmd("stop") == 0
    assert capsys.readouterr().out == f"removed an unreadable {state.STATE_FILE}: the server is itself again\n"
    assert not (here / state.STATE_FILE).exists()


def test_hint_and_solution_print_the_labs_own(here, capsys):
    assert lab_cmd("start", "kubectl-grace-zero-forces") == 0
    capsys.readouterr()
    assert lab_cmd("hint") == 0
    assert capsys.readouterr().out.startswith("Hint: delete_pod(store, 'p', DeleteFlags(grace_period=0))")
    assert lab_cmd("solution") == 0
    printed = capsys.readouterr()
    assert printed.out == lab("kubectl-grace-zero-forces").answer_path.read_text()  # redirect it to a file: it runs
    assert printed.err == f"genericserver lab solution: {lab('kubectl-grace-zero-forces').answer_path}\n"
    assert lab_cmd("stop") == 0


def test_lab_check_runs_a_pytest_file_in_pytest_once_per_bug(here, capsys, monkeypatch):
    # the learner's route: start, write a test file, check it. pytest's auto-loaded plugins
    # (Hypothesis's costs half a second to import) are not needed by this file.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert lab_cmd("start", "readyz-red-too-late") == 0
    (here / "test_readyz.py").write_text(lab("readyz-red-too-late").answer_path.read_text())
    capsys.readouterr()
    assert lab_cmd("check", "test_readyz.py") == 0
    out = capsys.readouterr().out
    text = " ".join(out.split())  # as printed, but unwrapped
    assert re.fullmatch(
        r"lab readyz-red-too-late: checking test_readyz.py"
        r" with the bug: 1 failed in [\d.]+s: test_readyz.py:\d+: AssertionError: ok \(assert 200 == 500\)"
        r" without the bug: 1 passed in [\d.]+s"
        r" other bugs: passes with each of the 11 that change something else"
        r" caught: fails with the bug, passes without it", text), text
    assert_shows(expected("workshop-lab-check"), out)  # what docs/workshop.md shows a room
    assert lab_cmd("stop") == 0


def test_the_state_file_switches_the_bug_in_for_a_genericserver_subprocess(here):
    answer = lab("no-shutdown-delay").answer_path
    assert replay.main([str(answer), "--quiet"]) == 0  # without a lab the server keeps its delay
    state.write("no-shutdown-delay")
    env = {k: v for k, v in os.environ.items() if k != state.LAB_ENV}
    done = subprocess.run([sys.executable, "-m", "genericserver", "replay", str(answer), "--quiet"],
                          cwd=here, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "VIOLATED delay_is_respected: AfterShutdownDelayDuration at t=1, before ShutdownInitiated (t=1) + 0.5s" in done.stdout
    assert "variant:  no-shutdown-delay (the file's: real)" in done.stdout.splitlines()  # replay's own line says it


def test_the_pytest_plugin_switches_the_bug_in_for_the_session(here):
    real = vars(PreparedGenericAPIServer)["_delayed_stop"]
    config = types.SimpleNamespace(invocation_params=types.SimpleNamespace(dir=here))
    state.write("no-shutdown-delay")
    pytest_plugin.pytest_configure(config)
    try:
        assert vars(PreparedGenericAPIServer)["_delayed_stop"] is not real
        assert pytest_plugin.pytest_report_header(config) == "genericserver lab: no-shutdown-delay (its bug is switched in)"
    finally:
        pytest_plugin.pytest_unconfigure(config)
    assert vars(PreparedGenericAPIServer)["_delayed_stop"] is real
    assert pytest_plugin.pytest_report_header(config) == "genericserver lab: none active"


def test_the_environment_overrides_the_state_file(here, monkeypatch):
    state.write("no-shutdown-delay")
    monkeypatch.setenv(state.LAB_ENV, "")
    assert state.active_lab() is None
    monkeypatch.setenv(state.LAB_ENV, "readyz-red-too-late")
    assert state.active_lab() == "readyz-red-too-late"


@pytest.mark.parametrize("name", sorted(HISTORY_VARIANTS))
def test_a_historical_variant_switches_in_and_out_and_is_known_by_name(name):
    v = variant(name)
    assert name not in VARIANTS and v.kind in ("lifecycle", "cluster") and v.story and v.breaks and v.bug_class
    before = [(owner, attr, vars(owner).get(attr)) for owner, attr, _ in v.patches()]
    with v.switched_in():
        assert all(getattr(owner, attr) is not old for owner, attr, old in before)
    assert all(vars(owner).get(attr) is old for owner, attr, old in before)
    assert isinstance(variant("real"), Variant) and variant("real").patches() == []


WORKSHOP = pathlib.Path(__file__).resolve().parent.parent / "docs" / "workshop.md"


def test_the_workshop_route_names_every_lab_and_fits_a_60_column_projector():
    text = WORKSHOP.read_text()
    assert all(name in text for name in NAMES)
    blocks = re.findall(r"^```\n(.*?)^```", text, re.M | re.S)
    assert blocks and not [line for block in blocks for line in block.splitlines() if len(line) > 60]
    assert "(docs/workshop.md)" in (WORKSHOP.parent.parent / "README.md").read_text()


def test_the_workshops_python_lines_are_inside_the_functions_it_names():
    """``genericserver/x.py:N`` followed on its line by a backquoted function of that module:
    line N must lie in that function (so an edit that moves it fails here, not in the room)."""
    checked = 0
    for line in WORKSHOP.read_text().splitlines():
        for m in re.finditer(r"`(genericserver/[\w/]+\.py):(\d+)`", line):
            path, n = WORKSHOP.parent.parent / m.group(1), int(m.group(2))
            tree = ast.parse(path.read_text())
            spans = {node.name: (node.lineno, node.end_lineno) for node in ast.walk(tree)
                     if isinstance(node, ast.FunctionDef)}
            named = [name.split(".")[-1] for name in re.findall(r"`([\w.]+)`", line[m.end():]) if name.split(".")[-1] in spans]
            assert named, f"{m.group(0)}: name its function after it: {line}"
            lo, hi = spans[named[0]]
            assert lo <= n <= hi, f"{m.group(0)} is not in {named[0]} (lines {lo}-{hi})"
            checked += 1
    assert checked >= 5


@pytest.mark.parametrize("name, says", [
    ("no-shutdown-delay", "its bug is switched in"),
    ("rollout-loses-nothing", "nothing is switched in (a what-if exercise)"),
])
def test_the_active_lab_banner_says_a_bug_is_in_only_when_one_is(name, says, tmp_path, capsys):
    # issue 27: with the what-if lab active every command said "its bug is switched in"
    from genericserver.labs import state

    state.write(name, tmp_path)
    state.active_bug(tmp_path)
    assert capsys.readouterr().err == f"genericserver: lab {name} is active: {says} ('genericserver lab stop' ends it)\n"


def _expected_literals(source: str) -> set[str]:
    """The literal values a test compares with (constants, tuples and lists of them)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if all(isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Load, ast.UnaryOp, ast.USub)) for n in ast.walk(side)):
                    text = ast.unparse(side)
                    if len(text) > 3:  # (not 0, 1, True...)
                        out.add(text)
    return out


@pytest.mark.parametrize("lab", [lab for lab in LABS if lab.answer_path.suffix == ".py"], ids=lambda lab: lab.name)
def test_the_tests_a_lab_points_to_do_not_hold_its_answer(lab):
    # a pair reads the pointed files for the API; the expected values of the answer's assertions
    # must not be there to copy
    pointed = set(re.findall(r"tests/\w+\.py", " ".join(lab.tools) + " " + lab.hint))
    answer = _expected_literals(lab.answer_path.read_text())
    for path in pointed:
        shared = answer & _expected_literals((WORKSHOP.parent.parent / path).read_text())
        assert not shared, f"{path} holds {lab.name}'s expected values: {sorted(shared)}"


# -- starter tests ---------------------------------------------------------------------------------
from genericserver.labs.starter import PLACEHOLDER, answer_assertions, fill, has_starter, starter  # noqa: E402

STARTED = [lab for lab in LABS if has_starter(lab)]


@pytest.mark.parametrize("the_lab", STARTED, ids=lambda lab: lab.name)
def test_a_starter_fails_both_ways_and_the_answers_assertion_makes_it_catch_the_bug(the_lab, tmp_path):
    # a pair following 'lab new-test': the starter runs and fails with and without the bug (its
    # placeholder); with the answer's assertions in the placeholder, the check says "caught"
    source = starter(the_lab)
    assert PLACEHOLDER in source and the_lab.task.split()[0] in source
    start = tmp_path / "test_start.py"
    start.write_text(source)
    verdict = check(the_lab, start, isolate=False)
    assert not verdict.caught and not verdict.with_bug.passed and not verdict.without_bug.passed, verdict.message
    filled = tmp_path / "test_filled.py"
    filled.write_text(fill(source, answer_assertions(the_lab)))
    verdict = check(the_lab, filled, isolate=False)
    assert verdict.caught, verdict.message


def test_new_test_writes_the_active_labs_starter_and_refuses_what_it_cannot(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    the_lab = lab("kubelet-prestop-full-grace")
    assert cmd.main(["lab", "new-test", "test_mine.py", "--lab", the_lab.name]) == 0
    assert (tmp_path / "test_mine.py").read_text() == starter(the_lab)
    assert "wrote test_mine.py" in capsys.readouterr().out
    assert cmd.main(["lab", "new-test", "test_mine.py", "--lab", the_lab.name]) == 2  # never overwrites
    assert "exists" in capsys.readouterr().err
    assert cmd.main(["lab", "new-test", "x.py", "--lab", "no-shutdown-delay"]) == 2  # a replay-file lab
    assert "replay file" in capsys.readouterr().err


def test_an_answer_that_looks_for_the_switch_instead_of_the_behaviour_is_not_caught(tmp_path, monkeypatch):
    # it would "catch" any bug by reading which lab the check switched in; the check runs it where
    # neither the variable nor the state file can be seen, so both runs pass alike (its two pytest
    # runs need none of pytest's auto-loaded plugins, as in test_lab_check_runs_a_pytest_file_in_pytest...)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    answer = tmp_path / "test_sly.py"
    answer.write_text(
        "import os, pathlib\n\n\n"
        "def test_the_switch_is_off():\n"
        "    assert not os.environ.get('GENERICSERVER_LAB')\n"
        "    assert not pathlib.Path('.genericserver-lab').exists()\n")
    (tmp_path / ".genericserver-lab").write_text("readyz-red-too-late\n")  # as 'lab start' leaves it
    verdict = check(lab("readyz-red-too-late"), answer)
    assert not verdict.caught and verdict.with_bug.passed and verdict.without_bug.passed, verdict.message


# answers that judge the switch, or nothing, instead of the behaviour: refused by every bug hunt
SWITCH_BY_SOURCE = '''import inspect
import sys


def test_no_function_of_the_project_comes_from_a_variant():
    # a bug is switched in by replacing functions with ones written in testing/variants/
    for name, module in list(sys.modules.items()):
        if name.startswith("genericserver.") and ".testing" not in name and ".labs" not in name:
            for value in list(vars(module).values()):
                for fn in list(vars(value).values()) if inspect.isclass(value) else [value]:
                    code = getattr(fn, "__code__", None)
                    assert code is None or "variants" not in code.co_filename, fn
'''
SWITCH_BY_ENVIRONMENT = '''import os


def test_the_switch_is_off():
    assert not os.environ.get("GENERICSERVER_LAB")
'''
NO_ASSERTION = '''from genericserver.testing.scenario import Scenario, run_scenario


def test_a_shutdown_runs():
    run_scenario(Scenario())
'''


@pytest.mark.parametrize("name", [the_lab.name for the_lab in LABS if the_lab.variant])
def test_answers_that_judge_the_switch_or_nothing_are_refused(name, here):
    for answer, refused in ((SWITCH_BY_SOURCE, "not caught: it fails with another lab's bug too ("),
                            (SWITCH_BY_ENVIRONMENT, "not caught: it passes with the bug too"),
                            (NO_ASSERTION, "not caught: it passes with the bug too")):
        (here / "test_answer.py").write_text(answer)
        verdict = check(lab(name), here / "test_answer.py", isolate=False)
        if answer is SWITCH_BY_SOURCE and verdict.with_bug.passed:
            refused = "not caught: it passes with the bug too"  # this bug replaces no function
        assert not verdict.caught and verdict.message.startswith(refused), (answer, verdict.lines())


def test_a_what_if_rollout_counts_every_refusal_however_late_it_came(monkeypatch):
    # a 503 answered 0.7 s after it was sent (longer than deploy/deployment.yaml's whole margin of
    # 3 s at a fifth of real time) is a request the rollout lost, as one answered at once is
    from genericserver.cluster import manifest
    from genericserver.cluster.loadclient import Sample
    from genericserver.cluster.scenario import ScenarioConfig, ScenarioResult
    from genericserver.labs.check import WHAT_IF_SCALE, run_what_if

    def fake(waited: float):
        samples = [Sample(float(i), "ok", "web-1", False, i + 0.01) for i in range(50)]
        samples.append(Sample(60.0, "503", "web-0", False, 60.0 + waited, "the server is shutting down"))
        return lambda *args, **kwargs: ScenarioResult(ScenarioConfig(roll=True), [], samples, [], 0.0, 61.0)

    assert WHAT_IF_SCALE == 0.2
    for waited in (0.7, 0.1):
        monkeypatch.setattr(manifest, "rollout", fake(waited))
        lost = run_what_if(WORKSHOP.parent.parent / "deploy" / "deployment.yaml")
        assert not lost.passed and lost.summary == "the rollout lost 1 of 51 requests: 1 503: shutting down", lost

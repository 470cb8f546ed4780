"""Each lab's Tools lines work as written: the fuzz command a lab prints finds its bug, and the
``--break`` line it prints stops where its question has the answer the lab is about.

Every test here runs the command as ``genericserver lab show`` prints it, in a directory where
``genericserver lab start`` started the lab, as a learner does: no seed, no flag the lab does
not print. For the breakpoints, the value the lab asks about (its ``(p EXPR)``, evaluated in
the frame where the run stopped) is checked with the bug and, with ``--variant real``, without.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import shlex

import pytest

from genericserver import cmd
from genericserver.labs import LABS, lab, state
from genericserver.labs.cli import describe
from genericserver.testing import hunt, replay
from genericserver.testing.scenario import RequestSpec, Scenario, run_scenario
from genericserver.testing.variants import variant

SHUTDOWN_AT = Scenario().shutdown_at  # when a replay's server is told to stop (virtual seconds)
HUNTABLE = [the_lab.name for the_lab in LABS if the_lab.variant and (
    the_lab.invariants or variant(the_lab.variant).kind == "primitive")]


@pytest.fixture(autouse=True)
def room(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(state.LAB_ENV, raising=False)  # the state file 'lab start' writes decides
    monkeypatch.setenv(replay.REPLAY_DIR_ENV, str(tmp_path / "replays"))


def printed_tools(the_lab) -> dict[str, str]:
    """The lab's Tools lines as ``lab show`` prints them, unwrapped: {kind: text}."""
    lines = describe(the_lab).splitlines()
    start = lines.index("Tools:") + 1
    tools: list[str] = []
    for line in lines[start:lines.index("", start)]:
        if line.startswith("      "):
            tools[-1] += " " + line.strip()
        else:
            tools.append(line.strip())
    return {tool.split(": ", 1)[0]: tool.split(": ", 1)[1] for tool in tools}


def command(text: str) -> list[str]:
    """The argv of ``genericserver ...`` in a Tools line (what comes before its " - ")."""
    argv = shlex.split(text.split(" - ", 1)[0])
    assert argv[0] == "genericserver"
    return argv[1:]


def test_every_huntable_lab_prints_a_fuzz_command_and_only_those_say_it_finds_nothing():
    for the_lab in LABS:
        fuzz = printed_tools(the_lab).get("fuzz")
        if the_lab.name in HUNTABLE:
            assert fuzz is not None and "finds nothing" not in fuzz, the_lab.name
        elif fuzz is not None:
            assert "finds nothing" in fuzz, the_lab.name


@pytest.mark.parametrize("name", HUNTABLE)
def test_the_fuzz_command_a_lab_prints_finds_its_bug_and_lab_check_takes_the_replay(name, capsys, monkeypatch):
    # watches-not-drained's 'genericserver fuzz' ended "no counterexample in 2000 examples" in a
    # room, and this test passed only with a seed chosen for each lab; now a lab's family narrows
    # the hunt to what its story says the bug needs, and the command runs as printed
    the_lab = lab(name)
    assert cmd.main(["lab", "start", name]) == 0
    capsys.readouterr()
    assert cmd.main(command(printed_tools(the_lab)["fuzz"])) == 1
    out = capsys.readouterr().out
    assert f"lab check: an answer to lab {name}: it fails with this bug alone" in out.splitlines()
    found = re.search(r"^replay:   genericserver replay (\S+)$", out, re.M).group(1)
    assert cmd.main(["lab", "check", found]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "caught: fails with the bug, passes without it"
    stops_as_the_lab_says(the_lab, found, capsys, monkeypatch)  # and its --break line, on that run
    if "lincheck" in json.loads(open(found).read()):
        return
    # and the run keeps nothing the bug does not need: without any one request or hook, the
    # lab's invariants hold (the readyz run kept four requests beside its /readyz probe)
    scenario, schedule, bug = replay.load(found)
    for less in ([dataclasses.replace(scenario, requests=scenario.requests[:i] + scenario.requests[i + 1:])
                  for i in range(len(scenario.requests))]
                 + [dataclasses.replace(scenario, hooks=scenario.hooks[:i] + scenario.hooks[i + 1:])
                    for i in range(len(scenario.hooks))]):
        assert not hunt.breaks(run_scenario(less, schedule, variant(bug)), the_lab.invariants), less


def test_the_fuzz_command_of_a_lab_no_invariant_watches_finds_nothing_as_it_says(capsys):
    the_lab = lab("http-shutdown-not-awaited")
    assert cmd.main(["lab", "start", the_lab.name]) == 0
    capsys.readouterr()
    assert cmd.main(command(printed_tools(the_lab)["fuzz"])) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(
        "no invariant watches lab http-shutdown-not-awaited's bug, so no replay file can catch it")


# -- the --break lines -----------------------------------------------------------------------------

# What each lab asks at its breakpoint, where its line says it by a "(p EXPR)" of its own, or
# else here; and the answers, with the bug and without it (one per stop).
def an_add_past_its_check(frame) -> bool:
    """Does a goroutine stand in SafeWaitGroup.add (or the bug's) between its check of the wait
    flag and its count, having found the flag unset? ('goroutines' at the prompt shows it.)"""
    import sys

    for top in sys._current_frames().values():
        f = top
        while f is not None:
            if f.f_code.co_name in ("add", "replacement") and "delta" in f.f_locals and "_wg" in vars(f.f_locals.get("self", object)):
                lines, first = inspect.getsourcelines(f.f_code)
                check = first + next(i for i, line in enumerate(lines) if "if self._wait and delta > 0" in line)
                count = first + next(i for i, line in enumerate(lines) if "self._wg.add(delta)" in line)
                if check < f.f_lineno <= count:
                    return True
            f = f.f_back
    return False


ASKED = {
    "audit-shutdown-before-drain": ("the caller", lambda frame: frame.f_back.f_code.co_name),
    "safe-wait-group-check-outside-lock": ("an add past its check", an_add_past_its_check),
    "exemption-rules-differ": ("the User-Agent, one frame up",
                               lambda frame: frame.f_back.f_locals["environ"].get("HTTP_USER_AGENT", "").split("/")[0]),
}
ANSWERS = {
    "readyz-red-too-late": ([False], [True]),
    "no-shutdown-delay": ([SHUTDOWN_AT], [SHUTDOWN_AT + 0.5]),
    "not-accepting-without-hooks": ([False], [True]),
    "audit-shutdown-before-drain": (["_shut_down_early"], ["_run_with_context"]),
    "listener-stopped-at-not-accepting": ([False], [True]),
    "exemption-rules-differ": (["kube-apiserver"], []),  # without the bug a loopback request never gets there
    "watches-not-drained": ([1], [0]),
    "http-shutdown-not-awaited": ([True], [False]),
    "safe-wait-group-check-outside-lock": ([True], [False]),
    "audit-finished-before-flush": ([1], [0]),
}
BREAKS = [the_lab.name for the_lab in LABS if the_lab.breakpoint is not None]


def test_every_lab_with_a_break_line_has_its_answers_here():
    assert set(BREAKS) == set(ANSWERS)
    assert all(the_lab.breakpoint is not None for the_lab in LABS if the_lab.name in HUNTABLE)


def test_the_break_line_of_a_lab_no_invariant_watches_stops_where_its_question_has_the_labs_answer(capsys, monkeypatch):
    the_lab = lab("http-shutdown-not-awaited")  # fuzz finds nothing: its hint's run
    assert cmd.main(["lab", "start", the_lab.name]) == 0
    with open("run.json", "w") as f:
        f.write(replay.to_json(Scenario(requests=(RequestSpec("long-running", "start", 0.5, 3.0),)), [], the_lab.variant))
    stops_as_the_lab_says(the_lab, "run.json", capsys, monkeypatch)


def stops_as_the_lab_says(the_lab, found: str, capsys, monkeypatch) -> None:
    """Replay ``found`` with the lab's --break line as printed (with the lab's bug, then with
    ``--variant real``): a lifecycle lab's run stops after the shutdown began (three stopped
    at virtual t=0, when their goroutine started: "have the hooks stopped?" was trivially no
    there, with the bug or without), and what the lab asks has its answers, at each stop."""
    if the_lab.breakpoint is None:
        return
    line = printed_tools(the_lab)["replay"]
    lincheck = variant(the_lab.variant).kind == "primitive"
    asked = re.search(r"\(p (.*)\)$", line)
    ask = (lambda frame: eval(asked.group(1), frame.f_globals, frame.f_locals)) if asked else ASKED[the_lab.name][1]
    answers: dict[str, list] = {}
    for run, flags in (("with the bug", []), ("without", ["--variant", "real"])):
        seen = answers[run] = []
        stops: list[float] = []

        def at(frame, seen=seen, stops=stops):
            from genericserver import runtime as rt

            stops.append(rt.now())
            seen.append(ask(frame))

        monkeypatch.setattr(replay, "prompt_at", at)
        capsys.readouterr()
        cmd.main([found if word == "FILE" else word for word in command(line)] + flags)
        capsys.readouterr()
        if not lincheck:
            assert all(t >= SHUTDOWN_AT for t in stops), (run, stops)
    assert (answers["with the bug"], answers["without"]) == ANSWERS[the_lab.name]

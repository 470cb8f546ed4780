"""The ``goroutines`` command at a ``--break`` prompt (genericserver.testing.debugger)."""

from __future__ import annotations

import io
import re

import zygote
from docs_output import assert_shows, expected
from genericserver.labs.registry import LABS
from genericserver.testing.debugger import GoroutinePdb

WAIT = 60.0


def test_goroutines_lists_each_goroutine_with_its_state_and_line():
    # the workshop's 0:40 step: stopped where NotAcceptingNewRequest is about to fire, the
    # commands its expected observation types at the prompt
    shown = expected("workshop-debugger")
    commands = [line.removeprefix("(Pdb) ") for line in shown if line.startswith("(Pdb) ")]
    assert "goroutines" in commands and commands[-1] == "c"
    proc = zygote.Process(
        ["replay", str(next(lab for lab in LABS if lab.name == "no-shutdown-delay").answer_path), "--quiet",
         "--break", "genericserver/genericapiserver.py:386"],
        input="".join(f"{c}\n" for c in commands))
    out, err = proc.communicate(WAIT)
    assert proc.returncode == 0, err
    # what a terminal shows: each command typed after its prompt (a pipe does not echo it)
    prompts = iter(commands)
    assert_shows(shown, re.sub(r"\(Pdb\) ", lambda _: f"(Pdb) {next(prompts, '')}\n", out))
    rows = re.findall(r"^ *(\d+) (\S+)\n   (.+)\n   at (\S+) in (\w+)$", out, re.MULTILINE)
    by_name = {name: (state.strip(), where, fn) for _, name, state, where, fn in rows}
    assert by_name["not-accepting-new-requests"] == ("running", "genericapiserver.py:386", "_not_accepting_new_requests")
    state, where, fn = by_name["drain-non-long-running"]
    assert (state, fn) == ("waiting for event 'NotAcceptingNewRequest'", "_drain_non_long_running")
    assert by_name["run-with-context"][0] == "waiting for event 'InFlightRequestsDrained'"
    # one row per goroutine, each named, none inside the runtime's machinery
    assert len(rows) == len(by_name) >= 10
    assert not any("genericserver/runtime/" in where or "testing/sim" in where for _, where, _ in by_name.values())
    assert "all invariants hold" in out


def test_goroutines_outside_a_simulation_says_so():
    out = io.StringIO()
    GoroutinePdb(stdout=out).do_goroutines("")
    assert out.getvalue() == "goroutines: not in a simulated run\n"

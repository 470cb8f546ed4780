"""Tests for genericserver.testing.hunt: ``genericserver fuzz`` writes the replay file of what it finds, ``genericserver replay`` plays it."""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import threading

import pytest

from genericserver import cmd
from genericserver.labs import state
from genericserver.testing import replay
from genericserver.testing.invariants import check
from genericserver.testing.scenario import run_scenario
from genericserver.testing.variants import variant


@pytest.fixture(autouse=True)
def no_lab(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(state.LAB_ENV, "")
    monkeypatch.setenv(replay.REPLAY_DIR_ENV, str(tmp_path / "replays"))


def test_fuzz_finds_a_lifecycle_variants_counterexample_and_writes_its_replay_file(tmp_path, capsys):
    out = tmp_path / "found.json"
    assert cmd.main(["fuzz", "--variant", "no-shutdown-delay", "--no-shrink", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "delay_is_respected" in printed and f"replay:   genericserver replay {out}" in printed
    scenario, schedule, name = replay.load(out)
    assert name == "no-shutdown-delay"
    assert "delay_is_respected" in {v.invariant for v in check(run_scenario(scenario, schedule, variant(name)))}
    assert not check(run_scenario(scenario, schedule)), "the real server passes the same run"
    assert cmd.main(["replay", str(out), "--quiet"]) == 1
    assert "VIOLATED delay_is_respected" in capsys.readouterr().out


def test_fuzz_hunts_a_primitive_variant_with_lincheck(tmp_path, capsys):
    out = tmp_path / "lin.json"
    assert cmd.main(["fuzz", "--variant", "safe-wait-group-check-outside-lock", "--no-shrink", "--out", str(out)]) == 1
    assert "no order of these calls fits the SafeWaitGroup model" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["lincheck"] == "SafeWaitGroup" and doc["variant"] == "safe-wait-group-check-outside-lock"
    assert cmd.main(["replay", str(out)]) == 1
    assert "NOT LINEARIZABLE" in capsys.readouterr().out


def test_fuzz_hunts_the_active_labs_bug_by_default(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(state.LAB_ENV, "no-shutdown-delay")
    assert cmd.main(["fuzz", "--no-shrink", "--examples", "20"]) == 1
    assert "run of no-shutdown-delay" in capsys.readouterr().out


def test_fuzz_of_the_real_server_finds_nothing_in_a_few_examples(capsys):
    assert cmd.main(["fuzz", "--examples", "5", "--seed", "3"]) == 0
    assert capsys.readouterr().out == "no counterexample for real in 5 examples (seed 3)\n"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--variant", "nope"], "genericserver fuzz: error: --variant: unknown variant 'nope' (known: real, "),
        (["--variant", "kubelet-prestop-full-grace"], "genericserver fuzz: error: --variant: kubelet-prestop-full-grace is a bug of the cluster world"),
        (["--examples", "0"], "genericserver fuzz: error: --examples must be at least 1"),
    ],
    ids=["unknown", "cluster-world", "no-examples"],
)
def test_fuzz_refuses_what_it_cannot_hunt_in_one_line(argv, message, capsys):
    assert cmd.main(["fuzz", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_fuzz_refuses_a_folder_as_out_before_the_hunt(capsys, tmp_path):
    # the hunt ran, then its file went beside the folder and the write ended in a traceback
    assert cmd.main(["fuzz", "--variant", "once-runs-twice", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"genericserver fuzz: error: --out {tmp_path}: is a folder, not a file\n"
    assert list(tmp_path.parent.glob("lincheck-*.json")) == []


@pytest.mark.parametrize("where, why", [
    ("genericserver/runtime/__init__.py:abc", "want FILE:LINE, such as genericserver/filters/waitgroup.py:51"),
    ("nofile.py:12", "no file nofile.py here or in genericserver/"),
])
def test_replay_refuses_a_break_location_that_could_never_stop(where, why, capsys, tmp_path):
    # a line that is not a number ended in a ValueError's traceback; a file that does not exist
    # replayed the whole run without stopping, as if the line were never reached
    (tmp_path / "run.json").write_text("{}")
    with pytest.raises(SystemExit) as exit_:
        cmd.main(["replay", "--break", where, str(tmp_path / "run.json")])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"genericserver replay: error: argument --break: {where!r}: {why}"


def test_replay_of_a_missing_file_is_one_line(capsys):
    assert cmd.main(["replay", "missing.json"]) == 2
    assert capsys.readouterr().err == "genericserver replay: error: missing.json: no such file\n"


@pytest.mark.parametrize("text, why", [
    ("not json", "Expecting value: line 1 column 1 (char 0)"),
    ('{"a": 1}', "it has no scenario and schedule"),
    ('{"scenario": {"x": 1}, "schedule": []}', "its scenario or schedule does not read"),
], ids=["not-json", "no-scenario", "bad-scenario"])
def test_replay_of_a_file_that_is_not_a_replay_is_one_line(text, why, tmp_path, capsys):
    (tmp_path / "x.json").write_text(text)
    assert cmd.main(["replay", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"genericserver replay: error: {tmp_path / 'x.json'}: not a replay file: {why}")
    assert err.count("\n") == 1


def test_a_replay_does_not_print_the_servers_auth_warnings(tmp_path, caplog):
    """The scenario's server has no authentication or authorization by design: Go's warnings
    about it are noise in a tool (issue 27), though `serve` still prints them as Go does."""
    import logging

    from genericserver.testing.scenario import RequestSpec, Scenario, run_scenario

    caplog.set_level(logging.WARNING)
    run_scenario(Scenario(requests=(RequestSpec("ordinary", "start", 0.5, 1.0),)), [])
    assert "is disabled" not in caplog.text


@pytest.mark.parametrize("name", ["real", "rate-limited-count-outside-lock"], ids=["lifecycle", "lincheck"])
def test_ctrl_c_that_lands_in_a_gc_callback_still_ends_the_hunt(name, monkeypatch):
    # ^C while Hypothesis's gc callback ran was reported as ignored and lost: the hunt went on
    from genericserver.testing import hunt, lincheck, scenario

    started = []  # the hunt's first example is running
    for module, fn in ((scenario, "run_scenario"), (lincheck, "explore")):
        real = getattr(module, fn)
        monkeypatch.setattr(module, fn, lambda *a, real=real, **k: started.append(1) or real(*a, **k))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    dropped: list = []
    monkeypatch.setattr(sys, "unraisablehook", dropped.append)  # where the interpreter reports it
    sent = []

    def callback(phase: str, info: dict) -> None:
        # (in the main thread, where the handler runs: the simulations collect there after a run)
        if phase == "stop" and started and not sent and threading.current_thread() is threading.main_thread():
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(3):
                pass  # (the handler runs here, at this loop's jump back, inside the callback)

    gc.callbacks.append(callback)
    try:
        with pytest.raises(KeyboardInterrupt):
            if name == "real":
                hunt.hunt_lifecycle(variant(name), examples=50, shrink=False)
            else:
                hunt.hunt_lincheck(variant(name), examples=400, shrink=False)
    finally:
        gc.callbacks.remove(callback)
        signal.signal(signal.SIGINT, previous)
    assert [type(d.exc_value) for d in dropped] == [KeyboardInterrupt]  # the interpreter dropped it...
    assert len(started) <= 2  # ...and the next example raised it again

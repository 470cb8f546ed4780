"""Tests for genericserver.labs.disguise and the runs of ``lab check`` it serves: a test that looks for the switch cannot see it.

Each bug hunt gets four cheats aimed at its own bug, as a pair might write them: where the
replaced function's source lives (``inspect.getsourcefile``), the replaced function's
``__module__``, the lab plugin's state (``pytest_plugin._active``), the environment and the lab
state file; and a fifth that walks
every thread's stack for the lab's name or a frame of ``testing/variants/``. Each was accepted
before ("caught: fails with the bug, passes without it": the cheat failed only with its own
lab's bug). One more, aimed at no lab, profiles every call of a shutdown that reaches nine of
the bugs' code (the audit wrapper's methods too) and looks for one from ``testing/variants/``.
They must pass with the bug and without it: not caught. All of them run in one
cheat file, through the check's own forked pytest runs (:func:`genericserver.labs.check.run_pytest`),
once without a bug and once with each lab's, so fourteen pytest runs cost one warm process.
"""

from __future__ import annotations

import functools
import inspect
import os
import subprocess
import sys
import textwrap

import pytest

from genericserver.labs import LABS, lab
from genericserver.labs.check import check, run_pytest, run_replay, run_tests_here
from genericserver.labs.disguise import RECOMPILED, Recompiled, disguised, recompiled
from genericserver.testing.variants import Variant, variant

BUG_HUNTS = [the_lab for the_lab in LABS if the_lab.variant]


def _reference(owner: object, attr: str) -> str:
    """Python source that evaluates to ``owner.attr`` in the cheat file."""
    if inspect.isclass(owner):
        return f"importlib.import_module({owner.__module__!r}).{owner.__qualname__}.{attr}"
    return f"importlib.import_module({owner.__name__!r}).{attr}"


def cheats(the_lab) -> str:
    """The three cheats (and the stack walk) aimed at ``the_lab``'s bug, as test functions."""
    name = the_lab.name.replace("-", "_")
    bug = variant(the_lab.variant)
    lines = [f"def test_{name}_plugin_state():",
             "    from genericserver.labs import pytest_plugin",
             f"    assert pytest_plugin._active[0] != {the_lab.name!r}", "", "",
             f"def test_{name}_environment_and_state_file():",
             f"    assert {the_lab.name!r} not in os.environ.values() and not os.path.exists('.genericserver-lab')", "", "",
             f"def test_{name}_stack_frames():",
             f"    assert not [f for f in all_frames() if {the_lab.name!r} in f.f_locals.values()"
             f" or {bug.name!r} in f.f_locals.values() or 'testing/variants' in f.f_code.co_filename]", "", ""]
    for n, (owner, attr, _) in enumerate(bug.patches()):
        original = inspect.getattr_static(owner, attr)
        original = getattr(original, "__func__", original)
        ref = _reference(owner, attr)
        if inspect.isfunction(original):
            lines += [f"def test_{name}_source_file_{n}():",
                      f"    assert inspect.getsourcefile({ref}) == {inspect.getsourcefile(original)!r}", "", "",
                      f"def test_{name}_module_{n}():",
                      f"    assert {ref}.__module__ == {original.__module__!r}", "", ""]
        else:  # a value (Contour's backoff): its type's
            lines += [f"def test_{name}_module_{n}():",
                      f"    assert type({ref}).__module__ == {type(original).__module__!r}", "", ""]
    return "\n".join(lines)


HEAD = '''import importlib
import inspect
import os
import sys
import threading


def all_frames():
    for frame in sys._current_frames().values():
        while frame is not None:
            yield frame
            frame = frame.f_back


def test_no_frame_of_a_shutdown_comes_from_a_variant():
    # every call in every goroutine of a shutdown that reaches each lifecycle bug's code
    from genericserver.testing.scenario import HookSpec, RequestSpec, Scenario, run_scenario

    seen = set()

    def profile(frame, event, arg):
        if event == "call":
            seen.add((frame.f_code.co_filename, frame.f_globals.get("__name__")))

    scenario = Scenario(retry_after=True, shutdown_delay=0.5, watch_grace=2.0, hooks=(HookSpec(0.5, True),),
                        requests=(RequestSpec("watch", "start", 0.5, 3.0), RequestSpec("ordinary", "start", 0.5, 3.0),
                                  RequestSpec("readyz", "ShutdownInitiated", 0.1)))
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        run_scenario(scenario)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    # (the base class of every variant, the server as it is, runs in every run)
    assert not [s for s in seen if "testing/variants/" in s[0] and not s[0].endswith("variants/__init__.py")]
    assert not [s for s in seen if ".variants." in (s[1] or "")]


'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The cheat file's pytest runs: without a bug, then with each bug hunt's (one forkrun process)."""
    path = tmp_path_factory.mktemp("cheats") / "test_cheats.py"
    path.write_text(HEAD + "\n".join(cheats(the_lab) for the_lab in BUG_HUNTS))
    tests = path.read_text().count("\ndef test_")
    names = ["", *(the_lab.name for the_lab in BUG_HUNTS)]
    # the runs need none of pytest's auto-loaded plugins (loading them is most of a run's cost)
    autoload = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        outcomes = run_pytest(path, names)
    finally:
        if autoload is None:
            del os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = autoload
    return tests, dict(zip(names, outcomes))


@pytest.mark.parametrize("name", [the_lab.name for the_lab in BUG_HUNTS])
def test_cheats_aimed_at_a_labs_bug_pass_with_it_and_without_it(name, runs):
    tests, outcomes = runs
    assert outcomes[""].passed and outcomes[""].summary.startswith(f"{tests} passed"), outcomes[""].summary
    assert outcomes[name].passed and outcomes[name].summary.startswith(f"{tests} passed"), outcomes[name].summary


def test_lab_check_calls_a_cheat_what_it_is(tmp_path, monkeypatch):
    # the whole command's verdict, once: the cheats pass with the bug, so they catch nothing
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    (tmp_path / "test_cheat.py").write_text(HEAD + cheats(lab("readyz-red-too-late")))
    verdict = check(lab("readyz-red-too-late"), tmp_path / "test_cheat.py")
    assert verdict.with_bug.passed and verdict.without_bug.passed, verdict.lines()
    assert verdict.message.startswith("not caught: it passes with the bug too")


def _replacement(x: int) -> tuple[int, str, str]:
    def inner() -> object:
        return sys._getframe()

    frame = sys._getframe()
    return x * 10, frame.f_code.co_filename, inner().f_code.co_filename


def test_a_disguised_function_looks_like_the_original_and_does_what_the_replacement_does():
    original = textwrap.indent  # a function of another module
    twin = disguised(_replacement, original)
    # its own code runs, in frames that (its inner function's too) name the original's file
    assert twin(3) == (30, textwrap.__file__, textwrap.__file__)
    assert (twin.__module__, twin.__name__, twin.__qualname__, twin.__doc__) == (
        "textwrap", "indent", "indent", original.__doc__)
    assert inspect.getsourcefile(twin) == inspect.getsourcefile(original)
    assert inspect.getsource(twin) == inspect.getsource(original)
    assert twin.__globals__["__name__"] == "textwrap" and twin.__globals__["sys"] is sys
    assert twin.__code__.co_code == _replacement.__code__.co_code  # the bytecode is the bug
    # a static method stays one, and a value is left as it is
    assert isinstance(disguised(staticmethod(_replacement), original), staticmethod)
    assert disguised(functools.partial(_replacement), original).func is _replacement
    assert disguised(42, original) == 42



# each bug switched in as 'lab check' switches it in, in a child forked from a process that has
# run no simulation yet (a simulation keeps idle threads, which a forked child would not have)
WITH_EACH_DISGUISED_BUG = """
import os, sys
from genericserver.labs import lab
from genericserver.labs.check import run_replay, run_tests_here
from genericserver.labs.disguise import switch_in_for_good
from genericserver.testing.variants import Variant, variant

for name in sys.argv[1:]:
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        the_lab = lab(name)
        switch_in_for_good(variant(the_lab.variant))
        here = run_tests_here if the_lab.answer_path.suffix == ".py" else run_replay
        print(name, repr(here(the_lab.answer_path, Variant())), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
"""


@pytest.fixture(scope="module")
def with_disguised_bugs():
    """Each bug hunt's answer's outcome with its bug disguised: {name: repr(Outcome)}."""
    done = subprocess.run([sys.executable, "-c", WITH_EACH_DISGUISED_BUG, *(the_lab.name for the_lab in BUG_HUNTS)],
                          capture_output=True, text=True, timeout=300)
    return dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.split(" ", 1)[0] in {l.name for l in BUG_HUNTS})


@pytest.mark.parametrize("name", [the_lab.name for the_lab in BUG_HUNTS])
def test_a_disguised_bug_still_does_what_it_does(name, with_disguised_bugs):
    # the project's answer fails with the bug switched in as 'lab check' switches it in, and
    # in the same words as with the bug switched in as everywhere else
    the_lab = lab(name)
    here = run_tests_here if the_lab.answer_path.suffix == ".py" else run_replay
    plain = here(the_lab.answer_path, variant(the_lab.variant))
    assert not plain.passed
    assert with_disguised_bugs[name] == repr(plain)


# -- the bytecode cheat: compile the function from the file its source is in, compare co_code ------

BYTECODE_HEAD = '''import importlib
import inspect
import types


def compiled_from_its_file(fn, path=None):
    path = path or inspect.getsourcefile(fn)
    todo = [compile(open(path).read(), path, "exec")]
    while todo:
        code = todo.pop()
        if code.co_qualname == fn.__code__.co_qualname:
            return code
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]


'''


def bytecode_cheats(the_lab, file_named: bool = False) -> str:
    """One test per function the lab's bug replaces: its live bytecode is what its file compiles
    to (the file ``inspect.getsourcefile`` names, as the disguise has it; or, ``file_named``, the
    original's, named in the test: the same in a run without the disguise)."""
    tests = []
    for n, (owner, attr, _) in enumerate(variant(the_lab.variant).patches()):
        original = inspect.getattr_static(owner, attr)
        fn = getattr(original, "__func__", original)
        if inspect.isfunction(fn):
            path = repr(inspect.getsourcefile(fn)) if file_named else "None"
            tests.append(f"def test_{the_lab.name.replace('-', '_')}_bytecode_{n}():\n"
                         f"    fn = {_reference(owner, attr)}\n"
                         f"    assert compiled_from_its_file(fn, {path}).co_code == fn.__code__.co_code\n\n")
    return "\n".join(tests)


FUNCTION_BUGS = [the_lab for the_lab in BUG_HUNTS if bytecode_cheats(the_lab)]


def test_the_bytecode_cheat_is_refused_in_the_words_of_the_check(tmp_path):
    # a test comparing co_code with its file's was "caught: fails with the bug, passes without
    # it", though the disguise admits the bytecode differs: now it is run once more on the server
    # as it is with that code recompiled (one unused local more), fails there, and is refused
    # (in this process, where the bug is not disguised: the cheat names the original's file)
    (tmp_path / "test_bytecode.py").write_text(BYTECODE_HEAD + bytecode_cheats(lab("readyz-red-too-late"), file_named=True))
    verdict = check(lab("readyz-red-too-late"), tmp_path / "test_bytecode.py", isolate=False)
    assert not verdict.with_bug.passed and verdict.without_bug.passed and verdict.recompiled.startswith("fails: 1 failed")
    assert not verdict.caught and verdict.message == (
        "not caught: it fails on the server as it is once the code the bug replaces is compiled again from its "
        "source with one unused variable more (the same behaviour, other bytecode) - it reads the bytecode, not what "
        "the code does")


def test_the_bytecode_cheat_of_every_lab_fails_in_the_checks_recompiled_run(tmp_path, monkeypatch):
    # the check's own forked runs: the cheats pass on the server as it is, and each lab's fail in
    # its recompiled run (the run that refuses them); one warm process for all
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    path = tmp_path / "test_bytecode.py"
    path.write_text(BYTECODE_HEAD + "\n".join(bytecode_cheats(the_lab) for the_lab in FUNCTION_BUGS))
    names = ["", *(RECOMPILED + the_lab.name for the_lab in FUNCTION_BUGS)]
    outcomes = dict(zip(names, run_pytest(path, names)))
    tests = path.read_text().count("\ndef test_")
    assert outcomes[""].passed and outcomes[""].summary.startswith(f"{tests} passed"), outcomes[""].summary
    for the_lab in FUNCTION_BUGS:
        aimed = bytecode_cheats(the_lab).count("def test_")
        assert outcomes[RECOMPILED + the_lab.name].summary.startswith(f"{aimed} failed, {tests - aimed} passed"), (
            the_lab.name, outcomes[RECOMPILED + the_lab.name].summary)


def test_a_recompiled_function_does_what_it_did_from_its_own_file_and_lines():
    from genericserver.genericapiserver import GenericAPIServer, PreparedGenericAPIServer

    for fn in (GenericAPIServer.prepare_run, PreparedGenericAPIServer._not_accepting_new_requests, textwrap.indent):
        twin = recompiled(fn)
        assert twin.__code__.co_code != fn.__code__.co_code
        assert (twin.__code__.co_filename, twin.__code__.co_firstlineno, twin.__code__.co_qualname, twin.__qualname__) == (
            fn.__code__.co_filename, fn.__code__.co_firstlineno, fn.__code__.co_qualname, fn.__qualname__)
        assert {n for *_, n in twin.__code__.co_lines()} == {n for *_, n in fn.__code__.co_lines()}
        assert inspect.getsource(twin) == inspect.getsource(fn) and twin.__globals__ is fn.__globals__
    assert recompiled(textwrap.indent)("a\nb", "> ") == "> a\n> b"


@pytest.mark.parametrize("name", [the_lab.name for the_lab in FUNCTION_BUGS])
def test_each_labs_answer_passes_with_what_its_bug_replaces_recompiled(name):
    the_lab = lab(name)
    here = run_tests_here if the_lab.answer_path.suffix == ".py" else run_replay
    with Recompiled(variant(the_lab.variant)).switched_in():
        assert here(the_lab.answer_path, Variant()).passed

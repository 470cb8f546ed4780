"""``genericserver fuzz`` and ``genericserver replay``: hunt a variant's counterexample, write it to a replay file, replay it (no Go twin).

``genericserver fuzz --variant NAME [--seed N] [--examples N] [--out FILE] [--no-shrink]`` does
from the command line what ``tests/test_known_bad_variants.py`` does in the test suite:

* a lifecycle variant (or ``real``, the server as it is): Hypothesis draws scenarios and
  schedules (:func:`genericserver.testing.scenario.scenarios`, ``deep_schedules``) until a run
  breaks an invariant, shrinks it, :func:`simplify` finishes the shrinking, and the run is
  saved as a replay file. When the variant is a lab's bug, the run must break the lab's own
  invariants (:attr:`genericserver.labs.registry.Lab.invariants`), and the file is then judged
  as ``genericserver lab check`` will judge it: one line says whether it is an answer to the
  lab, and if not, why (a run where another lab's bug breaks the same invariant cannot single
  this one out). A lab whose bug no invariant sees gets a line saying its answer is a test;
* a primitive variant: lincheck's hunt on the variant's target (scenarios of calls, a schedule
  and seven PCT schedules each, as :func:`genericserver.testing.lincheck.explore` does), saved
  as a lincheck replay file.

The file goes to ``--out``, else under ``replays/`` (``$GENERICSERVER_REPLAYS``); the command
prints the violations, the scenario, the schedule and the replay command. ``--seed`` makes the
hunt repeatable (the same seed finds the same counterexample). Without ``--variant`` it hunts
the active lab's bug (``genericserver lab start``; the hunt switches it in run by run, as it
does any variant), else the server as it is. Exit status: 1 when
a counterexample was found, 0 when none was within ``--examples``, 2 for a bad flag or a variant
the hunts cannot see (the cluster world's: those have tests on virtual time instead).

``genericserver replay FILE [--trace] [--quiet] [--break FILE:LINE] [--variant NAME]`` is
``python -m genericserver.testing.replay``: it plays ``--variant`` (``real``: the server as it
is) if given, else the file's variant, else, for a file of the server as it is, the active lab's
bug; its ``variant:`` line says which, and how to play the other when it is not the active lab's. Both need Hypothesis only to hunt: it is a test
dependency (``pip install 'genericserver[test]'``), imported when ``fuzz`` runs.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import logging
import pathlib
import random
import signal
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

LIFECYCLE_EXAMPLES = 2000  # a run costs 5-50 ms; the slowest variant needs hundreds at random
LINCHECK_EXAMPLES = 400
LINCHECK_TRIES = 8  # interleavings per drawn lincheck scenario, as tests/test_lincheck.py


def add_parsers(subparsers: Any) -> None:
    fuzz = subparsers.add_parser(
        "fuzz", help="hunt a variant's counterexample and write it to a replay file",
        description="Hunt a run that breaks an invariant (or a history that is not linearizable) with "
                    "Hypothesis, shrink it, and write it to a replay file.")
    fuzz.add_argument("--variant", default=None, metavar="NAME",
                      help="a variant of genericserver.testing.variants, or 'real' (default: the active lab's bug, else real)")
    fuzz.add_argument("--seed", type=int, default=None, metavar="N",
                      help="draw at random from this seed (default: the fixed order 'make test' draws in)")
    fuzz.add_argument("--examples", type=int, default=None, metavar="N",
                      help=f"examples to draw at most (default {LIFECYCLE_EXAMPLES}, lincheck {LINCHECK_EXAMPLES})")
    fuzz.add_argument("--out", default=None, metavar="FILE", help="write the replay file here (default: under replays/)")
    fuzz.add_argument("--no-shrink", action="store_true", help="keep the first counterexample as found")
    rep = subparsers.add_parser("replay", help="replay a saved run: timeline, violations, or pdb in a goroutine",
                                description="Replay a run saved by a failing property or by genericserver fuzz.")
    rep.add_argument("file", help="a replay file (lifecycle or lincheck)")
    rep.add_argument("--trace", action="store_true", help="also print every scheduling decision")
    rep.add_argument("--quiet", action="store_true", help="print only the violations")
    rep.add_argument("--break", dest="brk", metavar="FILE:LINE",
                     help="stop in pdb when any goroutine reaches FILE:LINE (FILE: a path, or its end under "
                          "genericserver/ such as waitgroup.py; the last line says if it never stopped)")
    rep.add_argument("--variant", default=None, metavar="NAME", help=replay_variant_help())


def replay_variant_help() -> str:
    from genericserver.testing.replay import VARIANT_HELP

    return VARIANT_HELP


def run_replay(args: argparse.Namespace, active_lab_variant: str = "") -> int:
    from genericserver.testing import replay

    if not pathlib.Path(args.file).is_file():
        print(f"genericserver replay: error: {args.file}: no such file", file=sys.stderr)
        return 2
    argv = [args.file] + (["--trace"] if args.trace else []) + (["--quiet"] if args.quiet else [])
    argv += (["--break", args.brk] if args.brk else []) + (["--variant", args.variant] if args.variant else [])
    return replay.main(argv, prog="genericserver replay", active=active_lab_variant)


def run_fuzz(args: argparse.Namespace, active_lab_variant: str = "") -> int:
    from genericserver.testing.variants import HISTORY_VARIANTS, VARIANTS, variant

    name = args.variant if args.variant is not None else (active_lab_variant or "real")
    try:
        v = variant(name)
    except KeyError:
        known = ", ".join(["real", *VARIANTS, *HISTORY_VARIANTS])
        print(f"genericserver fuzz: error: --variant: unknown variant {name!r} (known: {known})", file=sys.stderr)
        return 2
    if v.kind not in ("real", "lifecycle", "primitive"):
        print(f"genericserver fuzz: error: --variant: {name} is a bug of the cluster world: the lifecycle and lincheck "
              "hunts cannot see it (its lab has a test on virtual time instead)", file=sys.stderr)
        return 2
    if (args.examples is not None and args.examples < 1) or (args.seed is not None and args.seed < 0):
        print("genericserver fuzz: error: --examples must be at least 1 and --seed not negative", file=sys.stderr)
        return 2
    if importlib.util.find_spec("hypothesis") is None:
        print("genericserver fuzz: error: the hunt needs Hypothesis: pip install 'genericserver[test]'", file=sys.stderr)
        return 2
    out = pathlib.Path(args.out) if args.out else None
    if out is not None and out.is_dir():  # found now, not after the hunt (its folders are made then)
        print(f"genericserver fuzz: error: --out {out}: is a folder, not a file", file=sys.stderr)
        return 2
    from genericserver.labs.registry import lab_of_variant

    the_lab = lab_of_variant(v.name)  # a lab's bug: hunt a run that breaks what that bug breaks
    with quiet_logs():
        if v.kind == "primitive":
            found = hunt_lincheck(v, seed=args.seed, examples=args.examples or LINCHECK_EXAMPLES, shrink=not args.no_shrink)
            path = _report_lincheck(v, found, out, args)
        else:
            family = None
            if the_lab is not None and the_lab.family:
                family = Family.of(the_lab.family)
                print(f"hunting where lab {the_lab.name}'s bug lives: {family}")
            run = hunt_lifecycle(v, seed=args.seed, examples=args.examples or LIFECYCLE_EXAMPLES, shrink=not args.no_shrink,
                                 judged_by=the_lab.invariants if the_lab is not None else (), family=family)
            path = _report_lifecycle(v, run, out, args)
        if path is not None and the_lab is not None:
            _say_what_lab_check_says(the_lab, path)
    if path is None and the_lab is not None and v.kind == "lifecycle" and not the_lab.invariants:
        print(f"no invariant watches lab {the_lab.name}'s bug, so no replay file can catch it: its answer is a "
              "test that checks what the bug changes ('genericserver lab new-test FILE' starts one)")
    return 0 if path is None else 1


def _say_what_lab_check_says(the_lab: Any, path: pathlib.Path) -> None:
    """The file is an answer to ``the_lab``: judge it as ``lab check`` will, and say so now
    (when a run cannot single this bug out, the pair hears it from the fuzzer, with why)."""
    from genericserver.labs.check import check

    verdict = check(the_lab, path, isolate=False)
    if verdict.caught:
        print(f"lab check: an answer to lab {the_lab.name}: it fails with this bug alone")
    else:
        print(f"lab check: not an answer to lab {the_lab.name}: {verdict.message}")


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """The hunt starts thousands of servers: their logs would bury the lines that matter."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)


@contextlib.contextmanager
def interrupts_kept() -> Iterator[Callable[[], None]]:
    """Ctrl-C during a hunt is never lost; yields the check each example makes first.

    Python raises KeyboardInterrupt wherever the main thread is when the signal comes; in a
    garbage collector's callback (Hypothesis keeps one) the interpreter reports it as ignored and
    drops it, and the hunt went on. While this lasts, SIGINT also leaves a mark that the next
    example's check raises again. Only where Ctrl-C would raise KeyboardInterrupt anyway (the
    main thread, Python's own handler): a shell's background job ignores it, and so does this."""
    pending: list[int] = []

    def interrupted(signum: int, frame: Any) -> None:
        pending.append(signum)
        raise KeyboardInterrupt

    def check() -> None:
        if pending:
            raise KeyboardInterrupt

    installed = False
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        try:
            signal.signal(signal.SIGINT, interrupted)
            installed = True
        except ValueError:  # not the main thread: signals are not ours to handle
            pass
    try:
        yield check
    finally:
        if installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _settings(examples: int, shrink: bool, seed: Optional[int]) -> Any:
    from hypothesis import HealthCheck, Phase, settings

    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    return settings(max_examples=examples, database=None, deadline=None, phases=phases, derandomize=seed is None,
                    suppress_health_check=list(HealthCheck))


def _random(seed: Optional[int]) -> Optional[random.Random]:
    return None if seed is None else random.Random(seed)


@dataclass(frozen=True)
class Family:
    """Where a hunt draws its scenarios: requests of ``kinds`` only, and each flag named in
    ``flags`` from its own values: what a lab's story says its bug needs
    (:attr:`genericserver.labs.registry.Lab.family`), so that ``genericserver fuzz`` finds it in
    tens of runs rather than hundreds."""

    kinds: tuple[str, ...]
    flags: tuple[tuple[str, tuple], ...] = ()

    @classmethod
    def of(cls, pairs: Sequence[tuple[str, tuple]]) -> "Family":
        """From a lab's pairs, ``(("kinds", ("watch", "ordinary")), ("watch_grace", (2.0,)))``."""
        from genericserver.testing.scenario import KINDS

        named = dict(pairs)
        return cls(tuple(named.pop("kinds", KINDS)), tuple(named.items()))

    def __str__(self) -> str:
        said = [f"{name} {' or '.join(f'{v:g}' if isinstance(v, float) else str(v) for v in values)}"
                for name, values in self.flags]
        return ", ".join(said + [f"requests {', '.join(self.kinds)}"])


def hunt_lifecycle(v: Any, *, seed: Optional[int] = None, examples: int = LIFECYCLE_EXAMPLES, shrink: bool = True,
                   judged_by: tuple[str, ...] = (), family: Optional[Family] = None) -> Optional[Any]:
    """The first (shrunk) :class:`~genericserver.testing.scenario.Run` of ``v`` that breaks an
    invariant (one of ``judged_by`` if given: a lab's own), drawn from ``family`` (default:
    every scenario), or None."""
    from hypothesis import find, strategies as st
    from hypothesis.errors import NoSuchExample

    from genericserver.testing.scenario import deep_schedules, run_scenario, scenarios

    with interrupts_kept() as interrupted:
        def violates(example: tuple) -> bool:
            interrupted()
            return breaks(run_scenario(example[0], example[1], v), judged_by)

        try:
            drawn = scenarios() if family is None else scenarios(kinds=family.kinds, flags=family.flags)
            scenario, schedule = find(st.tuples(drawn, deep_schedules()), violates,
                                      settings=_settings(examples, shrink, seed), random=_random(seed))
        except NoSuchExample:
            return None
        if shrink:
            scenario, schedule = simplify(scenario, schedule, violates)
    return run_scenario(scenario, schedule, v)


def breaks(run: Any, judged_by: tuple[str, ...] = ()) -> bool:
    """Does ``run`` break an invariant (one of ``judged_by``, when it names some)?"""
    from genericserver.testing.invariants import check

    return any(not judged_by or violation.invariant in judged_by for violation in check(run))


def simplify(scenario: Any, schedule: list[int], still_fails: Callable[[tuple], bool]) -> tuple[Any, list[int]]:
    """Hypothesis's shrinking, finished by hand: while one step simpler still fails, take it.

    Hypothesis shrinks the choices that drew a scenario, and a swarm-drawn scenario can stop
    at a local minimum (a /readyz probe kept beside four requests that play no part). Here a
    step is the scenario itself made simpler: a request or hook left out, a flag back to its
    default, a request sent at the start on a new connection, a schedule with fewer
    preemptions. Each step only ever goes towards a default, so this ends."""
    current = (scenario, list(schedule))
    while True:
        for candidate in _simpler(*current):
            if still_fails(candidate):
                current = candidate
                break
        else:
            return current


def _simpler(scenario: Any, schedule: list[int]) -> Iterator[tuple[Any, list[int]]]:
    """The scenarios and schedules one step simpler than these, the biggest steps first."""
    from dataclasses import fields, replace

    from genericserver.testing.scenario import HookSpec, RequestSpec, Scenario

    for i in range(len(scenario.requests)):
        yield replace(scenario, requests=scenario.requests[:i] + scenario.requests[i + 1:]), schedule
    for i in range(len(scenario.hooks)):
        yield replace(scenario, hooks=scenario.hooks[:i] + scenario.hooks[i + 1:]), schedule
    if any(schedule):
        yield scenario, []
    default = Scenario()
    for f in fields(Scenario):
        if f.name not in ("requests", "hooks", "actions") and getattr(scenario, f.name) != getattr(default, f.name):
            yield replace(scenario, **{f.name: getattr(default, f.name)}), schedule
    for items, spec, name in ((scenario.requests, RequestSpec(), "requests"), (scenario.hooks, HookSpec(), "hooks")):
        for i, item in enumerate(items):
            for f in fields(spec):
                if f.name != "kind" and getattr(item, f.name) != getattr(spec, f.name):
                    simpler_item = replace(item, **{f.name: getattr(spec, f.name)})
                    yield replace(scenario, **{name: items[:i] + (simpler_item,) + items[i + 1:]}), schedule
    for i, choice in enumerate(schedule):
        if choice:
            yield scenario, schedule[:i] + [0] + schedule[i + 1:]


def hunt_lincheck(v: Any, *, seed: Optional[int] = None, examples: int = LINCHECK_EXAMPLES, shrink: bool = True) -> Optional[tuple[Any, str]]:
    """The first (shrunk) lincheck history of ``v``'s target that is not linearizable, and why; or None."""
    from hypothesis import find, strategies as st
    from hypothesis.errors import NoSuchExample

    from genericserver.testing import lincheck
    from genericserver.testing.lincheck_scenarios import scenarios, schedules
    from genericserver.testing.lincheck_targets import TARGETS

    target = TARGETS[v.target]

    strategy = st.tuples(scenarios(v.target), schedules(), st.integers(0, 2**16))
    with interrupts_kept() as interrupted:
        def not_linearizable(example: tuple) -> bool:
            interrupted()
            with v.switched_in():
                return lincheck.explore(target, example[0], example[1], seed=example[2], tries=LINCHECK_TRIES, variant=v.name)[1] is not None

        try:
            scenario, schedule, pct_seed = find(strategy, not_linearizable, settings=_settings(examples, shrink, seed), random=_random(seed))
        except NoSuchExample:
            return None
    with v.switched_in():
        history, why = lincheck.explore(target, scenario, schedule, seed=pct_seed, tries=LINCHECK_TRIES, variant=v.name)
    assert why is not None, "the example found must fail again"
    return history, why


def _replay_lines(path: pathlib.Path) -> list[str]:
    from genericserver.testing import replay

    return [f"replay:   genericserver replay {path}", f"          {replay.command(path)}"]


def _report_lifecycle(v: Any, run: Optional[Any], out: Optional[pathlib.Path], args: argparse.Namespace) -> Optional[pathlib.Path]:
    """Print what was found and write its replay file (its path; None when nothing was found)."""
    from genericserver.testing import replay
    from genericserver.testing.choosers import compact
    from genericserver.testing.invariants import check

    if run is None:
        print(f"no counterexample for {v.name} in {args.examples or LIFECYCLE_EXAMPLES} examples ({'seed ' + str(args.seed) if args.seed is not None else 'fixed order'})")
        return None
    violations = check(run)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(replay.to_json(run.scenario, run.schedule, run.variant, violations) + "\n")
        path = out
    else:
        path = replay.save(run, violations)
    print(f"{len(violations)} invariant violation(s) in a {run.scenario.mode}-mode run of {v.name}:")
    print("\n".join(f"  - {violation}" for violation in violations))
    print(f"scenario: {run.scenario!r}")
    print(f"schedule: {compact(run.schedule)}")
    print("\n".join(_replay_lines(path)))
    return path


def _report_lincheck(v: Any, found: Optional[tuple[Any, str]], out: Optional[pathlib.Path], args: argparse.Namespace) -> Optional[pathlib.Path]:
    from genericserver.testing import lincheck

    if found is None:
        print(f"no counterexample for {v.name} in {args.examples or LINCHECK_EXAMPLES} examples ({'seed ' + str(args.seed) if args.seed is not None else 'fixed order'})")
        return None
    history, why = found
    path = lincheck.save(history, out.parent if out is not None else None)
    if out is not None:
        path.replace(out)
        path = out
    print(lincheck.report(history, why, None))
    print("\n".join(_replay_lines(path)))
    return path

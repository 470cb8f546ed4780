"""``genericserver fuzz`` and ``genericserver replay``: hunt a variant's counterexample, write it to a replay file, replay it (no Go twin).

``genericserver fuzz --variant NAME [--seed N] [--examples N] [--out FILE] [--no-shrink]`` does
from the command line what ``tests/test_known_bad_variants.py`` does in the test suite:

* a lifecycle variant (or ``real``, the server as it is): Hypothesis draws scenarios and
  schedules (:func:`genericserver.testing.scenario.scenarios`, ``deep_schedules``) until a run
  breaks an invariant, shrinks it, and the run is saved as a replay file;
* a primitive variant: lincheck's hunt on the variant's target (scenarios of calls, a schedule
  and seven PCT schedules each, as :func:`genericserver.testing.lincheck.explore` does), saved
  as a lincheck replay file.

The file goes to ``--out``, else under ``replays/`` (``$GENERICSERVER_REPLAYS``); the command
prints the violations, the scenario, the schedule and the replay command. ``--seed`` makes the
hunt repeatable (the same seed finds the same counterexample). Without ``--variant`` it hunts
the active lab's bug (``genericserver lab start``), else the server as it is. Exit status: 1 when
a counterexample was found, 0 when none was within ``--examples``, 2 for a bad flag or a variant
the hunts cannot see (the cluster world's: those have tests on virtual time instead).

``genericserver replay FILE [--trace] [--quiet] [--break FILE:LINE]`` is
``python -m genericserver.testing.replay``. Both need Hypothesis only to hunt: it is a test
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
from typing import Any, Callable, Iterator, Optional

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
    rep.add_argument("--break", dest="brk", metavar="FILE:LINE", help="stop in pdb when any goroutine reaches FILE:LINE")


def run_replay(args: argparse.Namespace) -> int:
    from genericserver.testing import replay

    if not pathlib.Path(args.file).is_file():
        print(f"genericserver replay: error: {args.file}: no such file", file=sys.stderr)
        return 2
    argv = [args.file] + (["--trace"] if args.trace else []) + (["--quiet"] if args.quiet else [])
    return replay.main(argv + (["--break", args.brk] if args.brk else []), prog="genericserver replay")


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
    with quiet_logs():
        if v.kind == "primitive":
            found = hunt_lincheck(v, seed=args.seed, examples=args.examples or LINCHECK_EXAMPLES, shrink=not args.no_shrink)
        else:
            run = hunt_lifecycle(v, seed=args.seed, examples=args.examples or LIFECYCLE_EXAMPLES, shrink=not args.no_shrink)
    if v.kind == "primitive":
        return _report_lincheck(v, found, out, args)
    return _report_lifecycle(v, run, out, args)


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


def hunt_lifecycle(v: Any, *, seed: Optional[int] = None, examples: int = LIFECYCLE_EXAMPLES, shrink: bool = True) -> Optional[Any]:
    """The first (shrunk) :class:`~genericserver.testing.scenario.Run` of ``v`` that breaks an
    invariant, or None."""
    from hypothesis import find, strategies as st
    from hypothesis.errors import NoSuchExample

    from genericserver.testing.invariants import check
    from genericserver.testing.scenario import deep_schedules, run_scenario, scenarios

    with interrupts_kept() as interrupted:
        def violates(example: tuple) -> bool:
            interrupted()
            return bool(check(run_scenario(example[0], example[1], v)))

        try:
            scenario, schedule = find(st.tuples(scenarios(), deep_schedules()), violates,
                                      settings=_settings(examples, shrink, seed), random=_random(seed))
        except NoSuchExample:
            return None
    return run_scenario(scenario, schedule, v)


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


def _report_lifecycle(v: Any, run: Optional[Any], out: Optional[pathlib.Path], args: argparse.Namespace) -> int:
    from genericserver.testing import replay
    from genericserver.testing.choosers import compact
    from genericserver.testing.invariants import check

    if run is None:
        print(f"no counterexample for {v.name} in {args.examples or LIFECYCLE_EXAMPLES} examples ({'seed ' + str(args.seed) if args.seed is not None else 'fixed order'})")
        return 0
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
    return 1


def _report_lincheck(v: Any, found: Optional[tuple[Any, str]], out: Optional[pathlib.Path], args: argparse.Namespace) -> int:
    from genericserver.testing import lincheck

    if found is None:
        print(f"no counterexample for {v.name} in {args.examples or LINCHECK_EXAMPLES} examples ({'seed ' + str(args.seed) if args.seed is not None else 'fixed order'})")
        return 0
    history, why = found
    path = lincheck.save(history, out.parent if out is not None else None)
    if out is not None:
        path.replace(out)
        path = out
    print(lincheck.report(history, why, None))
    print("\n".join(_replay_lines(path)))
    return 1

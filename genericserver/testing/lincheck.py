"""A linearizability checker on the simulation runtime, for the primitives the shutdown rests on (no Go twin).

Lincheck (JVM) and Go's race detector find races inside one concurrent object; the lifecycle
fuzzer only finds them if a whole shutdown happens to expose one. This checker looks at one
object at a time. A :class:`LinScenario` is a few goroutines (2-3), each calling 1-4
operations on one object (``add(1)``, ``wait()``...), after an optional sequential ``init``
part. The simulation runs them under a schedule (a Hypothesis-drawn list for
:class:`~genericserver.testing.choosers.Scripted`, or :class:`~genericserver.testing.choosers.PCT`)
and records the *history*: each call and each return, in the order they happened, with the
virtual time and the result (or the exception's name). An operation still blocked when nothing
could run any more is *pending*.

The history is then judged against a :class:`Model`: a plain sequential version of the object
(a counter and a flag for a wait group). It is correct (*linearizable*, Herlihy & Wing 1990) if
the operations can be put in one order that (1) respects real time (an operation that returned
before another was called comes first), (2) gives every operation that returned the result it
got, and (3) leaves every pending operation unable to proceed. The search is Wing & Gong's (1993)
depth-first one with Lowe's memoisation of (operations done, model state).

Two refinements make blocking operations checkable:

* An operation may take effect in *parts* (``Model.parts``): ``SafeWaitGroup.wait`` first
  refuses new adds, then waits for zero. Each part is placed on its own in the order, before
  the operation returns. A pending ``wait`` may have done its first part but not its second.
* A part may be *anchored* to a virtual instant (``Model.anchor``): ``"call"`` for an effect
  that cannot block (it happens before virtual time moves on, since the clock only jumps when
  nothing can run), ``"return"`` for a timeout that fired when the call returned. Parts are
  then also ordered by those instants, so ``RWLock.lock`` announcing a waiting writer at t=0
  must come before a reader that arrives at t=1.

So a ``wait`` that returned while a concurrent ``add`` was admitted has no valid order, and
neither has a ``wait`` still blocked with the counter at zero (a lost wake-up).

:func:`explore` runs one scenario under the drawn schedule and a few PCT schedules (drawing a
scenario costs Hypothesis far more than running it); :func:`check` raises
:class:`NotLinearizable`, whose message has the history as one column per goroutine and the
command that replays it (a JSON file under ``replays/``, the same place as the lifecycle
fuzzer's). The models and targets of the primitives are in
:mod:`genericserver.testing.lincheck_targets`, the Hypothesis strategies in
:mod:`genericserver.testing.lincheck_scenarios`; :data:`coverage` counts the distinct
interleavings explored per family.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Optional, Sequence

from genericserver import runtime as rt
from genericserver.testing.choosers import PCT, Chooser, Scripted, compact
from genericserver.testing.sim import Simulation, SimulationError

__all__ = [
    "Op", "LinScenario", "Model", "Target", "History", "Call", "NotLinearizable", "BLOCKED", "FINISHED", "PENDING",
    "run_history", "linearize", "explore", "check", "verdict", "format_history", "save", "load", "replay_command",
    "coverage", "interleaving",
]

BLOCKED = None  # what Model.step returns when the operation cannot proceed in that state
FINISHED = True  # the third item of a step that ends its call early
PENDING = object()  # the "result" of a call that never returned


@dataclass(frozen=True)
class Op:
    """One call: ``name(*args)``, made ``delay`` virtual seconds after the goroutine's previous one."""

    name: str
    args: tuple = ()
    delay: float = 0.0

    def __str__(self) -> str:
        call = f"{self.name}({', '.join(repr(a) for a in self.args)})"
        return f"@+{self.delay:g} {call}" if self.delay else call


@dataclass(frozen=True)
class LinScenario:
    """``init`` runs first, alone, in goroutine ``init``; then ``threads[i]`` runs in goroutine ``g<i>``."""

    threads: tuple[tuple[Op, ...], ...]
    init: tuple[Op, ...] = ()

    def size(self) -> int:
        return len(self.init) + sum(len(t) for t in self.threads)

    def to_dict(self) -> dict:
        op = lambda o: [o.name, list(o.args), o.delay]  # noqa: E731
        return {"init": [op(o) for o in self.init], "threads": [[op(o) for o in t] for t in self.threads]}

    @classmethod
    def from_dict(cls, d: dict) -> "LinScenario":
        op = lambda o: Op(o[0], tuple(o[1]), float(o[2]))  # noqa: E731
        return cls(tuple(tuple(op(o) for o in t) for t in d["threads"]), tuple(op(o) for o in d.get("init", ())))


class Model:
    """A sequential specification. ``step`` returns ``(new state, result)``, or ``BLOCKED``.

    States must be hashable (tuples, frozensets, numbers); results are compared with ``==``
    to what the real object returned (the exception's class name when it raised).
    """

    def initial(self) -> Hashable:
        raise NotImplementedError

    def parts(self, op: Op) -> int:
        """How many separate steps ``op`` takes effect in (see the module docstring)."""
        return 1

    def anchor(self, op: Op, part: int, result: Any) -> Optional[str]:
        """``"call"``, ``"return"`` or None: the virtual instant part ``part`` happens at, if fixed.

        ``result`` is what the call returned (``PENDING`` if it did not), so that, say, a
        timeout can be placed at the instant it fired and a success anywhere before.
        """
        return None

    def step(self, state: Any, op: Op, part: int, at: float) -> Optional[tuple]:
        """``(new state, result)`` for part ``part`` of ``op`` at virtual time ``at``; ``BLOCKED``
        if it cannot happen in ``state``. ``(new state, result, FINISHED)`` ends the call at
        this part (an error raised before its later parts)."""
        raise NotImplementedError


@dataclass
class Target:
    """What lincheck runs: ``make()`` builds the object inside the simulation; ``call(obj, op)``
    performs one operation and returns its result; ``model`` is the specification."""

    name: str
    make: Callable[[], Any]
    call: Callable[[Any, Op], Any]
    model: Model
    describe: str = ""


@dataclass
class Call:
    """One operation of a history: who called it, when, and what came back."""

    goroutine: str
    op: Op
    call_seq: int
    call_at: float
    ret_seq: Optional[int] = None  # None: pending, it never returned
    ret_at: Optional[float] = None
    result: Any = None

    @property
    def pending(self) -> bool:
        return self.ret_seq is None


@dataclass
class History:
    target: str
    scenario: LinScenario
    schedule: list[int]
    variant: str = "real"
    calls: list[Call] = field(default_factory=list)
    error: Optional[BaseException] = None  # how the simulation ended, if not quietly
    choices: list[int] = field(default_factory=list)
    trace: list[tuple] = field(default_factory=list, repr=False)

    def events(self) -> list[tuple[int, str, Call]]:
        """(seq, "call" or "return", call) in the order they happened."""
        evs = [(c.call_seq, "call", c) for c in self.calls] + [(c.ret_seq, "return", c) for c in self.calls if not c.pending]
        return sorted(evs, key=lambda e: e[0])  # type: ignore[arg-type, return-value]


class _RunOver(BaseException):
    """Raised in a goroutine the simulation unwinds after the run: its later calls never happen."""


def _result_of(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # the result of a call that raised is the exception's class name
        return type(exc).__name__


def run_history(target: Target, scenario: LinScenario, schedule: Sequence[int] = (), *,
                chooser: Optional[Chooser] = None, variant: str = "real", watchdog: Optional[float] = 10.0) -> History:
    """Run ``scenario`` on a fresh object under the schedule (or ``chooser``); record the history.

    ``main`` builds the object, runs ``init`` and starts one goroutine per thread, then returns:
    the run ends when every goroutine returned or is blocked for good (those calls stay pending).
    The variant, if any, must already be switched in (``variant`` is its name, for the report).
    """
    chooser = chooser if chooser is not None else Scripted(schedule)
    history = History(target.name, scenario, list(schedule), variant)
    seq = [0]

    def perform(name: str, obj: Any, op: Op) -> None:
        if op.delay:
            rt.sleep(op.delay)
        seq[0] += 1  # nothing here is a decision point: no other goroutine runs in between
        c = Call(name, op, seq[0], rt.now())
        history.calls.append(c)
        result = _result_of(lambda: target.call(obj, op))
        if rt.current() is not sim:
            raise _RunOver()  # this goroutine is being unwound: the call never returned
        seq[0] += 1
        c.ret_seq, c.ret_at, c.result = seq[0], rt.now(), result

    sim = Simulation(chooser=chooser, watchdog=watchdog)

    def main() -> None:
        obj = target.make()
        for op in scenario.init:
            perform("init", obj, op)
        for i, ops in enumerate(scenario.threads):
            rt.go(lambda ops=ops, name=f"g{i}": [perform(name, obj, op) for op in ops], name=f"g{i}")

    try:
        sim.run(main)
    except SimulationError as err:
        history.error = err
    history.choices, history.trace = list(sim.choices), sim.trace
    return history


# -- the checker ------------------------------------------------------------------------------------


def linearize(model: Model, history: History) -> Optional[list[tuple[Call, int, Any]]]:
    """An order of the history's parts that the model accepts, as ``(call, part, result)``; None if none exists."""
    calls = history.calls
    n = len(calls)
    parts = [model.parts(c.op) for c in calls]
    # the anchored instant of each part (None: anywhere between its call and its return)
    anchors: list[list[Optional[float]]] = []
    for c, k in zip(calls, parts):
        row = []
        for p in range(k):
            where = model.anchor(c.op, p, PENDING if c.pending else c.result)
            row.append(c.call_at if where == "call" else c.ret_at if where == "return" else None)
        anchors.append(row)
    # an operation may start only once every operation that returned before its call is complete
    before = [sum(1 << i for i, a in enumerate(calls) if a.ret_seq is not None and a.ret_seq < b.call_seq) for b in calls]
    complete_all = sum(1 << i for i, c in enumerate(calls) if not c.pending)
    memo: set = set()
    order: list[tuple[Call, int, Any]] = []

    def may_apply(i: int, p: int, progress: list[int], complete: int) -> bool:
        if before[i] & ~complete:
            return False  # a call that returned before this one was called is not complete yet
        c = calls[i]
        if c.pending and (p == parts[i] - 1 or model.anchor(c.op, p, PENDING) == "return"):
            return False  # that part would have made it return, and the run was over
        when = anchors[i][p] if anchors[i][p] is not None else c.call_at
        for j in range(n):
            if j == i or progress[j] == parts[j]:
                continue
            if calls[j].ret_at is not None and calls[j].ret_at < when:
                return False  # j returned at an earlier instant than this part happens
            row = anchors[j]
            for q in range(progress[j], parts[j]):
                if row[q] is not None and row[q] < when:
                    return False  # j has a part fixed at an earlier instant, still to place
        return True

    def search(progress: list[int], complete: int, state: Any) -> bool:
        key = (tuple(progress), state)
        if key in memo:
            return False
        memo.add(key)
        if complete & complete_all == complete_all and _pending_are_stuck(model, calls, progress, state):
            return True
        for i in range(n):
            p = progress[i]
            if p == parts[i] or not may_apply(i, p, progress, complete):
                continue
            c = calls[i]
            stepped = model.step(state, c.op, p, anchors[i][p] if anchors[i][p] is not None else c.call_at)
            if stepped is BLOCKED:
                continue
            new_state, result = stepped[0], stepped[1]
            last = p == parts[i] - 1 or len(stepped) > 2 and stepped[2] is FINISHED
            if last and (c.pending or result != c.result):
                continue
            progress[i] = parts[i] if last else p + 1
            order.append((c, p, result))
            if search(progress, complete | (1 << i) if last else complete, new_state):
                return True
            order.pop()
            progress[i] = p
        return False

    if search([0] * n, 0, model.initial()):
        return list(order)
    return None


def _pending_are_stuck(model: Model, calls: list[Call], progress: list[int], state: Any) -> bool:
    """Every pending call's next part is blocked in ``state``: nothing could have moved on."""
    for c, p in zip(calls, progress):
        if c.pending and model.step(state, c.op, p, c.call_at) is not BLOCKED:
            return False
    return True


class NotLinearizable(AssertionError):
    """No order of the history fits the model; the message shows the history and the replay command."""

    def __init__(self, message: str, history: History, path: Optional[pathlib.Path]):
        super().__init__(message)
        self.history, self.path = history, path


def verdict(target: Target, history: History) -> Optional[str]:
    """None if the history is linearizable; else why not, in one line."""
    if history.error is not None:
        return f"the run did not end quietly: {history.error}"
    if linearize(target.model, history) is not None:
        return None
    pending = [c for c in history.calls if c.pending]
    if pending:
        names = ", ".join(f"{c.goroutine}: {c.op}" for c in pending)
        return f"no order of these calls fits the {target.name} model (pending at the end: {names})"
    return f"no order of these calls fits the {target.name} model"


def explore(target: Target, scenario: LinScenario, schedule: Sequence[int] = (), *, seed: int = 0, tries: int = 1,
            variant: str = "real") -> tuple[History, Optional[str]]:
    """Run ``scenario`` under ``schedule``, then under ``tries - 1`` PCT schedules made from
    ``seed`` (depth 2 and 3 in turn); return the first history that is not linearizable and
    why, or the last one and None.

    Drawing a scenario costs Hypothesis several times what running it costs, so one drawn
    example is worth a few interleavings. Every run is a replayable schedule: a PCT run's
    ``choices`` replay it under :class:`~genericserver.testing.choosers.Scripted`.
    """
    history = run_history(target, scenario, schedule, variant=variant)
    steps = max(len(history.choices), 2)
    for i in range(tries):
        if i:
            history = run_history(target, scenario, chooser=PCT(seed * tries + i, depth=2 + i % 2, max_steps=steps), variant=variant)
        if variant == "real":  # what the fuzzing of the real primitives covered
            coverage.add(target.name, history)
        why = verdict(target, history)
        if why is not None:
            return history, why
    return history, None


def check(target: Target, scenario: LinScenario, schedule: Sequence[int] = (), *, seed: int = 0, tries: int = 1,
          variant: str = "real", directory: Optional[pathlib.Path] = None) -> History:
    """Explore one scenario (see :func:`explore`); raise :class:`NotLinearizable`, saving a
    replay file, if a history is not linearizable."""
    history, why = explore(target, scenario, schedule, seed=seed, tries=tries, variant=variant)
    if why is None:
        return history
    path = save(history, directory)
    raise NotLinearizable(report(history, why, path), history, path)


def report(history: History, why: str, path: Optional[pathlib.Path]) -> str:
    schedule = _trim(history.choices)
    lines = [
        f"lincheck {history.target}" + ("" if history.variant == "real" else f" (variant {history.variant!r})") + f": {why}",
        format_history(history),
        f"scenario: {history.scenario.size()} calls in {len(history.scenario.threads)} goroutines"
        + (f" after {len(history.scenario.init)} in init" if history.scenario.init else ""),
        f"schedule: {compact(schedule)} ({sum(1 for c in schedule if c)} non-zero entries, {len(history.trace)} decisions)",
    ]
    if path is not None:
        lines.append(f"replay:   {replay_command(path)}")
    return "\n".join(lines)


# -- printing -----------------------------------------------------------------------------------


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ")"
    return str(value)


def format_history(history: History, width: int = 26) -> str:
    """The history as one column per goroutine: a call where it began, ``-> result`` where it returned."""
    names = (["init"] if history.scenario.init else []) + [f"g{i}" for i in range(len(history.scenario.threads))]
    col = {name: i for i, name in enumerate(names)}
    rows = [("  time  " + "".join(f"{name:<{width}}" for name in names)).rstrip()]

    def row(at: str, name: str, text: str) -> str:
        cells = [""] * len(names)
        cells[col[name]] = text if len(text) < width else text[: width - 2] + "~"
        return f"{at:>6}  " + "".join(f"{cell:<{width}}" for cell in cells).rstrip()

    for _, kind, c in history.events():
        if kind == "call":
            rows.append(row(f"{c.call_at:g}", c.goroutine, f"{c.op}"))
        else:
            rows.append(row(f"{c.ret_at:g}", c.goroutine, f"  -> {_show(c.result)}"))
    for c in history.calls:
        if c.pending:
            rows.append(row("end", c.goroutine, "  (never returned)"))
    return "\n".join(rows)


def _trim(schedule: Sequence[int]) -> list[int]:
    out = list(schedule)
    while out and out[-1] == 0:
        out.pop()
    return out


# -- replay files -----------------------------------------------------------------------------------


def replay_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("GENERICSERVER_REPLAYS") or "replays")


def replay_command(path: os.PathLike | str) -> str:
    """The command that replays ``path``, with the interpreter running now."""
    return f"{sys.executable} -m genericserver.testing.replay {path}"


def save(history: History, directory: Optional[pathlib.Path] = None) -> pathlib.Path:
    doc = {"lincheck": history.target, "variant": history.variant, "schedule": _trim(history.choices),
           "scenario": history.scenario.to_dict()}
    text = json.dumps(doc, indent=1, sort_keys=True)
    directory = directory or replay_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"lincheck-{hashlib.sha256(text.encode()).hexdigest()[:12]}.json"
    path.write_text(text + "\n")
    return path


def load(doc: dict) -> tuple[str, LinScenario, list[int], str]:
    """(target name, scenario, schedule, variant) of a replay file's contents."""
    return doc["lincheck"], LinScenario.from_dict(doc["scenario"]), [int(c) for c in doc["schedule"]], doc.get("variant", "real")


# -- what the fuzzing covered ---------------------------------------------------------------------


def interleaving(history: History) -> tuple:
    """The order of the recorded events: (goroutine, call, "call" or "return"), in turn."""
    return tuple((c.goroutine, str(c.op), kind) for _, kind, c in history.events())


class Coverage:
    """Per scenario family: how many histories ran and how many distinct interleavings they had."""

    def __init__(self) -> None:
        self.runs: dict[str, int] = {}
        self.orders: dict[str, set] = {}

    def add(self, family: str, history: History) -> None:
        self.runs[family] = self.runs.get(family, 0) + 1
        self.orders.setdefault(family, set()).add(hash((history.scenario, interleaving(history))))

    def add_order(self, family: str, order: Hashable) -> None:
        self.runs[family] = self.runs.get(family, 0) + 1
        self.orders.setdefault(family, set()).add(hash(order))

    def lines(self) -> list[str]:
        return [f"{family:<36} {self.runs[family]:6d} runs {len(self.orders[family]):6d} distinct interleavings"
                for family in sorted(self.runs)]


coverage = Coverage()

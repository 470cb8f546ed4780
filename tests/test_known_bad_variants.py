"""The checks can fail: deliberate bugs of genericserver.testing.variants are caught (no Go twin).

For each lifecycle variant (a step of the shutdown done wrong):

* a short scenario shows the bug and the invariant it breaks, and the real server passes it;
* the generic property (the same scenario and schedule strategies as test_fuzz_lifecycle.py)
  finds a failing example within the CI budget. ``make fuzz`` also shrinks it and prints how
  many examples were needed and how many non-zero entries the shrunk schedule has.

The scenarios alone reach most of these bugs (a request anchored right at a phase boundary), so
their shrunk schedules are empty. Two races need the scheduler as well: with the scenario fixed
to one that passes without preemption, Hypothesis finds the schedule that breaks it.

For each primitive variant (a classic concurrency bug planted in one primitive), the same two
steps with genericserver.testing.lincheck: its shrunk counterexample (a scenario and at most
three preemptions) is not linearizable under the variant and is on the real code, and the
primitive's generic lincheck property finds a failing history within the CI budget.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st

from genericserver.testing import lincheck
from genericserver.testing.choosers import compact, expand
from genericserver.testing.invariants import check
from genericserver.testing.lincheck import LinScenario, Op
from genericserver.testing.lincheck_targets import TARGETS
from genericserver.testing.lincheck_scenarios import scenarios as lin_scenarios
from genericserver.testing.lincheck_scenarios import schedules as lin_schedules
from genericserver.testing.lincheck_scenarios import sparse_schedules as lin_sparse_schedules
from genericserver.testing.scenario import HookSpec, RequestSpec, Scenario, deep_schedules, run_scenario, scenarios
from genericserver.testing.variants import VARIANTS, Variant, registry

FUZZING = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
TRIES = 8  # interleavings lincheck explores per drawn scenario (see lincheck.explore)

# variant -> (a scenario that shows it, the invariant it breaks there)
SHOWCASES = {
    "not-accepting-without-hooks": (
        # the hook outlasts the delay and calls the server: it must still be let in
        Scenario(hooks=(HookSpec(duration=5.0, loopback=True),)),
        "signals_fire_once_after_prerequisites",
    ),
    "audit-shutdown-before-drain": (
        # a request in flight when the server stops accepting: its final audit event is lost
        Scenario(requests=(RequestSpec("ordinary", "start", 0.5, 3.0),)),
        "audit_complete_before_backend_shutdown",
    ),
    "slot-released-before-body": (
        # the drain does not wait for a body still being sent
        Scenario(requests=(RequestSpec("ordinary", "start", 0.5, 3.0),)),
        "tracked_requests_complete_before_drained",
    ),
    "exemption-rules-differ": (
        # a loopback request after NotAcceptingNewRequest: with_retry_after lets it through and
        # the wait group, by another rule, refuses it with a 503
        Scenario(retry_after=True, requests=(
            RequestSpec("ordinary", "start", 0.5, 3.0),
            RequestSpec("loopback", "NotAcceptingNewRequest", 0.5, 0.0),
        )),
        "answers_match_phase",
    ),
    "listener-stopped-at-not-accepting": (
        # retry-after mode: during the drain a new client must get the 429, not a refused dial
        Scenario(retry_after=True, requests=(
            RequestSpec("ordinary", "start", 0.5, 3.0),
            RequestSpec("ordinary", "NotAcceptingNewRequest", 0.5, 0.0),
        )),
        "answers_match_phase",
    ),
}


def test_every_variant_has_a_showcase():
    assert sorted([*SHOWCASES, *LINCHECK_SHOWCASES]) == sorted(VARIANTS)
    assert len(VARIANTS) >= 15


def test_every_variant_says_what_it_breaks_and_how():
    seen = set()
    for v in registry():
        assert v.name not in seen and v.name != "real"
        seen.add(v.name)
        assert v.story and "\n" not in v.story and v.breaks and v.bug_class
        assert v.kind in ("lifecycle", "primitive")
        assert (v.kind == "primitive") == (v.target in TARGETS)
        assert v.describe().startswith(f"{v.name}: {v.story}")
    classes = " | ".join(v.bug_class for v in registry())
    for wanted in ("check outside the lock", "lost wake-up", "missed notify in select", "double-counted token",
                   "release before record", "cancel that forgets children", "Once running twice",
                   "a reader admitted while a writer waits"):
        assert wanted in classes


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_switching_a_variant_in_and_out_leaves_the_real_code(name):
    v = VARIANTS[name]()
    before = [(owner, attr, vars(owner).get(attr)) for owner, attr, _ in v.patches()]
    with v.switched_in():
        assert all(getattr(owner, attr) is not old for owner, attr, old in before)
    assert all(vars(owner).get(attr) is old for owner, attr, old in before)
    assert list(Variant().patches()) == []


@pytest.mark.parametrize("name", sorted(SHOWCASES))
def test_variant_breaks_its_invariant(name):
    scenario, invariant = SHOWCASES[name]
    assert check(run_scenario(scenario)) == [], "the real server must pass the showcase"
    broken = {v.invariant for v in check(run_scenario(scenario, variant=VARIANTS[name]()))}
    assert invariant in broken


# variant -> a scenario that the variant passes without preemption, but not under every schedule
RACES = {
    # retry-after mode, a loopback request the moment the server stops accepting: unpreempted it
    # joins the wait group before the wait begins; dispatched after that, with_retry_after lets it
    # through (exempt) and the wait group, by another rule, refuses it with a 503
    "exemption-rules-differ": Scenario(retry_after=True, requests=(RequestSpec("loopback", "NotAcceptingNewRequest", 0.0, 0.0, "reused"),)),
    # a request without delays, sent as the hooks finish: the drain must still wait for the last
    # chunk of its body
    "slot-released-before-body": Scenario(requests=(RequestSpec("ordinary", "PreShutdownHooksStopped", 0.0, 0.0, "new"),)),
}


def hunting_settings(budget: int):
    return settings(
        max_examples=budget,
        derandomize=not FUZZING,
        database=None,
        deadline=None,
        phases=list(Phase) if FUZZING else [Phase.generate],
        suppress_health_check=list(HealthCheck),
    )


@pytest.mark.parametrize("name", sorted(RACES))
def test_property_a_schedule_alone_exposes_the_race(name):
    scenario = RACES[name]
    assert check(run_scenario(scenario, [], VARIANTS[name]())) == [], "without preemption the race is not hit"
    runs = []

    def violates(schedule) -> bool:
        runs.append(schedule)
        return bool(check(run_scenario(scenario, schedule, VARIANTS[name]())))

    schedule = find(deep_schedules(), violates, settings=hunting_settings(600))
    preemptions = {i: c for i, c in enumerate(schedule) if c}  # decision index -> choice
    print(f"\n{name}: a schedule with {len(preemptions)} non-zero entries after {len(runs)} runs: {preemptions}")
    assert check(run_scenario(scenario, schedule)) == [], "the real server survives the same schedule"


@pytest.mark.parametrize("name", sorted(SHOWCASES))
def test_property_catches_known_bad_variant(name):
    calls = []

    def violates(example) -> bool:
        scenario, schedule = example
        calls.append(1)
        failed = bool(check(run_scenario(scenario, schedule, VARIANTS[name]())))
        if failed and not hasattr(violates, "first"):
            violates.first = len(calls)  # type: ignore[attr-defined]
        return failed

    # fuzz draws at random, not in the CI profile's fixed order: the exemption variant can take
    # thousands of examples there, and the search stops at the first failure anyway
    found = find(st.tuples(scenarios(), deep_schedules()), violates, settings=hunting_settings(6000 if FUZZING else 1200))
    scenario, schedule = found
    assert check(run_scenario(scenario, schedule, VARIANTS[name]())), "the example found must fail again"
    nonzero = sum(1 for c in schedule if c)
    print(f"\n{name}: caught after {violates.first} examples ({len(calls)} runs); "  # type: ignore[attr-defined]
          f"schedule has {nonzero} non-zero entries; scenario {scenario!r}")


# -- primitive variants, caught by lincheck ---------------------------------------------------------

# variant -> its shrunk counterexample: (scenario, the schedule's non-zero entries by position)
LINCHECK_SHOWCASES = {
    # add() saw no wait flag, then wait() ran to the end with the counter at 0, then add() went on
    "safe-wait-group-check-outside-lock": (LinScenario(((Op("wait"),), (Op("add", (1,)),))), {2: 1, 3: 1}),
    # wait() read the count before an add() and reported 0; a done() a second later needed a token
    "rate-limited-count-outside-lock": (
        LinScenario(((Op("done"), Op("wait")), (Op("add", (1,)), Op("done", (), 1.0)))), {5: 1}),
    # the second done() parks on the limiter (one token a second); the stop at 1.5 s ends wait(),
    # which still counts it as active: (2, 1, Canceled) where Go says (2, 0, Canceled). No
    # preemption needed: virtual time does it
    "rate-limited-count-after-limiter": (
        LinScenario(((Op("wait"),), (Op("done", (), 1.0), Op("done")), (Op("stop", (), 1.5),)), (Op("add", (1,)), Op("add", (1,)))), {}),
    # wait() saw 1 in flight, the last done() came before its event existed: it sleeps forever
    "wait-group-lost-wake-up": (LinScenario(((Op("add", (-1,)),), (Op("wait"),)), (Op("add", (1,)),)), {2: 1, 3: 1}),
    # the caller's select made its ready event just after put() looked: it times out with the item there
    "handoff-missed-notify": (LinScenario(((Op("put", (0,)),), (Op("take"),))), {1: 1, 2: 2}),
    # at t=0.5 one token is back; three callers see it and two of them take it
    "limiter-double-counts-token": (LinScenario(tuple((Op("allow", (), 0.5),) for _ in range(3))), {7: 1}),
    # shutdown() returned with 1 event handed over out of 2 accepted
    "audit-finished-before-flush": (
        LinScenario(((Op("process", (0,)), Op("process", (0,)), Op("shutdown")), (Op("process", (0,)),))), {20: 1}),
    # wait() returned and observed() still said 0: woken before the observer ran
    "signal-wakes-before-record": (LinScenario(((Op("signal"),), (Op("wait"), Op("observed")))), {1: 1, 3: 2}),
    # the child was adopted after the cancel had taken the children: it is never cancelled
    "cancel-forgets-children": (LinScenario(((Op("child_wait"),), (Op("cancel", (0,)),))), {3: 1}),
    # the second do() waited on the lock, then ran the function again
    "once-runs-twice": (LinScenario(((Op("do"),), (Op("do"),))), {3: 1}),
    # a writer waits from t=0; at t=1 a reader still gets in (no preemption needed: virtual time does it)
    "reader-overtakes-waiting-writer": (
        LinScenario(((Op("rlock"), Op("runlock", (), 1.0), Op("rlock"), Op("runlock")), (Op("lock"), Op("unlock")))), {}),
}


def lin_verdict(name: str, scenario: LinScenario, schedule: list, variant_name: str = "real"):
    v = VARIANTS[variant_name]() if variant_name != "real" else Variant()
    target = TARGETS[VARIANTS[name].target]
    with v.switched_in():
        history = lincheck.run_history(target, scenario, schedule, variant=variant_name)
    return lincheck.verdict(target, history)


@pytest.mark.parametrize("name", sorted(LINCHECK_SHOWCASES))
def test_primitive_variant_fails_its_shrunk_counterexample(name):
    scenario, preemptions = LINCHECK_SHOWCASES[name]
    schedule = expand(preemptions)
    assert len(preemptions) <= 3
    assert lin_verdict(name, scenario, schedule) is None, "the real primitive must pass the counterexample"
    why = lin_verdict(name, scenario, schedule, name)
    assert why is not None and why.startswith("no order of these calls fits the")


@pytest.mark.parametrize("name", sorted(LINCHECK_SHOWCASES))
def test_property_lincheck_catches_primitive_variant(name):
    v = VARIANTS[name]()
    target = TARGETS[v.target]
    runs = []

    def not_linearizable(example) -> bool:
        scenario, schedule, seed = example
        runs.append(1)
        with v.switched_in():
            _, why = lincheck.explore(target, scenario, schedule, seed=seed, tries=TRIES, variant=name)
        if why is not None and not hasattr(not_linearizable, "first"):
            not_linearizable.first = len(runs)  # type: ignore[attr-defined]
        return why is not None

    strategy = st.tuples(lin_scenarios(v.target), lin_schedules(), st.integers(0, 2**16))
    scenario, schedule, seed = find(strategy, not_linearizable, settings=hunting_settings(2000 if FUZZING else 400))
    with v.switched_in():
        assert lincheck.explore(target, scenario, schedule, seed=seed, tries=TRIES)[1], "the example found must fail again"
    note = ""
    if FUZZING:
        # then the fewest preemptions that expose it in that (shrunk) scenario, on the plain schedule
        def fails(schedule: list) -> bool:
            return lin_verdict(name, scenario, schedule, name) is not None

        schedule = find(lin_schedules(), fails, settings=hunting_settings(2000))
        if sum(1 for c in schedule if c) > 3:
            # shrinking can stop in a dense schedule's local minimum: look among the sparse
            # ones alone (NoSuchExample if no three preemptions expose it)
            schedule = find(lin_sparse_schedules(), fails, settings=hunting_settings(2000))
        assert sum(1 for c in schedule if c) <= 3
        note = f", shrunk to {scenario.size()} calls and schedule {compact(schedule)}"
    print(f"\n{name}: caught after {not_linearizable.first} examples ({len(runs)} runs){note}")  # type: ignore[attr-defined]

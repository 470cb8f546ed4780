"""The invariants can fail: deliberate bugs of genericserver.testing.variants are caught (no Go twin).

For each known-bad variant:

* a short scenario shows the bug and the invariant it breaks, and the real server passes it;
* the generic property (the same scenario and schedule strategies as test_fuzz_lifecycle.py)
  finds a failing example within the CI budget. ``make fuzz`` also shrinks it and prints how
  many examples were needed and how many non-zero entries the shrunk schedule has.

The scenarios alone reach most of these bugs (a request anchored right at a phase boundary), so
their shrunk schedules are empty. Two races need the scheduler as well: with the scenario fixed
to one that passes without preemption, Hypothesis finds the schedule that breaks it.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st

from genericserver.testing.invariants import check
from genericserver.testing.scenario import HookSpec, RequestSpec, Scenario, deep_schedules, run_scenario, scenarios
from genericserver.testing.variants import VARIANTS

FUZZING = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"

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
    assert sorted(SHOWCASES) == sorted(VARIANTS)
    assert len(VARIANTS) >= 5


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


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_property_catches_known_bad_variant(name):
    calls = []

    def violates(example) -> bool:
        scenario, schedule = example
        calls.append(1)
        failed = bool(check(run_scenario(scenario, schedule, VARIANTS[name]())))
        if failed and not hasattr(violates, "first"):
            violates.first = len(calls)  # type: ignore[attr-defined]
        return failed

    found = find(st.tuples(scenarios(), deep_schedules()), violates, settings=hunting_settings(2000 if FUZZING else 1200))
    scenario, schedule = found
    assert check(run_scenario(scenario, schedule, VARIANTS[name]())), "the example found must fail again"
    nonzero = sum(1 for c in schedule if c)
    print(f"\n{name}: caught after {violates.first} examples ({len(calls)} runs); "  # type: ignore[attr-defined]
          f"schedule has {nonzero} non-zero entries; scenario {scenario!r}")

"""The model held to the real node: `genericserver cluster` against tests/parity/real-node.json (the delete scenarios).

record_node.py recorded each scenario 3 times on a real one-node Kubernetes v1.36.0 (`make parity-node`);
node_replay.py runs the simulated world with the same Deployment, action and load, and the lags the
node showed. Its order of the pod's milestones must keep every order the node kept, and its loss (seconds
of the Service's traffic) must lie in the node's range. In real time (scale 1), as the node ran: a run
takes 10-25 s, nearly all of it waiting. Each scenario's replay is a file of its own,
test_parity_node_<scenario>.py, so that the workers run them side by side; this one checks the corpus,
the rule, and that a model changed on purpose fails.
"""

from __future__ import annotations

from tests.parity import node_replay as nr
from tests.parity.node_scenarios import SCENARIOS

CORPUS = nr.load_corpus()


def assert_follows(name: str, **overrides) -> nr.Verdict:
    entry = CORPUS["scenarios"][name]
    events, loss, _ = nr.model_run(entry, **overrides)
    return nr.check(entry, events, loss)


def test_the_corpus_has_every_scenario_three_times_with_what_makes_it():
    assert set(CORPUS["scenarios"]) == set(SCENARIOS) and len(SCENARIOS) >= 7
    assert CORPUS["node"]["kubernetes"] == "v1.36.0"
    for name, entry in CORPUS["scenarios"].items():
        assert len(entry["runs"]) >= 3, name
        for run in entry["runs"]:
            for pod in nr.going(run):
                got = nr.times(run["events"], pod)
                assert {"terminating", "kill", "sigterm", "ShutdownInitiated", "proxy-out", "exit", "pod-gone"} <= set(got), (name, pod, got)
    # what each scenario is about, as the node showed it
    for run in CORPUS["scenarios"]["delete-grace-3"]["runs"]:
        assert 3.0 <= nr.times(run["events"], "victim")["sigkill"] < 3.5
    for run in CORPUS["scenarios"]["prestop-sleep"]["runs"]:
        t = nr.times(run["events"], "victim")
        assert t["prestop"] < 0.2 and 5.0 <= t["sigterm"] < 5.5
    # without the delay requests were lost (not in every run: the node's window is a fifth of a second)
    assert sum(r["load"]["lost"] for r in CORPUS["scenarios"]["no-delay"]["runs"]) > 0
    assert all(r["load"]["lost"] == 0 for r in CORPUS["scenarios"]["delete"]["runs"])


def test_fixed_pairs_are_the_orders_every_run_kept_far_enough_apart():
    # a and b swap between runs; b and c are 0.3 s apart or more in every run; a and c too
    runs = [{"a": 0.0, "b": 0.05, "c": 1.0}, {"b": 0.0, "a": 0.03, "c": 2.0}, {"a": 0.0, "b": 0.5, "c": 0.8}]
    assert nr.fixed_pairs(runs) == {("a", "c"), ("b", "c")}
    # closer than MIN_GAP in one run: no order fixed between them
    assert nr.fixed_pairs(runs + [{"a": 0.0, "b": 0.7, "c": 0.8}]) == {("a", "c")}


def test_the_replay_fails_a_model_that_stops_listening_before_kube_proxy_has_moved():
    # deploy/ without its shutdown delay, held to the recording of deploy/ with it: the server stops
    # accepting before kube-proxy's rules leave it, which the node never showed (4.8 s apart or more)
    v = assert_follows("delete", shutdown_delay=0.0)
    assert not v.orders_ok
    assert any("NotAcceptingNewRequest before proxy-out" in why for why in v.why), v.why


def test_the_replay_fails_a_model_that_loses_what_the_node_did_not():
    # the same, with a kube-proxy that takes a second: a third of the requests are refused for about
    # a second (0.3 s of traffic), where the node lost none with the delay in place
    v = assert_follows("delete", shutdown_delay=0.0, proxy_lag=1.0)
    assert not v.loss_ok and v.model_loss > 0.2, (v.model_loss, v.why)

"""Tests for ``genericserver cluster --roll``: a Deployment's rollout under load, on real sockets.

Time runs at a tenth (or a twentieth) of real time. The assertions hold with the other core
busy: they say "no request lost" or "some lost" and compare the order of events, never exact
counts or wall times. With a preStop sleep of 5 s against 1 s of lag, the margin is 0.4 s of
real time. The order of the controllers' steps for other fenceposts is tested on virtual time
(tests/test_cluster_deployment.py).
"""

from __future__ import annotations

from collections import Counter

import pytest

from genericserver.cluster import cli
from genericserver.cluster.scenario import ScenarioConfig, run_scenario
from genericserver.cmd import OneLineParser

# three clients, a request every 20 ms each: ten or more inside the shortest window these tests
# judge (0.2 s); at 5 ms the load alone was most of their CPU time
FAST = dict(scale=0.1, workers=3, interval=0.02, warmup=0.5, tail=0.5, roll=True)


def firsts(result, signal: str) -> dict[str, float]:
    """Runtime time of ``signal`` per pod."""
    out: dict[str, float] = {}
    for e in result.events:
        if e.get("signal") == signal:
            out.setdefault(e.get("pod"), e.at)
    return out


def test_a_rollout_whose_prestop_sleep_outlasts_the_lags_loses_no_request():
    r = run_scenario(ScenarioConfig(endpoints_lag=0.5, proxy_lag=0.5, pre_stop="sleep", pre_stop_sleep=5, **FAST))
    # enough requests for "none lost" to mean something (every pod served some, below); two
    # suites at once on two cores once sent 93 where one sends about 300
    assert r.total > 30
    # the sleep outlasts the lags by 4 s, 0.4 s of real time: every refusal counts, however late
    assert r.lost == 0, r.outcome.as_dict()
    # it was a rolling update: every old pod replaced by a new one, one at a time
    deployment = [e.name for e in r.events if e.kind == "deployment"]
    assert deployment[1:4] == ["web: Scaled up replica set web-v2 from 0 to 1",
                               "web: Scaled down replica set web-v1 from 3 to 2",
                               "web: Scaled up replica set web-v2 from 1 to 2"]
    served = {s.pod for s in r.samples if s.outcome == "ok"}
    assert {"web-0", "web-1", "web-2", "web-v2-0", "web-v2-1", "web-v2-2"} <= served


def test_a_rollout_without_prestop_or_delay_loses_requests_to_closed_listeners():
    # at a tenth of real time each old pod's window is 0.2 s: at a twentieth, two suites at once
    # on two cores sent 68 requests in all and none fell inside one
    r = run_scenario(ScenarioConfig(endpoints_lag=1.0, proxy_lag=1.0, **FAST))
    assert r.lost > 0
    assert r.outcome.by_cause["closed-but-routed"] > 0, r.outcome.as_dict()
    # how many and why: every request lost was aimed at an old pod. The refusals are the
    # connections kube-proxy still routed to one whose listener had closed; anything else (a 503,
    # a reset) was in flight at a pod as it stopped accepting: at most one per client and pod
    lost = [s for s in r.samples if s.outcome != "ok"]
    assert {s.pod for s in lost} <= {"web-0", "web-1", "web-2"}, r.outcome.as_dict()
    assert r.outcome.by_cause["closed-but-routed"] == len([s for s in lost if s.outcome == "refused"])
    in_flight = Counter(s.pod for s in lost if s.outcome != "refused")
    assert all(n <= FAST["workers"] for n in in_flight.values()), r.outcome.as_dict()
    # each refusal happened after the pod it was aimed at stopped accepting, never before
    stopped = firsts(r, "NotAcceptingNewRequest")
    refused = [s for s in r.samples if s.outcome == "refused" and s.pod]
    assert refused and all(s.done > stopped[s.pod] for s in refused)
    # and the timeline puts the first refusal after the first listener closed
    rows = [(row.component, row.text) for row in r.rows]
    first_refused = next(i for i, (c, t) in enumerate(rows) if c == "client" and t.startswith("first refused"))
    first_stop = next(i for i, (c, t) in enumerate(rows) if c == "pod" and t.endswith("NotAcceptingNewRequest"))
    assert first_stop < first_refused


def test_the_cli_takes_the_fenceposts_and_refuses_bad_ones(capsys):
    def parse(*argv):
        p = OneLineParser(prog="genericserver")
        cli.add_parser(p.add_subparsers(dest="command", parser_class=OneLineParser))
        return p.parse_args(["cluster", *argv])

    cfg = cli.config_from_args(parse("--roll", "--max-surge", "0", "--max-unavailable", "50%"))
    assert (cfg.roll, cfg.max_surge, cfg.max_unavailable) == (True, 0, "50%")
    assert isinstance(cli.config_from_args(parse()).max_surge, str)  # "25%", the default
    with pytest.raises(SystemExit) as exit:
        parse("--roll", "--max-surge", "lots")
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --max-surge: invalid value 'lots'" in err, err

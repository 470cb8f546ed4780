"""The API surface corpus (tests/parity/README.md, "The API surface corpus"): 202 requests, hand-written
ones and those kubectl v1.36 and the `kubernetes` Python client send, replayed in order against one
`genericserver serve` and compared with what kube-apiserver v1.36.0 answered (no Go twin).

Every exchange is compared as the generated corpus's are (tests/parity/api_rules.py): what is not
built is taken out of kube's answer (`LEFT_OUT`: managed fields), a few parts are set aside on both
sides, each precisely (`ASIDES`: a Table's column descriptions, the entries of a discovery document
for resources serve does not serve), and an exchange that still differs must match a rule of
`RULES`, one predicate per cause; one that matches none fails. The count of each is the "API
corpus" column of walkthrough 10.2's table "Where we differ from kube-apiserver, measured".
"""

from __future__ import annotations

import collections
import copy
import json
from pathlib import Path

import pytest

from parity import api, api_rules
from parity.api_replay import RECORDED, replay


def kube_answer(exchange: dict) -> dict:
    return api_rules.kube_answer(exchange["answer"])


def differs(exchange: dict, ours: dict) -> bool:
    """Whether our answer is not kube-apiserver's, once the masking rule, LEFT_OUT and the ASIDES
    are applied."""
    kube, mine = api_rules.compare(exchange["answer"], ours)
    return kube != mine


def classified(replayed: list[tuple[dict, dict]]) -> list[tuple[dict, dict, dict, str | None]]:
    """(exchange, kube's compared answer, ours, the rule that explains a difference or None), for
    each exchange that differs; the corpus is one sequence (one server, the objects of `default`)."""
    seq, out = api_rules.Sequence(), []
    for exchange, ours in replayed:
        kube, mine = api_rules.compare(exchange["answer"], ours)
        if kube == mine:
            if api_rules.keeps_object(exchange["method"], exchange["path"], exchange.get("body"), kube["status"]):
                seq.differed(exchange["method"], exchange["path"])
            continue
        e = api_rules.Exchange(exchange["method"], exchange["path"], exchange.get("headers") or {}, exchange.get("body"),
                               kube, mine, diverged=seq.diverged(exchange["method"], exchange["path"]))
        out.append((exchange, kube, mine, api_rules.classify(e)))
        seq.differed(exchange["method"], exchange["path"])
    return out


@pytest.fixture(scope="module")
def replayed() -> list[tuple[dict, dict]]:
    return list(replay())


def _show(exchange: dict, kube: dict, ours: dict) -> str:
    keys = [k for k in kube if kube[k] != ours.get(k)]
    lines = [f"== {exchange['id']}: {exchange['method']} {exchange['path']}"]
    for k in keys:
        lines.append(f"   {k}: kube-apiserver {json.dumps(kube[k])[:1500]}")
        lines.append(f"   {k}: ours           {json.dumps(ours.get(k))[:1500]}")
    return "\n".join(lines)


def test_every_recorded_exchange_is_answered_as_kube_apiserver_does_or_a_rule_says_why(replayed):
    assert len(replayed) == len(RECORDED) >= 150
    unexpected = [_show(e, kube, ours) for e, kube, ours, rule in classified(replayed) if rule is None]
    assert not unexpected, "differences from kube-apiserver no rule of api_rules.RULES explains:\n" + "\n".join(unexpected)


def test_the_check_order_of_each_verb_matches_kube_apiserver(replayed):
    # the two-fault exchanges: which status code wins is the order of the checks in handlers/*.go
    two_faults = [(e, o) for e, o in replayed if "two-faults" in e["id"]]
    assert len(two_faults) >= 8
    assert [(e["id"], o["status"]) for e, o in two_faults] == [(e["id"], e["answer"]["status"]) for e, _ in two_faults]


def test_accept_q0_and_specificity_are_answered_as_kube_apiserver_does(replayed):
    by_id = {e["id"]: (e, o) for e, o in replayed}
    for id in ("get-json-q0", "get-specificity", "get-q-order"):
        e, o = by_id[id]
        assert (o["status"], o["headers"].get("content-type")) == (e["answer"]["status"], e["answer"]["headers"].get("content-type")), id


@pytest.mark.parametrize("change", ["status", "header", "body", "check-order"])
def test_a_changed_answer_fails_the_comparison(change):
    # kube-apiserver's own answer, as ours would be if it were the same, passes; each change fails
    exchange = next(e for e in RECORDED if e["id"] == ("create-two-faults-type-and-dry-run" if change == "check-order" else "get"))
    ours = copy.deepcopy(exchange["answer"])
    ours["body"] = api_rules.without_managed_fields(ours["body"])
    assert not differs(exchange, ours)
    if change == "status":
        ours["status"] = 404
    elif change == "header":
        ours["headers"]["cache-control"] = "public"
    elif change == "body":
        ours["body"]["data"]["a"] = "2"
    else:  # the options checked before the Content-Type: 400 for dryRun where Go answers 415
        assert ours["status"] == 415
        ours["status"], ours["body"]["code"] = 400, 400
    assert differs(exchange, ours)


def test_the_walkthrough_table_shows_the_api_corpus_counts(replayed):
    computed: collections.Counter = collections.Counter(rule for _, _, _, rule in classified(replayed))
    for exchange, _ in replayed:
        computed.update(f"aside:{a}" for a in api_rules.asides_used(api_rules.kube_answer(exchange["answer"])))
    rows = api_rules.walkthrough_rows()
    assert set(computed) <= set(rows), "a rule or aside that is not in walkthrough 10.2's table"
    assert {key: cells[0] for key, cells in rows.items()} == {key: str(computed[key]) for key in rows}


@pytest.mark.parametrize("kind", ["table-cell", "table-column", "discovery-resource"])
def test_what_is_set_aside_is_only_what_the_aside_names(kind):
    # a Table's cell or column name, or a discovery entry for a resource serve serves, still fails
    id = {"table-cell": "get-table", "table-column": "get-table", "discovery-resource": "api-v1"}[kind]
    exchange = next(e for e in RECORDED if e["id"] == id)
    ours = copy.deepcopy(exchange["answer"])
    ours["body"] = api_rules.without_managed_fields(ours["body"])
    ours["body"] = api_rules.set_aside(ours)["body"]  # what serve would answer, if it answered as kube does
    ours["headers"].pop("transfer-encoding", None)
    assert not differs(exchange, ours)
    if kind == "table-cell":
        ours["body"]["rows"][0]["cells"][1] = 2
    elif kind == "table-column":
        ours["body"]["columnDefinitions"][1]["name"] = "Keys"
    else:
        configmaps = next(r for r in ours["body"]["resources"] if r["name"] == "configmaps")
        configmaps["shortNames"] = ["cms"]
    assert differs(exchange, ours)

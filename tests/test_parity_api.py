"""The API surface corpus (tests/parity/README.md, "The API surface corpus"): 202 requests, hand-written
ones and those kubectl v1.36 and the `kubernetes` Python client send, replayed in order against one
`genericserver serve` and compared with what kube-apiserver v1.36.0 answered (no Go twin).

Two lists say where we differ, each entry with its reason, and each is in walkthrough.md's table
"Where we differ from kube-apiserver, measured":
* `LEFT_OUT`: what this project does not build, taken out of kube-apiserver's answers before comparing
  (managed fields, whole);
* `KNOWN_DIFFERENCES`: exchanges that still differ, grouped by cause. A listed exchange that stops
  differing fails (drop it from the list), as does one that differs and is not listed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from parity import api
from parity.api_replay import RECORDED, replay


def _yaml_without_managed_fields(text: str) -> str:
    """A YAML body less each ``managedFields:`` block (the lines under it: deeper, or its list's
    items at its own indentation)."""
    out, inside = [], None
    for line in text.splitlines(keepends=True):
        indent = len(line) - len(line.lstrip(" "))
        if inside is not None and (indent > inside or (indent == inside and line.lstrip(" ").startswith("- "))):
            continue
        inside = None
        if line.strip() == "managedFields:":
            inside = indent
            continue
        out.append(line)
    return "".join(out)


def _without_managed_fields(body: Any) -> Any:
    if isinstance(body, str):
        return _yaml_without_managed_fields(body)
    body = copy.deepcopy(body)

    def strip(x: Any) -> None:
        if isinstance(x, dict):
            if isinstance(x.get("metadata"), dict):
                x["metadata"].pop("managedFields", None)
            for v in x.values():
                strip(v)
        elif isinstance(x, list):
            for v in x:
                strip(v)

    strip(body)
    return body


# what is not built here, and so taken out of kube-apiserver's answers: (reason, how)
LEFT_OUT = {
    "managedFields": ("server-side apply and its managed fields are not built (walkthrough 9.1): kube-apiserver "
                      "adds metadata.managedFields to every object a write touches", _without_managed_fields),
}

# cause -> (reason, [exchange ids])
KNOWN_DIFFERENCES: dict[str, tuple[str, list[str]]] = {
    "table-descriptions": (
        "a Table's column descriptions are the API's field documentation, generated from k8s.io/api's Go "
        "comments; ours are in our own words, since the project copies no Go comments",
        ["get-table", "get-table-v1beta1", "watch-table", "create-table-accept", "get cm#0", "get cm -l app=x#0",
         "get cm --field-selector metadata.name=k-demo#0"]),
    "chunked": (
        "both servers frame as net/http does (a length when the handler's whole body fit the 2048-byte "
        "response buffer, chunked past it: tests/test_parity.py, body-overflows-the-buffer), but these bodies "
        "pass 2048 bytes only in kube-apiserver: its Table's long column descriptions (list-table, 2.2 KiB "
        "there, 1.1 KiB here), its managedFields (delete-all: 2.3 KiB with them, 1.6 KiB without), its 40 "
        "core resources and 20 groups (api-v1, api-versions: 6-18 KiB there, under 1 KiB here)",
        ["list-table", "api-v1", "delete-all", "api-versions#0", "api-versions#1", "auth can-i create configmaps#2"]),
    "version": (
        "/version says what built the server: Go's toolchain and kube's commit there, CPython and "
        "genericserver's version here",
        ["version", "version -o json#0", "get_code#0"]),
    "discovery": (
        "kube-apiserver serves some 40 core resources and 20 groups, serve configmaps and the reviews: the "
        "discovery documents list other resources (authentication.k8s.io/v1 has tokenreviews there, not here), "
        "and so their ETags differ (kubectl's second discovery gets 304 there, 200 here)",
        ["api-v1", "api-versions#0", "api-versions#1", "auth can-i create configmaps#0",
         "auth can-i create configmaps#1", "auth can-i create configmaps#2", "apis-authentication"]),
    "openapi": (
        "the OpenAPI documents describe what each server serves, so a document's hash in its URL is kube's "
        "(ours redirects it to our hash, as handler3 does on a stale hash); and kube-apiserver's /openapi/v3 root "
        "is kube-aggregator's (openapiv3/aggregator.go:258, http.ServeContent with no Content-Type: sniffed as "
        "text/plain), where the generic apiserver's, which serve is, is kube-openapi's handler3 "
        "(handler3/handler.go:219 sets application/json)",
        ["replace -f {replace}#0", "replace -f {replace}#1", "apply --validate=false -f {apply}#3"]),
    "error-texts": (
        "patch-result-wrong-type's message shows the patched object, which holds kube-apiserver's managedFields "
        "(server-side apply is not built, walkthrough 9.1), inside a text the LEFT_OUT rule cannot reach; its "
        "causes' message shows the object's uid, resourceVersion and times as they are",
        ["patch-result-wrong-type"]),
    "server-side-apply": (
        "server-side apply is not built (walkthrough 9.1): an apply patch gets 415, so the key it adds in "
        "kube-apiserver (data.ap) is missing from the configmap a later patch answers",
        ["patch-apply", "patch-dry-run"]),
    "kube-apiserver-only": (
        "kube-apiserver, not the generic apiserver: it turns anonymous authentication off under "
        "--authorization-mode=AlwaysAllow (BuiltInAuthenticationOptions), and its NamespaceLifecycle "
        "admission refuses a write to a namespace that does not exist; serve has neither",
        ["get-anonymous", "namespace-missing"]),
}

_LISTED = {i for _, ids in KNOWN_DIFFERENCES.values() for i in ids}


def kube_answer(exchange: dict) -> dict:
    answer = api.compared(exchange["answer"])
    for _, how in LEFT_OUT.values():
        answer["body"] = how(answer["body"])
    return answer


def differs(exchange: dict, ours: dict) -> bool:
    """Whether our answer is not kube-apiserver's, once the masking rule and LEFT_OUT are applied."""
    return kube_answer(exchange) != api.compared(ours)


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


def test_every_recorded_exchange_is_answered_as_kube_apiserver_does_or_its_difference_is_listed(replayed):
    assert len(replayed) == len(RECORDED) >= 150
    unexpected, gone = [], []
    for exchange, ours in replayed:
        if differs(exchange, ours) and exchange["id"] not in _LISTED:
            unexpected.append(_show(exchange, kube_answer(exchange), api.compared(ours)))
        if not differs(exchange, ours) and exchange["id"] in _LISTED:
            gone.append(exchange["id"])
    assert not unexpected, "differences from kube-apiserver not listed in KNOWN_DIFFERENCES:\n" + "\n".join(unexpected)
    assert not gone, f"listed in KNOWN_DIFFERENCES but answered as kube-apiserver does now (drop them): {gone}"


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
    ours["body"] = _without_managed_fields(ours["body"])
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


def test_the_walkthrough_table_lists_every_cause_with_its_count():
    text = (Path(__file__).parent.parent / "walkthrough.md").read_text()
    table = text.split("### 10.2 Where we differ from kube-apiserver, measured", 1)[1].split("\n### ", 1)[0]
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in table.splitlines() if line.startswith("| ")}
    for key in LEFT_OUT:
        assert rows.get(f"left out: `{key}`") == "every exchange", key
    for key, (_, ids) in KNOWN_DIFFERENCES.items():
        assert rows.get(f"`{key}`") == str(len(ids)), key
    listed = {k for k in rows if k.startswith("`")}
    assert listed == {f"`{k}`" for k in KNOWN_DIFFERENCES}

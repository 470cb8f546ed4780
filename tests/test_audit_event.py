"""Tests of genericserver.audit.event: the audit.k8s.io/v1 Event JSON shape."""

from __future__ import annotations

import json

import pytest

from genericserver.audit.event import (
    Event,
    Level,
    ObjectReference,
    Stage,
    Status,
    UserInfo,
    event_from_dict,
    format_micro_time,
    ord_level,
    parse_micro_time,
)

# 2024-05-06T07:08:09.123456Z
TS = 1714979289.123456


def test_empty_event_shape():
    assert Event().to_dict() == {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "",
        "auditID": "",
        "stage": "",
        "requestURI": "",
        "verb": "",
        "user": {},
        "requestReceivedTimestamp": None,
        "stageTimestamp": None,
    }


def test_full_event_shape_and_field_order():
    ev = Event(
        level=Level.METADATA,
        audit_id="a1",
        stage=Stage.RESPONSE_COMPLETE,
        request_uri="/api/v1/namespaces/default/pods?watch=true",
        verb="watch",
        user=UserInfo("admin", "u1", ["system:masters", "system:authenticated"], {"k": ["v"]}),
        impersonated_user=UserInfo("bob", groups=["g"]),
        source_ips=["127.0.0.1"],
        user_agent="kubectl/v1.36.0",
        object_ref=ObjectReference(resource="pods", namespace="default", api_version="v1"),
        response_status=Status(code=200),
        request_received_timestamp=TS,
        stage_timestamp=TS + 1,
        annotations={"authorization.k8s.io/decision": "allow"},
    )
    line = json.dumps(ev.to_dict(), separators=(",", ":"))
    assert line == (
        '{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1",'
        '"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/default/pods?watch=true","verb":"watch",'
        '"user":{"username":"admin","uid":"u1","groups":["system:masters","system:authenticated"],"extra":{"k":["v"]}},'
        '"impersonatedUser":{"username":"bob","groups":["g"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.36.0",'
        '"objectRef":{"resource":"pods","namespace":"default","apiVersion":"v1"},'
        '"responseStatus":{"metadata":{},"code":200},'
        '"requestReceivedTimestamp":"2024-05-06T07:08:09.123456Z","stageTimestamp":"2024-05-06T07:08:10.123456Z",'
        '"annotations":{"authorization.k8s.io/decision":"allow"}}'
    )
    assert event_from_dict(json.loads(line)) == ev


def test_failure_status_shape():
    st = Status(code=500, status="Failure", reason="InternalError", message="APIServer panic'd: kaboom")
    assert json.dumps(st.to_dict(), separators=(",", ":")) == (
        '{"metadata":{},"status":"Failure","message":"APIServer panic\'d: kaboom","reason":"InternalError","code":500}'
    )


@pytest.mark.parametrize(
    "ts,text",
    [(0.0, "1970-01-01T00:00:00.000000Z"), (TS, "2024-05-06T07:08:09.123456Z"), (None, None), (1.5, "1970-01-01T00:00:01.500000Z")],
    ids=["epoch", "micro", "zero time", "half"],
)
def test_micro_time(ts, text):
    assert format_micro_time(ts) == text
    assert parse_micro_time(text) == ts


def test_levels_are_ordered():
    order = [Level.NONE, Level.METADATA, Level.REQUEST, Level.REQUEST_RESPONSE]
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            assert a.less(b) is (i < j)
            assert a.greater_or_equal(b) is (i >= j)
    assert ord_level("") == ord_level("bogus") == 0


def test_deep_copy_is_independent():
    ev = Event(user=UserInfo("a", groups=["g"]), annotations={"k": "v"})
    cp = ev.deep_copy()
    cp.user.groups.append("h")
    cp.annotations["x"] = "y"
    assert ev.user.groups == ["g"] and ev.annotations == {"k": "v"}


def test_decoding_rejects_other_kinds():
    with pytest.raises(ValueError):
        event_from_dict({"kind": "Status", "apiVersion": "v1"})

"""Tests of genericserver.audit.log_backend (and .format, .metrics): Go's log backend_test.go."""

from __future__ import annotations

import io
import json
import logging
import re

import pytest

from genericserver.audit.event import Event, Level, ObjectReference, Stage, Status, UserInfo, event_from_dict
from genericserver.audit.format import event_string
from genericserver.audit.log_backend import FORMAT_JSON, FORMAT_LEGACY, LogBackend, new_backend, new_file_backend
from genericserver.audit.metrics import AuditMetrics, handle_plugin_error

NOW = 1714979289.123456

EVENTS = [
    Event(audit_id="1b5fbd3c-8d38-4b2a-9b6c-0f7d2a0b9d6e"),
    Event(
        response_status=Status(code=200),
        request_uri="/apis/rbac.authorization.k8s.io/v1/roles",
        source_ips=["127.0.0.1"],
        request_received_timestamp=NOW,
        stage_timestamp=NOW,
        audit_id="7c0e4c35-6c1b-4bd6-8e5b-2d0a7a3c1f00",
        stage=Stage.REQUEST_RECEIVED,
        verb="get",
        user=UserInfo("admin", groups=["system:masters", "system:authenticated"]),
        user_agent="kube-admin",
        object_ref=ObjectReference(namespace="default"),
    ),
    Event(audit_id="0d9d5b8e-5a57-4c58-a0d8-8a4b3c2e1f10", level=Level.METADATA,
          object_ref=ObjectReference(resource="foo", api_version="v1", subresource="bar")),
]

LEGACY = [
    r'[\d\:\-\.\+TZ]+ AUDIT: id="[\w-]+" stage="" ip="<unknown>" method="" user="<none>" groups="<none>" as="<self>" asgroups="<lookup>" user-agent="" namespace="<none>" uri="" response="<deferred>"',
    r'[\d\:\-\.\+TZ]+ AUDIT: id="[\w-]+" stage="RequestReceived" ip="127.0.0.1" method="get" user="admin" groups="\\"system:masters\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="kube-admin" namespace="default" uri="/apis/rbac.authorization.k8s.io/v1/roles" response="200"',
    r'[\d\:\-\.\+TZ]+ AUDIT: id="[\w-]+" stage="" ip="<unknown>" method="" user="<none>" groups="<none>" as="<self>" asgroups="<lookup>" user-agent="" namespace="<none>" uri="" response="<deferred>"',
]


@pytest.mark.parametrize("i", range(3), ids=["empty", "full", "metadata"])
def test_log_events_legacy(i):
    buf = io.StringIO()
    assert new_backend(buf, FORMAT_LEGACY).process_events(EVENTS[i])
    assert re.fullmatch(LEGACY[i] + "\n", buf.getvalue())


def test_legacy_timestamps():
    assert event_string(EVENTS[0]).startswith("0001-01-01T00:00:00Z AUDIT:")
    assert event_string(EVENTS[1]).startswith("2024-05-06T07:08:09.123456Z AUDIT:")


@pytest.mark.parametrize("i", range(3), ids=["empty", "full", "metadata"])
def test_log_events_json(i):
    buf = io.StringIO()
    assert new_backend(buf, FORMAT_JSON).process_events(EVENTS[i])
    text = buf.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1
    assert event_from_dict(json.loads(text)) == EVENTS[i]


def test_json_lines_one_per_event():
    buf = io.StringIO()
    b = LogBackend(buf)
    assert b.process_events(*EVENTS)
    lines = buf.getvalue().splitlines()
    assert [json.loads(line)["auditID"] for line in lines] == [e.audit_id for e in EVENTS]
    assert b.name() == "log"


def test_unknown_format(caplog):
    buf = io.StringIO()
    m = AuditMetrics()
    backend = new_backend(buf, "xml")
    backend.metrics = m
    with caplog.at_level(logging.ERROR, logger="genericserver.audit"):
        assert backend.process_events(EVENTS[0]) is False
    assert buf.getvalue() == ""
    assert m.registry.get_sample_value("apiserver_audit_error_total", {"plugin": "log"}) == 1
    assert "Error in audit plugin 'log' affecting 1 audit events: log format \"xml\" is not in list of known formats (legacy,json)" in caplog.text


def test_write_failure_is_reported(caplog):
    class Broken(io.StringIO):
        def write(self, s):
            raise OSError("disk full")

    with caplog.at_level(logging.ERROR, logger="genericserver.audit"):
        assert LogBackend(Broken()).process_events(EVENTS[0]) is False
    assert "disk full" in caplog.text


def test_file_backend(tmp_path):
    path = tmp_path / "audit.log"
    b = new_file_backend(str(path))
    b.run(None)
    assert b.process_events(EVENTS[1], EVENTS[2])
    # written through at once, before shutdown
    assert len(path.read_text().splitlines()) == 2
    b.shutdown()
    again = new_file_backend(str(path))
    again.process_events(EVENTS[0])
    again.shutdown()
    assert [json.loads(x)["auditID"] for x in path.read_text().splitlines()] == [EVENTS[1].audit_id, EVENTS[2].audit_id, EVENTS[0].audit_id]


def test_handle_plugin_error_message(caplog):
    with caplog.at_level(logging.ERROR, logger="genericserver.audit"):
        handle_plugin_error("buffered", "audit buffer queue blocked", EVENTS[0], EVENTS[1])
    assert "Error in audit plugin 'buffered' affecting 2 audit events: audit buffer queue blocked\nImpacted events:\n" in caplog.text
    assert caplog.text.count(" AUDIT: ") == 2

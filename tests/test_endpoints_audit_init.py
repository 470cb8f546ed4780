"""Tests of genericserver.endpoints.filters.audit_init: Go's audit_init_test.go and the Audit-ID header."""

from __future__ import annotations

import re
import sys
import uuid

import pytest
from werkzeug.test import Client

from genericserver.audit.context import audit_id_from
from genericserver.endpoints.filters.audit_init import _with_audit_init, with_audit_init

LARGE = f"{uuid.uuid4()}-{uuid.uuid4()}"


@pytest.mark.parametrize(
    "new_id,specified,expected",
    [
        (None, "foo-bar-baz", "foo-bar-baz"),
        (lambda: "foo-bar-baz", "", "foo-bar-baz"),
        (None, LARGE, LARGE),
        (lambda: LARGE, "", LARGE),
    ],
    ids=[
        "user specifies a value for Audit-ID in the request header",
        "user does not specify a value for Audit-ID in the request header",
        "the value in Audit-ID request header is too large, should not be truncated",
        "the generated Audit-ID is too large, should not be truncated",
    ],
)
def test_with_audit_id(new_id, specified, expected):
    seen = []

    def handler(environ, start_response):
        seen.append(audit_id_from(environ))
        start_response("200 OK", [])
        return []

    wrapped = with_audit_init(handler) if new_id is None else _with_audit_init(handler, new_id)
    resp = Client(wrapped).get("/api/v1/namespaces", headers={"Audit-ID": specified} if specified else {})
    assert seen == [(expected, True)]  # called once, and saw the ID
    assert resp.headers.getlist("Audit-ID") == [expected]


def test_generated_ids_are_uuids():
    def handler(environ, start_response):
        start_response("200 OK", [])
        return []

    client = Client(with_audit_init(handler))
    a, b = client.get("/").headers["Audit-ID"], client.get("/").headers["Audit-ID"]
    assert a != b
    assert all(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", x) for x in (a, b))


def test_header_on_responses_inner_filters_produce():
    # a 429 or 503 written by a filter inside never reaches the audit filter, yet carries the ID
    def rejecting(environ, start_response):
        start_response("429 Too Many Requests", [("Retry-After", "5")])
        return [b"The apiserver is shutting down, please try again later.\n"]

    resp = Client(_with_audit_init(rejecting, lambda: "id-1")).get("/")
    assert resp.status_code == 429
    assert resp.headers.getlist("Audit-ID") == ["id-1"]
    assert resp.headers["Retry-After"] == "5"


def test_header_kept_when_start_response_is_called_again_with_exc_info():
    def failing_late(environ, start_response):
        start_response("200 OK", [])
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            start_response("500 Internal Server Error", [], sys.exc_info())
        return [b"oops"]

    calls = []
    body = _with_audit_init(failing_late, lambda: "id-2")({}, lambda status, headers, exc_info=None: calls.append((status, headers, exc_info is not None)))
    assert list(body) == [b"oops"]
    assert calls == [("200 OK", [("Audit-ID", "id-2")], False), ("500 Internal Server Error", [("Audit-ID", "id-2")], True)]


def test_nested_audit_init_adds_one_header():
    def handler(environ, start_response):
        start_response("200 OK", [])
        return []

    inner = _with_audit_init(handler, lambda: "inner")
    outer = _with_audit_init(inner, lambda: "outer")
    assert Client(outer).get("/").headers.getlist("Audit-ID") == ["outer"]


def test_response_that_sets_its_own_audit_id_keeps_it():
    def proxied(environ, start_response):
        start_response("200 OK", [("Audit-ID", "from-upstream")])
        return []

    assert Client(_with_audit_init(proxied, lambda: "mine")).get("/").headers.getlist("Audit-ID") == ["from-upstream"]


@pytest.mark.parametrize("raw", [bytes(16), b"\xff" * 16, bytes(range(16)), bytes(range(240, 256))])
def test_new_uuid_formats_random_bytes_as_uuid4_does(raw, monkeypatch):
    from genericserver.endpoints.filters import audit_init

    monkeypatch.setattr(audit_init.os, "urandom", lambda n: raw)
    assert audit_init.new_uuid() == str(uuid.UUID(bytes=raw, version=4))

"""Tests of genericserver.endpoints.filters.request_received_time: Go's request_received_time_test.go."""

from __future__ import annotations

from werkzeug.test import Client

from genericserver import request
from genericserver import runtime as rt
from genericserver.endpoints.filters.request_received_time import (
    RECEIVED_RUNTIME_KEY,
    _with_request_received_timestamp_with_clock,
    received_runtime_from,
    with_request_received_timestamp,
)


def test_with_request_received_timestamp():
    seen = []

    def handler(environ, start_response):
        seen.append((request.received_timestamp_from(environ), received_runtime_from(environ)))
        start_response("200 OK", [])
        return [b""]

    wrapped = _with_request_received_timestamp_with_clock(handler, lambda: 1714979289.5, lambda: 42.25)
    resp = Client(wrapped).get("/api/v1/namespaces")
    assert resp.status_code == 200
    # the handler ran once and saw both clocks' readings
    assert seen == [(1714979289.5, 42.25)]


def test_real_clocks():
    seen = {}

    def handler(environ, start_response):
        seen.update(environ)
        start_response("200 OK", [])
        return [b""]

    before_wall, before_now = rt.wall(), rt.now()
    Client(with_request_received_timestamp(handler)).get("/")
    assert before_wall <= request.received_timestamp_from(seen) <= rt.wall()
    assert before_now <= seen[RECEIVED_RUNTIME_KEY] <= rt.now()

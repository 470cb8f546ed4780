"""Tests of genericserver.endpoints.filters.mux_discovery_complete: Go's mux_discovery_complete_test.go,
and the 503-instead-of-404 it makes the not-found handler answer."""

from __future__ import annotations

import json

import pytest
from werkzeug.test import Client

from genericserver import runtime as rt
from genericserver.endpoints.filters.mux_discovery_complete import (
    no_mux_and_discovery_incomplete_key,
    with_mux_and_discovery_complete,
)
from genericserver.notfoundhandler import not_found_handler


def closed():
    ev = rt.event("mux-complete")
    ev.set()
    return ev


@pytest.mark.parametrize(
    "signal,expect_no_key",
    [(lambda: None, True), (closed, True), (lambda: rt.event("mux-complete"), False)],
    ids=["no signals, no key in the ctx", "signal ready, no key in the ctx", "signal not ready, the key in the ctx"],
)
def test_with_mux_and_discovery_complete_protection(signal, expect_no_key):
    seen = []

    def delegate(environ, start_response):
        seen.append(no_mux_and_discovery_incomplete_key(environ))
        start_response("200 OK", [])
        return []

    Client(with_mux_and_discovery_complete(delegate, signal())).get("/")
    assert seen == [expect_no_key]


def test_not_found_is_503_until_paths_are_installed():
    signal = rt.event("mux-complete")
    app = with_mux_and_discovery_complete(not_found_handler(no_mux_and_discovery_incomplete_key), signal)
    client = Client(app)

    resp = client.get("/apis/unknown.example.com/v1/things")
    assert resp.status_code == 503
    assert resp.headers["Retry-After"] == "5"
    assert resp.headers["Content-Type"] == "application/json"
    assert resp.get_data() == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the request has been made before '
        b'all known HTTP paths have been installed, please try again","reason":"ServiceUnavailable",'
        b'"details":{"retryAfterSeconds":5},"code":503}\n'
    )
    assert json.loads(resp.get_data())["details"] == {"retryAfterSeconds": 5}

    signal.set()
    resp = client.get("/apis/unknown.example.com/v1/things")
    assert resp.status_code == 404
    assert resp.get_data() == b"404 page not found\n"
    assert "Retry-After" not in resp.headers

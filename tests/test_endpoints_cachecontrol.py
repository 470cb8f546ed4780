"""Tests of genericserver.endpoints.filters.cachecontrol: a port of cachecontrol_test.go (TestCacheControl)."""

from __future__ import annotations

import pytest
from werkzeug.test import Client

from genericserver.endpoints.filters.cachecontrol import with_cache_control

# name: (path, header the app sets, expected header)
CASES = {
    "simple": ("/api/v1/namespaces", None, "no-cache, private"),
    "openapi": ("/openapi/v2", None, "no-cache, private"),
    "already-set": ("/api/v1/namespaces", "nonsense", "nonsense"),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_cache_control(case):
    path, starting, expected = case

    def app(environ, start_response):
        start_response("200 OK", [] if starting is None else [("cache-control", starting)])
        return []

    resp = Client(with_cache_control(app)).get(path)
    assert resp.headers.getlist("Cache-Control") == [expected]


def test_responses_written_by_inner_filters_get_it_too():
    def reject(environ, start_response):
        start_response("429 Too Many Requests", [("Retry-After", "1")])
        return [b"Too many requests, please try again later.\n"]

    resp = Client(with_cache_control(reject)).get("/api/v1/pods")
    assert (resp.status_code, resp.headers["Cache-Control"], resp.headers["Retry-After"]) == (429, "no-cache, private", "1")

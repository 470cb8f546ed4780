"""Tests of genericserver.filters.cors: Go's server/filters/cors_test.go."""

from __future__ import annotations

import pytest
from werkzeug.test import Client

from genericserver.filters.cors import compile_regexps, with_cors

ORIGIN_CASES = [
    ("allowed origins list is empty", [], ["example.com"], False),
    ("origin request header not set", ["example.com"], [""], False),
    ("allowed regexp is a match", ["example.com"], ["http://example.com", "example.com"], True),
    ("allowed regexp is not a match", ["example.com"], ["http://not-allowed.com", "not-allowed.com"], False),
    ("allowed list with multiple regex", ["not-matching.com", "example.com"], ["http://example.com", "example.com"], True),
    ("wildcard matching", [".*"], ["http://example.com", "example.com"], True),
    ("regex does not pin, CVE-2022-1996 is not prevented", ["example.com"],
     ["http://example.com.hacker.org", "http://example.com.hacker.org:8080"], True),
    ("regex pins to start/end of the host name, CVE-2022-1996 is prevented", ["//example.com(:|$)"],
     ["http://example.com.hacker.org", "http://example.com.hacker.org:8080"], False),
]
FLAT = [(name, allowed, origin, ok) for name, allowed, origins, ok in ORIGIN_CASES for origin in origins]
CORS_HEADERS = ["Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
                "Access-Control-Expose-Headers", "Access-Control-Allow-Credentials"]


@pytest.mark.parametrize("allowed,origin,ok", [c[1:] for c in FLAT], ids=[f"{c[0]}/origin/{c[2]}" for c in FLAT])
def test_cors_allowed_origins(allowed, origin, ok):
    calls = []

    def handler(environ, start_response):
        calls.append(1)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    resp = Client(with_cors(handler, allowed, None, None, None, "true")).get("/version", headers={"Origin": origin} if origin else {})
    assert calls == [1]
    assert resp.get_data() == b"ok"
    if ok:
        assert resp.headers["Access-Control-Allow-Origin"] == origin
        assert resp.headers["Access-Control-Allow-Credentials"] == "true"
        assert resp.headers["Access-Control-Allow-Headers"] == (
            "Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since")
        assert resp.headers["Access-Control-Allow-Methods"] == "POST, GET, OPTIONS, PUT, DELETE, PATCH"
        assert resp.headers["Access-Control-Expose-Headers"] == "Date"
    else:
        assert not any(h in resp.headers for h in CORS_HEADERS)


@pytest.mark.parametrize(
    "methods,method,allowed",
    [(None, "POST", True), (None, "GET", True), (None, "OPTIONS", True), (None, "PUT", True), (None, "DELETE", True),
     (None, "PATCH", True), (["GET", "POST"], "PATCH", False)],
    ids=["default POST", "default GET", "default OPTIONS", "default PUT", "default DELETE", "default PATCH", "GET,POST PATCH"],
)
def test_cors_allowed_methods(methods, method, allowed):
    def handler(environ, start_response):
        start_response("200 OK", [])
        return []

    resp = Client(with_cors(handler, [".*"], methods, None, None, "true")).open("/version", method=method, headers={"Origin": "allowed.com"})
    listed = [m.strip() for m in resp.headers["Access-Control-Allow-Methods"].split(",")]
    assert (method in listed) is allowed


def test_compile_regex():
    regexes = compile_regexps(["endsWithMe$", "^startingWithMe"])
    assert len(regexes) == 2
    assert regexes[0].search("Something that endsWithMe")
    assert not regexes[0].search("Something that doesn't endsWithMe.")
    assert regexes[1].search("startingWithMe is very important")
    assert not regexes[1].search("not startingWithMe should fail")


def test_preflight_is_answered_with_204():
    calls = []

    def handler(environ, start_response):
        calls.append(1)
        start_response("200 OK", [])
        return [b"never"]

    resp = Client(with_cors(handler, ["example.com"], ["GET"], ["X-A"], ["X-B"], "false")).options("/x", headers={"Origin": "http://example.com"})
    assert calls == []
    assert resp.status_code == 204 and resp.get_data() == b""
    assert [(h, resp.headers[h]) for h in CORS_HEADERS] == [
        ("Access-Control-Allow-Origin", "http://example.com"), ("Access-Control-Allow-Methods", "GET"),
        ("Access-Control-Allow-Headers", "X-A"), ("Access-Control-Expose-Headers", "X-B"),
        ("Access-Control-Allow-Credentials", "false"),
    ]


def test_no_allowed_origins_installs_nothing_and_bad_pattern_fails():
    def handler(environ, start_response):
        return []

    assert with_cors(handler, None) is handler and with_cors(handler, []) is handler
    with pytest.raises(ValueError, match="^Invalid CORS allowed origin, --cors-allowed-origins flag was set to a\\(,b"):
        with_cors(handler, ["a(", "b"])


def test_app_headers_win():
    def handler(environ, start_response):
        start_response("200 OK", [("Access-Control-Expose-Headers", "X-Mine")])
        return []

    resp = Client(with_cors(handler, [".*"])).get("/", headers={"Origin": "o"})
    assert resp.headers.getlist("Access-Control-Expose-Headers") == ["X-Mine"]
    assert resp.headers["Access-Control-Allow-Origin"] == "o"

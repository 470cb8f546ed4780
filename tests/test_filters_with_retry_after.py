"""Tests of genericserver.filters.with_retry_after: a port of with_retry_after_test.go (9 cases)."""

from __future__ import annotations

import pytest
from werkzeug.test import Client

from genericserver import request, runtime as rt
from genericserver.apimachinery.waitgroup import SafeWaitGroup
from genericserver.filters.waitgroup import with_wait_group
from genericserver.filters.with_retry_after import is_request_exempt_from_retry_after, with_retry_after
from genericserver.requestinfo import RequestInfo


def channel(closed: bool) -> rt.Event:
    ev = rt.event("shutdown-delay-elapsed")
    if closed:
        ev.set()
    return ev


# name: (channel: None | open | closed, url, user agent, wait group waiting, calls, status, Connection, Retry-After)
CASES = {
    "retry-after disabled": ("open", "/api/v1/namespaces", "foo", False, 1, 200, None, None),
    "retry-after enabled, request is not exempt": ("closed", "/api/v1/namespaces", "foo", False, 0, 429, "close", "5"),
    "retry-after enabled, request is exempt(/metrics)": ("closed", "/metrics?foo=bar", "foo", False, 1, 200, None, None),
    "retry-after enabled, request is exempt(/livez)": ("closed", "/livez?verbose", "foo", False, 1, 200, None, None),
    "retry-after enabled, request is exempt(/readyz)": ("closed", "/readyz?verbose", "foo", False, 1, 200, None, None),
    "retry-after enabled, request is exempt(/healthz)": ("closed", "/healthz?verbose", "foo", False, 1, 200, None, None),
    "retry-after enabled, request is exempt(local loopback)": ("closed", "/api/v1/namespaces", "kube-apiserver/", False, 1, 200, None, None),
    "nil channel": (None, "/api/v1/namespaces", "foo", False, 1, 200, None, None),
    "retry-after enabled, request is exempt(/readyz), SafeWaitGroup is in waiting mode": (
        "closed", "/readyz?verbose", "foo", True, 1, 200, None, None,
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_with_retry_after(case):
    ch, url, user_agent, waiting, calls_expected, status, connection, retry_after = case
    calls = []

    def handler(environ, start_response):
        calls.append(environ["PATH_INFO"])
        start_response("200 OK", [])
        return []

    wg = SafeWaitGroup()
    if waiting:
        wg.wait()  # the counter is zero: returns at once, and the group now refuses adds
    app = with_wait_group(handler, lambda environ, info: False, wg)
    app = with_retry_after(app, None if ch is None else channel(ch == "closed"))

    resp = Client(app).get(url, headers={"User-Agent": user_agent}, environ_overrides={request.REQUEST_INFO_KEY: RequestInfo()})

    assert len(calls) == calls_expected
    assert resp.status_code == status
    assert resp.headers.get("Connection") == connection
    assert resp.headers.get("Retry-After") == retry_after


def test_the_429_is_go_http_error_with_the_shutdown_message():
    def handler(environ, start_response):  # pragma: no cover - must not run
        raise AssertionError("rejected requests never reach the handler")

    resp = Client(with_retry_after(handler, channel(True))).post("/apis/apps/v1/deployments")
    assert resp.status_code == 429
    assert resp.get_data() == b"The apiserver is shutting down, please try again later.\n"
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Connection"] == "close"
    assert resp.headers["Retry-After"] == "5"


def test_the_channel_is_read_per_request():
    ch = channel(False)
    app = with_retry_after(lambda e, sr: (sr("200 OK", []), [b"ok"])[1], ch)
    client = Client(app)
    assert client.get("/api/v1/pods").status_code == 200
    ch.set()
    assert client.get("/api/v1/pods").status_code == 429


@pytest.mark.parametrize(
    "path,user_agent,exempt",
    [
        ("/healthzfoo", "", True),  # a raw prefix, as in Go
        ("/metrics/slis", "", True),
        ("/readyz/shutdown", "", True),
        ("/livez", "", True),
        ("/api/v1/pods", "kube-apiserver/v1.36.0 (linux/amd64) kubernetes/abc", True),
        ("/api/v1/pods", "kubectl/v1.36.0", False),
        ("/api/v1/pods", "Kube-apiserver/", False),
        ("/", "", False),
        ("/health", "", False),
    ],
)
def test_exemption_predicate(path, user_agent, exempt):
    environ = {"PATH_INFO": path, "HTTP_USER_AGENT": user_agent}
    assert is_request_exempt_from_retry_after(environ) is exempt


def test_missing_user_agent_is_not_exempt():
    assert is_request_exempt_from_retry_after({"PATH_INFO": "/api"}) is False



"""Tests of genericserver.filters.waitgroup (with_wait_group, the 503, slots held while streaming)."""

from __future__ import annotations

import json

import pytest
from werkzeug.test import Client

from genericserver import request
from genericserver.apimachinery.waitgroup import AddAfterWaitError, SafeWaitGroup
from genericserver.filters.waitgroup import with_wait_group
from genericserver.requestinfo import RequestInfo

NEVER_LONG_RUNNING = lambda environ, info: False  # noqa: E731
WATCH_IS_LONG_RUNNING = lambda environ, info: info.verb == "watch"  # noqa: E731


class FakeWaitGroup:
    """Counts adds, refuses them once ``waiting``, tracks what is in flight (as Go's fakes do)."""

    def __init__(self, waiting: bool = False):
        self.waiting = waiting
        self.invoked = 0
        self.inflight = 0

    def add(self, delta: int) -> None:
        self.invoked += 1
        if self.waiting:
            raise AddAfterWaitError()
        self.inflight += delta

    def done(self) -> None:
        self.inflight -= 1


def ok_app(calls: list):
    def app(environ, start_response):
        calls.append(environ["PATH_INFO"])
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    return app


def info_env(verb: str = "get") -> dict:
    return {request.REQUEST_INFO_KEY: RequestInfo(verb=verb)}


def test_no_request_info_is_an_internal_error():
    calls: list = []
    wg = FakeWaitGroup()
    resp = Client(with_wait_group(ok_app(calls), NEVER_LONG_RUNNING, wg)).get("/api/v1/pods")
    assert (resp.status_code, calls, wg.invoked) == (500, [], 0)
    assert resp.get_data() == b'Internal Server Error: "/api/v1/pods": no RequestInfo found in the context\n'


def test_long_running_requests_are_not_tracked():
    calls: list = []
    wg = FakeWaitGroup(waiting=True)
    resp = Client(with_wait_group(ok_app(calls), WATCH_IS_LONG_RUNNING, wg)).get("/api/v1/pods", environ_overrides=info_env("watch"))
    assert (resp.status_code, len(calls), wg.invoked) == (200, 1, 0)


def test_a_tracked_request_is_done_when_its_response_is_closed():
    calls: list = []
    wg = FakeWaitGroup()
    resp = Client(with_wait_group(ok_app(calls), NEVER_LONG_RUNNING, wg)).get("/api/v1/pods", environ_overrides=info_env())
    assert (resp.status_code, resp.get_data(), wg.invoked, wg.inflight) == (200, b"ok", 1, 1)
    resp.close()
    assert wg.inflight == 0


def test_after_wait_a_non_exempt_request_gets_go_503():
    calls: list = []
    wg = FakeWaitGroup(waiting=True)
    resp = Client(with_wait_group(ok_app(calls), NEVER_LONG_RUNNING, wg)).get("/api/v1/pods", environ_overrides=info_env())
    assert calls == []
    assert resp.status_code == 503
    assert resp.headers["Retry-After"] == "1"
    assert resp.headers["Content-Type"] == "application/json"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    # the encoder's newline, then Println's
    assert resp.get_data() == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"apiserver is shutting down","reason":"ServiceUnavailable","code":503}\n\n'
    )
    assert json.loads(resp.get_data())["code"] == 503


@pytest.mark.parametrize(
    "path,user_agent",
    [("/readyz", "foo"), ("/healthz/etcd", "foo"), ("/livez", "foo"), ("/metrics", "foo"), ("/api/v1/pods", "kube-apiserver/v1.36.0")],
)
def test_after_wait_an_exempt_request_is_served_untracked(path, user_agent):
    calls: list = []
    wg = FakeWaitGroup(waiting=True)
    app = with_wait_group(ok_app(calls), NEVER_LONG_RUNNING, wg)
    resp = Client(app).get(path, headers={"User-Agent": user_agent}, environ_overrides=info_env())
    assert (resp.status_code, calls, wg.inflight) == (200, [path], 0)


def test_an_app_that_raises_releases_its_slot_at_once():
    wg = FakeWaitGroup()

    def app(environ, start_response):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        Client(with_wait_group(app, NEVER_LONG_RUNNING, wg)).get("/x", environ_overrides=info_env())
    assert (wg.invoked, wg.inflight) == (1, 0)


def test_a_streaming_response_holds_its_slot_until_closed():
    """The WSGI twist: the app returns before the body is sent; the slot lasts until close."""
    fake, safe = FakeWaitGroup(), SafeWaitGroup()
    sent = []

    def app(environ, start_response):
        start_response("200 OK", [])

        def body():
            for chunk in (b"one\n", b"two\n", b"three\n"):
                sent.append(chunk)
                yield chunk

        return body()

    app = with_wait_group(with_wait_group(app, NEVER_LONG_RUNNING, fake), NEVER_LONG_RUNNING, safe)
    resp = Client(app).get("/stream", environ_overrides=info_env(), buffered=False)
    assert sent == [b"one\n"]  # the app has returned and the response is still being sent
    assert fake.inflight == 1
    assert resp.get_data() == b"one\ntwo\nthree\n"
    assert fake.inflight == 1  # everything sent, but the server has not closed the response yet
    resp.close()
    assert fake.inflight == 0
    safe.wait()  # returns at once: the outer group's slot was released by the same close

"""Tests of genericserver.filters.watch_termination: a port of watch_termination_test.go (4 cases).

Go passes typed-nil fakes, which are non-nil interfaces, so its filter is installed in every
case; here those cases get real fakes (``None`` would leave the filter out, tested below).
"""

from __future__ import annotations

import logging

import pytest
from werkzeug.test import Client

from genericserver import request, runtime as rt
from genericserver.filters.watch_termination import with_watch_termination_during_shutdown
from genericserver.requestinfo import RequestInfo


class FakeServerShutdownSignal:
    def __init__(self) -> None:
        self._ev = rt.event("fake-shutting-down")

    def shutting_down(self) -> rt.Event:
        return self._ev


class FakeRequestWaitGroup:
    def __init__(self, waiting: bool = False):
        self.waiting = waiting
        self.invoked = 0
        self.inflight = 0

    def add(self, delta: int) -> None:
        self.invoked += 1
        if self.waiting:
            raise RuntimeError("waitgroup is in waiting mode")
        self.inflight += delta

    def done(self) -> None:
        self.inflight -= 1


def retry_after_sent(resp) -> bool:
    return (
        resp.status_code == 503
        and resp.headers.get("Retry-After") == "1"
        and resp.headers.get("Content-Type") == "application/json"
        and resp.headers.get("X-Content-Type-Options") == "nosniff"
    )


# name: (request info verb or None, wg waiting?, calls, status, retry-after sent, signal attached, Add calls)
CASES = {
    "no RequestInfo attached to request context": (None, False, 0, 500, False, False, 0),
    "request is not a WATCH, not added into wait group": ("get", False, 1, 200, False, False, 0),
    "request is a WATCH, wait group is in waiting mode": ("watch", True, 0, 503, True, False, 1),
    "request is a WATCH, wait group is accepting": ("watch", False, 1, 200, False, True, 1),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_with_watch_termination_during_shutdown(case):
    verb, waiting, calls_expected, status, retry_after, attached, invoked = case
    signal, wg = FakeServerShutdownSignal(), FakeRequestWaitGroup(waiting)
    calls, signals = [], []

    def delegate(environ, start_response):
        calls.append(1)
        signals.append(request.server_shutdown_signal_from(environ))
        start_response("200 OK", [])
        return []

    app = with_watch_termination_during_shutdown(delegate, signal, wg)
    overrides = {} if verb is None else {request.REQUEST_INFO_KEY: RequestInfo(verb=verb)}
    resp = Client(app).get("/apis/groups.k8s.io/v1/namespaces", environ_overrides=overrides)
    resp.close()

    assert len(calls) == calls_expected
    assert resp.status_code == status
    assert retry_after_sent(resp) is retry_after
    if attached:
        assert signals == [signal]  # the very object given to the filter
    else:
        assert all(s is None for s in signals)
    assert wg.inflight == 0
    assert wg.invoked == invoked


def test_the_503_body_is_go_status_with_two_newlines():
    app = with_watch_termination_during_shutdown(lambda e, sr: [], FakeServerShutdownSignal(), FakeRequestWaitGroup(waiting=True))
    resp = Client(app).get(
        "/readyz", headers={"User-Agent": "kube-apiserver/"}, environ_overrides={request.REQUEST_INFO_KEY: RequestInfo(verb="watch")}
    )
    # nothing is exempt here, not even an exempt path with the loopback User-Agent
    assert resp.status_code == 503
    assert resp.get_data().endswith(b'"reason":"ServiceUnavailable","code":503}\n\n')


@pytest.mark.parametrize("which", ["termination", "wg"])
def test_a_missing_dependency_leaves_the_filter_out(which, caplog):
    def app(environ, start_response):  # pragma: no cover - identity only
        return []

    termination = None if which == "termination" else FakeServerShutdownSignal()
    wg = None if which == "wg" else FakeRequestWaitGroup()
    with caplog.at_level(logging.WARNING, logger="genericserver.filters.watch_termination"):
        assert with_watch_termination_during_shutdown(app, termination, wg) is app
    assert "watch termination during shutdown not attached to the handler chain" in caplog.text


def test_a_watch_keeps_its_slot_until_its_stream_ends():
    wg = FakeRequestWaitGroup()
    signal = FakeServerShutdownSignal()

    def watch(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])
        shutting_down = request.server_shutdown_signal_from(environ).shutting_down()

        def events():
            yield b'{"type":"ADDED"}\n'
            while not shutting_down.is_set():  # the watch loop ends when the server shuts down
                yield b'{"type":"BOOKMARK"}\n'

        return events()

    app = with_watch_termination_during_shutdown(watch, signal, wg)
    resp = Client(app).get("/api/v1/pods?watch=1", environ_overrides={request.REQUEST_INFO_KEY: RequestInfo(verb="watch")}, buffered=False)
    it = iter(resp.response)
    assert next(it) == b'{"type":"ADDED"}\n'
    assert next(it) == b'{"type":"BOOKMARK"}\n'
    assert wg.inflight == 1  # still streaming
    signal.shutting_down().set()
    assert list(it) == []  # the stream ended
    assert wg.inflight == 1  # ...but the server has not closed it yet
    resp.close()
    assert (wg.invoked, wg.inflight) == (1, 0)

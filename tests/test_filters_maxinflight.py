"""Tests of genericserver.filters.maxinflight: a port of maxinflight_test.go, plus a property.

Go's tests hang requests on a real server; here the hanging requests run in goroutines of the
threads runtime, each with its own werkzeug test ``Client`` over the same app.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest
from hypothesis import given, strategies as st
from werkzeug.test import Client

from genericserver import request, runtime as rt, wsgi
from genericserver.endpoints.filters.requestinfo import with_request_info
from genericserver.filters import maxinflight
from genericserver.filters.longrunning import basic_long_running_request_check
from genericserver.filters.maxinflight import (
    RequestWatermark,
    start_max_in_flight_watermark_maintenance,
    with_max_in_flight_limit,
)
from genericserver.apimachinery.waitgroup import WaitGroup
from genericserver.metrics import Metrics
from genericserver.request import UserInfo
from genericserver.requestinfo import RequestInfo, RequestInfoFactory
from genericserver.testing.sim import Scripted, Simulation, schedules

TOO_MANY = b"Too many requests, please try again later.\n"


def with_fake_user(app):
    """The ``Groups`` request header becomes the user's groups (Go's withFakeUser)."""

    def fake_user(environ, start_response):
        groups = environ.get("HTTP_GROUPS")
        if groups:
            request.with_user(environ, UserInfo(name="", groups=tuple(g.strip() for g in groups.split(","))))
        return app(environ, start_response)

    return fake_user


class Server:
    """Go's createMaxInflightServer: ``dontwait`` paths return at once, others block."""

    def __init__(self, non_mutating: int, mutating: int, expected_calls: int):
        self.calls = WaitGroup()
        self.calls.add(expected_calls)
        self.block = rt.event("block")
        self.wait_for_calls = True
        self._lock = rt.lock()
        long_running = basic_long_running_request_check({"watch"}, {"proxy"})
        app = with_max_in_flight_limit(self.handler, non_mutating, mutating, long_running)
        self.app = with_request_info(with_fake_user(app), RequestInfoFactory({"apis", "api"}, {"api"}))
        self.hanging: list[tuple[rt.Goroutine, list]] = []

    def handler(self, environ, start_response):
        if "dontwait" not in environ["PATH_INFO"]:
            with self._lock:
                notify = self.wait_for_calls
            if notify:
                self.calls.done()
            self.block.wait()
        start_response("200 OK", [])
        return []

    def disable_calls(self) -> None:
        with self._lock:
            self.wait_for_calls = False

    def status(self, method: str, url: str, groups: str = "") -> int:
        headers = {"Groups": groups} if groups else {}
        resp = Client(self.app).open(url, method=method, headers=headers, data=b"foo bar" if method == "POST" else None)
        body = resp.get_data()
        resp.close()
        if resp.status_code == 429:
            assert (body, resp.headers["Retry-After"]) == (TOO_MANY, "1")
        return resp.status_code

    def hang(self, method: str, url: str) -> None:
        out: list = []
        g = rt.go(lambda: out.append(self.status(method, url)), name="hanging-request")
        self.hanging.append((g, out))

    def release_and_collect(self) -> list[int]:
        self.block.set()
        for g, _ in self.hanging:
            assert g.join(30)
        return [code for _, out in self.hanging for code in out]


@pytest.fixture
def maintenance():
    stop = rt.event("stop-watermark")
    g = start_max_in_flight_watermark_maintenance(stop)
    yield
    stop.set()
    assert g.join(5)


def test_max_in_flight_non_mutating(maintenance):
    allowed = 3
    server = Server(non_mutating=allowed, mutating=1, expected_calls=allowed * 2)
    # long-running requests hang in the handler without being counted
    for _ in range(allowed):
        server.hang("GET", "/api/v1/namespaces/default/wait?watch=true")
    # the server is not saturated by them
    assert server.status("GET", "/dontwait") == 200
    # these are counted and saturate the read-only class
    for _ in range(allowed):
        server.hang("GET", "/")
    server.calls.wait()
    server.disable_calls()
    # rejections do not block: twice in a row
    assert [server.status("GET", "/") for _ in range(2)] == [429, 429]
    # long-running requests still get through, and so does the free mutating slot
    assert server.status("GET", "/api/v1/watch/namespaces/default/dontwait") == 200
    assert server.status("POST", "/dontwait") == 200
    assert server.release_and_collect() == [200] * (allowed * 2)
    # recovered
    assert server.status("GET", "/") == 200


def test_max_in_flight_mutating(maintenance):
    allowed = 3
    server = Server(non_mutating=1, mutating=allowed, expected_calls=allowed)
    for _ in range(allowed):
        server.hang("POST", "/foo/bar")
    server.calls.wait()
    server.disable_calls()
    assert [server.status("POST", "/foo/bar/") for _ in range(2)] == [429, 429]
    assert server.status("GET", "/dontwait") == 200
    assert server.release_and_collect() == [200] * allowed
    assert server.status("POST", "/foo/bar") == 200


def test_max_in_flight_skips_masters(maintenance):
    allowed = 3
    server = Server(non_mutating=1, mutating=allowed, expected_calls=allowed)
    for _ in range(allowed):
        server.hang("POST", "/foo/bar")
    server.calls.wait()
    server.disable_calls()
    assert [server.status("POST", "/dontwait", groups="system:masters") for _ in range(2)] == [200, 200]
    assert server.status("POST", "/dontwait", groups="system:authenticated") == 429
    assert server.release_and_collect() == [200] * allowed


# -- beyond the Go tests ------------------------------------------------------------------


def ok(environ, start_response):
    start_response("200 OK", [])
    return [b"ok"]


def test_both_limits_zero_leave_the_app_unwrapped():
    assert with_max_in_flight_limit(ok, 0, 0, None) is ok


def test_missing_request_info_is_a_500_with_the_request_uri(caplog):
    resp = Client(with_max_in_flight_limit(ok, 1, 1, None)).get("/api/v1/pods?limit=5")
    assert resp.status_code == 500
    assert resp.get_data() == b'Internal Server Error: "/api/v1/pods?limit=5"\n'
    assert "no RequestInfo found in context, handler chain must be wrong" in caplog.text


@pytest.mark.parametrize(
    "verb,mutating",
    [("get", False), ("list", False), ("watch", False), ("create", True), ("delete", True), ("post", True), ("head", True), ("options", True)],
)
def test_verb_classes(verb, mutating):
    # one slot per class, held by a streaming response; a second request of the same class is refused
    def streaming(environ, start_response):
        start_response("200 OK", [])
        return iter([b"a", b"b"])

    app = with_max_in_flight_limit(streaming, 1, 1, None)
    env = {request.REQUEST_INFO_KEY: RequestInfo(verb=verb)}
    first = Client(app).get("/", environ_overrides=env, buffered=False)
    other_verb = "get" if mutating else "create"
    other = Client(app).get("/", environ_overrides={request.REQUEST_INFO_KEY: RequestInfo(verb=other_verb)})
    assert other.status_code == 200  # the other class is untouched
    assert Client(app).get("/", environ_overrides=env).status_code == 429
    first.close()
    assert Client(app).get("/", environ_overrides=env).status_code == 200
    other.close()


def test_a_zero_limit_leaves_that_class_unlimited():
    def streaming(environ, start_response):
        start_response("200 OK", [])
        return iter([b"a", b"b"])

    app = with_max_in_flight_limit(streaming, 0, 1, None)
    env = {request.REQUEST_INFO_KEY: RequestInfo(verb="list")}
    responses = [Client(app).get("/", environ_overrides=env, buffered=False) for _ in range(20)]
    assert {r.status_code for r in responses} == {200}
    for r in responses:
        r.close()


def test_a_streaming_response_holds_its_slot_until_closed():
    sent = []

    def streaming(environ, start_response):
        start_response("200 OK", [])

        def body():
            for chunk in (b"1", b"2", b"3"):
                sent.append(chunk)
                yield chunk

        return body()

    app = with_max_in_flight_limit(streaming, 1, 1, None)
    env = {request.REQUEST_INFO_KEY: RequestInfo(verb="get")}
    first = Client(app).get("/", environ_overrides=env, buffered=False)
    assert sent == [b"1"]  # the app returned; the response is still being sent
    refused = Client(app).get("/", environ_overrides=env)
    assert (refused.status_code, refused.get_data()) == (429, TOO_MANY)
    assert first.get_data() == b"123"
    first.close()
    again = Client(app).get("/", environ_overrides=env)
    assert again.status_code == 200
    again.close()


def test_the_slot_is_a_threading_bounded_semaphore_permit_held_until_the_response_is_closed(monkeypatch):
    made = []
    real = rt.bounded_semaphore

    def recording(value, name="semaphore"):
        made.append((name, real(value, name)))
        return made[-1][1]

    monkeypatch.setattr(rt, "bounded_semaphore", recording)

    def streaming(environ, start_response):
        start_response("200 OK", [])
        return iter([b"a", b"b"])

    app = with_max_in_flight_limit(streaming, 2, 1, None)
    ((_, read_only), (_, mutating)) = made
    assert [n for n, _ in made] == ["max-in-flight-non-mutating", "max-in-flight-mutating"]
    assert isinstance(read_only, threading.BoundedSemaphore) and isinstance(mutating, threading.BoundedSemaphore)
    env = {request.REQUEST_INFO_KEY: RequestInfo(verb="list")}
    first = Client(app).get("/", environ_overrides=env, buffered=False)
    assert (read_only.taken(), mutating.taken()) == (1, 0)
    assert first.get_data() == b"ab"
    assert read_only.taken() == 1  # every byte sent, but the response is not closed yet
    first.close()
    assert read_only.taken() == 0
    with pytest.raises(ValueError):
        read_only.release()  # the filter released exactly what it took


def inflight_gauge(m: Metrics) -> tuple:
    """``apiserver_current_inflight_requests`` as (readOnly, mutating), as a scraper reads it."""
    get = m.registry.get_sample_value
    return tuple(get("apiserver_current_inflight_requests", {"request_kind": k}) for k in ("readOnly", "mutating"))


def test_a_429_is_counted_as_a_request_and_a_termination():
    """Go's RecordDroppedRequest and RecordRequestTermination, with Go's label values."""
    m = Metrics()

    def blocked(environ, start_response):
        start_response("200 OK", [])
        return iter([b"x"])

    app = with_max_in_flight_limit(blocked, 1, 1, None, mark=RequestWatermark("executing"), metrics=m)
    held = Client(app).get("/", environ_overrides={request.REQUEST_INFO_KEY: RequestInfo(verb="get", path="/")}, buffered=False)
    pods = RequestInfo(is_resource_request=True, verb="list", namespace="ns", resource="pods", api_version="v1", path="/api/v1/namespaces/ns/pods")
    assert Client(app).get("/api/v1/namespaces/ns/pods?dryRun=All", environ_overrides={request.REQUEST_INFO_KEY: pods}).status_code == 429
    assert Client(app).get("/healthz", environ_overrides={request.REQUEST_INFO_KEY: RequestInfo(verb="get", path="/healthz")}).status_code == 429
    held.close()
    get = m.registry.get_sample_value
    assert get("apiserver_request_total", {"verb": "LIST", "dry_run": "All", "group": "", "version": "v1", "resource": "pods", "subresource": "",
                                           "scope": "namespace", "component": "apiserver", "code": "429"}) == 1
    # a non-resource request: its path is the terminations' subresource, empty in the request count
    assert get("apiserver_request_total", {"verb": "GET", "dry_run": "", "group": "", "version": "", "resource": "", "subresource": "",
                                           "scope": "", "component": "apiserver", "code": "429"}) == 1
    assert get("apiserver_request_terminations_total", {"verb": "GET", "group": "", "version": "", "resource": "", "subresource": "/healthz",
                                                        "scope": "", "component": "apiserver", "code": "429"}) == 1
    assert get("apiserver_request_terminations_total", {"verb": "LIST", "group": "", "version": "v1", "resource": "pods", "subresource": "",
                                                        "scope": "namespace", "component": "apiserver", "code": "429"}) == 1


def test_watermark_records_the_peak_and_resets_when_published():
    mark = RequestWatermark("executing")
    for v in (1, 3, 2):
        mark.record_read_only(v)
    mark.record_mutating(1)
    m = Metrics()
    assert mark.publish_and_reset(m) == (3, 1)
    assert (mark.read_only_watermark, mark.mutating_watermark) == (0, 0)
    assert inflight_gauge(m) == (3, 1)


def test_the_filter_feeds_the_process_watermark():
    maxinflight.watermark.publish_and_reset()

    def streaming(environ, start_response):
        start_response("200 OK", [])
        return iter([b"a"])

    app = with_max_in_flight_limit(streaming, 5, 5, None)
    env = {request.REQUEST_INFO_KEY: RequestInfo(verb="list")}
    held = [Client(app).get("/", environ_overrides=env, buffered=False) for _ in range(4)]
    for r in held:
        r.close()
    assert maxinflight.watermark.publish_and_reset() == (4, 0)


def test_maintenance_publishes_at_once_and_every_period_under_virtual_time():
    published = []
    m = Metrics()

    def main():
        mark = RequestWatermark("executing")
        stop = rt.event("stop")
        g = maxinflight.start_max_in_flight_watermark_maintenance(stop, mark, m)
        rt.sleep(0.5)  # the loop published (0, 0) at t=0
        published.append(inflight_gauge(m))
        mark.record_read_only(2)
        rt.sleep(1.0)  # ... and (2, 0) at t=1
        published.append(inflight_gauge(m))
        mark.record_mutating(7)
        rt.sleep(1.0)
        published.append(inflight_gauge(m))
        stop.set()
        g.join()

    Simulation().run(main)
    assert published == [(0, 0), (2, 0), (0, 7)]


# -- a property under the simulation runtime ------------------------------------------------


@dataclass(frozen=True)
class Req:
    verb: str
    master: bool
    arrival: float
    hold: float


requests_strategy = st.lists(
    st.builds(
        Req,
        verb=st.sampled_from(["get", "list", "watch", "create", "update", "delete"]),
        master=st.booleans(),
        arrival=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
        hold=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
    ),
    min_size=1,
    max_size=10,
)


@given(
    non_mutating=st.integers(0, 3),
    mutating=st.integers(0, 3),
    reqs=requests_strategy,
    schedule=schedules(max_size=40),
)
def test_concurrent_requests_never_exceed_the_limits(non_mutating, mutating, reqs, schedule):
    limits = {False: non_mutating, True: mutating}  # keyed by "is mutating"
    inside = {False: 0, True: 0}  # counted (non-master, non-long-running) requests inside the app
    peak = {False: 0, True: 0}
    results: list[tuple[Req, str, list, bytes]] = []

    def main():
        def inner(environ, start_response):
            req: Req = environ["test.req"]
            counted = req.verb != "watch" and not req.master
            cls = req.verb not in ("get", "list", "watch")
            if counted:
                inside[cls] += 1
                peak[cls] = max(peak[cls], inside[cls])
            start_response("200 OK", [])

            def body():
                rt.sleep(req.hold)
                yield b"done"

            def leave():
                if counted:
                    inside[cls] -= 1

            return wsgi.on_close(body(), leave)

        long_running = basic_long_running_request_check({"watch"}, set())
        app = with_fake_user(with_max_in_flight_limit(inner, non_mutating, mutating, long_running))

        def client(req: Req) -> None:
            rt.sleep(req.arrival)
            environ = {
                "REQUEST_METHOD": "GET",
                "PATH_INFO": "/",
                "test.req": req,
                request.REQUEST_INFO_KEY: RequestInfo(verb=req.verb),
            }
            if req.master:
                environ["HTTP_GROUPS"] = "system:masters"
            got = []
            body = app(environ, lambda status, headers, exc_info=None: got.append((status, headers)))
            try:
                data = b"".join(body)
            finally:
                if hasattr(body, "close"):
                    body.close()
            results.append((req, got[0][0], got[0][1], data))

        gs = [rt.go(client, r, name=f"client-{i}") for i, r in enumerate(reqs)]
        for g in gs:
            g.join()

    Simulation(chooser=Scripted(schedule)).run(main)

    assert len(results) == len(reqs)
    for cls in (False, True):
        if limits[cls]:
            assert peak[cls] <= limits[cls]
    for req, status, headers, data in results:
        if status.startswith("429"):
            cls = req.verb not in ("get", "list", "watch")
            assert limits[cls] and not req.master and req.verb != "watch"
            assert ("Retry-After", "1") in headers
            assert data == TOO_MANY
        else:
            assert (status, data) == ("200 OK", b"done")

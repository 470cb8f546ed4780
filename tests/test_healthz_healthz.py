"""Tests of genericserver.healthz.healthz: the cases of pkg/server/healthz/healthz_test.go, and more."""

from __future__ import annotations

import pytest
from werkzeug.test import Client, EnvironBuilder

from genericserver import klog
from genericserver import runtime as rt
from genericserver.healthz.healthz import (
    HealthCheckError,
    LogChecker,
    PingHealthz,
    checker_names,
    format_quoted,
    get_excluded_checks,
    install_handler,
    install_livez_handler,
    install_path_handler,
    install_path_handler_with_healthy_func,
    install_readyz_handler,
    named_check,
    named_grouped_check,
    new_informer_sync_healthz,
    new_shutdown_healthz,
)
from genericserver.mux import PathRecorderMux

TEXT = "text/plain; charset=utf-8"


def get(mux, url):
    return Client(mux).get(url)


def test_install_handler():
    mux = PathRecorderMux("test")
    install_handler(mux)
    resp = get(mux, "http://example.com/healthz")
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == TEXT
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.data == b"ok"


def test_install_path_handler():
    mux = PathRecorderMux("test")
    install_path_handler(mux, "/healthz/test")
    install_path_handler(mux, "/healthz/ready")
    for url in ["http://example.com/healthz/test", "http://example.com/healthz/ready"]:
        resp = get(mux, url)
        assert resp.status_code == 200
        assert resp.headers["Content-Type"] == TEXT
        assert resp.data == b"ok"


def _bad(environ):
    raise HealthCheckError("this will fail")


# (query or sub-path, expected body with {name} for the endpoint, status, add the bad check)
MULTIPLE_CHECKS = [
    ("?verbose", "[+]ping ok\n{name} check passed\n", 200, False),
    ("?exclude=dontexist", "ok", 200, False),
    ("?exclude=bad", "ok", 200, True),
    ("?verbose=true&exclude=bad", "[+]ping ok\n[+]bad excluded: ok\n{name} check passed\n", 200, True),
    (
        "?verbose=true&exclude=dontexist",
        '[+]ping ok\nwarn: some health checks cannot be excluded: no matches for "dontexist"\n{name} check passed\n',
        200,
        False,
    ),
    ("/ping", "ok", 200, False),
    ("", "ok", 200, False),
    ("?verbose", "[+]ping ok\n[-]bad failed: reason withheld\n{name} check failed\n", 500, True),
    ("/ping", "ok", 200, True),
    ("/bad", "internal server error: this will fail\n", 500, True),
    ("", "[+]ping ok\n[-]bad failed: reason withheld\n{name} check failed\n", 500, True),
]
CASE_IDS = [f"case[{i}]{c[0] or '(root)'}{'+bad' if c[3] else ''}" for i, c in enumerate(MULTIPLE_CHECKS)]


def _multiple_checks(path: str, name: str, case) -> None:
    sub, expected, status, add_bad = case
    mux = PathRecorderMux("test")
    checks = [PingHealthz]
    if add_bad:
        checks.append(named_check("bad", _bad))
    if path == "":
        install_handler(mux, *checks)
        path = "/healthz"
    else:
        install_path_handler(mux, path, *checks)
    resp = get(mux, f"http://example.com{path}{sub}")
    assert resp.status_code == status
    assert resp.headers["Content-Type"] == TEXT
    assert resp.get_data(as_text=True) == expected.format(name=name)


@pytest.mark.parametrize("case", MULTIPLE_CHECKS, ids=CASE_IDS)
def test_multiple_checks(case):
    _multiple_checks("", "healthz", case)


@pytest.mark.parametrize("case", MULTIPLE_CHECKS, ids=CASE_IDS)
def test_multiple_path_checks(case):
    _multiple_checks("/ready", "ready", case)


def test_failure_is_http_error_shaped():
    mux = PathRecorderMux("test")
    install_handler(mux, PingHealthz, named_check("bad", _bad))
    resp = get(mux, "/healthz")
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert "Content-Length" not in resp.headers  # http.Error leaves it to net/http (server.go:2311)


class _Named:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name

    def check(self, environ=None):
        return None


@pytest.mark.parametrize(
    "have,want",
    [
        ([], []),
        (["n1"], ["n1"]),
        (["n2"], ["n2"]),
        (["n1", "n2"], ["n1", "n2"]),
        (["n2", "n1"], ["n2", "n1"]),
    ],
    ids=["no checker", "one checker", "other checker", "checker order", "different checker order"],
)
def test_checker_names(have, want):
    assert checker_names(*[_Named(n) for n in have]) == want


@pytest.mark.parametrize(
    "names,expected",
    [([], ""), (["n1"], '"n1"'), (["n1", "n2"], '"n1","n2"'), (["n2", "n1"], '"n2","n1"')],
    ids=["empty", "single name", "two names", "two names, reverse order"],
)
def test_format_quoted(names, expected):
    assert format_quoted(*names) == expected


@pytest.mark.parametrize(
    "url,want",
    [
        ("/healthz?verbose=true", set()),
        ("/healthz?exclude=ping", {"ping"}),
        ("/healthz?exclude=ping&exclude=log", {"ping", "log"}),
    ],
    ids=[
        "Should have no excluded health checks",
        "Should extract out the ping health check",
        "Should extract out ping and log health check",
    ],
)
def test_get_excluded_checks(url, want):
    environ = EnvironBuilder(path=url.split("?")[0], query_string=url.split("?")[1]).get_environ()
    assert get_excluded_checks(environ) == want


class _CacheSyncWaiterStub:
    def __init__(self, started):
        self.started = started
        self.stops = []

    def wait_for_cache_sync(self, stop):
        self.stops.append(stop.is_set())
        return self.started


class Pod: ...


class Service: ...


class Node: ...


def test_informer_sync_health_checker_all_started():
    waiter = _CacheSyncWaiterStub({Pod: True})
    check = new_informer_sync_healthz(waiter)
    assert check.name() == "informer-sync"
    assert check.check(None) is None
    assert waiter.stops == [True]  # asked with an already-closed stop channel


def test_informer_sync_health_checker_one_not_started():
    check = new_informer_sync_healthz(_CacheSyncWaiterStub({Pod: True, Service: False, Node: True}))
    with pytest.raises(HealthCheckError, match=r"^1 informers not started yet: \[Service\]$"):
        check.check(None)


class _ReadyOnEventSet:
    def __init__(self, ev):
        self.ev = ev

    def name(self):
        return "readyOnChanClose"

    def check(self, environ=None):
        if not self.ev.is_set():
            raise HealthCheckError("the provided channel hasn't been closed")


def test_install_path_handler_with_healthy_func():
    mux = PathRecorderMux("test")
    ready = rt.event("readyz")
    calls = []
    install_path_handler_with_healthy_func(mux, "/readyz", lambda: calls.append(1), _ReadyOnEventSet(ready))

    # scenario 1: not ready yet
    assert get(mux, "/readyz").status_code == 500
    assert calls == []
    # scenario 2: ready, and the first-time callback runs
    ready.set()
    assert get(mux, "/readyz").status_code == 200
    assert calls == [1]
    # scenario 3: it does not run again
    assert get(mux, "/readyz").status_code == 200
    assert calls == [1]


def test_install_readyz_and_livez_handlers_serve_their_paths():
    mux = PathRecorderMux("test")
    install_handler(mux)
    install_livez_handler(mux)
    install_readyz_handler(mux)
    assert mux.listed_paths() == ["/healthz", "/healthz/ping", "/livez", "/livez/ping", "/readyz", "/readyz/ping"]
    for path in ["/healthz", "/livez", "/readyz"]:
        resp = get(mux, path + "?verbose")
        assert resp.get_data(as_text=True) == f"[+]ping ok\n{path[1:]} check passed\n"


def test_shutdown_check():
    stop = rt.event("ShutdownInitiated")
    mux = PathRecorderMux("test")
    install_readyz_handler(mux, PingHealthz, new_shutdown_healthz(stop))
    assert get(mux, "/readyz").data == b"ok"
    assert get(mux, "/readyz/shutdown").data == b"ok"
    stop.set()
    resp = get(mux, "/readyz")
    assert (resp.status_code, resp.get_data(as_text=True)) == (
        500,
        "[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n",
    )
    resp = get(mux, "/readyz/shutdown")
    assert (resp.status_code, resp.data) == (500, b"internal server error: process is shutting down\n")
    resp = get(mux, "/readyz?exclude=shutdown")
    assert (resp.status_code, resp.data) == (200, b"ok")


def test_group_exclusion():
    mux = PathRecorderMux("test")
    install_handler(
        mux,
        PingHealthz,
        named_grouped_check("etcd-a", "etcd", _bad),
        named_grouped_check("etcd-b", "etcd", _bad),
    )
    assert get(mux, "/healthz").status_code == 500
    resp = get(mux, "/healthz?verbose&exclude=etcd&exclude=zzz&exclude=aaa")
    assert resp.status_code == 200
    assert resp.get_data(as_text=True) == (
        "[+]ping ok\n[+]etcd-a excluded with etcd: ok\n[+]etcd-b excluded with etcd: ok\n"
        'warn: some health checks cannot be excluded: no matches for "aaa","zzz"\nhealthz check passed\n'
    )


def test_the_real_error_goes_to_the_log_only(caplog):
    mux = PathRecorderMux("test")
    install_handler(mux, named_check("bad", _bad))
    with caplog.at_level("INFO", logger="genericserver.healthz"):
        with klog.with_verbosity(1):  # Go logs the failure at V(2): a failing probe stays quiet below
            get(mux, "/healthz")
        assert caplog.records == []
        with klog.with_verbosity(2):
            body = get(mux, "/healthz").get_data(as_text=True)
    assert "this will fail" not in body
    assert [r.getMessage() for r in caplog.records] == ["bad check failed: healthz\n[-]bad failed: this will fail\n"]


class _FakeClockRuntime(rt.ThreadsRuntime):
    def __init__(self):
        super().__init__()
        self.t = 0.0

    def now(self):
        return self.t


def test_log_check_fails_when_a_flush_hangs_for_a_minute():
    fake = _FakeClockRuntime()
    started, release = rt.event("started"), rt.event("release")

    def flush():
        started.set()
        release.wait()

    check = LogChecker(flush=flush)
    assert check.name() == "log"
    with rt.use(fake):
        check.check(None)  # starts the clock, no flush yet
        fake.t = 59.0
        check.check(None)
        assert not started.is_set()
        fake.t = 60.0
        check.check(None)  # a minute on: one flush goroutine
        assert started.wait(5)
        [g] = fake.live()
        assert g.name == "log-flush"
        fake.t = 119.0
        check.check(None)  # stuck for 59 s: still fine
        fake.t = 120.0
        with pytest.raises(HealthCheckError, match="^logging blocked$"):
            check.check(None)
        assert len(fake.live()) == 1  # no second flush while one hangs
        release.set()
        assert g.join(5)
        check.check(None)  # the flush finished at t=120
        fake.t = 179.0
        check.check(None)
        assert fake.live() == []


def test_log_check_restarts_its_clock_on_another_runtime():
    check = LogChecker(flush=lambda: None)
    fake = _FakeClockRuntime()
    with rt.use(fake):
        check.check(None)  # the clock starts at t=0 of `fake`
    other = _FakeClockRuntime()
    other.t = 1000.0  # read against `fake`'s start this would look 1000 s stale
    with rt.use(other):
        check.check(None)
        other.t = 1059.0
        check.check(None)
        assert other.live() == []

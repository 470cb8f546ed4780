"""Tests of genericserver.config: port of k8s.io/apiserver/pkg/server/config_test.go (v1.36.0), shutdown parts.

TestNewWithDelegate is ported on a delegate built with ``config.complete().new("delegate")`` and a
wrapper ``.new("wrapper", delegate)``, requests going through the wrapper's full handler chain
(werkzeug's test client instead of httptest). What Go lists and this port does not build is left
out of the expected paths: ``/apis``, ``/metrics``, ``/metrics/slis``, ``/statusz``, the informer
hooks and check (no informers here) and the storage object count tracker (no storage). There is
no index handler at ``/`` either: the root listing is ``listed_paths()``, which Go's index serves.

Also here: ``new_config()``'s defaults (config.go L405-487), ``complete()``, and the two notify
events other components wait on (``drained_notify``, ``shutdown_initiated_notify``).
"""

from __future__ import annotations

import pytest
from werkzeug.test import Client

from genericserver import runtime as rt
from genericserver.apimachinery.waitgroup import RateLimitedSafeWaitGroup, SafeWaitGroup
from genericserver.chain import default_build_handler_chain
from genericserver.config import CompletedConfig, new_config
from genericserver.context import context as gocontext
from genericserver.healthz.healthz import named_check
from genericserver.lifecycle_signals import LifecycleSignals, SignalRecorder
from genericserver.requestinfo import RequestInfo
from genericserver.testing.sim import Simulation

WAIT = 30.0  # Go's wait.ForeverTestTimeout


def failing(msg: str):
    def check(environ):
        raise Exception(msg)

    return check


def status_app(status: str):
    def app(environ, start_response):
        start_response(status, [("Content-Length", "0")])
        return [b""]

    return app


# -- TestNewWithDelegate ---------------------------------------------------------------------

EXPECTED_PATHS = [
    "/bar",
    "/foo",
    "/healthz",
    "/healthz/delegate-health",
    "/healthz/log",
    "/healthz/ping",
    "/healthz/poststarthook/delegate-post-start-hook",
    "/healthz/poststarthook/max-in-flight-filter",
    "/healthz/poststarthook/storage-object-count-tracker-hook",
    "/healthz/poststarthook/wrapping-post-start-hook",
    "/healthz/wrapping-health",
    "/livez",
    "/livez/delegate-health",
    "/livez/log",
    "/livez/ping",
    "/livez/poststarthook/delegate-post-start-hook",
    "/livez/poststarthook/max-in-flight-filter",
    "/livez/poststarthook/storage-object-count-tracker-hook",
    "/livez/poststarthook/wrapping-post-start-hook",
    "/metrics",
    "/metrics/slis",
    "/readyz",
    "/readyz/delegate-health",
    "/readyz/log",
    "/readyz/ping",
    "/readyz/poststarthook/delegate-post-start-hook",
    "/readyz/poststarthook/max-in-flight-filter",
    "/readyz/poststarthook/storage-object-count-tracker-hook",
    "/readyz/poststarthook/wrapping-post-start-hook",
    "/readyz/shutdown",
]


@pytest.fixture
def stop_ctx():
    ctx, cancel = gocontext.with_cancel_cause(gocontext.background())
    yield ctx
    # ends the max-in-flight watermark goroutine the post-start hook started
    cancel(RuntimeError("test is done"))


def test_new_with_delegate(stop_ctx):
    delegate_config = new_config()
    delegate_config.healthz_checks.append(named_check("delegate-health", failing("delegate failed healthcheck")))
    delegate = delegate_config.complete().new("delegate")
    delegate.handler.non_go_restful_mux.handle("/foo", status_app("403 Forbidden"))
    delegate.add_post_start_hook_or_die("delegate-post-start-hook", lambda ctx: None)
    delegate.prepare_run()

    wrapping_config = new_config()
    wrapping_config.healthz_checks.append(named_check("wrapping-health", failing("wrapping failed healthcheck")))
    wrapper = wrapping_config.complete().new("wrapper", delegate)
    wrapper.handler.non_go_restful_mux.handle("/bar", status_app("401 Unauthorized"))
    wrapper.add_post_start_hook_or_die("wrapping-post-start-hook", lambda ctx: None)
    # as in Go, this prepares the delegate a second time (logged duplicate registrations)
    wrapper.prepare_run()
    wrapper.run_post_start_hooks(stop_ctx)

    # the wrapper runs the delegate's post-start hooks too; wait for every one of them
    assert sorted(wrapper.post_start_hooks()) == ["delegate-post-start-hook", "max-in-flight-filter",
                                                  "storage-object-count-tracker-hook", "wrapping-post-start-hook"]
    for name, entry in wrapper.post_start_hooks().items():
        assert entry.done.wait(WAIT), f"post-start hook {name} did not finish"

    # the root listing: this server's paths and its delegate's
    assert wrapper.listed_paths() == EXPECTED_PATHS

    client = Client(wrapper.handler)
    # buffered: the response is closed at once, which ends the request's deadline context
    r = client.get("/healthz?exclude=wrapping-health&exclude=delegate-health", buffered=True)
    assert (r.status_code, r.get_data()) == (200, b"ok")

    def check_path(path: str, code: int, body: str) -> None:
        r = client.get(path, buffered=True)
        assert (r.status_code, r.get_data(as_text=True)) == (code, body), path

    check_path(
        "/healthz",
        500,
        "[+]ping ok\n"
        "[+]log ok\n"
        "[-]wrapping-health failed: reason withheld\n"
        "[-]delegate-health failed: reason withheld\n"
        "[+]poststarthook/max-in-flight-filter ok\n"
        "[+]poststarthook/storage-object-count-tracker-hook ok\n"
        "[+]poststarthook/delegate-post-start-hook ok\n"
        "[+]poststarthook/wrapping-post-start-hook ok\n"
        "healthz check failed\n",
    )
    check_path("/healthz/delegate-health", 500, "internal server error: delegate failed healthcheck\n")
    check_path("/healthz/wrapping-health", 500, "internal server error: wrapping failed healthcheck\n")
    check_path("/healthz/poststarthook/delegate-post-start-hook", 200, "ok")
    check_path("/healthz/poststarthook/wrapping-post-start-hook", 200, "ok")
    check_path("/foo", 403, "")
    check_path("/bar", 401, "")


def test_new_with_delegate_skips_delegate_checks_the_config_already_has():
    # Go compares the delegate's check names with the wrapper's configured healthz checks
    delegate_config = new_config()
    delegate_config.healthz_checks.append(named_check("shared", failing("delegate's")))
    delegate = delegate_config.complete().new("delegate")
    wrapping_config = new_config()
    wrapping_config.healthz_checks.append(named_check("shared", lambda environ: None))
    wrapper = wrapping_config.complete().new("wrapper", delegate)
    names = [c.name() for c in wrapper.healthz_checks()]
    assert names.count("shared") == 1
    assert names == ["ping", "log", "shared", "poststarthook/max-in-flight-filter",
                     "poststarthook/storage-object-count-tracker-hook"]


# -- NewConfig defaults ----------------------------------------------------------------------


def test_new_config_defaults():
    c = new_config()
    assert c.max_requests_in_flight == 400
    assert c.max_mutating_requests_in_flight == 200
    assert c.request_timeout == 60.0
    assert c.min_request_timeout == 1800
    assert c.livez_grace_period == 0
    assert c.shutdown_delay_duration == 0
    assert c.shutdown_watch_termination_grace_period == 0
    assert c.shutdown_send_retry_after is False
    assert c.legacy_api_group_prefixes == {"/api"}
    assert c.build_handler_chain_func is default_build_handler_chain
    assert isinstance(c.non_long_running_request_wait_group, SafeWaitGroup)
    assert isinstance(c.watch_request_wait_group, RateLimitedSafeWaitGroup)
    assert isinstance(c.lifecycle_signals, LifecycleSignals)
    for checks in (c.healthz_checks, c.readyz_checks, c.livez_checks):
        assert [chk.name() for chk in checks] == ["ping", "log"]


@pytest.mark.parametrize(
    "info, long_running",
    [
        (RequestInfo(is_resource_request=True, verb="watch", resource="pods"), True),
        (RequestInfo(is_resource_request=True, verb="list", resource="pods"), False),
        (RequestInfo(is_resource_request=True, verb="get", resource="pods", subresource="proxy"), False),
        (RequestInfo(is_resource_request=True, verb="create", resource="pods", subresource="exec"), False),
        (RequestInfo(path="/debug/pprof/profile", verb="get"), True),
        (RequestInfo(path="/debug/pprof", verb="get"), False),
        (RequestInfo(path="/healthz", verb="get"), False),
    ],
    ids=["watch", "list", "proxy subresource", "exec subresource", "/debug/pprof/ prefix", "/debug/pprof", "/healthz"],
)
def test_new_config_long_running_func(info: RequestInfo, long_running: bool):
    # BasicLongRunningRequestCheck({"watch"}, {}): the verb watch and /debug/pprof/ only
    assert new_config().long_running_func({}, info) is long_running


def test_each_config_has_its_own_signals_and_wait_groups():
    a, b = new_config(), new_config()
    assert a.lifecycle_signals is not b.lifecycle_signals
    assert a.non_long_running_request_wait_group is not b.non_long_running_request_wait_group
    assert a.watch_request_wait_group is not b.watch_request_wait_group
    assert a.healthz_checks is not b.healthz_checks
    a.healthz_checks.append(named_check("only-a", lambda environ: None))
    assert [chk.name() for chk in b.healthz_checks] == ["ping", "log"]


def test_complete_fills_the_request_info_resolver():
    c = new_config()
    assert c.request_info_resolver is None
    completed = c.complete()
    assert isinstance(completed, CompletedConfig) and completed.config is c
    info, err = c.request_info_resolver.new_request_info(
        {"REQUEST_METHOD": "GET", "PATH_INFO": "/api/v1/namespaces/default/pods", "QUERY_STRING": "watch=true"}
    )
    assert err is None
    assert (info.is_resource_request, info.verb, info.resource, info.namespace) == (True, "watch", "pods", "default")
    info, _ = c.request_info_resolver.new_request_info({"REQUEST_METHOD": "GET", "PATH_INFO": "/apis/apps/v1/deployments"})
    assert (info.api_group, info.resource, info.verb) == ("apps", "deployments", "list")


def test_new_copies_the_shutdown_settings():
    c = new_config()
    c.request_timeout = 17.0
    c.shutdown_delay_duration = 3.0
    c.shutdown_watch_termination_grace_period = 5.0
    c.shutdown_send_retry_after = True
    s = c.complete().new("test")
    # Go's New: the HTTP server's shutdown grace is the request timeout
    assert s.shutdown_timeout == 17.0
    assert (s.shutdown_delay_duration, s.shutdown_watch_termination_grace_period, s.shutdown_send_retry_after) == (3.0, 5.0, True)
    assert s.lifecycle_signals is c.lifecycle_signals
    assert s.non_long_running_request_wait_group is c.non_long_running_request_wait_group
    assert s.watch_request_wait_group is c.watch_request_wait_group
    assert s.events is c.events


# -- DrainedNotify / ShutdownInitiatedNotify --------------------------------------------------


def test_drained_notify_and_shutdown_initiated_notify_are_the_signals_events():
    c = new_config()
    signals = c.lifecycle_signals
    assert c.drained_notify() is signals.in_flight_requests_drained.signaled()
    assert c.shutdown_initiated_notify() is signals.shutdown_initiated.signaled()
    assert not c.drained_notify().is_set() and not c.shutdown_initiated_notify().is_set()
    signals.shutdown_initiated.signal()
    assert c.shutdown_initiated_notify().is_set() and not c.drained_notify().is_set()
    signals.in_flight_requests_drained.signal()
    assert c.drained_notify().is_set()


def test_notify_users_wake_when_shutdown_starts_and_when_requests_drained():
    """What storage and admission see: woken at T0 and once the drain is over, on virtual time."""

    def scenario():
        c = new_config()
        c.shutdown_delay_duration = 10.0
        s = c.complete().new("test")
        woke: dict[str, float] = {}

        def user(name: str, ev: rt.Event) -> None:
            ev.wait()
            woke[name] = rt.now()

        rt.go(user, "shutdown-initiated", c.shutdown_initiated_notify(), name="initiated-user")
        rt.go(user, "drained", c.drained_notify(), name="drained-user")
        recorder = SignalRecorder(s.lifecycle_signals)
        ctx, cancel = gocontext.with_cancel(gocontext.background())
        rt.after_func(5.0, cancel, name="stop")
        s.prepare_run().run_with_context(ctx)
        return woke, dict(recorder.fired)

    sim = Simulation()
    woke, fired = sim.run(scenario)
    assert sim.leftover() == []
    assert woke == {"shutdown-initiated": 5.0, "drained": 15.0}
    assert fired["ShutdownInitiated"] == 5.0 and fired["InFlightRequestsDrained"] == 15.0

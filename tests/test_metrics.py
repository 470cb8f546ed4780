"""genericserver.metrics (endpoints/metrics/metrics.go) and the server's /metrics, scraped as Prometheus does.

The last test is the one the metrics exist for: a shutdown under load, watched from outside
through /metrics alone.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Optional

import pytest
from prometheus_client import generate_latest
from werkzeug.test import Client as WSGIClient

from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.config import new_config
from genericserver.context import context as gocontext
from genericserver.filters import maxinflight
from genericserver.healthz.healthz import install_handler, install_livez_handler, install_readyz_handler
from genericserver.net.http.server import listen
from genericserver.metrics import (
    LEGACY,
    Metrics,
    canonical_verb,
    clean_dry_run,
    clean_scope,
    clean_verb,
)
from genericserver.mux import PathRecorderMux
from genericserver.requestinfo import RequestInfo
from genericserver.scrape import Samples, parse, scrape
from genericserver.secure_serving import SecureServingInfo
from genericserver.slis import SLIMetrics
from genericserver.testing.client import Client

WAIT = 30.0


def samples(m: Metrics) -> Samples:
    return parse(generate_latest(m.registry).decode())


# -- healthz_test.go TestMetrics -----------------------------------------------------------------


def test_metrics():
    """Go's healthz TestMetrics: each health endpoint is one GET in apiserver_request_total."""
    m = Metrics()
    mux = PathRecorderMux("test")
    install_handler(mux, metrics=m, sli=SLIMetrics())
    install_livez_handler(mux, metrics=m, sli=SLIMetrics())
    install_readyz_handler(mux, metrics=m, sli=SLIMetrics())
    for path in ("/healthz", "/livez", "/readyz"):
        WSGIClient(mux).get(path).close()
    text = generate_latest(m.registry).decode()
    assert (
        "# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, "
        "version, resource, scope, component, and HTTP response code.\n# TYPE apiserver_request_total counter\n"
    ) in text
    got = {(s.labels["subresource"], s.labels["code"], s.labels["verb"]): s.value for s in parse(text).select("apiserver_request_total")}
    assert got == {("/healthz", "200", "GET"): 1, ("/livez", "200", "GET"): 1, ("/readyz", "200", "GET"): 1}
    (one,) = parse(text).select("apiserver_request_total", subresource="/healthz")
    assert one.labels == {"code": "200", "component": "", "dry_run": "", "group": "", "resource": "", "scope": "",
                          "subresource": "/healthz", "verb": "GET", "version": ""}
    assert "_created" not in text  # Go's client has no such series


def test_each_check_is_observed_in_the_sli_metrics():
    sli = SLIMetrics()
    failing = [True]

    class Flaky:
        def name(self):
            return "flaky"

        def check(self, environ=None):
            if failing[0]:
                raise RuntimeError("not yet")

    mux = PathRecorderMux("test")
    install_readyz_handler(mux, Flaky(), metrics=Metrics(), sli=sli)
    assert WSGIClient(mux).get("/readyz").status_code == 500
    got = parse(generate_latest(sli.registry).decode())
    assert got.value("kubernetes_healthcheck", name="flaky", type="readyz") == 0
    failing[0] = False
    assert WSGIClient(mux).get("/readyz").status_code == 200
    got = parse(generate_latest(sli.registry).decode())
    assert got.value("kubernetes_healthcheck", name="flaky", type="readyz") == 1
    assert got.value("kubernetes_healthchecks_total", name="flaky", type="readyz", status="error") == 1
    assert got.value("kubernetes_healthchecks_total", name="flaky", type="readyz", status="success") == 1


# -- the labels, as Go cleans them ---------------------------------------------------------------


@pytest.mark.parametrize(
    "info, scope",
    [
        (RequestInfo(is_resource_request=True, verb="get", namespace="ns", resource="pods", name="p"), "resource"),
        (RequestInfo(is_resource_request=True, verb="create", namespace="ns", resource="pods"), "resource"),
        (RequestInfo(is_resource_request=True, verb="list", namespace="ns", resource="pods"), "namespace"),
        (RequestInfo(is_resource_request=True, verb="list", resource="nodes"), "cluster"),
        (RequestInfo(verb="get", path="/healthz"), ""),
    ],
    ids=["named", "create", "namespaced", "cluster", "non-resource"],
)
def test_clean_scope(info, scope):
    assert clean_scope(info) == scope


@pytest.mark.parametrize(
    "method, query, content_type, info, expected",
    [
        ("GET", "", "", RequestInfo(is_resource_request=True, verb="list", namespace="ns", resource="pods"), "LIST"),
        ("GET", "watch=true", "", RequestInfo(is_resource_request=True, verb="watch", namespace="ns", resource="pods"), "WATCH"),
        ("GET", "watch=false", "", RequestInfo(is_resource_request=True, verb="list", namespace="ns", resource="pods"), "LIST"),
        ("PATCH", "", "application/apply-patch+yaml", RequestInfo(is_resource_request=True, verb="patch", resource="pods", name="p"), "APPLY"),
        ("POST", "", "", RequestInfo(is_resource_request=True, verb="create", resource="pods", name="p", subresource="exec"), "CONNECT"),
        ("BREW", "", "", RequestInfo(verb="brew", path="/coffee"), "other"),
        ("HEAD", "", "", RequestInfo(verb="head", path="/healthz"), "GET"),  # CanonicalVerb folds HEAD into GET
    ],
    ids=["list", "watch", "watch-false", "apply", "connect", "unknown", "head"],
)
def test_the_reported_verb(method, query, content_type, info, expected):
    """What record_request_termination reports, through Go's CanonicalVerb and cleanVerb."""
    m = Metrics()
    env = {"REQUEST_METHOD": method, "QUERY_STRING": query, "CONTENT_TYPE": content_type, "PATH_INFO": info.path or "/x"}
    m.record_request_termination(env, info, "apiserver", 504)
    (s,) = samples(m).select("apiserver_request_terminations_total")
    assert s.labels["verb"] == expected


def test_canonical_and_clean_verb():
    assert canonical_verb("GET", "namespace") == "LIST"
    assert canonical_verb("GET", "resource") == "GET"
    assert canonical_verb("POST", "namespace") == "POST"
    assert clean_verb("WATCHLIST", {"REQUEST_METHOD": "GET"}, None) == "WATCH"


@pytest.mark.parametrize("query, expected", [("", ""), ("dryRun=All", "All"), ("dryRun=All&dryRun=All", "All"), ("dryRun=Some", "invalid")])
def test_clean_dry_run(query, expected):
    assert clean_dry_run({"QUERY_STRING": query}) == expected


# -- InstrumentHandlerFunc -------------------------------------------------------------------------


def test_instrument_handler_func_records_code_latency_and_size_when_the_response_closes():
    m = Metrics()

    def handler(environ, start_response):
        start_response("201 Created", [])
        return iter([b"abc", b"de"])

    app = m.instrument_handler_func("GET", "", "", "", "/thing", "", "", False, "", handler)
    env = {reqctx.RECEIVED_KEY: rt.wall() - 0.3}  # received 0.3 s ago: the latency counts from there
    resp = WSGIClient(app).get("/thing", environ_overrides=env, buffered=False)
    assert samples(m).select("apiserver_request_total") == []  # not before the response is closed
    assert resp.get_data() == b"abcde"
    resp.close()
    got = samples(m)
    assert got.value("apiserver_request_total", code="201", verb="GET", subresource="/thing") == 1
    assert got.value("apiserver_request_duration_seconds_count", verb="GET", subresource="/thing") == 1
    assert got.value("apiserver_request_duration_seconds_bucket", verb="GET", le="0.2") == 0
    assert got.value("apiserver_request_duration_seconds_bucket", verb="GET", le="0.4") == 1
    assert got.value("apiserver_response_sizes_sum", verb="GET", subresource="/thing") == 5


def test_a_panicking_handler_is_not_recorded():
    m = Metrics()

    def handler(environ, start_response):
        raise RuntimeError("boom")

    app = m.instrument_handler_func("GET", "", "", "", "/boom", "", "", False, "", handler)
    with pytest.raises(RuntimeError):
        WSGIClient(app).get("/boom")
    assert samples(m).select("apiserver_request_total") == []


def test_record_long_running_counts_while_it_runs():
    m = Metrics()
    info = RequestInfo(is_resource_request=True, verb="watch", namespace="ns", resource="configmaps", api_version="v1")
    env = {"REQUEST_METHOD": "GET", "QUERY_STRING": "watch=true"}
    seen = m.record_long_running(env, info, "apiserver", lambda: samples(m).value("apiserver_longrunning_requests", verb="WATCH", resource="configmaps"))
    assert seen == 1
    assert samples(m).value("apiserver_longrunning_requests", verb="WATCH", resource="configmaps") == 0


# -- one registry per server -----------------------------------------------------------------------


def test_two_servers_in_one_process_keep_their_own_counts():
    a, b = new_config().complete().new("a"), new_config().complete().new("b")
    for s in (a, b):
        s.prepare_run()
    # (the post-start hooks have not run: their checks are left out)
    healthz = "/healthz?exclude=poststarthook/max-in-flight-filter&exclude=poststarthook/storage-object-count-tracker-hook"
    for s in (a, a, b):
        assert WSGIClient(s.handler).get(healthz, buffered=True).status_code == 200
    got_a = parse(WSGIClient(a.handler).get("/metrics", buffered=True).get_data(as_text=True))
    got_b = parse(WSGIClient(b.handler).get("/metrics", buffered=True).get_data(as_text=True))
    assert got_a.value("apiserver_request_total", subresource="/healthz", code="200") == 2
    assert got_b.value("apiserver_request_total", subresource="/healthz", code="200") == 1
    assert LEGACY.registry.get_sample_value("apiserver_request_total", {"subresource": "/healthz"}) is None


def test_metrics_slis_and_version_are_served():
    s = new_config().complete().new("test")
    s.prepare_run()
    client = WSGIClient(s.handler)
    client.get("/readyz", buffered=True)
    r = client.get("/metrics", buffered=True)
    assert r.status_code == 200 and r.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert parse(r.get_data(as_text=True)).value("process_start_time_seconds") > 0
    slis = parse(client.get("/metrics/slis", buffered=True).get_data(as_text=True))
    assert slis.value("kubernetes_healthcheck", name="ping", type="readyz") == 1
    # a scraper that reads one counter and one histogram picks their lines out before parsing
    text = r.get_data(as_text=True)
    some = parse(text, families=("apiserver_request_total", "apiserver_request_duration_seconds"))
    every = parse(text)
    assert some == [x for x in every if x.name in ("apiserver_request_total", "apiserver_request_duration_seconds_bucket",
                                                   "apiserver_request_duration_seconds_sum", "apiserver_request_duration_seconds_count")]
    assert some.value("apiserver_request_total", subresource="/readyz") == 1 and some.value("apiserver_request_duration_seconds_count")
    v = client.get("/version", buffered=True)
    assert v.status_code == 200 and v.headers["Content-Type"] == "application/json"
    assert v.json["gitVersion"] == "v1.36.0" and v.json["major"] == "1" and v.json["minor"] == "36"
    assert v.get_data(as_text=True).startswith('{\n  "major": "1",\n  "minor": "36",')  # WriteRawJSON indents by two
    # a go-restful web service (routes/version.go:34-52, v1.36.0): what its one route refuses is a Status,
    # as kube-apiserver v1.36.0 answers
    refused = client.post("/version", buffered=True)
    assert (refused.status_code, refused.json["reason"]) == (405, "MethodNotAllowed")
    assert client.head("/version", buffered=True).status_code == 405
    html = client.get("/version", headers={"Accept": "text/html"}, buffered=True)
    assert (html.status_code, html.json["message"]) == (406, "406: Not Acceptable\n\nAvailable representations: application/json")
    assert client.get("/version/", buffered=True).status_code == 200
    assert client.get("/version/x", buffered=True).json["reason"] == "NotFound"


# -- a shutdown under load, watched through /metrics ----------------------------------------------


def test_a_shutdown_under_load_seen_through_metrics(monkeypatch):
    """During a shutdown (ShutdownInitiated, the pre-shutdown hook holding the server in that
    phase) mutating requests fill max-in-flight and overflow it. Scraped with the Prometheus
    parser: the in-flight gauge rises to the limit and falls back to 0, the 429s are counted as
    terminations, and apiserver_request_total has, per code, what the client saw."""
    monkeypatch.setattr(maxinflight, "INFLIGHT_USAGE_METRIC_UPDATE_PERIOD", 0.05)  # Go: 1 s
    c = new_config()
    c.max_mutating_requests_in_flight = 2
    c.secure_serving = SecureServingInfo(listener=listen("127.0.0.1", 0))
    port = c.secure_serving.listener.getsockname()[1]
    s = c.complete().new("metrics-under-load")
    # The gauge is the peak of the last period: it shows 2 from the publish after the second
    # request came in until the next one, 50 ms later, resets it (nothing new is recorded while
    # they run). A loaded machine's scrape missed that window and waited for a 2 that was gone.
    # So the publish that shows 2 waits (bounded) until the test has scraped it.
    published_two, scraped = threading.Event(), threading.Event()
    publish = s.metrics.update_inflight_request_metrics

    def update_inflight_request_metrics(phase: str, read_only: int, mutating: int) -> None:
        publish(phase, read_only, mutating)
        if mutating == 2 and not scraped.is_set():
            published_two.set()
            scraped.wait(WAIT)

    monkeypatch.setattr(s.metrics, "update_inflight_request_metrics", update_inflight_request_metrics)
    entered = threading.Semaphore(0)
    release = rt.event("release-work")

    def work(environ, start_response):
        entered.release()
        release.wait(WAIT)
        start_response("200 OK", [("Content-Length", "2")])
        return [b"ok"]

    # a non-resource handler, instrumented as Go's InstrumentHandlerFunc does (verb POST: mutating)
    s.handler.non_go_restful_mux.handle("/work", s.metrics.instrument_handler_func("POST", "", "", "", "/work", "", "", False, "", work))
    hook_release = rt.event("hook-release")
    s.add_pre_shutdown_hook("hold-the-shutdown", lambda: hook_release.wait(WAIT))
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    running = rt.go(s.prepare_run().run_with_context, ctx, name="run-with-context")
    seen: Counter = Counter()
    workers: list[threading.Thread] = []
    try:
        assert s.post_start_hooks()["max-in-flight-filter"].done.wait(WAIT)
        cancel()  # SIGTERM: the shutdown begins; the hook keeps the listener open
        assert s.lifecycle_signals.shutdown_initiated.signaled().wait(WAIT)

        def post() -> None:
            with Client("127.0.0.1", port, new_connection=True) as cl:
                r = cl.get("/work", timeout=WAIT, method="POST", body=b"")
            seen[r.status] += 1

        workers = [threading.Thread(target=post, name=f"client-{i}") for i in range(2)]
        for w in workers:
            w.start()
        for _ in workers:
            assert entered.acquire(timeout=WAIT)
        for _ in range(3):
            post()  # both slots taken: 429 at once
        assert seen == Counter({429: 3})

        def gauge() -> Optional[float]:
            return scrape("127.0.0.1", port).value("apiserver_current_inflight_requests", request_kind="mutating")

        assert published_two.wait(WAIT), "the maintenance loop never published both requests"
        assert gauge() == 2
        scraped.set()
        release.set()
        for w in workers:
            w.join(WAIT)
        assert seen == Counter({200: 2, 429: 3})
        assert wait_for(lambda: gauge() == 0), "the in-flight gauge never fell back to 0"

        got = scrape("127.0.0.1", port)
        # per code, what the client saw: the handler counts its 200s, max-in-flight its 429s
        counted = Counter({int(x.labels["code"]): int(x.value) for x in got.select("apiserver_request_total", verb="POST")})
        assert counted == seen
        assert got.value("apiserver_request_total", verb="POST", code="200", subresource="/work") == 2
        assert got.value("apiserver_request_terminations_total", verb="POST", code="429", subresource="/work", component="apiserver") == 3
        # readyz is red from ShutdownInitiated on: the shutdown check's SLI says so
        with Client("127.0.0.1", port, new_connection=True) as cl:
            assert cl.get("/readyz", timeout=WAIT).status == 500
        assert scrape("127.0.0.1", port, "/metrics/slis").value("kubernetes_healthcheck", name="shutdown", type="readyz") == 0
    finally:
        scraped.set()
        release.set()
        hook_release.set()
        cancel()
        for w in workers:
            w.join(WAIT)
    assert running.join(WAIT)
    # scraping counted nothing: Go's /metrics handler is not instrumented
    assert samples(s.metrics).select("apiserver_request_total", subresource="/metrics") == []


def wait_for(condition, timeout: float = WAIT) -> bool:
    """Poll ``condition`` (a scrape) until it holds; the maintenance loop publishes every 50 ms."""
    pause = threading.Event()  # never set: its timed wait paces the polling
    deadline = rt.now() + timeout
    while rt.now() < deadline:
        if condition():
            return True
        pause.wait(0.01)
    return False


def test_the_index_lists_the_listed_paths_whatever_the_method():
    # routes/index.go: / and /index.html answer metav1.RootPaths with WriteRawJSON, 200, for any
    # method and Accept (kube-apiserver v1.36.0 lists its paths there); they were a 404 here
    s = new_config().complete().new("test")
    s.prepare_run()
    client = WSGIClient(s.handler)
    for method, path in (("GET", "/"), ("GET", "/index.html"), ("POST", "/"), ("OPTIONS", "/")):
        r = client.open(path, method=method, buffered=True)
        assert (r.status_code, r.headers["Content-Type"]) == (200, "application/json"), (method, path)
        assert r.get_data(as_text=True).startswith('{\n  "paths": [\n    "/')
        assert r.json["paths"] == sorted(s.listed_paths()) and "/metrics" in r.json["paths"] and "/" not in r.json["paths"]

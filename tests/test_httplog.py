"""Tests of genericserver.httplog: ports of httplog_test.go that apply to WSGI, and the line."""

from __future__ import annotations

import logging

import pytest
from werkzeug.test import Client

from genericserver import klog
from genericserver import request
from genericserver.audit.context import with_audit_context, with_audit_id
from genericserver import httplog
from genericserver.httplog import (
    PassthroughLogger,
    RespLogger,
    _with_logging,
    default_stacktrace_pred,
    log_of,
    status_is_not,
)
from genericserver.filters.wrap import with_http_logging
from genericserver.requestinfo import RequestInfo


@pytest.fixture(autouse=True)
def v3():
    """Go writes the access line at V(3): ``--v=3``."""
    with klog.with_verbosity(3):
        yield


def always():
    return True


@pytest.mark.parametrize("status", [101, 200, 204, 302, 400, 404])
def test_default_stacktrace_pred_quiet(status):
    assert default_stacktrace_pred(status) is False


@pytest.mark.parametrize("status", [500, 100])
def test_default_stacktrace_pred_logs(status):
    assert default_stacktrace_pred(status) is True


@pytest.mark.parametrize("status,statuses,want", [(200, [], True), (200, [200], False), (201, [200, 202], True)])
def test_status_is_not(status, statuses, want):
    assert status_is_not(*statuses)(status) is want


def test_with_logging():
    app = _with_logging(_with_logging(lambda e, sr: [], default_stacktrace_pred, always), default_stacktrace_pred, always)
    with pytest.raises(RuntimeError, match="^multiple WithLogging calls!$"):
        Client(app).get("/")


@pytest.mark.parametrize("should_log,want", [(True, RespLogger), (False, PassthroughLogger)], ids=["request is being logged", "request is not being logged"])
def test_log_of(should_log, want):
    got = []

    def app(environ, start_response):
        got.append(type(log_of(environ)))
        start_response("200 OK", [])
        return []

    Client(_with_logging(app, default_stacktrace_pred, lambda: should_log)).get("/").close()
    assert got == [want]


@pytest.mark.parametrize("status,expected", [("200 OK", 200), ("403 Forbidden", 403)])
def test_logged_status(status, expected, caplog):
    def app(environ, start_response):
        start_response(status, [])
        return [b""]

    with caplog.at_level(logging.INFO, logger="genericserver.httplog"):
        Client(with_http_logging(app)).get("/").close()
    assert f"resp={expected}" in caplog.text


def test_the_access_line_has_go_keys_and_comes_when_the_response_is_closed(caplog):
    def app(environ, start_response):
        httplog.add_key_value(environ, "apf_fd", "exempt")
        start_response("200 OK", [])
        return iter([b"a", b"b"])

    def audited(environ, start_response):
        with_audit_context(environ)
        with_audit_id(environ, "x" * 70)  # a client may send a huge Audit-ID: the line keeps 64
        return logged(environ, start_response)

    logged = with_http_logging(app)
    env = {
        request.REQUEST_INFO_KEY: RequestInfo(is_resource_request=True, verb="list", namespace="ns", resource="pods"),
        request.RECEIVED_KEY: 0.0,  # the epoch: a huge latency, but taken from the received time
        "REMOTE_ADDR": "10.0.0.1",
        "REMOTE_PORT": "5555",
    }
    with caplog.at_level(logging.INFO, logger="genericserver.httplog"):
        resp = Client(audited).get("/api/v1/namespaces/ns/pods", headers={"User-Agent": "kubectl/v1.36"}, environ_overrides=env, buffered=False)
        assert resp.get_data() == b"ab"
        assert caplog.records == []  # not yet: the response is still open
        resp.close()
    (record,) = caplog.records
    line = record.getMessage()
    assert line.startswith('"HTTP" verb="LIST" URI="/api/v1/namespaces/ns/pods" latency="')
    assert f'userAgent="kubectl/v1.36" audit-ID="{"x" * 64}" srcIP="10.0.0.1:5555" apf_fd="exempt" resp=200' in line
    latency = line.split('latency="', 1)[1].split('"', 1)[0]
    assert latency.endswith("s") and float(latency[:-1]) > 1e9


def test_a_whole_body_stays_whole_through_the_logging_filter_and_is_logged_when_closed(caplog):
    # the server holds a whole body (a list) until the handler has returned, as Go's response
    # buffer does; wrapped in the filter's iterator it was streamed instead, header first, at --v=3
    from genericserver.wsgi import known_chunks

    closed = []

    class Whole(list):
        def close(self):
            closed.append(len(caplog.records))

    def app(environ, start_response):
        start_response("500 Internal Server Error", [])
        return Whole([b"boom"])

    env = {request.RECEIVED_KEY: 0.0, "REQUEST_METHOD": "GET", "PATH_INFO": "/x", "REMOTE_ADDR": "10.0.0.1", "REMOTE_PORT": "1"}
    with caplog.at_level(logging.INFO, logger="genericserver.httplog"):
        body = with_http_logging(app)(env, lambda status, headers, exc_info=None: None)
        assert known_chunks(body) == [b"boom"]
        assert caplog.records == []
        body.close()
        body.close()
    assert closed == [0]  # the app's body closed first, then the line: once, with the error output
    (record,) = caplog.records
    assert record.getMessage().endswith('resp=500 addedInfo=<\n\tlogging error output: "boom"\n >')


def test_error_output_is_captured_for_a_500(caplog):
    def app(environ, start_response):
        start_response("500 Internal Server Error", [])
        return [b"boom"]

    with caplog.at_level(logging.INFO, logger="genericserver.httplog"):
        Client(with_http_logging(app)).get("/x").close()
    # a value with line breaks: klog's block form, each line after a tab, then " >"
    assert caplog.records[0].getMessage().endswith('resp=500 addedInfo=<\n\tlogging error output: "boom"\n >')


def test_a_request_whose_app_raises_is_still_logged(caplog):
    def app(environ, start_response):
        raise RuntimeError("boom")

    with caplog.at_level(logging.INFO, logger="genericserver.httplog"):
        with pytest.raises(RuntimeError):
            Client(with_http_logging(app)).delete("/x")
    assert '"HTTP" verb="DELETE" URI="/x"' in caplog.text and "resp=0" in caplog.text


def test_when_the_level_is_off_nothing_is_wrapped(caplog):
    seen = []

    def app(environ, start_response):
        seen.append(httplog.resp_logger_from(environ))
        start_response("200 OK", [])
        return [b""]

    with caplog.at_level(logging.INFO, logger="genericserver.httplog"), klog.with_verbosity(2):
        Client(with_http_logging(app)).get("/").close()
    assert seen == [None] and caplog.records == []


@pytest.mark.parametrize(
    "method,info,extra,verb",
    [
        ("GET", RequestInfo(is_resource_request=True, verb="get", name="foo", namespace="ns"), {}, "GET"),
        ("GET", RequestInfo(is_resource_request=True, verb="list"), {}, "LIST"),
        ("GET", RequestInfo(is_resource_request=True, verb="watch"), {"QUERY_STRING": "watch=true"}, "WATCH"),
        # the legacy /api/v1/watch/pods path: CleanVerb reads ?watch= only, so Go logs LIST
        ("GET", RequestInfo(is_resource_request=True, verb="watch"), {}, "LIST"),
        ("PATCH", RequestInfo(is_resource_request=True, verb="patch", name="foo"),
         {"CONTENT_TYPE": "application/apply-patch+yaml"}, "APPLY"),
        ("GET", RequestInfo(is_resource_request=True, verb="get", name="foo", subresource="log"), {}, "CONNECT"),
        # CanonicalVerb makes a HEAD a GET (or a LIST) once there is a RequestInfo
        ("HEAD", RequestInfo(is_resource_request=False, verb="head"), {}, "GET"),
        ("HEAD", None, {}, "HEAD"),
        ("POST", RequestInfo(is_resource_request=True, verb="create"), {}, "POST"),
        ("GET", None, {}, "GET"),
        ("GET", None, {"QUERY_STRING": "watch=1"}, "WATCH"),
    ],
)
def test_normalized_verb(method, info, extra, verb):
    """The verb httplog prints is metrics.go's NormalizedVerb: CanonicalVerb by the scope, then
    CleanVerb (k8s.io/apiserver v0.36.0 pkg/endpoints/metrics/metrics.go L660-L741)."""
    env = {"REQUEST_METHOD": method, **extra}
    if info is not None:
        env[request.REQUEST_INFO_KEY] = info
    assert httplog.normalized_verb(env) == verb

"""Tests of genericserver.endpoints.filters.request_deadline: Go's request_deadline_test.go."""

from __future__ import annotations

import pytest
from werkzeug.test import Client, EnvironBuilder

from genericserver import request
from genericserver import runtime as rt
from genericserver.apimachinery.api import errors as apierrors
from genericserver.audit.context import audit_context_from, with_audit_context
from genericserver.audit.event import Level, Stage
from genericserver.audit.memory import MemoryBackend
from genericserver.audit.policy import new_fake_policy_rule_evaluator
from genericserver.context import context as gocontext
from genericserver.endpoints.filters.request_deadline import (
    INVALID_TIMEOUT_IN_URL,
    _with_request_deadline,
    parse_timeout,
    with_failed_request_audit,
    with_request_deadline,
)
from genericserver.endpoints.filters.request_received_time import RECEIVED_RUNTIME_KEY, with_request_received_timestamp
from genericserver.requestinfo import RequestInfo
from genericserver.responsewriters import http_error
from genericserver.testing.sim import Simulation

MAXIMUM = 60.0
BAD_TIMEOUT_BODY = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid timeout specified in the '
    b'request URL - time: invalid duration \\"foo\\"","reason":"BadRequest","code":400}\n'
)


@pytest.mark.parametrize(
    "url,ok,timeout,message",
    [
        ("/api/v1/namespaces?timeout=", False, 0.0, ""),
        ("/api/v1/namespaces?timeout=10s", True, 10.0, ""),
        ("/api/v1/namespaces?timeout=0s", True, 0.0, ""),
        ("/api/v1/namespaces?timeout=foo", False, 0.0, INVALID_TIMEOUT_IN_URL),
    ],
    ids=["the user does not specify a timeout", "the user specifies a valid timeout",
         "the user specifies a timeout of 0s", "the user specifies an invalid timeout"],
)
def test_parse_timeout(url, ok, timeout, message):
    got_timeout, got_ok, err = parse_timeout(EnvironBuilder(path=url).get_environ())
    assert (got_ok, got_timeout) == (ok, timeout)
    assert message in (str(err) if err is not None else "")
    if message:
        assert str(err) == 'invalid timeout specified in the request URL - time: invalid duration "foo"'


def with_info(app, info=None):
    """A stand-in for with_request_info (Go's fakeRequestResolver: an empty RequestInfo)."""

    def wrapped(environ, start_response):
        with_audit_context(environ)
        request.with_request_info(environ, info or RequestInfo())
        return app(environ, start_response)

    return wrapped


DEADLINE_CASES = [
    ("the user specifies a valid request timeout", "/api/v1/namespaces?timeout=15s", False, 1, True, 15.0, 200),
    ("the user specifies a valid request timeout (again)", "/api/v1/namespaces?timeout=15s", False, 1, True, 15.0, 200),
    ("the specified timeout is 0s, default deadline is expected to be set", "/api/v1/namespaces?timeout=0s", False, 1, True, MAXIMUM, 200),
    ("the user does not specify any request timeout, default deadline is expected to be set", "/api/v1/namespaces?timeout=", False, 1, True, MAXIMUM, 200),
    ("the request is long running, no deadline is expected to be set", "/api/v1/namespaces?timeout=10s", True, 1, False, None, 200),
    ("the timeout specified is malformed, the request is aborted with HTTP 400", "/api/v1/namespaces?timeout=foo", False, 0, False, None, 400),
    ("the timeout specified exceeds the maximum deadline allowed, the default deadline is used", "/api/v1/namespaces?timeout=1m1s", False, 1, True, MAXIMUM, 200),
]


@pytest.mark.parametrize("url,long_running,calls,has_deadline,remaining,status", [c[1:] for c in DEADLINE_CASES], ids=[c[0] for c in DEADLINE_CASES])
def test_with_request_deadline(url, long_running, calls, has_deadline, remaining, status):
    seen = []

    def handler(environ, start_response):
        deadline = request.context_from(environ).deadline()
        seen.append(None if deadline is None else deadline - environ[RECEIVED_RUNTIME_KEY])
        start_response("200 OK", [])
        return []

    sink = MemoryBackend()
    app = with_request_deadline(handler, sink, new_fake_policy_rule_evaluator(Level.REQUEST_RESPONSE), lambda e, i: long_running, MAXIMUM)
    resp = Client(with_request_received_timestamp(with_info(app))).get(url, buffered=True)
    assert resp.status_code == status
    assert len(seen) == calls
    if calls:
        # the deadline is exactly the received time plus the timeout (Go allows a second of slack);
        # deadline - received rounds (60.000000000000455 once the clock passes 2048 s)
        assert (seen[0] is not None) is has_deadline
        assert seen[0] == (None if remaining is None else pytest.approx(remaining, rel=0, abs=1e-6))
    if status == 400:
        assert resp.get_data() == BAD_TIMEOUT_BODY
        assert resp.headers["Content-Type"] == "application/json"
        assert "X-Content-Type-Options" not in resp.headers


def test_with_request_deadline_with_clock():
    # the filter must count from the received time in the environ, not from its own clock
    seen = []

    def handler(environ, start_response):
        seen.append(request.context_from(environ).deadline() - rt.now())
        start_response("200 OK", [])
        return []

    app = _with_request_deadline(handler, MemoryBackend(), new_fake_policy_rule_evaluator(Level.REQUEST_RESPONSE),
                                 lambda e, i: False, 60.0, lambda: rt.now() + 60.0)

    def received_now(environ, start_response):
        environ[RECEIVED_RUNTIME_KEY] = rt.now()
        return app(environ, start_response)

    Client(with_info(received_now)).get("/api/v1/namespaces?timeout=1s", buffered=True)
    assert len(seen) == 1 and 0 < seen[0] <= 1.0


def test_falls_back_to_its_clock_without_a_received_time():
    seen = []

    def handler(environ, start_response):
        seen.append(request.context_from(environ).deadline())
        start_response("200 OK", [])
        return []

    app = _with_request_deadline(handler, None, None, lambda e, i: False, 60.0, lambda: 1000.0)
    Client(with_info(app)).get("/api/v1/namespaces?timeout=2s", buffered=True)
    assert seen == [1002.0]


def test_with_request_deadline_with_invalid_timeout_is_audited():
    calls = []
    sink = MemoryBackend()
    app = with_request_deadline(lambda e, s: calls.append(1) or [], sink, new_fake_policy_rule_evaluator(Level.REQUEST_RESPONSE),
                                lambda e, i: False, 60.0)
    resp = Client(with_info(app)).get("/api/v1/namespaces?timeout=foo", buffered=True)
    assert calls == []
    assert resp.status_code == 400
    events = sink.events()
    assert len(events) == 1
    assert events[0].stage == Stage.RESPONSE_STARTED and events[0].response_status.code == 400


def test_with_request_deadline_with_panic():
    got = {}

    def handler(environ, start_response):
        got["ctx"] = request.context_from(environ)
        raise RuntimeError("apiserver panic'd")

    app = with_info(with_request_deadline(handler, MemoryBackend(), new_fake_policy_rule_evaluator(Level.REQUEST_RESPONSE), lambda e, i: False, 60.0))
    with pytest.raises(RuntimeError, match="apiserver panic'd"):
        app(EnvironBuilder(path="/api/v1/namespaces?timeout=1s").get_environ(), lambda *a: None)
    assert got["ctx"].err() is gocontext.CANCELED


def test_with_request_deadline_with_request_times_out():
    def main():
        timeout = 0.1
        got = {}

        def handler(environ, start_response):
            ctx = request.context_from(environ)
            fired = rt.select(ctx.done(), rt.after(timeout + 1, name="too-late"))
            got["err"] = ctx.err() if fired is ctx.done() else Exception(f"expected the request context to have timed out in {timeout}")
            start_response("200 OK", [])
            return []

        app = with_info(with_request_deadline(handler, MemoryBackend(), new_fake_policy_rule_evaluator(Level.REQUEST_RESPONSE), lambda e, i: False, 60.0))
        body = app(EnvironBuilder(path="/api/v1/namespaces?timeout=100ms").get_environ(), lambda *a: None)
        body.close()
        return got["err"], rt.now()

    err, now = Simulation().run(main)
    assert err is gocontext.DEADLINE_EXCEEDED
    assert now == pytest.approx(0.1)


def test_context_is_cancelled_when_the_response_closes_not_before():
    got = {}

    def handler(environ, start_response):
        got["ctx"] = request.context_from(environ)
        start_response("200 OK", [])
        return [b"a", b"b"]

    app = with_info(with_request_deadline(handler, None, None, lambda e, i: False, 60.0))
    body = app(EnvironBuilder(path="/api/v1/pods").get_environ(), lambda *a: None)
    assert list(body) == [b"a", b"b"]
    assert got["ctx"].err() is None  # the body has been sent but the response is still open
    body.close()
    assert got["ctx"].err() is gocontext.CANCELED


def test_with_failed_request_audit():
    calls = []
    status_err = apierrors.new_bad_request("error serving request").status

    def error_handler(environ, start_response):
        calls.append(environ)
        return http_error(start_response, "error serving request", 400)

    sink = MemoryBackend()
    app = with_failed_request_audit(error_handler, status_err, sink, new_fake_policy_rule_evaluator(Level.REQUEST_RESPONSE))
    env = EnvironBuilder(path="/apis/v1/namespaces/default/pods").get_environ()
    with_audit_context(env)
    request.with_request_info(env, RequestInfo())
    statuses = []
    b"".join(app(env, lambda status, headers, exc_info=None: statuses.append(status)))
    assert len(calls) == 1 and statuses == ["400 Bad Request"]
    ac = audit_context_from(calls[0])
    assert ac.get_event_stage() == Stage.RESPONSE_STARTED
    assert ac.get_event_response_status().code == 400
    assert ac.get_event_response_status().message == "error serving request"
    events = sink.events()
    assert len(events) == 1
    assert events[0] == ac.event_copy()


def test_missing_request_info_is_500():
    app = with_request_deadline(lambda e, s: [], None, None, lambda e, i: False, 60.0)
    resp = Client(app).get("/x", buffered=True)
    assert resp.status_code == 500
    assert resp.get_data() == b"no RequestInfo found in context, handler chain must be wrong\n"
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"


def test_the_error_lines_read_as_go_s(caplog):
    """Go's ``Errorf("Error - %s: %#v", ...)`` and ``ErrorSDepth(1, nil, msg, ...)``: Go quoting, no nil err, no Python reprs."""
    with caplog.at_level("ERROR"):
        app = with_request_deadline(lambda e, s: [], None, None, lambda e, i: False, 60.0)
        Client(with_info(app)).get("/api/v1/namespaces?timeout=foo", buffered=True)
        Client(app).get("/x", buffered=True, headers={"Audit-ID": "abc"})
    first, second = [r.getMessage() for r in caplog.records]
    assert first == 'Error - invalid timeout specified in the request URL - time: invalid duration "foo": "/api/v1/namespaces?timeout=foo"'
    assert second == '"no RequestInfo found in context, handler chain must be wrong" method="GET" URI="/x" auditID=""'
    assert [r.filename for r in caplog.records] == ["request_deadline.py", "request_deadline.py"]

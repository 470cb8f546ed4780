"""Tests of genericserver.endpoints.filters.authn_audit: Go's authn_audit_test.go."""

from __future__ import annotations

import base64

from werkzeug.test import EnvironBuilder

from genericserver import request
from genericserver.audit.context import with_audit_context
from genericserver.audit.event import Level, Stage
from genericserver.audit.memory import MemoryBackend
from genericserver.audit.policy import new_fake_policy_rule_evaluator
from genericserver.endpoints.filters.authn_audit import get_auth_methods, with_failed_authentication_audit
from genericserver.requestinfo import RequestInfoFactory
from genericserver.responsewriters import http_error


def failed(environ, start_response):
    return http_error(start_response, "", 401)


def run(headers=None, environ_base=None, stages=None, path="/api/v1/namespaces/default/pods"):
    sink = MemoryBackend()
    handler = with_failed_authentication_audit(failed, sink, new_fake_policy_rule_evaluator(Level.REQUEST_RESPONSE, stages))
    env = EnvironBuilder(path=path, headers=headers or {}, environ_base={"REMOTE_ADDR": "127.0.0.1", **(environ_base or {})}).get_environ()
    with_audit_context(env)
    info, err = RequestInfoFactory().new_request_info(env)
    request.with_request_info(env, info)
    got = []
    body = handler(env, lambda status, hs, exc_info=None: got.append(status))
    b"".join(body)
    assert got == ["401 Unauthorized"]
    return sink.events()


BASIC = {"Authorization": "Basic " + base64.b64encode(b"username:password").decode()}


def check(events, message_parts):
    assert len(events) == 1
    ev = events[0]
    assert ev.stage == Stage.RESPONSE_STARTED
    assert ev.response_status.code == 401
    for part in message_parts:
        assert part in ev.response_status.message
    assert ev.verb == "list"
    assert ev.request_uri == "/api/v1/namespaces/default/pods"


def test_failed_authn_audit():
    events = run(BASIC)
    check(events, ["basic"])
    assert events[0].response_status.message == "Authentication failed, attempted: basic"


def test_failed_multiple_authn_audit():
    events = run(BASIC, {"SSL_CLIENT_CERT": "-----BEGIN CERTIFICATE-----"})
    check(events, ["basic", "x509"])
    assert events[0].response_status.message == "Authentication failed, attempted: basic, x509"


def test_failed_authn_audit_without_authorization():
    events = run()
    check(events, ["no credentials provided"])
    assert events[0].response_status.message == "Authentication failed, no credentials provided"


def test_failed_authn_audit_omitted():
    assert run(stages=[Stage.RESPONSE_STARTED]) == []


def test_auth_methods():
    def methods(headers=None, path="/"):
        return get_auth_methods(EnvironBuilder(path=path, headers=headers or {}).get_environ())

    assert methods({"Authorization": "Bearer abc"}) == "Authentication failed, attempted: bearer"
    assert methods({"Authorization": "Bearer"}) == "Authentication failed, no credentials provided"
    assert methods(path="/?access_token=%20x%20") == "Authentication failed, attempted: access_token"
    assert methods({"Authorization": "Basic !!!"}) == "Authentication failed, no credentials provided"


def test_disabled_without_sink_or_policy():
    assert with_failed_authentication_audit(failed, None, new_fake_policy_rule_evaluator(Level.METADATA)) is failed
    assert with_failed_authentication_audit(failed, MemoryBackend(), None) is failed

"""Tests of genericserver.audit.request: Go's request_test.go (user agent) and the metadata it records."""

from __future__ import annotations

import pytest
from werkzeug.test import EnvironBuilder

from genericserver.audit.context import audit_context_from, with_audit_context
from genericserver.audit.event import Level, ObjectReference, UserInfo
from genericserver.audit.policy import RequestAuditConfig
from genericserver.audit.request import log_impersonated_user, log_request_metadata, maybe_truncate_user_agent, source_ips
from genericserver.authz import AttributesRecord
from genericserver.request import UserInfo as RequestUser


def test_maybe_truncate_user_agent():
    assert maybe_truncate_user_agent({"HTTP_USER_AGENT": "short-agent"}) == "short-agent"
    long_ua = "a" * 2048
    got = maybe_truncate_user_agent({"HTTP_USER_AGENT": long_ua})
    assert got != long_ua
    assert got == "a" * 1024 + "...TRUNCATED"
    assert maybe_truncate_user_agent({}) == ""


SOURCE_IPS = [
    ("remote only", {}, "1.2.3.4:5678", ["1.2.3.4"]),
    ("remote without port", {}, "1.2.3.4", ["1.2.3.4"]),
    ("ipv6 remote", {}, "[::1]:80", ["::1"]),
    ("forwarded chain", {"X-Forwarded-For": "10.0.0.1, junk, 10.0.0.2"}, "1.2.3.4:1", ["10.0.0.1", "10.0.0.2", "1.2.3.4"]),
    ("real ip not repeated", {"X-Forwarded-For": "10.0.0.1", "X-Real-Ip": "10.0.0.1"}, "1.2.3.4:1", ["10.0.0.1", "1.2.3.4"]),
    ("real ip added", {"X-Real-Ip": "10.0.0.9"}, "1.2.3.4:1", ["10.0.0.9", "1.2.3.4"]),
    ("remote same as last", {"X-Forwarded-For": "1.2.3.4"}, "1.2.3.4:1", ["1.2.3.4"]),
    ("bad remote", {}, "nonsense", []),
]


@pytest.mark.parametrize("headers,remote,want", [c[1:] for c in SOURCE_IPS], ids=[c[0] for c in SOURCE_IPS])
def test_source_ips(headers, remote, want):
    env = EnvironBuilder(headers=headers, environ_base={"REMOTE_ADDR": remote}).get_environ()
    assert source_ips(env) == want


def test_log_request_metadata():
    env = EnvironBuilder(path="/api/v1/namespaces/ns/pods/p?x=1",
                         headers={"User-Agent": "kubectl"}, environ_base={"REMOTE_ADDR": "127.0.0.1"}).get_environ()
    ac = with_audit_context(env)
    ac.init(RequestAuditConfig(level=Level.METADATA), None)
    attrs = AttributesRecord(user=RequestUser("admin", "u", ("g",), {"k": ("v",)}), verb="get", namespace="ns",
                             api_version="v1", resource="pods", name="p", resource_request=True)
    log_request_metadata(env, 1234.5, attrs)
    ev = ac.event_copy()
    assert ev.request_received_timestamp == 1234.5
    assert (ev.verb, ev.request_uri, ev.user_agent, ev.source_ips) == ("get", "/api/v1/namespaces/ns/pods/p?x=1", "kubectl", ["127.0.0.1"])
    assert ev.user == UserInfo("admin", "u", ["g"], {"k": ["v"]})
    assert ev.object_ref == ObjectReference(resource="pods", namespace="ns", name="p", api_version="v1")


def test_log_request_metadata_non_resource_and_disabled():
    env = EnvironBuilder(path="/healthz").get_environ()
    ac = with_audit_context(env)
    ac.init(RequestAuditConfig(level=Level.METADATA), None)
    log_request_metadata(env, 1.0, AttributesRecord(verb="get", path="/healthz"))
    assert ac.event_copy().object_ref is None
    assert ac.event_copy().user == UserInfo()

    off = EnvironBuilder(path="/healthz").get_environ()
    with_audit_context(off).init(RequestAuditConfig(level=Level.NONE), None)
    log_request_metadata(off, 1.0, AttributesRecord(verb="get"))
    assert audit_context_from(off).event_copy().verb == ""


def test_log_impersonated_user():
    env = {}
    log_impersonated_user(env, RequestUser("bob"))  # no audit context: nothing happens
    ac = with_audit_context(env)
    ac.init(RequestAuditConfig(level=Level.METADATA), None)
    log_impersonated_user(env, RequestUser("bob", groups=("g",)))
    assert ac.get_event_impersonated_user() == UserInfo("bob", groups=["g"], extra={})

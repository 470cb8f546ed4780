"""Tests of genericserver.audit.context: Go's context_test.go, plus stage processing and audit IDs."""

from __future__ import annotations

import pytest

from genericserver import runtime as rt
from genericserver.audit.context import (
    AuditContext,
    add_audit_annotation,
    add_audit_annotations,
    add_audit_annotations_map,
    audit_context_from,
    audit_id_from,
    get_audit_id_truncated,
    with_audit_context,
    with_audit_id,
)
from genericserver.audit.event import Level, Stage, UserInfo
from genericserver.audit.memory import MemoryBackend
from genericserver.audit.policy import RequestAuditConfig
from genericserver.request import UserInfo as RequestUser


def initialized(level):
    ac = AuditContext()
    ac.init(RequestAuditConfig(level=level), None)
    return ac


@pytest.mark.parametrize(
    "make,enabled",
    [
        (lambda: None, False),
        (AuditContext, True),
        (lambda: initialized(Level.NONE), False),
        (lambda: initialized(Level.METADATA), True),
        (lambda: initialized(Level.REQUEST_RESPONSE), True),
    ],
    ids=["nil context", "empty context", "level None", "level Metadata", "level RequestResponse"],
)
def test_enabled(make, enabled):
    ac = make()
    assert (ac is not None and ac.enabled()) is enabled


def env_with(level=None):
    env = {}
    ac = with_audit_context(env)
    if level is not None:
        ac.init(RequestAuditConfig(level=level), None)
    return env


NUM = 10


def add_concurrently(env):
    done = [rt.go(add_audit_annotation, env, f"test-annotation-{i}", "test-annotation-value", name=f"annotate-{i}").done for i in range(NUM)]
    rt.wait_all(done)


def test_add_audit_annotation_no_audit():
    env = {}
    add_concurrently(env)
    assert audit_context_from(env) is None


@pytest.mark.parametrize(
    "level,count",
    [(None, NUM), (Level.METADATA, NUM), (Level.NONE, 0)],
    ids=["context initialized, policy not evaluated", "with metadata level", "with none level"],
)
def test_add_audit_annotation(level, count):
    env = env_with(level)
    add_concurrently(env)
    assert len(audit_context_from(env).get_event_annotations() or {}) == count


def test_add_audit_annotation_with_overlapping_annotations():
    env = env_with(Level.METADATA)
    add_audit_annotation(env, "test-annotation-0", "test-existing-annotation")
    add_concurrently(env)
    anns = audit_context_from(env).get_event_annotations()
    assert len(anns) == NUM
    # the value set first is kept
    assert anns["test-annotation-0"] == "test-existing-annotation"


def test_audit_annotations_with_audit_logging_setup():
    env = {}
    add_audit_annotation(env, "nil", "0")
    ac = with_audit_context(env)
    add_audit_annotation(env, "before-evaluation", "1")
    ac.init(RequestAuditConfig(level=Level.METADATA), None)
    add_audit_annotation(env, "after-evaluation", "2")
    assert ac.get_event_annotations() == {"before-evaluation": "1", "after-evaluation": "2"}


def test_bulk_annotations():
    env = env_with(Level.METADATA)
    add_audit_annotations(env, "a", "1", "b", "2", "odd")
    add_audit_annotations_map(env, {"c": "3"})
    assert audit_context_from(env).get_event_annotations() == {"a": "1", "b": "2", "c": "3"}


@pytest.mark.parametrize(
    "user",
    [UserInfo(), UserInfo("test-user", "test-uid", ["test-group"], {"test-extra": ["val"]})],
    ids=["fields with zero values are returned as fields with zero values", "fields with non-zero values are returned as copies"],
)
def test_get_event_user(user):
    ac = AuditContext()
    ac.visit_event(lambda ev: setattr(ev, "user", user))
    assert ac.get_event_user() == user


def test_get_event_user_copies():
    ac = AuditContext()
    ac.visit_event(lambda ev: setattr(ev, "user", UserInfo("u", groups=["g"], extra={"k": ["v"]})))
    got = ac.get_event_user()
    got.groups.append("mutated")
    got.extra["k"].append("mutated")
    assert ac.get_event_user() == UserInfo("u", groups=["g"], extra={"k": ["v"]})


def test_get_event_impersonated_user():
    ac = AuditContext()
    assert ac.get_event_impersonated_user() is None
    ac.init(RequestAuditConfig(level=Level.METADATA), None)
    ac.log_impersonated_user(RequestUser("bob", "uid", ("g",), {"k": ("v",)}))
    got = ac.get_event_impersonated_user()
    assert got == UserInfo("bob", "uid", ["g"], {"k": ["v"]})
    got.groups.append("mutated")
    assert ac.get_event_impersonated_user().groups == ["g"]


def test_impersonated_user_not_recorded_below_metadata():
    ac = AuditContext()
    ac.log_impersonated_user(RequestUser("bob"))  # no level yet
    assert ac.get_event_impersonated_user() is None


def test_init_twice_fails():
    ac = initialized(Level.METADATA)
    with pytest.raises(RuntimeError, match="^audit context was already initialized$"):
        ac.init(RequestAuditConfig(level=Level.METADATA), None)
    assert ac.get_event_level() == Level.METADATA


def test_process_event_stage():
    sink = MemoryBackend()
    ac = AuditContext()
    assert ac.get_event_stage() == Stage.RESPONSE_STARTED  # a new context's stage
    assert ac.process_event_stage(Stage.REQUEST_RECEIVED)  # not initialised: nothing sent
    assert sink.events() == []
    ac.init(RequestAuditConfig(level=Level.METADATA, omit_stages=(Stage.RESPONSE_STARTED,)), sink)
    ac.visit_event(lambda ev: setattr(ev, "request_received_timestamp", 100.0))
    assert ac.process_event_stage(Stage.REQUEST_RECEIVED)
    assert ac.process_event_stage(Stage.RESPONSE_STARTED)  # omitted
    assert ac.process_event_stage(Stage.RESPONSE_COMPLETE)
    events = sink.events()
    assert [e.stage for e in events] == [Stage.REQUEST_RECEIVED, Stage.RESPONSE_COMPLETE]
    assert events[0].stage_timestamp == 100.0  # RequestReceived is stamped with the arrival time
    assert events[1].stage_timestamp > 100.0
    assert all(e.level == Level.METADATA for e in events)


def test_process_event_stage_reports_sink_failure():
    class Refusing:
        def process_events(self, *events):
            return False

    ac = AuditContext()
    ac.init(RequestAuditConfig(level=Level.METADATA), Refusing())
    assert ac.process_event_stage(Stage.REQUEST_RECEIVED) is False


def test_audit_ids():
    env = {}
    assert audit_id_from(env) == ("", False)
    assert get_audit_id_truncated(env) == ""
    with_audit_id(env, "ignored")  # no context: nothing to set
    with_audit_context(env)
    assert audit_id_from(env) == ("", True)
    with_audit_id(env, "")
    assert audit_id_from(env) == ("", True)
    long_id = "x" * 100
    with_audit_id(env, long_id)
    assert audit_id_from(env) == (long_id, True)
    assert audit_context_from(env).event_copy().audit_id == long_id
    assert get_audit_id_truncated(env) == "x" * 64


def test_with_audit_context_keeps_an_existing_one():
    env = {}
    ac = with_audit_context(env)
    assert with_audit_context(env) is ac

"""Tests of genericserver.chain: the assembled v1.36.0 handler chain (config.go L1036-1118).

Go has no test of DefaultBuildHandlerChain as a whole; these check what the chain's order
means: the order in which the filters see a request, the effects that order has on the
responses (who adds which header, who audits what), the max-in-flight limits through the whole
chain under random concurrent mixes (simulation runtime), and a streaming response holding its
slots until the server closes it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest
from hypothesis import event, given, strategies as st
from werkzeug.test import Client, EnvironBuilder

from genericserver import authn, chain, request, runtime as rt, wsgi
from genericserver.audit.event import Stage
from genericserver.audit.memory import MemoryBackend
from genericserver.authz import ALWAYS_ALLOW, ALWAYS_DENY
from genericserver.chain import build, default_build_handler_chain, handler_chain_steps
from genericserver.config import new_config
from genericserver.request import UserInfo
from genericserver.secure_serving import SecureServingInfo
from genericserver.testing.sim import Scripted, Simulation, schedules

PODS = "/api/v1/namespaces/default/pods"
TOO_MANY = b"Too many requests, please try again later.\n"
SYSTEM_MASTERS = "system:masters"
SHUTTING_DOWN_429 = b"The apiserver is shutting down, please try again later.\n"
USERS = {
    "master-token": UserInfo("admin", groups=("system:masters",)),
    "user-token": UserInfo("bob"),
}

# The request path through v1.36.0's DefaultBuildHandlerChain, outermost first: (step name,
# the function the chain docstring names, the line of that call in config.go, condition).
GO_ORDER = [
    ("audit-init", "with_audit_init", 1116, None),
    ("panic-recovery", "with_panic_recovery", 1115, None),
    ("mux-and-discovery-complete", "with_mux_and_discovery_complete", 1114, None),
    ("request-received-timestamp", "with_request_received_timestamp", 1113, None),
    ("request-info", "with_request_info", 1112, None),
    ("http-logging", "with_http_logging", 1104, None),
    ("retry-after", "with_retry_after", 1102, "retry-after"),
    ("cache-control", "with_cache_control", 1099, None),
    ("probabilistic-goaway", "with_probabilistic_goaway", 1097, "goaway"),
    ("watch-termination", "with_watch_termination_during_shutdown", 1094, "watch-grace"),
    ("wait-group", "with_wait_group", 1092, None),
    ("request-deadline", "with_request_deadline", 1090, None),
    ("timeout", "with_timeout_for_non_long_running_requests", 1088, None),
    ("warning-recorder", "with_warning_recorder", 1084, None),
    ("cors", "with_cors", 1080, None),
    ("authentication", "with_authentication", 1077, None),
    ("audit", "with_audit", 1064, None),
    ("impersonation", "with_impersonation", 1059, None),
    ("max-in-flight", "with_max_in_flight_limit", 1051, None),
    ("authorization", "with_authorization", 1040, None),
]

MODES = {
    "default": set(),
    "retry-after mode": {"retry-after"},
    "watch grace": {"watch-grace"},
    "retry-after mode and watch grace": {"retry-after", "watch-grace"},
    "goaway chance": {"goaway"},
    "goaway chance, HTTP/2 disabled": {"goaway", "no-http2"},
}


def get(app, path, **kw):
    """One request, its body read and closed (as a server would), so every slot is released."""
    return Client(app).get(path, buffered=True, **kw)


def configured(modes=frozenset()):
    c = new_config()
    c.shutdown_send_retry_after = "retry-after" in modes
    if "watch-grace" in modes:
        c.shutdown_watch_termination_grace_period = 5.0
    if "goaway" in modes:  # WithProbabilisticGoaway needs the chance and HTTP/2 on (Go's condition)
        c.goaway_chance = 0.02
        c.secure_serving = SecureServingInfo(disable_http2="no-http2" in modes)
    return c.complete().config


def ok(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


def audited(c, level=None):
    backend = MemoryBackend() if level is None else MemoryBackend(level)
    c.audit_backend = c.audit_policy_rule_evaluator = backend
    return backend


def token_authenticator():
    auth, err = authn.new_request_authenticator(token_auth=authn.new(USERS))
    assert err is None
    return auth


# -- the order --------------------------------------------------------------------------------


def recorder(seen):
    """``around`` for ``build``: note each step's name as a request enters it."""

    def around(step, h):
        def recorded(environ, start_response):
            seen.append(step.name)
            return h(environ, start_response)

        return recorded

    return around


@pytest.mark.parametrize("modes", list(MODES.values()), ids=list(MODES))
def test_filters_see_a_request_in_go_order(modes):
    c = configured(modes)
    seen = []
    app = build(ok, handler_chain_steps(c), around=recorder(seen))
    resp = get(app, PODS + "/p1")
    assert (resp.status_code, resp.get_data()) == (200, b"ok")
    assert seen == [name for name, _, _, cond in GO_ORDER if cond is None or (cond in modes and "no-http2" not in modes)]


@pytest.mark.parametrize("modes", list(MODES.values()), ids=list(MODES))
def test_steps_are_listed_innermost_first_as_go_wraps_them(modes):
    steps = handler_chain_steps(configured(modes))
    assert [s.name for s in reversed(steps)] == [name for name, _, _, cond in GO_ORDER if cond is None or (cond in modes and "no-http2" not in modes)]


def test_each_step_names_the_config_go_line_of_its_filter_call():
    steps = handler_chain_steps(configured({"retry-after", "watch-grace", "goaway"}))
    assert [(s.name, s.go_line) for s in reversed(steps)] == [(name, line) for name, _, line, _ in GO_ORDER]


def docstring_table():
    rows = re.findall(r"^\s*(\d+)\s+(with_\S+)\s+L(\d+)", chain.__doc__, re.MULTILINE)
    return [(int(n), name, int(line)) for n, name, line in rows]


def test_docstring_table_is_the_go_order():
    rows = docstring_table()
    assert [n for n, _, _ in rows] == list(range(1, len(GO_ORDER) + 1))
    for (_, doc_name, _), (step, func, _, _) in zip(rows, GO_ORDER):
        # a long name is cut short with "..." in the table
        assert func.startswith(doc_name.rstrip(".")), (step, doc_name)


def test_docstring_table_gives_the_config_go_lines():
    assert [(func, line) for _, func, line in docstring_table()] == [
        (doc, line) for (_, doc, _), (_, _, line, _) in zip(docstring_table(), GO_ORDER)
    ]


# -- what the order means for responses -------------------------------------------------------


def test_retry_after_429_has_an_audit_id_no_cache_control_and_is_not_audited():
    c = configured({"retry-after"})
    audit = audited(c)
    called = []

    def app(environ, start_response):
        called.append(environ["PATH_INFO"])
        return ok(environ, start_response)

    handler = default_build_handler_chain(app, c)
    c.lifecycle_signals.not_accepting_new_request.signal()
    resp = get(handler, PODS, headers={"Audit-ID": "retry-1"})
    assert resp.status_code == 429
    assert resp.get_data() == SHUTTING_DOWN_429
    assert resp.headers["Retry-After"] == "5"
    assert resp.headers["Connection"] == "close"
    assert resp.headers["Audit-ID"] == "retry-1"  # audit init is outside retry-after
    assert "Cache-Control" not in resp.headers  # cache control is inside it
    assert not audit.audited("retry-1")  # and so is the audit filter
    assert called == []
    # exempt requests still reach everything, and are audited
    resp = get(handler, "/healthz", headers={"Audit-ID": "probe-1"})
    assert resp.status_code == 200
    assert resp.headers["Cache-Control"] == "no-cache, private"
    assert audit.stages("probe-1") == [Stage.REQUEST_RECEIVED, Stage.RESPONSE_COMPLETE]


def test_wait_group_503_has_cache_control_and_is_not_audited():
    c = configured()
    audit = audited(c)
    c.authenticator = token_authenticator()
    handler = default_build_handler_chain(ok, c)
    c.non_long_running_request_wait_group.wait()  # nothing in flight: returns at once
    # bad credentials: authentication sits inside the wait group, so this is a 503, not a 401
    resp = get(handler, PODS, headers={"Audit-ID": "wg-1", "Authorization": "Bearer wrong"})
    assert resp.status_code == 503
    assert resp.headers["Cache-Control"] == "no-cache, private"
    assert resp.headers["Audit-ID"] == "wg-1"
    assert resp.headers["Retry-After"] == "1"
    assert json.loads(resp.get_data())["message"] == "apiserver is shutting down"
    assert resp.get_data().endswith(b"}\n\n")
    assert not audit.audited("wg-1")


def test_max_in_flight_429_is_audited():
    c = configured()
    c.max_requests_in_flight = 1
    audit = audited(c)
    release = rt.event("release")

    def app(environ, start_response):
        start_response("200 OK", [])

        def body():
            yield b"first"
            release.wait()
            yield b"last"

        return body()

    handler = default_build_handler_chain(app, c)
    held = Client(handler).get(PODS, headers={"Audit-ID": "held"}, buffered=False)
    try:
        resp = get(handler, PODS, headers={"Audit-ID": "over"})
        assert (resp.status_code, resp.get_data()) == (429, TOO_MANY)
        assert resp.headers["Retry-After"] == "1"
        assert resp.headers["Cache-Control"] == "no-cache, private"
        assert resp.headers["Audit-ID"] == "over"
        assert audit.stages("over") == [Stage.REQUEST_RECEIVED, Stage.RESPONSE_COMPLETE]
        assert [e.response_status and e.response_status.code for e in audit.events() if e.audit_id == "over"] == [None, 429]
    finally:
        release.set()
        assert held.get_data() == b"firstlast"
        held.close()


def test_authentication_401_is_audited_by_the_failed_authentication_audit():
    c = configured()
    audit = audited(c)
    c.authenticator = token_authenticator()
    handler = default_build_handler_chain(ok, c)
    resp = get(handler, PODS, headers={"Audit-ID": "anon-1", "Authorization": "Bearer wrong"})
    assert resp.status_code == 401
    assert resp.get_data() == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"Unauthorized","reason":"Unauthorized","code":401}\n'
    )
    assert resp.headers["Cache-Control"] == "no-cache, private"
    assert resp.headers["Audit-ID"] == "anon-1"
    assert "X-Content-Type-Options" not in resp.headers  # Go's ErrorNegotiated sets none
    (event,) = [e for e in audit.events() if e.audit_id == "anon-1"]
    assert event.stage == Stage.RESPONSE_STARTED
    assert (event.response_status.code, event.response_status.message) == (401, "Authentication failed, attempted: bearer")


def test_authorization_403_is_audited_with_the_decision():
    c = configured()
    audit = audited(c)
    c.authenticator = token_authenticator()
    c.authorizer = ALWAYS_DENY
    handler = default_build_handler_chain(ok, c)
    resp = get(handler, PODS, headers={"Audit-ID": "deny-1", "Authorization": "Bearer user-token"})
    assert resp.status_code == 403
    assert resp.headers["X-Content-Type-Options"] == "nosniff"  # Forbidden goes through RespondWithError
    events = [e for e in audit.events() if e.audit_id == "deny-1"]
    assert [e.stage for e in events] == [Stage.REQUEST_RECEIVED, Stage.RESPONSE_COMPLETE]
    assert events[-1].response_status.code == 403
    assert events[-1].user.username == "bob"
    assert events[-1].annotations["authorization.k8s.io/decision"] == "forbid"


# -- max in flight through the whole chain, under random concurrency ---------------------------


@dataclass(frozen=True)
class Req:
    kind: str  # get, list, watch or post
    resource: bool
    master: bool
    arrival: float
    hold: float

    def target(self) -> tuple[str, str, str]:
        """(method, path, the verb RequestInfo should find)."""
        method = "POST" if self.kind == "post" else "GET"
        if not self.resource:
            path = "/version" + ("?watch=true" if self.kind == "watch" else "")
            return method, path, method.lower()
        path = {"get": PODS + "/p1", "list": PODS, "watch": PODS + "?watch=true", "post": PODS}[self.kind]
        return method, path, {"post": "create"}.get(self.kind, self.kind)


request_mixes = st.lists(
    st.builds(
        Req,
        kind=st.sampled_from(["get", "list", "watch", "post"]),
        resource=st.booleans(),
        master=st.booleans(),
        arrival=st.sampled_from([0.0, 0.5, 1.0]),
        hold=st.sampled_from([0.0, 0.5, 2.0]),
    ),
    min_size=1,
    max_size=8,
)


@given(non_mutating=st.integers(0, 2), mutating=st.integers(0, 2), reqs=request_mixes, schedule=schedules(max_size=60))
def test_the_chain_never_lets_more_than_the_limits_in(non_mutating, mutating, reqs, schedule):
    limits = {False: non_mutating, True: mutating}  # keyed by "is mutating"
    inside = {False: 0, True: 0}  # limited requests (not watches, not masters) inside the app
    peak = {False: 0, True: 0}
    results: dict[int, tuple[int, dict, bytes]] = {}
    events = []

    def main():
        c = new_config()
        c.max_requests_in_flight, c.max_mutating_requests_in_flight = non_mutating, mutating
        c.authenticator = token_authenticator()
        c.authorizer = ALWAYS_ALLOW
        audit = audited(c)

        def app(environ, start_response):
            req: Req = reqs[int(environ["HTTP_X_REQ"])]
            info = request.request_info_from(environ)
            assert info.verb == req.target()[2]
            assert (SYSTEM_MASTERS in request.user_from(environ).groups) == req.master
            mutating_ = info.verb not in ("get", "list", "watch")
            limited = info.verb != "watch" and not req.master
            if limited:
                inside[mutating_] += 1
                peak[mutating_] = max(peak[mutating_], inside[mutating_])
            start_response("200 OK", [])

            def body():
                rt.sleep(req.hold)
                yield b"done"

            def leave():
                if limited:
                    inside[mutating_] -= 1

            return wsgi.on_close(body(), leave)

        handler = c.build_handler_chain_func(app, c)

        def client(i: int, req: Req) -> None:
            rt.sleep(req.arrival)
            method, path, _ = req.target()
            token = "master-token" if req.master else "user-token"
            environ = EnvironBuilder(path=path, method=method, headers={
                "Authorization": f"Bearer {token}", "X-Req": str(i), "Audit-ID": f"req-{i}",
            }).get_environ()
            got = []
            body = handler(environ, lambda status, headers, exc_info=None: got.append((status, headers)))
            try:
                data = b"".join(body)
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()
            results[i] = (int(got[0][0].split()[0]), dict(got[0][1]), data)

        gs = [rt.go(client, i, r, name=f"client-{i}") for i, r in enumerate(reqs)]
        for g in gs:
            g.join()
        events.extend(audit.events())

    Simulation(chooser=Scripted(schedule)).run(main)

    assert sorted(results) == list(range(len(reqs)))
    for cls in (False, True):
        assert limits[cls] == 0 or peak[cls] <= limits[cls]
    for i, req in enumerate(reqs):
        code, headers, data = results[i]
        limited = req.target()[2] != "watch" and not req.master
        if code == 200:
            assert data == b"done"
        else:
            assert limited, (req, code)
            assert (code, headers["Retry-After"], data) == (429, "1", TOO_MANY)
        # audit init is outermost, audit sits outside max in flight: every answer is audited
        assert headers["Audit-ID"] == f"req-{i}"
        completed = [e for e in events if e.audit_id == f"req-{i}" and e.stage == Stage.RESPONSE_COMPLETE]
        assert [e.response_status.code for e in completed] == [code]
    event(f"refused: {sum(1 for r in results.values() if r[0] == 429)}")
    # with a slot for every request of a class (masters take one too while there is one),
    # none of that class is refused
    for cls in (False, True):
        members = [i for i, r in enumerate(reqs) if r.target()[2] != "watch" and (r.target()[2] not in ("get", "list")) == cls]
        if limits[cls] == 0 or len(members) <= limits[cls]:
            assert all(results[i][0] == 200 for i in members)



# -- a streaming response holds its slots until the server closes it ---------------------------


def wait_group_count(wg) -> int:
    # SafeWaitGroup keeps its counter private, as Go's sync.WaitGroup does
    return wg._wg._n


def streaming_chain():
    c = configured()
    c.max_requests_in_flight = 1
    audit = audited(c)
    sent = []
    more = rt.event("more")
    complete = rt.event("response-complete")

    def on_events(events):
        if any(e.audit_id == "stream" and e.stage == Stage.RESPONSE_COMPLETE for e in events):
            complete.set()

    audit.on_request = on_events

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])

        def body():
            for chunk in (b"1", b"2", b"3"):
                sent.append(chunk)
                yield chunk
                more.wait()

        return body()

    return c, audit, default_build_handler_chain(app, c), sent, more, complete


def test_a_streaming_response_holds_its_slots_until_closed():
    c, audit, handler, sent, more, complete = streaming_chain()
    wg = c.non_long_running_request_wait_group
    resp = Client(handler).get(PODS, headers={"Audit-ID": "stream"}, buffered=False)
    assert sent == [b"1"]  # every app in the chain has returned; the body is still being sent
    assert wait_group_count(wg) == 1
    over = get(handler, PODS, headers={"Audit-ID": "over"})
    assert (over.status_code, over.get_data()) == (429, TOO_MANY)  # the max-in-flight slot is taken
    assert audit.stages("stream") == [Stage.REQUEST_RECEIVED]

    more.set()
    assert resp.get_data() == b"123"
    # every byte was read, but the server has not closed the response yet: every slot is
    # still held and the request is not complete (the timeout filter closes the handler's
    # response only when its own is closed)
    assert audit.stages("stream") == [Stage.REQUEST_RECEIVED]
    assert wait_group_count(wg) == 1
    resp.close()
    assert audit.stages("stream") == [Stage.REQUEST_RECEIVED, Stage.RESPONSE_COMPLETE]
    assert wait_group_count(wg) == 0
    again = get(handler, PODS, headers={"Audit-ID": "again"})
    assert again.status_code == 200
    assert wait_group_count(wg) == 0


def test_a_streaming_response_closed_early_releases_its_slots():
    c, audit, handler, sent, more, complete = streaming_chain()
    wg = c.non_long_running_request_wait_group
    resp = Client(handler).get(PODS, headers={"Audit-ID": "stream"}, buffered=False)
    assert sent == [b"1"]
    assert wait_group_count(wg) == 1
    assert audit.stages("stream") == [Stage.REQUEST_RECEIVED]
    resp.close()  # the client went away
    assert wait_group_count(wg) == 0  # the wait group is released by the close itself
    # the handler goroutine sees its next write fail and unwinds; it closes the app's body,
    # which frees the max-in-flight slot and then writes ResponseComplete
    more.set()
    assert complete.wait(5.0)
    assert audit.stages("stream") == [Stage.REQUEST_RECEIVED, Stage.RESPONSE_COMPLETE]
    assert sent == [b"1", b"2"]
    again = get(handler, PODS, headers={"Audit-ID": "again"})
    assert again.status_code == 200


def test_a_whole_body_comes_out_of_the_whole_chain_whole_with_audit_and_access_logging_on():
    # The server holds a whole body (a list, alone or under on_close) until the handler has
    # returned, as Go's response buffer holds a handler's output; anything else it sends at once,
    # chunk by chunk. A filter that wraps every body in an iterator of its own hides the list: the
    # audit filter did, so a client could get its whole answer and hang up while the timeout
    # filter still waited for the handler, which then logged "Post-timeout activity"; WithLogging
    # did at --v=3. So every filter of the chain, audit and access log on, must keep it whole.
    from genericserver import klog

    c = configured()
    audit = audited(c)
    handler = default_build_handler_chain(ok, c)
    env = EnvironBuilder(path=PODS, headers={"Audit-ID": "whole"}).get_environ()
    statuses = []
    with klog.with_verbosity(3):
        done = rt.event("whole-body")
        out = []

        def serve():  # from a goroutine, as the server's connection calls the chain
            body = handler(env, lambda status, headers, exc_info=None: statuses.append(status))
            out.append((wsgi.known_chunks(body), body))
            done.set()

        rt.go(serve, name="whole-body")
        assert done.wait(5.0)
        chunks, body = out[0]
        try:
            assert chunks == [b"ok"] and statuses == ["200 OK"]
            assert audit.stages("whole") == [Stage.REQUEST_RECEIVED]  # the answer is not complete yet
        finally:
            wsgi.close_iterable(body)  # as the server does, whatever the body
    assert audit.stages("whole") == [Stage.REQUEST_RECEIVED, Stage.RESPONSE_COMPLETE]

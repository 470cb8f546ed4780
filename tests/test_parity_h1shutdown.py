"""Replay the HTTP/1 shutdown corpus against genericserver and compare, connection by connection,
with what the same raw connections saw from Go's net/http server (no Go twin; tests/parity/README.md,
"The HTTP/1 shutdown corpus").

Each scenario of :mod:`parity.h1corpus` runs against ``httpserver.Server`` (plain TCP, or TLS
with ALPN http/1.1 only) with the recorder's handlers as a WSGI app, through :class:`RawConn`
connections. Compared: each connection's bytes (Date blanked) and how it ended, which request
contexts ended, and ``Shutdown``'s error, exactly, and that a ``Shutdown`` Go saw return nil left
no connection active; the times within :mod:`parity.tolerance`'s bounds: early only as far as
Go's own polling explains, late only as far as the stalls measured while the scenario ran."""

from __future__ import annotations

import json
import pathlib
import re
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs

import pytest

from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.net.http import server as hs
from parity.h1corpus import SCENARIOS_BY_ID
from parity import tolerance
from parity.shutdowns import WAIT, ConnStates, ShutdownCall, judge, off_time, same_then_on_time
from rawconn import RawConn

RECORDED = json.loads((pathlib.Path(__file__).parent / "parity" / "go-h1shutdown.json").read_text())
# Differences accepted, scenario id -> reason; a listed one that stops differing fails.
KNOWN_DIFFERENCES: dict[str, str] = {}
DATE = re.compile(rb"(?m)^Date: [^\r\n]*")


class Handlers:
    """The recorder's handlers (h1shutdown/main.go) as a WSGI app; ``contexts`` says when each
    tagged request's context ended (ms after the Shutdown call)."""

    def __init__(self, since):
        self.since = since
        self.started: dict[str, threading.Event] = {}
        self.contexts: dict[str, float] = {}
        self.running = 0  # handlers that have not returned: the contexts are read once none runs
        self._mu = threading.Condition()

    def all_returned(self) -> bool:
        with self._mu:
            return self._mu.wait_for(lambda: self.running == 0, WAIT)

    def _running(self, delta: int) -> None:
        with self._mu:
            self.running += delta
            self._mu.notify_all()

    def started_event(self, tag: str) -> threading.Event:
        with self._mu:
            return self.started.setdefault(tag, threading.Event())

    def _ended(self, tag: str) -> None:
        at = self.since()
        with self._mu:
            self.contexts[tag] = at

    def __call__(self, environ, start_response):
        q = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        path, tag, ms = environ["PATH_INFO"], q.get("tag", ""), int(q.get("ms", "0"))
        ctx = reqctx.context_from(environ)
        text = [("Content-Type", "text/plain; charset=utf-8")]
        if path == "/echo":
            start_response("200 OK", text)
            return [b"ok"]
        if path == "/slow":
            self._running(1)
            self.started_event(tag).set()
            try:
                if rt.select(ctx.done(), timeout=ms / 1000) is None:
                    start_response("200 OK", text)
                    return [b"slept"]
                self._ended(tag)
                start_response("200 OK", [])
                return []
            finally:
                self._running(-1)
        if path in ("/stream", "/watch"):
            return self._stream(start_response, ctx, tag, ms if path == "/stream" else None)
        start_response("404 Not Found", text)
        return [b"404 page not found\n"]

    def _stream(self, start_response, ctx, tag, ms):
        start_response("200 OK", [])
        yield b""  # the header at once (Go's Flush)
        self._running(1)
        self.started_event(tag).set()
        try:
            if rt.select(ctx.done(), timeout=None if ms is None else ms / 1000) is None:
                yield b"done"
            else:
                self._ended(tag)
        finally:
            self._running(-1)


def replay(scenario_id: str, tls_cert) -> dict:
    scenario = SCENARIOS_BY_ID[scenario_id]
    call = ShutdownCall()
    since = call.since
    handlers = Handlers(since)
    server_tls = client_tls = None
    if scenario.tls:
        server_tls = hs.ssl_context_from_files(*tls_cert, alpn=("http/1.1",))
        client_tls = ssl.create_default_context(cafile=tls_cert[0])
        client_tls.set_alpn_protocols(["http/1.1"])
    states = ConnStates()
    srv = hs.Server(handlers, ssl_context=server_tls, max_header_bytes=1 << 20,
                    idle_timeout=(scenario.idle_timeout_ms or 90_000) / 1000,
                    read_header_timeout=(scenario.read_header_timeout_ms or 32_000) / 1000,
                    conn_state_hook=states.set)
    ln = hs.listen()
    port = ln.getsockname()[1]
    serving = rt.go(lambda: pytest.raises(hs.ServerClosed, srv.serve, ln), name="test-serve")
    conns: dict[str, RawConn] = {}
    answer: dict = {"conns": {}}
    shutdown = srv.shutdown

    def shutdown_and_count(ctx) -> None:
        # Go's Shutdown returns nil only once no connection is active: count those left (the idle
        # and new ones it closed may not have said so yet)
        shutdown(ctx)
        answer["active_at_return"] = srv.conn_states()[hs.ACTIVE]

    srv.shutdown = shutdown_and_count  # type: ignore[method-assign]

    try:
        for step in scenario.steps:
            op, c = step["op"], conns.get(step.get("conn", ""))
            if op == "dial":
                try:
                    conns[step["conn"]] = RawConn(port, since, client_tls)
                except ConnectionRefusedError:
                    answer["conns"][step["conn"]] = {"received": "", "end": "refused", "at_ms": since()}
            elif op == "send":
                c.send(step["data"].encode("latin-1"))
            elif op == "seen":
                assert c.seen(step["text"].encode("latin-1")), step
            elif op == "idle":
                assert states.wait(c.raw.getsockname(), hs.IDLE), step
            elif op == "ended":
                assert c.ended(), step
            elif op == "close_write":
                c.close_write()
            elif op == "close":
                c.close()
            elif op == "started":
                assert handlers.started_event(step["tag"]).wait(WAIT), step
            elif op == "server_close":
                srv.close()
            else:
                call.step(step, srv)
        if call.t0 is not None:
            assert call.returned.wait(WAIT)
        for name, c in conns.items():
            c.close()
            answer["conns"][name] = {"received": DATE.sub(b"Date: *", bytes(c.received)).decode("latin-1"),
                                     "end": c.end, "at_ms": c.at_ms}
    finally:
        for c in conns.values():
            c.close()
        srv.close()
        assert serving.join(WAIT)
    assert handlers.all_returned(), "a handler still runs"
    answer["contexts"] = dict(handlers.contexts)
    if call.result is not None:
        answer["shutdown"] = call.result
    answer["overslept_ms"] = call.overslept
    return answer


def replay_measured(scenario_id: str, tls_cert) -> dict:
    """:func:`replay`, with the stalls a waiting thread measured while it ran (``lag_ms``)."""
    with tolerance.Lag() as lag:
        answer = replay(scenario_id, tls_cert)
    answer["lag_ms"] = lag.stalled_ms
    return answer


def differences(go: dict, ours: dict) -> list[str]:
    """What differs; a time may be early by ``tolerance.EARLY_MS`` (Shutdown's return: as far as
    Go's polling explains) and late by the allowance of the load ``ours`` measured."""
    out = []
    late = round(tolerance.late_allowance(ours.get("lag_ms", 0.0), ours.get("overslept_ms", 0.0)), 1)
    event = (-tolerance.EARLY_MS, late)

    for name in sorted(go["conns"].keys() | ours["conns"].keys()):
        g, o = go["conns"].get(name, {}), ours["conns"].get(name, {})
        if g.get("end") == "open":  # an open one's time is when the scenario ended: not compared
            g, o = {k: v for k, v in g.items() if k != "at_ms"}, {k: v for k, v in o.items() if k != "at_ms"}
        out += same_then_on_time(f"connection {name} ({g.get('end')})", g, o, event)
    if go["contexts"].keys() != ours["contexts"].keys():
        out.append(f"request contexts ended: Go {sorted(go['contexts'])}, ours {sorted(ours['contexts'])}")
    else:
        for tag in go["contexts"]:
            out += off_time(f"request {tag}'s context", go["contexts"][tag], ours["contexts"][tag], event)
    g, o = go.get("shutdown") or {}, ours.get("shutdown") or {}
    if g.get("err") != o.get("err"):
        out.append(f"Shutdown: Go {g}, ours {o}")
    elif g and ours.get("active_at_return"):  # what Go's nil return means, whenever it came
        out.append(f"Shutdown returned with {ours['active_at_return']} connection(s) active: Go's returns only once none is")
    elif g:
        out += off_time("Shutdown returned", g["at_ms"], o["at_ms"], tolerance.shutdown_bounds(g, late))
    return out


def test_the_recording_is_of_todays_scenarios():
    assert RECORDED["go_version"] == "go1.26.8", "recorded from the Go kube-apiserver v1.36.0 is built with"
    assert RECORDED["scenarios"].keys() == SCENARIOS_BY_ID.keys(), "make parity re-records the corpus"
    for sid, entry in RECORDED["scenarios"].items():
        script = {k: v for k, v in SCENARIOS_BY_ID[sid].script().items() if k != "id"}
        assert {k: entry[k] for k in script} == script, f"{sid} changed since it was recorded: make parity"


def test_the_comparison_sees_an_end_a_time_and_an_error_that_differ():
    go = {"conns": {"a": {"received": "", "end": "open", "at_ms": 1001.0},
                    "b": {"received": "HTTP/1.1 200 OK", "end": "EOF", "at_ms": 20.0}},
          "contexts": {"slow": 50.0}, "shutdown": {"err": None, "at_ms": 30.0}}
    same = json.loads(json.dumps(go))
    same["conns"]["a"]["at_ms"] = 4000.0  # an open connection's time is the scenario's end
    same["conns"]["b"]["at_ms"] = 45.0  # within the tolerance of a quiet machine
    assert differences(go, same) == []
    same["conns"]["b"]["at_ms"] = 150.0  # 130 ms late: only where the load measured explains it
    assert [d.split(":")[0] for d in differences(go, same)] == ["connection b (EOF)"]
    assert differences(go, {**same, "lag_ms": 100.0}) == []  # 30 ms and the 100 ms of stalls measured
    ours = json.loads(json.dumps(go))
    ours["conns"]["b"]["end"] = "RST"
    ours["contexts"]["slow"] = 400.0
    ours["shutdown"]["err"] = "context deadline exceeded"
    assert [d.split(":")[0] for d in differences(go, ours)] == ["connection b (EOF)", "request slow's context", "Shutdown"]


def test_shutdown_may_be_early_only_as_far_as_gos_polling_explains():
    assert tolerance.poll_times(1100) == [0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 1011, 1511]
    go = {"conns": {}, "contexts": {}, "shutdown": {"err": None, "at_ms": 552.0}}  # Go's look at ~511 ms (+10%)
    at = lambda ms: {"conns": {}, "contexts": {}, "shutdown": {"err": None, "at_ms": ms}}  # noqa: E731
    assert differences(go, at(300.0)) == []  # what let Go return came after its look at 255 ms
    assert differences(go, at(5.0)) != []  # a Shutdown that did not wait
    deadline = {"conns": {}, "contexts": {}, "shutdown": {"err": "context deadline exceeded", "at_ms": 1001.0}}
    assert differences(deadline, {**deadline, "shutdown": {**deadline["shutdown"], "at_ms": 990.0}}) == []
    assert differences(deadline, {**deadline, "shutdown": {**deadline["shutdown"], "at_ms": 800.0}}) != []


def replay_broken(scenario_ids: list, tls_cert, side_by_side: bool) -> dict:
    """Each scenario's differences from Go, replayed against a server broken on purpose: side by
    side where the difference is not a time (a busy process would make Shutdown's return late)."""
    if not side_by_side:
        return {sid: differences(RECORDED["scenarios"][sid]["answer"], replay_measured(sid, tls_cert)) for sid in scenario_ids}
    with ThreadPoolExecutor(len(scenario_ids), thread_name_prefix="broken-replay") as pool:
        answers = {sid: pool.submit(replay_measured, sid, tls_cert) for sid in scenario_ids}
        return {sid: differences(RECORDED["scenarios"][sid]["answer"], f.result()) for sid, f in answers.items()}


# the scenarios with a connection active when Shutdown is called, which it must wait for: where Go's
# Shutdown met its deadline, and where it returned in time (there only the time tells)
ACTIVE_AT_SHUTDOWN_DEADLINE = ["new-and-silent", "active-unread-body", "expect-100-unanswered", "shutdown-deadline-then-close"]
ACTIVE_AT_SHUTDOWN_IN_TIME = ["active-then-idle", "close-unread-body", "http10-unread-body", "streaming"]


def test_a_shutdown_that_does_not_wait_for_active_connections_fails_the_replay(tls_cert, monkeypatch):
    close_idle = hs.Server._close_idle_conns_locked

    def done_at_once(self):
        close_idle(self)
        return True, None

    monkeypatch.setattr(hs.Server, "_close_idle_conns_locked", done_at_once)
    diffs = replay_broken(ACTIVE_AT_SHUTDOWN_DEADLINE, tls_cert, side_by_side=True)
    assert {sid: any(d.startswith("Shutdown: Go {'err'") for d in ds) for sid, ds in diffs.items()} == dict.fromkeys(diffs, True), diffs
    # where Go's Shutdown returned in time, ours (at once) returns with the connection active, and early
    diffs = replay_broken(ACTIVE_AT_SHUTDOWN_IN_TIME, tls_cert, side_by_side=True)
    assert {sid: any(d.startswith("Shutdown returned with 1 connection(s) active") for d in ds)
            for sid, ds in diffs.items()} == dict.fromkeys(diffs, True), diffs
    go = {"conns": {}, "contexts": {}, "shutdown": {"err": None, "at_ms": 552.0}}  # its time alone, as the recording has it
    assert differences(go, {**go, "shutdown": {"err": None, "at_ms": 5.0}}) == [
        "Shutdown returned: at 5 ms, Go at 552 ms (tolerance -297.0..30.0)"]


def test_idle_connections_closed_120_ms_late_fail_the_replay(tls_cert, monkeypatch):
    close_idle, began = hs.Server._close_idle_conns_locked, {}

    def late(self):  # the idle connections of the first 120 ms are left open until then
        now = rt.now()
        left = 0.120 - (now - began.setdefault(self, now))
        if left > 0 and any(not c.closing and hs.idle_for_shutdown(c.state, c.since, now)[0] for c in self._conns):
            return False, left
        return close_idle(self)

    monkeypatch.setattr(hs.Server, "_close_idle_conns_locked", late)
    monkeypatch.setattr(tolerance, "Lag", tolerance.NoLag)  # judged as on a quiet machine: load excuses only what it measured
    for sid in ("idle-keep-alive", "request-after-idle-closed"):
        diffs = differences(RECORDED["scenarios"][sid]["answer"], replay_measured(sid, tls_cert))
        assert any(d.startswith("connection a (EOF)") for d in diffs), (sid, diffs)


@pytest.mark.parametrize("scenario_id", list(SCENARIOS_BY_ID))
def test_h1_shutdown_replays_as_go(scenario_id, tls_cert):
    go = RECORDED["scenarios"][scenario_id]["answer"]
    judge(SCENARIOS_BY_ID[scenario_id], differences(go, replay_measured(scenario_id, tls_cert)), KNOWN_DIFFERENCES)


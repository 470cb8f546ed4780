"""Replay the HTTP/1 shutdown corpus against genericserver and compare, connection by connection,
with what the same raw connections saw from Go's net/http server (no Go twin; tests/parity/README.md,
"The HTTP/1 shutdown corpus").

Each scenario of :mod:`parity.h1corpus` runs against ``httpserver.Server`` (plain TCP, or TLS
with ALPN http/1.1 only) with the recorder's handlers as a WSGI app, through :class:`RawConn`
connections. Compared: each connection's bytes (Date blanked) and how it ended, which request
contexts ended, and ``Shutdown``'s error, exactly; the times within ``TOLERANCE_MS``."""

from __future__ import annotations

import json
import pathlib
import re
import ssl
import threading
from urllib.parse import parse_qs

import pytest

from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.net.http import server as hs
from parity.h1corpus import SCENARIOS_BY_ID
from parity.shutdowns import WAIT, ConnStates, ShutdownCall, judge, off_time, same_then_on_time
from rawconn import RawConn

RECORDED = json.loads((pathlib.Path(__file__).parent / "parity" / "go-h1shutdown.json").read_text())
# Times are compared within these bounds, in ms (ours minus Go's). A connection's end and a
# request context's end: 150 either way (scheduling). Shutdown's return: Go polls its
# connections (1 ms, doubling, at most 500 ms apart, with 10% jitter) where this server wakes on
# each state change, so ours may come up to 600 ms earlier.
TOLERANCE_MS = {"conn": (-150, 150), "context": (-150, 150), "shutdown": (-600, 150)}
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
    return answer


def differences(go: dict, ours: dict) -> list[str]:
    out = []

    def timed(kind: str, name: str, g: float, o: float) -> None:
        out.extend(off_time(name, g, o, TOLERANCE_MS[kind]))

    for name in sorted(go["conns"].keys() | ours["conns"].keys()):
        g, o = go["conns"].get(name, {}), ours["conns"].get(name, {})
        if g.get("end") == "open":  # an open one's time is when the scenario ended: not compared
            g, o = {k: v for k, v in g.items() if k != "at_ms"}, {k: v for k, v in o.items() if k != "at_ms"}
        out += same_then_on_time(f"connection {name} ({g.get('end')})", g, o, TOLERANCE_MS["conn"])
    if go["contexts"].keys() != ours["contexts"].keys():
        out.append(f"request contexts ended: Go {sorted(go['contexts'])}, ours {sorted(ours['contexts'])}")
    else:
        for tag in go["contexts"]:
            timed("context", f"request {tag}'s context", go["contexts"][tag], ours["contexts"][tag])
    g, o = go.get("shutdown") or {}, ours.get("shutdown") or {}
    if g.get("err") != o.get("err"):
        out.append(f"Shutdown: Go {g}, ours {o}")
    elif g:
        timed("shutdown", "Shutdown returned", g["at_ms"], o["at_ms"])
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
    same["conns"]["b"]["at_ms"] = 150.0  # within the tolerance
    assert differences(go, same) == []
    ours = json.loads(json.dumps(go))
    ours["conns"]["b"]["end"] = "RST"
    ours["contexts"]["slow"] = 400.0
    ours["shutdown"]["err"] = "context deadline exceeded"
    assert [d.split(":")[0] for d in differences(go, ours)] == ["connection b (EOF)", "request slow's context", "Shutdown"]


@pytest.mark.parametrize("scenario_id", list(SCENARIOS_BY_ID))
def test_h1_shutdown_replays_as_go(scenario_id, tls_cert):
    go = RECORDED["scenarios"][scenario_id]["answer"]
    judge(SCENARIOS_BY_ID[scenario_id], differences(go, replay(scenario_id, tls_cert)), KNOWN_DIFFERENCES)

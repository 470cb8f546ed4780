"""Replay the HTTP/2 corpus recorded from kube-apiserver against ``genericserver serve`` (no Go twin;
tests/parity/README.md, "The HTTP/2 corpus from kube-apiserver").

Each case of :mod:`parity.h2kube` starts ``genericserver serve`` over TLS with the case's flags,
the same token file and ``--v=1``, and runs the same frame-level client steps the recorder ran
against the Go program (all the cases side by side, each on its own server: about 4 s); the observation (made by ``h2kube.observe``, the one masking rule) must
equal the recorded one. A case of kube-apiserver's is served with ``--anonymous-auth=false``:
kube-apiserver turns anonymous authentication off under ``--authorization-mode=AlwaysAllow``
(pkg/kubeapiserver/options/authentication.go), as the recording was made; genericserver-go's
cases keep serve's default, anonymous on, as genericserver-go has it."""

from __future__ import annotations

import copy
import json
import pathlib
import threading
from typing import Any

import pytest

from parity import h2kube
from serverprocess import ServerProcess

RECORDED = json.loads((pathlib.Path(__file__).parent / "parity" / "go-h2kube.json").read_text())
# Differences accepted: case id -> {the observation's field (a dotted path, as a failure prints
# it) -> reason}. Every difference found must be listed, and every listed field must still
# differ: one that stops differing fails, so that its entry (and its row in walkthrough.md,
# section 10.3, "HTTP/2, frame by frame") is dropped.
KNOWN_DIFFERENCES: dict[str, dict[str, str]] = {}
WAIT = 30.0


class ServedProcess(h2kube.Server):
    def __init__(self, sp: ServerProcess):
        self.sp, self.port = sp, sp.port

    def signal(self) -> None:
        self.sp.signal()

    def expect(self, pattern: str) -> None:
        self.sp.expect(pattern)

    def stop(self) -> None:
        self.sp.kill()


def serve(case: h2kube.Case, tls_cert: tuple[str, str], tmp_path: pathlib.Path) -> ServerProcess:
    cert, key = tls_cert
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(h2kube.TOKENS)
    anonymous = () if case.generic else ("--anonymous-auth=false",)
    sp = ServerProcess("--v=1", "--tls-cert-file", cert, "--tls-private-key-file", key,
                       "--token-auth-file", str(tokens), *anonymous, *case.flags)
    try:
        ready(sp, cert)
    except BaseException:
        sp.kill()
        raise
    return sp


def ready(sp: ServerProcess, ca: str) -> None:
    """Until /readyz is 200 on a connection of its own, as the recorder waits (reference/pair.py)."""
    pace = threading.Event()  # never set: its timed wait paces the polling
    for _ in range(int(WAIT / 0.02)):
        c = h2kube.FrameClient(sp.port, ca)
        try:
            sid = c.request("/readyz")
            c.pump(lambda: c.answered(sid))
            if int(c.headers.get(sid, [{}])[0].get(":status", 0)) == 200:
                return
        finally:
            c.close()
        pace.wait(0.02)
    pytest.fail("/readyz never turned green")


def replay(case_id: str, tls_cert: tuple[str, str], tmp_path: pathlib.Path) -> dict:
    case = h2kube.CASES_BY_ID[case_id]
    server = ServedProcess(serve(case, tls_cert, tmp_path))
    try:
        return case.run(server, tls_cert[0])
    finally:
        server.stop()


def differences(go: Any, ours: Any, path: str = "") -> list[str]:
    """Each leaf that differs, as ``path: Go's -> ours``; a list's items one by one (a GOAWAY's
    code and last stream id apart: ``goaways.0.code``) when both have as many; and a header's
    fields out of Go's order (``path order``)."""
    if isinstance(go, list) and isinstance(ours, list) and len(go) == len(ours):
        go, ours = dict(enumerate(go)), dict(enumerate(ours))
    if isinstance(go, dict) and isinstance(ours, dict):
        out = []
        if path.endswith("headers"):  # the fields' order too, as Go encodes them (write.go: sorted by name)
            go_order, our_order = [k for k in go if k in ours], [k for k in ours if k in go]
            if go_order != our_order:
                out.append(f"{path} order: {json.dumps(go_order)} -> {json.dumps(our_order)}")
        for k in sorted(set(go) | set(ours), key=str):
            out += differences(go.get(k, "<absent>"), ours.get(k, "<absent>"), f"{path}.{k}" if path else str(k))
        return out
    return [] if go == ours else [f"{path}: {json.dumps(go)} -> {json.dumps(ours)}"]


def judge(case_id: str, found: list[str]) -> None:
    """Fail on a difference not listed for the case, and on a listed field that no longer differs."""
    listed = KNOWN_DIFFERENCES.get(case_id, {})
    fields = {f.split(": ", 1)[0] for f in found}
    unlisted = [f for f in found if f.split(": ", 1)[0] not in listed]
    gone = [f"{k} ({why})" for k, why in listed.items() if k not in fields]
    assert not gone, (f"{case_id} no longer differs from kube-apiserver in: drop from KNOWN_DIFFERENCES "
                      f"(and from walkthrough.md's table):\n  " + "\n  ".join(gone))
    assert not unlisted, (f"{case_id}: {h2kube.CASES_BY_ID[case_id].description}\n"
                          f"recorded from {RECORDED['cases'][case_id]['from']} -> genericserver serve:\n  "
                          + "\n  ".join(unlisted))


def test_the_recording_is_of_todays_cases():
    assert list(RECORDED["cases"]) == [c.id for c in h2kube.CASES], "make parity re-records the corpus"
    for case in h2kube.CASES:
        entry = RECORDED["cases"][case.id]
        assert (entry["flags"], entry["from"] == "genericserver-go") == (list(case.flags), case.generic), \
            f"{case.id} changed since it was recorded: make parity"


def test_known_differences_name_cases():
    assert set(KNOWN_DIFFERENCES) <= set(h2kube.CASES_BY_ID)


def test_a_listed_field_that_stops_differing_fails_and_so_does_an_unlisted_one(monkeypatch):
    monkeypatch.setitem(KNOWN_DIFFERENCES, "connection-error", {"goaways.0.last_stream_id": "a reason"})
    judge("connection-error", ["goaways.0.last_stream_id: 2 -> 1"])
    with pytest.raises(AssertionError, match="no longer differs"):
        judge("connection-error", [])
    with pytest.raises(AssertionError, match="closed"):
        judge("connection-error", ["goaways.0.last_stream_id: 2 -> 1", "closed: true -> false"])


def test_the_goaway_is_compared_field_by_field():
    # one allowance once covered the whole GOAWAY: INTERNAL_ERROR for PROTOCOL_ERROR passed
    go = RECORDED["cases"]["connection-error"]["observed"]
    assert go["goaways"] == [{"code": "PROTOCOL_ERROR", "last_stream_id": 2}]
    for field, value in (("code", "INTERNAL_ERROR"), ("last_stream_id", 1)):
        ours = copy.deepcopy(go)
        ours["goaways"][0][field] = value
        found = differences(go, ours)
        assert found == [f"goaways.0.{field}: {json.dumps(go['goaways'][0][field])} -> {json.dumps(value)}"]
        with pytest.raises(AssertionError):
            judge("connection-error", found)


def test_a_head_body_and_a_missing_content_length_are_differences():
    # HEAD /healthz sent "ok" as DATA, a HEAD answered 405 its Status (JSON: only "data" shows it)
    for case_id, length in (("head-healthz", "2"), ("head-405", "197")):
        go = RECORDED["cases"][case_id]["observed"]
        assert go["streams"]["1"]["data"] is False and go["streams"]["1"]["headers"]["content-length"] == length
        with_body = copy.deepcopy(go)
        with_body["streams"]["1"]["data"] = True
        no_length = copy.deepcopy(go)
        del no_length["streams"]["1"]["headers"]["content-length"]
        assert differences(go, with_body) == ["streams.1.data: false -> true"]
        assert differences(go, no_length) == [f'streams.1.headers.content-length: "{length}" -> "<absent>"']
        with pytest.raises(AssertionError):
            judge(case_id, differences(go, with_body))


def test_fields_out_of_go_s_order_are_a_difference():
    # Go sorts an answer's fields by name (write.go's encodeHeaders); the port once sent them in
    # the handler's order
    go = RECORDED["cases"]["healthz"]["observed"]
    fields = go["streams"]["1"]["headers"]
    assert list(fields) == sorted(fields, key=lambda k: (k == "content-length", k))  # content-length last, as Go
    ours = copy.deepcopy(go)
    ours["streams"]["1"]["headers"] = dict(reversed(list(fields.items())))
    assert differences(go, ours) == [f"streams.1.headers order: {json.dumps(list(fields))} -> "
                                     f"{json.dumps(list(reversed(fields)))}"]
    with pytest.raises(AssertionError):
        judge("healthz", differences(go, ours))


def test_the_comparison_sees_a_goaway_a_status_and_a_window_that_differ():
    go = RECORDED["cases"]["retry-after-in-flight"]["observed"]
    for flip in (lambda o: o["goaways"][0].__setitem__("last_stream_id", 5),
                 lambda o: o["streams"]["3"].__setitem__("status", 503),
                 lambda o: o["streams"]["3"]["headers"].pop("retry-after"),
                 lambda o: o["streams"]["3"]["headers"].__setitem__("x-content-type-options", "other"),
                 lambda o: o["streams"]["5"].__setitem__("end", "reset REFUSED_STREAM"),
                 lambda o: o.__setitem__("closed", False)):
        ours = copy.deepcopy(go)
        flip(ours)
        with pytest.raises(AssertionError):
            judge("retry-after-in-flight", differences(go, ours))
    window = RECORDED["cases"]["unread-body-404"]["observed"]
    ours = copy.deepcopy(window)
    ours["window"]["credited"] = 0
    assert differences(window, ours) == [f"window.credited: {window['window']['credited']} -> 0"]


@pytest.fixture(scope="module")
def replays(tls_cert, tmp_path_factory) -> dict:
    """Every case replayed at once, each against a server of its own: the cases mostly wait (on
    the second a connection lingers after its GOAWAY, the shutdown delay, /slow), so side by side
    they take about as long as the longest one, not the sum (19 s, one after the other).
    Case id -> its observation, or what it raised."""
    results: dict = {}
    dirs = {c.id: tmp_path_factory.mktemp(c.id) for c in h2kube.CASES}  # (mktemp is not thread-safe)

    def one(case_id: str) -> None:
        try:
            results[case_id] = replay(case_id, tls_cert, dirs[case_id])
        except BaseException as err:  # pytest.fail's too: the case's test raises it
            results[case_id] = err

    threads = [threading.Thread(target=one, args=(c.id,), name=f"replay-{c.id}") for c in h2kube.CASES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.parametrize("case_id", [c.id for c in h2kube.CASES])
def test_h2_replays_as_kube_apiserver(case_id, replays):
    ours = replays[case_id]
    if isinstance(ours, BaseException):
        raise ours
    judge(case_id, differences(RECORDED["cases"][case_id]["observed"], ours))


class InProcess(h2kube.Server):
    """Go's HTTP/2 server as ported, in this process, behind an app that answers /version with
    JSON: enough for the connection-error case's frames (serve's chain runs in a subprocess,
    which a test cannot break on purpose)."""

    def __init__(self, tls_cert: tuple[str, str]):
        from genericserver import runtime as rt
        from genericserver.net.http import server as hs
        from genericserver.net.http.internal.http2 import server as http2server

        def app(environ, start_response):
            start_response("200 OK", [("Content-Type", "application/json")])
            return [b'{"major":"1"}']

        self.srv = hs.Server(app, ssl_context=hs.ssl_context_from_files(*tls_cert, alpn=("h2", "http/1.1")),
                             http2=http2server.Server(http2server.Options(go_away_timeout=0.2)))
        ln = hs.listen()
        self.port = ln.getsockname()[1]
        self.serving = rt.go(lambda: pytest.raises(hs.ServerClosed, self.srv.serve, ln), name="test-serve")

    def stop(self) -> None:
        self.srv.close()
        assert self.serving.join(WAIT)


def test_a_connection_error_goaway_of_another_code_fails_the_replay(tls_cert, monkeypatch):
    from genericserver.net.http.internal.http2 import processframe

    go = RECORDED["cases"]["connection-error"]["observed"]
    case = h2kube.CASES_BY_ID["connection-error"]
    srv = InProcess(tls_cert)
    try:
        assert case.run(srv, tls_cert[0])["goaways"] == go["goaways"]  # Go's code and last stream
        original = processframe.FrameSide.connection_error

        def internal_error(self, err, sid):
            err.code = h2kube.ErrorCodes.INTERNAL_ERROR
            original(self, err, sid)

        monkeypatch.setattr(processframe.FrameSide, "connection_error", internal_error)
        found = differences(go, case.run(srv, tls_cert[0]))
    finally:
        srv.stop()
    assert 'goaways.0.code: "PROTOCOL_ERROR" -> "INTERNAL_ERROR"' in found, found
    with pytest.raises(AssertionError):
        judge("connection-error", found)

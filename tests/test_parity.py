"""Replay the HTTP/1 parity corpus against genericserver's server and compare with Go's answers (no Go twin).

Go's answers were recorded from a real Go net/http server (tests/parity/README.md; ``make parity``
re-records them); this file needs no Go. One :class:`genericserver.net.http.server.Server`, configured
as secure_serving.go configures Go's, serves the reflecting app of :mod:`parity.app`; every case
goes to it on its own connection, several at once, and each answer is compared with Go's under
the rules of :mod:`parity.wire`. A difference fails unless the case is in ``KNOWN_DIFFERENCES``.
"""

from __future__ import annotations

import collections
import difflib
import json
import pathlib
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from genericserver import runtime as rt
from genericserver.net.http import server as hs
from genericserver.net.http.internal import chunked
from parity import app as parity_app
from parity import wire
from parity.corpus import CASES, CATEGORIES

from genericserver.net.http import request as httprequest
from genericserver.net.http.request import KNOWN_DIFFERENCES

RECORDED = json.loads((pathlib.Path(__file__).parent / "parity" / "go-answers.json").read_text())
WORKERS = 8  # connections replayed at once: the waits for "nothing more" overlap
CONTROL_BYTES = [*range(0x20), 0x7F]


class Replay:
    """The server under test on a free port, and a way to wait until it has no connection left."""

    def __init__(self):
        self.cond = threading.Condition()
        self.logs: list[str] = []
        self.srv = hs.Server(parity_app.app, max_header_bytes=1 << 20, read_header_timeout=32, idle_timeout=90,
                             error_log=self.logs.append, conn_state_hook=self._hook)
        ln = hs.listen()
        self.port = ln.getsockname()[1]
        self.serving = rt.go(self._serve, ln, name="parity-serve")

    def _serve(self, ln):
        try:
            self.srv.serve(ln)
        except hs.ServerClosed:
            pass

    def _hook(self, conn, state):
        with self.cond:
            self.cond.notify_all()

    def stop(self) -> None:
        self.srv.close()
        assert self.serving.join(wire.ANSWER_TIMEOUT), "serve did not return after close"
        with self.cond:
            assert self.cond.wait_for(lambda: sum(self.srv.conn_states()[s] for s in (hs.NEW, hs.ACTIVE, hs.IDLE)) == 0,
                                      wire.ANSWER_TIMEOUT), f"connections left: {self.srv.conn_states()}"


def replay(port: int, case: wire.Case) -> dict:
    go = RECORDED["cases"].get(case.id, {}).get("answer", {})
    finals = sum(1 for r in go.get("responses", []) if not r["status"][9:10] == "1")
    quiet_after = finals if go.get("connection") == "waiting" else None
    return wire.exchange(port, case.steps, head_responses=case.head_responses, quiet_after=quiet_after)


def replay_all(cases: list) -> dict:
    """Our server's answer to each case (no thread outlives it)."""
    server = Replay()
    try:
        with ThreadPoolExecutor(WORKERS, thread_name_prefix="parity-client") as pool:
            futures = {case.id: pool.submit(replay, server.port, case) for case in cases}
            answers = {cid: f.result() for cid, f in futures.items()}
    finally:
        server.stop()
    for g in rt.THREADS.live():  # a connection's goroutine may still be returning from its hook
        assert g.join(wire.ANSWER_TIMEOUT), f"{g} did not end"
    return answers


@pytest.fixture(scope="module")
def replayed() -> dict:
    """Our server's answer to every case, replayed before the first test."""
    return replay_all(CASES)


def request_preview(case: wire.Case, limit: int = 400) -> str:
    parts = []
    for step in case.steps:
        if isinstance(step, wire.Await):
            parts.append(f"<wait for {step.heads} response head(s)>")
        else:
            text = repr(step[:limit])[2:-1]
            parts.append(text + (f"... ({len(step)} bytes)" if len(step) > limit else ""))
    return " ".join(parts)


def report(case: wire.Case, go: dict, ours: dict) -> str:
    go_text, our_text = wire.show(go), wire.show(ours)
    diff = "\n".join(difflib.unified_diff(go_text.splitlines(), our_text.splitlines(), "go", "ours", lineterm="", n=1))
    return (f"== {case.id}: {case.description}\n"
            f"sent: {request_preview(case)}\n"
            f"Go ({RECORDED['reference']}): {wire.show(go, indent=None)}\n"
            f"ours: {wire.show(ours, indent=None)}\n{diff}")


def differences(case: wire.Case, ours: dict) -> str:
    """Why ``ours`` fails ``case`` ('' if it does not)."""
    entry = RECORDED["cases"].get(case.id)
    if entry is None:
        return f"== {case.id}: no recorded answer; run `make parity`"
    if entry["digest"] != case.digest():
        return f"== {case.id}: the case changed since Go's answer was recorded; run `make parity`"
    go = entry["answer"]
    if case.id in KNOWN_DIFFERENCES:
        return "" if not wire.same(go, ours) else f"== {case.id} now answers as Go does: drop it from KNOWN_DIFFERENCES"
    return "" if wire.same(go, ours) else report(case, go, ours)


# one test per category, not per case: the leak check that runs around every test costs more
# than a case does; a failure lists each case that differs, with its id
@pytest.mark.parametrize("category", list(CATEGORIES))
def test_answers_as_go_does(category: str, replayed: dict):
    cases = [c for c in CASES if c.category == category]
    failures = [f for f in (differences(c, replayed[c.id]) for c in cases) if f]
    if failures:
        pytest.fail(f"{len(failures)} of {len(cases)} {category} cases differ from Go "
                    f"(README.md, 'Reading a failure'):\n\n" + "\n\n".join(failures), pytrace=False)


def test_the_corpus_covers_every_category():
    assert len(CASES) >= 120
    counts = collections.Counter(c.category for c in CASES)
    assert set(counts) == set(CATEGORIES)
    thin = {cat: n for cat, n in counts.items() if n < 5}
    assert not thin, f"categories with fewer than 5 cases: {thin}"
    ids = {c.id for c in CASES}
    assert {f"value-byte-0x{b:02x}" for b in CONTROL_BYTES} <= ids, "one header-value case per control byte"
    assert all(c.size <= 2_200_000 for c in CASES), "keep every case under about 2 MB"


def test_go_answers_are_recorded_for_every_case_and_both_go_releases():
    assert list(RECORDED["cases"]) == [c.id for c in CASES], "the recorded cases are not the corpus: run `make parity`"
    versions = RECORDED["go_versions"]
    # the reference is the Go kube-apiserver v1.36.0 is built with: its /version, in the API corpus, says which
    kube_go = set(re.findall(r'"goVersion": "([^"]+)"', (pathlib.Path(__file__).parent / "parity" / "go-api.json").read_text()))
    assert kube_go == {versions[0]} and versions[0] == RECORDED["reference"] == "go1.26.8"
    assert any(v.startswith("go1.27.") for v in versions[1:]), "no answers of the next Go (what the next kube will do)"
    differing = {cid for cid, e in RECORDED["cases"].items() if e.get("differing_answers")}
    assert differing == {cid for ids in RECORDED["version_differences"].values() for cid in ids}


def test_known_differences_name_real_cases_and_say_why():
    ids = {c.id for c in CASES}
    assert set(KNOWN_DIFFERENCES) <= ids, f"unknown ids: {set(KNOWN_DIFFERENCES) - ids}"
    assert all(len(why) > 20 for why in KNOWN_DIFFERENCES.values())
    assert all(cid in httprequest.__doc__ for cid in KNOWN_DIFFERENCES), "each one is in http1's table too"


# -- the comparison rules themselves ----------------------------------------------------------


def test_parser_frames_chunked_head_and_close_delimited_responses():
    p = wire.ResponseParser(head_responses={1})
    p.feed(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nDate: x\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
    p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n")  # the HEAD response: no body follows
    p.feed(b"HTTP/1.0 400 Bad Request\r\n\r\nbad")
    assert [r["status"] for r in p.responses] == ["HTTP/1.1 100 Continue", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK"]
    assert p.responses[1] == {"status": "HTTP/1.1 200 OK", "headers": {"transfer-encoding": ["chunked"]}, "body": "abc"}
    assert p.heads == 3 and p.finals == 2  # the last one ends with the connection
    p.feed_eof()
    assert p.responses[3]["body"] == "bad" and p.finals == 3 and not p.stuck


def test_parser_keeps_what_is_no_response_and_finds_the_probe():
    p = wire.ResponseParser()
    p.feed(b"HTTP/1.1 200 OK\r\nX-A: a\r\nSet-Cookie: evil\r\nContent-Length: 2\r\n\r\nokgarbage")
    p.feed_eof()
    assert p.responses[0]["headers"] == {"content-length": ["2"], "set-cookie": ["evil"], "x-a": ["a"]}
    assert p.stuck and p.unparsed() == "garbage"
    q = wire.ResponseParser()
    q.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nprobe-alive\n")
    assert q.probe_answered and q.responses == []


def test_reflections_compare_as_a_wsgi_environ_can_show_them():
    go = {"method": "GET", "headers": {"X-A": ["1", "2"]}, "body_error": "unexpected EOF", "trailers": {"T": ["v"]}}
    ours = {"method": "GET", "headers": {"X-A": ["1, 2"]}, "body_error": "unexpected EOF", "trailers": None}

    def as_answer(j: dict, length: str) -> dict:
        headers = {"content-length": [length], "content-type": ["application/json"]}
        return {"responses": [{"status": "HTTP/1.1 200 OK", "headers": headers, "json": j}], "connection": "alive"}

    assert wire.same(as_answer(go, "99"), as_answer(ours, "77"))
    assert not wire.same(as_answer(go, "99"), as_answer({**ours, "body_error": None}, "77"))
    assert not wire.same(as_answer(go, "99"), as_answer({**ours, "body_error": "unexpected eof"}, "77"))
    assert not wire.same(as_answer(go, "99"), as_answer({**ours, "headers": {"X-A": ["1"]}}, "77"))
    text = {"responses": [{"status": "HTTP/1.1 200 OK", "headers": {"content-length": ["99"]}, "body": ""}]}
    assert not wire.same(text, {"responses": [{"status": "HTTP/1.1 200 OK", "headers": {"content-length": ["77"]}, "body": ""}]})


def test_a_body_error_in_other_words_fails_the_replay(monkeypatch):
    # every body-error text is Go's word for word, and compared so: a chunked reader that words
    # one error otherwise fails each case Go answered with it
    worded = "invalid byte in chunk length"
    ids = [cid for cid, e in RECORDED["cases"].items()
           if any((r.get("json") or {}).get("body_error") == worded for r in e["answer"]["responses"])]
    assert len(ids) >= 5

    class Reworded(chunked.ChunkedError):
        def __init__(self, text: str):
            super().__init__(text.replace("invalid byte", "bad byte"))

    monkeypatch.setattr(chunked, "ChunkedError", Reworded)
    cases = [c for c in CASES if c.id in ids]
    answers = replay_all(cases)
    failures = [c.id for c in cases if differences(c, answers[c.id])]
    assert failures == ids, "a changed body-error text passed the replay"
    assert all('"body_error": "bad byte in chunk length"' in differences(c, answers[c.id]) for c in cases)

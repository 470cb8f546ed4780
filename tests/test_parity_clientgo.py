"""client-go v0.36.0 against `genericserver serve`, compared with what it saw of kube-apiserver v1.36.0.

tests/parity/go-clientgo.json holds reference/clientgo's transcripts and exchanges against
kube-apiserver (tests/parity/record_clientgo.py, `make parity`). Where the program is built
(`make reference`: `.reference-bin/clientgo`), it runs here against a fresh `serve` through the same
recording proxy, in JSON and in protobuf, and across a SIGTERM in retry-after mode; where it is not,
the recorded requests are sent in the recorded order instead (tests/parity/clientgo.py's
:func:`~parity.clientgo.replay`). Either way each client's exchanges are compared by the API corpus's
masking rule; where the program ran, its transcript is compared too.

`KNOWN_DIFFERENCES`: exchanges that differ, by cause (walkthrough 10.2's rows `client-go: ...`); a
listed one that stops differing fails, as does one that differs and is not listed.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

import zygote
from parity import api, clientgo, lifecycle

RECORDED = json.loads((Path(__file__).parent / "parity" / "go-clientgo.json").read_text())
TOKENS = 'reference-admin-token,admin,admin-uid,"system:masters"\nreader-token,reader,reader-uid\n'
SIGTERM_FLAGS = ["--shutdown-send-retry-after=true", "--shutdown-delay-duration=2s", "--v=1"]
GO = clientgo.BINARY.exists()

# cause -> (reason, [(client, index)])
KNOWN_DIFFERENCES: dict[str, tuple[str, list[tuple[str, int]]]] = {
    "server-side-apply": (
        "server-side apply is not built (walkthrough 9.1): the apply patch is 415, so the object it makes is "
        "not there for the delete after it (404)",
        [(f"clientgo/{e}/main", i) for e in ("json", "protobuf") for i in (16, 17)]),
}


# steps of the transcript that show a listed exchange's difference
TRANSCRIPT_DIFFERENCES: tuple[str, ...] = ("patch apply", "delete applied")


def _listed() -> set[tuple[str, int]]:
    return {tuple(x) for _, ids in KNOWN_DIFFERENCES.values() for x in ids}


class Serve:
    """A fresh `genericserver serve` as the recorder started kube-apiserver: TLS with the test
    certificate, the same token file."""

    def __init__(self, *flags: str) -> None:
        self.dir = tempfile.TemporaryDirectory()
        tokens = Path(self.dir.name) / "tokens.csv"
        tokens.write_text(TOKENS)
        proc = zygote.Process(["serve", "--secure-port", "0", "--bind-address=127.0.0.1",
                               f"--tls-cert-file={api.CERT}", f"--tls-private-key-file={api.CERT.with_name('localhost-key.pem')}",
                               f"--token-auth-file={tokens}", *flags], env={**os.environ, "PYTHONFAULTHANDLER": "1"})
        self.target = lifecycle.ProcessTarget(proc)
        self.port = self.target.port
        self.url = f"https://127.0.0.1:{self.port}"

    def wait_not_accepting(self) -> None:
        self.target.log.wait_for(r'name="NotAcceptingNewRequest"')

    def close(self) -> None:
        if self.target.proc.poll() is None:
            self.target.signal(signal.SIGTERM)
        try:
            self.target.wait(lifecycle.WAIT)
        finally:
            self.target.kill()
            self.dir.cleanup()


@pytest.fixture(scope="module")
def main_run() -> Iterator[dict]:
    """Our exchanges (and, where the program ran, its transcripts) from one fresh serve."""
    server = Serve()
    try:
        if GO:
            with clientgo.Proxy(server.port) as proxy:
                transcripts = {e: clientgo.run_main(proxy.url, api.TOKEN, e) for e in clientgo.ENCODINGS}
            yield {"exchanges": list(proxy.exchanges.list), "transcripts": transcripts}
        else:
            yield {"exchanges": clientgo.replay(RECORDED["exchanges"], server.port), "transcripts": None}
    finally:
        server.close()


def test_each_client_s_exchanges_are_answered_as_kube_apiserver_answered_them(main_run):
    want, got = clientgo.by_client(RECORDED["exchanges"]), clientgo.by_client(main_run["exchanges"])
    assert sorted(want) == sorted(got)
    assert sum(len(v) for v in want.values()) >= 40
    unexpected, gone = [], []
    for client in sorted(want):
        for i, (a, b) in enumerate(zip(want[client], got[client])):
            if a != b and (client, i) not in _listed():
                unexpected.append(f"{client} #{i}: {a['method']} {a['path']}\n  kube: {json.dumps(a['answer'], sort_keys=True)}\n"
                                  f"  ours: {json.dumps(b['answer'], sort_keys=True)}")
            if a == b and (client, i) in _listed():
                gone.append((client, i))
        assert len(want[client]) == len(got[client]), client
    assert not unexpected, "differences from kube-apiserver not listed in KNOWN_DIFFERENCES:\n" + "\n".join(unexpected)
    assert not gone, f"listed in KNOWN_DIFFERENCES but answered as kube-apiserver does now: {gone}"
    # where the program ran, what it printed too (the steps that show a listed difference aside)
    for encoding, lines in (main_run["transcripts"] or {}).items():
        want = clientgo.masked_transcript(RECORDED["main"][encoding])
        got = clientgo.masked_transcript(lines)
        assert [line["step"] for line in got] == [line["step"] for line in want]
        for w, g in zip(want, got):
            if not g["step"].startswith(TRANSCRIPT_DIFFERENCES):
                assert g == w, encoding


def test_every_watch_carried_as_many_events_as_kube_apiserver_s(main_run):
    want = [(e["client"], e["events"]) for e in sorted(RECORDED["exchanges"], key=lambda e: e["start"]) if "events" in e]
    got = [(e["client"], e["events"]) for e in sorted(main_run["exchanges"], key=lambda e: e["start"]) if "events" in e]
    assert len(want) >= 6 and got == want


def test_the_informers_saw_every_change_against_kube_apiserver():
    for encoding in clientgo.ENCODINGS:
        saw = [line for line in RECORDED["main"][encoding] if line["step"].endswith(" saw")]
        assert len(saw) == 2
        for line in saw:
            assert all(line["saw"].values()) and len(line["saw"]) == 3, line


@pytest.mark.parametrize("encoding", clientgo.ENCODINGS)
def test_a_get_across_sigterm_in_retry_after_mode_is_answered_as_kube_apiserver_answered_it(encoding):
    recorded = RECORDED["sigterm"][encoding]
    server = Serve(*SIGTERM_FLAGS)
    try:
        if GO:
            lines = clientgo.run_sigterm(server.url, api.TOKEN, encoding, lambda: server.target.signal(signal.SIGTERM),
                                         server.wait_not_accepting)
            assert clientgo.masked_transcript(lines) == clientgo.masked_transcript(recorded)
            ours = clientgo.sigterm_view(lines)
        else:
            ours = clientgo.replay_sigterm(recorded, encoding, server.port, lambda: server.target.signal(signal.SIGTERM),
                                           server.wait_not_accepting)
    finally:
        server.close()
    want = clientgo.sigterm_view(recorded)
    assert want["first-get"]["status"] == 429 and want["first-get"]["retry-after"] == "5"
    assert ours == want


def test_client_go_waited_the_retry_after_kube_apiserver_gave_and_retried():
    for encoding in clientgo.ENCODINGS:
        attempts = [line for line in RECORDED["sigterm"][encoding] if line["step"] == "attempt" and line["method"] == "GET"]
        assert attempts[0]["status"] == 429 and attempts[1]["waited-retry-after"] is True


# -- the comparison can fail ------------------------------------------------------------------------


def _protobuf_watch() -> dict:
    return next(e for e in RECORDED["exchanges"] if e.get("events") and "protobuf" in e["answer"]["headers"].get("content-type", ""))


@pytest.mark.parametrize("change", ["status", "event", "extra-envelope"])
def test_a_changed_answer_fails_the_comparison(change):
    recorded = RECORDED["exchanges"]
    ours = copy.deepcopy(recorded)
    assert clientgo.differences(recorded, ours) == []
    watch = next(e for e in ours if e["start"] == _protobuf_watch()["start"])
    if change == "status":
        ours[0]["answer"]["status"] = 500
    elif change == "event":
        watch["answer"]["body"]["protobuf-stream"][0]["type"] = "DELETED"
    else:
        # the frames as this server wrote them before it was fixed: each a k8s\x00 envelope itself
        events = watch["answer"]["body"]["protobuf-stream"]
        stream = b"".join(_old_frame(e["type"], e["object"]) for e in events)
        watch["answer"] = clientgo.answer(200, [("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")],
                                          stream, watch)
    assert clientgo.differences(recorded, ours)


def _old_frame(typ: str, obj: dict) -> bytes:
    from genericserver.apimachinery.runtime.serializer import protobuf

    clientgo._register()
    obj = json.loads(json.dumps(obj))
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):  # masked: placeholders no encoder takes
        obj.get("metadata", {}).pop(key, None)
    frame = protobuf.encode_watch_event(typ, obj)[4:]
    m = protobuf._messages()
    enveloped = protobuf._envelope(m, "v1", "WatchEvent", frame)
    return len(enveloped).to_bytes(4, "big") + enveloped


def test_the_walkthrough_table_lists_every_client_go_cause_with_its_count():
    text = (Path(__file__).parent.parent / "walkthrough.md").read_text()
    table = text.split("### 10.2 Where we differ from kube-apiserver, measured", 1)[1].split("\n### ", 1)[0]
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in table.splitlines() if line.startswith("| client-go: ")}
    assert rows == {f"client-go: `{k}`": str(len(ids)) for k, (_, ids) in KNOWN_DIFFERENCES.items()}

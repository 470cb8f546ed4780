"""A whole shutdown's log, both modes, against the lines kube-apiserver v1.36.0 prints.

The expected lines are data (tests/data/kube-apiserver-v1.36.0-shutdown-log.json), written down
from v1.36.0's genericapiserver.go and secure_serving.go: Go's file:line, verbosity, plain or
structured, message and keys, and which lines Go's code orders before which. The server runs on
a real TLS socket with klog's text output captured; each line of ours must be one of Go's with
the same severity, verbosity, form, message and keys, from the Python twin of the same file
(``genericapiserver.py`` for ``genericapiserver.go``: the line numbers differ, the names
match), all of Go's lines must be there, and our order must keep every order Go's code forces.
At the default ``--v=0`` only Go's V(0) lines appear.
"""

from __future__ import annotations

import io
import json
import logging
import pathlib
import re
import threading
from typing import Any

import pytest

from genericserver import klog
from genericserver import runtime as rt
from genericserver.audit.memory import MemoryBackend
from genericserver.config import new_config
from genericserver.context import context as gocontext
from genericserver.net.http.server import listen
from genericserver.secure_serving import SecureServingInfo

WAIT = 30.0
EXPECTED = json.loads((pathlib.Path(__file__).parent / "data" / "kube-apiserver-v1.36.0-shutdown-log.json").read_text())
GO_FILES = {"genericapiserver", "secure_serving"}

HEADER = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ ([\w.]+):(\d+)\] (.*)$")
PAIR = re.compile(r' ([A-Za-z][\w-]*)=("(?:[^"\\]|\\.)*"|\S+)')


class Captured(io.StringIO):
    """klog's output; ``wait_for`` blocks until a line matches (no sleeping)."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = threading.Condition()

    def write(self, s: str) -> int:
        with self._changed:
            n = super().write(s)
            self._changed.notify_all()
        return n

    def wait_for(self, fragment: str) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: fragment in self.getvalue(), WAIT), f"{fragment!r} never logged:\n{self.getvalue()}"


def parse_line(line: str) -> dict[str, Any]:
    m = HEADER.match(line)
    assert m, f"not a klog line: {line!r}"
    severity, file, lineno, text = m.groups()
    entry: dict[str, Any] = {"severity": severity, "file": file, "line": int(lineno)}
    if text.startswith('"'):
        end = re.match(r'"(?:[^"\\]|\\.)*"', text).end()
        entry.update(structured=True, msg=json.loads(text[:end]), keys={k: json.loads(v) for k, v in PAIR.findall(text[end:])})
        assert "".join(f" {k}={v}" for k, v in PAIR.findall(text[end:])) == text[end:], f"unparsed pairs in {line!r}"
    else:
        entry.update(structured=False, msg=text, keys={})
    return entry


def run_shutdown(mode: str, verbosity: int, tls_cert: tuple[str, str]) -> tuple[list[dict[str, Any]], str]:
    """Serve, shut down, and return our lines from the Go files' twins, and the address."""
    cert, key = tls_cert
    c = new_config()
    c.shutdown_delay_duration = 0.2
    c.shutdown_send_retry_after = mode == "retry-after"
    c.audit_backend = c.audit_policy_rule_evaluator = MemoryBackend()
    c.secure_serving = SecureServingInfo(listener=listen("127.0.0.1", 0), cert_file=cert, key_file=key)
    addr = "127.0.0.1:%d" % c.secure_serving.listener.getsockname()[1]
    s = c.complete().new("shutdown-log")
    out = Captured()
    root, ours = logging.getLogger(), logging.getLogger("genericserver")
    saved = root.handlers[:], root.level, ours.level
    klog.setup(out, "text", verbosity)
    ours.setLevel(logging.NOTSET)  # whatever an earlier test left: klog's verbosity decides
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    try:
        run = rt.go(s.prepare_run().run_with_context, ctx, name="run-with-context")
        out.wait_for(f"Serving securely on {addr}")
        if verbosity >= 1:
            out.wait_for("waiting for shutdown to be initiated")  # the signal comes once it is up
        cancel()
        assert run.join(WAIT)
        # HTTPServerStoppedListening is logged by its own goroutine, which may still be at it
        assert s.lifecycle_signals.http_server_stopped_listening.signaled().wait(WAIT)
        for g in rt.THREADS.live():
            if g.name == "listener-stopped":
                g.join(WAIT)
    finally:
        cancel()
        klog.set_verbosity(0)
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        ours.setLevel(saved[2])
    ours = [parse_line(line) for line in out.getvalue().splitlines() if HEADER.match(line)]
    return [e for e in ours if e["file"].rsplit(".", 1)[0] in GO_FILES], addr


def expected_lines(mode: str, verbosity: int, addr: str) -> list[dict[str, Any]]:
    return [{**e, "msg": e["msg"].replace("{addr}", addr)} for e in EXPECTED[mode] if e["v"] <= verbosity]


@pytest.mark.parametrize("verbosity", [1, 0], ids=["v1", "v0"])
@pytest.mark.parametrize("mode", ["default", "retry-after"])
def test_the_shutdown_log_is_kube_apiserver_s(mode: str, verbosity: int, tls_cert):
    ours, addr = run_shutdown(mode, verbosity, tls_cert)
    expected = expected_lines(mode, verbosity, addr)

    def key(e: dict[str, Any]) -> tuple:
        return (e["structured"], e["msg"], json.dumps(e["keys"], sort_keys=True))

    by_key = {key(e): e for e in expected}
    assert len(by_key) == len(expected)
    # every line of ours is one of Go's: same form, message, keys, severity and file
    position: dict[str, int] = {}
    for i, e in enumerate(ours):
        go = by_key.get(key(e))
        assert go is not None, f"a line Go does not print: {e}"
        assert e["severity"] == go["severity"]
        assert e["file"] == go["go"].split(":")[0].replace(".go", ".py"), f"{e} should come from the twin of {go['go']}"
        assert go["id"] not in position, f"logged twice: {go['id']}"
        position[go["id"]] = i
    # ... and every one of Go's is there
    assert sorted(position) == sorted(e["id"] for e in expected)
    # in an order Go's code allows
    for e in expected:
        for before in e["after"]:
            if before in position:
                assert position[before] < position[e["id"]], f"{before} must come before {e['id']}:\n" + "\n".join(map(str, ours))


def test_every_graceful_termination_line_names_genericapiserver_py(tls_cert):
    """``grep 'genericapiserver.py:'`` finds each [graceful-termination] line at --v=1."""
    ours, _ = run_shutdown("default", 1, tls_cert)
    graceful = [e for e in ours if "[graceful-termination]" in e["msg"]]
    assert len(graceful) == len([e for e in EXPECTED["default"] if "[graceful-termination]" in e["msg"]])
    assert {e["file"] for e in graceful} == {"genericapiserver.py"}

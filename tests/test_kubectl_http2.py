"""kubectl v1.36 over TLS speaks HTTP/2 to ``genericserver serve``, and a ``get -w`` across a
shutdown ends as against kube-apiserver: the watch's connection reads a GOAWAY (NO_ERROR) when
Shutdown starts, the watch itself runs on (Go's server never cuts a stream in flight), Shutdown
gives up on it after the shutdown timeout, and kubectl's watch ends without an error when the
process has gone.

Go's HTTP/2 transport tells what it does with ``GODEBUG=http2debug=1``: its lines are what the
tests read (``-v=8`` logs the requests, not the protocol)."""

from __future__ import annotations

import re
import signal
import threading

from kubectl import Kubectl
from serverprocess import ServerProcess

WAIT = 30.0
TOKEN = "h2-kubectl-token"
HTTP2_DEBUG = {"GODEBUG": "http2debug=1"}


def start(tls_cert, tmp_path, *flags: str) -> tuple[ServerProcess, Kubectl]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f"{TOKEN},alice,uid-alice\n")
    cert, key = tls_cert
    sp = ServerProcess("--v=1", "--tls-cert-file", cert, "--tls-private-key-file", key, "--token-auth-file", str(tokens), *flags)
    return sp, Kubectl(str(tmp_path), sp.port, ca_file=cert, token=TOKEN)


def test_kubectl_talks_http2(tls_cert, tmp_path):
    sp, k = start(tls_cert, tmp_path)
    try:
        proc = k.run("get", "configmaps", env=HTTP2_DEBUG)
        assert proc.stdout == "" and "No resources found in default namespace." in proc.stderr
        assert re.search(r"http2: Transport creating client conn \S+ to 127\.0\.0\.1:%d" % sp.port, proc.stderr)
        # the answer came back as HTTP/2 frames: its :status decoded from HPACK
        assert re.search(r"http2: Transport received HEADERS flags=END_HEADERS stream=1", proc.stderr), proc.stderr[-3000:]
    finally:
        sp.kill()


def test_kubectl_uses_http1_when_the_server_disables_http2(tls_cert, tmp_path):
    sp, k = start(tls_cert, tmp_path, "--disable-http2-serving")
    try:
        proc = k.run("get", "configmaps", env=HTTP2_DEBUG)
        assert "No resources found in default namespace." in proc.stderr
        assert "http2: Transport creating client conn" not in proc.stderr
    finally:
        sp.kill()


class Lines:
    """A child's stderr, drained by a thread (Go's transport writes a lot), with a wait for a line."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._done = False
        self._reader = threading.Thread(target=self._read, args=(stream,), name="kubectl-stderr", daemon=True)
        self._reader.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._done = True
            self._cond.notify_all()

    def wait_for(self, pred) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: self._done or pred(self.lines), WAIT) and pred(self.lines), self.lines[-20:]

    def join(self) -> list[str]:
        self._reader.join(WAIT)
        return self.lines


def watch_answered(lines: list[str]) -> bool:
    """The watch request went out on HTTP/2 and the header of its answer came back."""
    sent = next((i for i, line in enumerate(lines) if 'encoding header ":path"' in line and "watch=true" in line), None)
    return sent is not None and any("http2: Transport received HEADERS" in line for line in lines[sent:])


def test_get_watch_across_a_shutdown(tls_cert, tmp_path):
    sp, k = start(tls_cert, tmp_path, "--request-timeout", "2s")
    try:
        k.run("create", "configmap", "before", "--from-literal=a=1")
        watch = k.popen("get", "configmaps", "-w", "--output-watch-events", env=HTTP2_DEBUG)
        assert watch.stdout is not None
        err = Lines(watch.stderr)
        # the list is printed first; the watch is in once its answer's header came back
        assert watch.stdout.readline().split()[:2] == ["EVENT", "NAME"]
        assert watch.stdout.readline().split()[:2] == ["ADDED", "before"]
        err.wait_for(watch_answered)
        sp.signal(signal.SIGTERM)
        sp.expect(r'name="NotAcceptingNewRequest"')
        # Shutdown waits for the HTTP/2 connection the watch holds until the shutdown timeout
        # (the request timeout), then the process exits as kube-apiserver does
        sp.expect(r"Failed to shutdown server: context deadline exceeded")
        assert sp.wait() == 0
        out = watch.stdout.read()
        assert watch.wait(WAIT) == 0, err.join()[-30:]  # the stream ended: kubectl's watch stops without an error
        assert out == ""
        # the watch's connection read the GOAWAY when Shutdown started, and ran on after it
        goaways = [line for line in err.join() if "http2: Transport received GOAWAY" in line]
        assert len(goaways) == 1 and "ErrCode=NO_ERROR" in goaways[0], goaways
        watch.stdout.close()
        watch.stderr.close()
    finally:
        sp.kill()

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
import subprocess

from kubectl import KUBECTL, Kubectl
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


def test_get_watch_across_a_shutdown(tls_cert, tmp_path):
    sp, k = start(tls_cert, tmp_path, "--request-timeout", "2s")
    debug = tmp_path / "kubectl-http2.log"  # a file, not a pipe: the transport writes a lot
    try:
        k.run("create", "configmap", "before", "--from-literal=a=1")
        with open(debug, "w") as err:
            watch = subprocess.Popen([KUBECTL, "get", "configmaps", "-w", "--output-watch-events"], stdout=subprocess.PIPE,
                                     stderr=err, text=True, env={**k.env(), **HTTP2_DEBUG})
        assert watch.stdout is not None
        # kubectl's watch is in once the list was printed
        assert watch.stdout.readline().split()[:2] == ["EVENT", "NAME"]
        assert watch.stdout.readline().split()[:2] == ["ADDED", "before"]
        sp.signal(signal.SIGTERM)
        sp.expect(r'name="NotAcceptingNewRequest"')
        # Shutdown waits for the HTTP/2 connection the watch holds until the shutdown timeout
        # (the request timeout), then the process exits as kube-apiserver does
        sp.expect(r"Failed to shutdown server: context deadline exceeded")
        assert sp.wait() == 0
        out, _ = watch.communicate(timeout=WAIT)
        log = debug.read_text()
        assert watch.returncode == 0, log[-3000:]  # the stream ended: kubectl's watch stops without an error
        assert out == ""
        # the watch's connection read the GOAWAY when Shutdown started, and ran on after it
        goaways = [line for line in log.splitlines() if "http2: Transport received GOAWAY" in line]
        assert len(goaways) == 1 and "ErrCode=NO_ERROR" in goaways[0], goaways
    finally:
        sp.kill()

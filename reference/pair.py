"""Runs the reference programs `make reference` builds: kube-apiserver v1.36.0 on its etcd, or the Go
generic server, on loopback (no Go twin: a launcher).

`python reference/pair.py [FLAG...]` (what `make reference-run` does) starts etcd and kube-apiserver,
prints the kubeconfig to use with the bundled kubectl, and stops both on Ctrl-C or SIGTERM. The
kube-apiserver flags given are added to the launcher's own (later flags win), so
`make reference-run FLAGS="--shutdown-delay-duration=5s --v=1"` tries a shutdown setting.

The recorders (tests/parity/record_*.py) use :class:`KubeAPIServer` and :class:`GenericServerGo`,
each a context manager that starts the program, waits until it serves, and stops it by its PID.
Standard library only: it runs with any Python 3.11, Go not needed once the binaries are built.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = ROOT / ".reference-bin"
CERT = ROOT / "tests" / "data" / "localhost-cert.pem"
KEY = ROOT / "tests" / "data" / "localhost-key.pem"
TOKEN = "reference-admin-token"
# token,user,uid,"groups": the recorders' client is system:masters, as kubectl's admin is on kind
TOKENS = f'{TOKEN},admin,admin-uid,"system:masters"\nreader-token,reader,reader-uid\n'
READY_WAIT = 60.0
SHUTDOWN_LINE = re.compile(r"graceful-termination|Stopped listening|Shutting down|PreShutdownHook|^[EF]\d{4}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, token: Optional[str] = TOKEN, timeout: float = 2.0) -> tuple[int, bytes]:
    """A GET over TLS that trusts the test certificate; (status, body), or (0, b"") if it fails."""
    ctx = ssl.create_default_context(cafile=str(CERT))
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (OSError, ssl.SSLError):
        return 0, b""


class Program:
    """A reference program started in a fresh temporary folder, its stderr copied to `log`."""

    name = ""

    def __init__(self, *flags: str, binary: Optional[Path] = None) -> None:
        self.flags = list(flags)
        self.binary = binary or BIN / self.name
        self.dir = Path(tempfile.mkdtemp(prefix=f"{self.name}-"))
        self.port = free_port()
        self.proc: Optional[subprocess.Popen] = None
        self.lines: list[str] = []
        self.echo: Optional[callable] = None  # called with each stderr line, if set
        self._reader: Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> "Program":
        if not self.binary.exists():
            raise SystemExit(f"{self.binary} is missing: run `make reference` first")
        (self.dir / "tokens.csv").write_text(TOKENS)
        self.proc = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self._reader = threading.Thread(target=self._read, name=f"{self.name}-stderr", daemon=True)
        self._reader.start()
        self.wait_ready()
        return self

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            if self.echo is not None:
                self.echo(line.rstrip("\n"))

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_WAIT
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n" + "\n".join(self.lines[-30:]))
            if get(self.url + "/readyz")[0] == 200:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} not ready in {READY_WAIT:.0f} s:\n" + "\n".join(self.lines[-30:]))

    def signal(self, sig: int = signal.SIGTERM) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 60.0) -> int:
        assert self.proc is not None
        code = self.proc.wait(timeout)
        if self._reader is not None:
            self._reader.join(5)
        return code

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "Program":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Etcd(Program):
    name = "etcd"

    def command(self) -> list[str]:
        self.peer = free_port()
        return [str(self.binary), "--data-dir", str(self.dir / "data"),
                "--listen-client-url", f"http://127.0.0.1:{self.port}",
                "--listen-peer-url", f"http://127.0.0.1:{self.peer}"]

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_WAIT
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError("etcd exited:\n" + "\n".join(self.lines[-30:]))
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("etcd not ready:\n" + "\n".join(self.lines[-30:]))


class KubeAPIServer(Program):
    """kube-apiserver v1.36.0 on an etcd of its own, serving TLS with the test certificate, a token
    file and AlwaysAllow; priority and fairness off, so that --max-requests-inflight is the limit
    (the max-in-flight filter genericserver ports)."""

    name = "kube-apiserver"

    def __init__(self, *flags: str) -> None:
        super().__init__(*flags)
        self.etcd = Etcd()

    def command(self) -> list[str]:
        sa_key = self.dir / "sa.key"
        subprocess.run(["openssl", "genrsa", "-out", str(sa_key), "2048"], check=True, capture_output=True)
        return [str(self.binary),
                f"--etcd-servers=http://127.0.0.1:{self.etcd.port}",
                "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={self.port}",
                f"--tls-cert-file={CERT}", f"--tls-private-key-file={KEY}",
                f"--token-auth-file={self.dir / 'tokens.csv'}", "--authorization-mode=AlwaysAllow",
                f"--service-account-key-file={sa_key}", f"--service-account-signing-key-file={sa_key}",
                "--service-account-issuer=https://kubernetes.default.svc",
                "--service-cluster-ip-range=10.96.0.0/24", "--endpoint-reconciler-type=none",
                "--enable-priority-and-fairness=false", "--profiling=false",
                f"--cert-dir={self.dir / 'certs'}",
                *self.flags]

    def start(self) -> "Program":
        self.etcd.start()
        return super().start()

    def stop(self) -> None:
        super().stop()
        self.etcd.stop()

    def kubeconfig(self, path: Path) -> Path:
        """A kubeconfig for the bundled kubectl: the server, the test CA, the admin token."""
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "reference",
            "clusters": [{"name": "reference", "cluster": {"server": self.url, "certificate-authority": str(CERT)}}],
            "users": [{"name": "admin", "user": {"token": TOKEN}}],
            "contexts": [{"name": "reference", "context": {"cluster": "reference", "user": "admin"}}],
        }
        path.write_text(json.dumps(config, indent=2) + "\n")
        return path


class GenericServerGo(Program):
    """genericserver-go: a GenericAPIServer of k8s.io/apiserver v0.36.0 with serve's sample
    endpoints (reference/genericserver-go/main.go)."""

    name = "genericserver-go"

    def command(self) -> list[str]:
        return [str(self.binary), "--bind-address=127.0.0.1", f"--secure-port={self.port}",
                f"--tls-cert-file={CERT}", f"--tls-private-key-file={KEY}",
                f"--token-auth-file={self.dir / 'tokens.csv'}", *self.flags]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], add_help=True)
    parser.add_argument("--kubeconfig", default=str(ROOT / ".reference-bin" / "kubeconfig"),
                        help="where to write the kubeconfig (default: .reference-bin/kubeconfig)")
    args, flags = parser.parse_known_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    started = time.monotonic()
    with KubeAPIServer(*flags) as kube:
        path = kube.kubeconfig(Path(args.kubeconfig))
        print(f"kube-apiserver v1.36.0 serving on {kube.url} (etcd on 127.0.0.1:{kube.etcd.port}), "
              f"ready in {time.monotonic() - started:.1f} s; PID {kube.proc.pid}, etcd PID {kube.etcd.proc.pid}")
        print(f"kubeconfig: {path}\n")
        print(path.read_text())
        print(f"try: .venv/bin/kubectl --kubeconfig {path} get ns")
        print(f"     kill -TERM {kube.proc.pid}   # the graceful shutdown; Ctrl-C here stops both", flush=True)
        print("kube-apiserver's shutdown lines (--v=1 shows the [graceful-termination] ones) follow here:", flush=True)
        kube.echo = lambda line: print(line, flush=True) if SHUTDOWN_LINE.search(line) else None
        while not stop.wait(0.5):
            if kube.proc.poll() is not None:
                # with a watch open and no --shutdown-watch-termination-grace-period, the HTTP server's
                # Shutdown waits for it until --request-timeout (60 s by default): Go's behaviour
                print(f"kube-apiserver exited with code {kube.proc.returncode}", flush=True)
                break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

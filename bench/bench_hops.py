"""The shutdown's hops under a keep-alive load: NotAcceptingNewRequest to the listener closing, and the 503s (no Go twin).

The budget (design.md section 9): from ``NotAcceptingNewRequest`` to ``Stopped listening``, and
to every HTTP/2 connection's GOAWAY, under 50 ms with 20 busy keep-alive connections (HTTP/1.1)
or 20 x 10 HTTP/2 streams, and no more 503s than the requests already in flight: at most one per
HTTP/1 connection, one per open HTTP/2 stream. In Go the gap is a few goroutine wake-ups,
whatever the load. A row is within the target when its worst run is.

Each run starts ``genericserver serve`` over TLS with a bearer token and a 2 s shutdown delay,
puts the load on ``/echo``, sends SIGTERM a second in, and reads the two times off the server's
own ``--v=1`` log (klog's microsecond timestamps: the gap is the server's, not ours). The loads:

* the project's Go load client (``bench/goload``, ``goload keepalive``): 20 clients, each on its
  own connection, HTTP/1.1 keep-alive or HTTP/2 with 10 streams at a time, until a dial is
  refused; it counts each client's answers, so the 503s are printed per connection, and under
  HTTP/2 notes when each connection's first GOAWAY arrived (the machine's clock, as klog's: the
  last of the 20, from NotAcceptingNewRequest, is printed);
* ``h2load`` (Debian's ``nghttp2-client``), 20 connections x 10 streams, a real HTTP/2 load client
  of another make; it counts the 5xx answers of all its connections together.

Then the two goload loads on genericserver-go (``make reference``: Go's GenericAPIServer of
k8s.io/apiserver v0.36.0 with the same flags), where the targets come from: Go's own gap, GOAWAYs
and 503s under the same client (its row says so when the binary is not built).

Medians (and the worst) over RUNS runs. Without a Go toolchain (``GO``, ``.venv-go-*`` or
``/usr/local/go/bin/go``) or without h2load, their rows say so and the others run.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Optional

ROOT = pathlib.Path(__file__).resolve().parent.parent
CERT, KEY = ROOT / "tests" / "data" / "localhost-cert.pem", ROOT / "tests" / "data" / "localhost-key.pem"
TOKEN = "bench-token"
CLIENTS, STREAMS = 20, 10
RUNS = 5
TARGET_MS = 50.0
WAIT = 60.0
GO_SERVER = ROOT / ".reference-bin" / "genericserver-go"
KLOG_TIME = re.compile(r"^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6})")


def go_toolchain() -> Optional[str]:
    from bench.versus_go import go_binary

    found = go_binary()
    if found is None and os.access("/usr/local/go/bin/go", os.X_OK):
        found = "/usr/local/go/bin/go"
    return found


def klog_time(line: str) -> Optional[float]:
    """Seconds since midnight of a klog line's header (the day does not matter for a gap)."""
    m = KLOG_TIME.match(line)
    if m is None:
        return None
    h, mi, s, us = (int(g) for g in m.groups()[2:])
    return h * 3600 + mi * 60 + s + us / 1e6


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """``genericserver serve`` over TLS with a token file, its stderr collected line by line; or,
    with ``go``, genericserver-go (``make reference``): Go's GenericAPIServer with the same flags."""

    def __init__(self, tmp: pathlib.Path, *flags: str, go: bool = False):
        tokens = tmp / "tokens.csv"
        tokens.write_text(f"{TOKEN},bench,uid-bench\n")
        same = ["--v=1", "--tls-cert-file", str(CERT), "--tls-private-key-file", str(KEY), "--token-auth-file", str(tokens),
                "--shutdown-delay-duration", "2s", *flags]
        # Go's secure serving wants a port it can name (0 is refused); ours picks one
        command = [str(GO_SERVER), "--bind-address=127.0.0.1", f"--secure-port={free_port()}", *same] if go \
            else [sys.executable, "-m", "genericserver", "serve", "--secure-port", "0", *same]
        self.proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=ROOT)
        self.lines: list[str] = []
        self.marks: dict[str, Optional[float]] = {}  # "not accepting", "stopped": klog times (finish)
        self._port = threading.Event()
        self.port = 0
        self._reader = threading.Thread(target=self._read, name="bench-serve-stderr", daemon=True)
        self._reader.start()
        if not self._port.wait(WAIT):
            self.proc.kill()
            raise RuntimeError("the server never said where it serves:\n" + "\n".join(self.lines))

    def _read(self) -> None:
        for line in self.proc.stderr:  # type: ignore[union-attr]
            self.lines.append(line.rstrip("\n"))
            m = re.search(r"Serving securely on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                self._port.set()

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)

    def finish(self) -> float:
        """Wait for the exit; the gap, in ms, from NotAcceptingNewRequest to "Stopped listening"."""
        self.proc.wait(WAIT)
        self._reader.join(WAIT)
        marks = self.marks
        for line in self.lines:
            if 'name="NotAcceptingNewRequest"' in line:
                marks.setdefault("not accepting", klog_time(line))
            elif "Stopped listening on" in line:
                marks.setdefault("stopped", klog_time(line))
        if len(marks) != 2:
            raise RuntimeError("the log lacks a shutdown event:\n" + "\n".join(self.lines[-30:]))
        return (marks["stopped"] - marks["not accepting"]) * 1000


def ready(port: int) -> None:
    """Wait for /readyz to be green (the post-start hooks run in the server's goroutines)."""
    import ssl
    import http.client

    ctx = ssl.create_default_context(cafile=str(CERT))
    pace = threading.Event()
    for _ in range(int(WAIT / 0.05)):
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=WAIT)
        try:
            conn.request("GET", "/readyz", headers={"Authorization": f"Bearer {TOKEN}"})
            if conn.getresponse().status == 200:
                return
        finally:
            conn.close()
        pace.wait(0.05)
    raise RuntimeError("/readyz never turned green")


def time_of_day(unix_us: int) -> float:
    """A Unix time in microseconds as :func:`klog_time` reads a klog line: seconds since midnight."""
    t = time.localtime(unix_us // 1_000_000)
    return t.tm_hour * 3600 + t.tm_min * 60 + t.tm_sec + (unix_us % 1_000_000) / 1e6


def sigterm_under_load(srv: Serve, load: subprocess.Popen) -> str:
    """A second of ``load``, then SIGTERM to the server (the issue's measurement); the load
    client's output once it ended (it is killed if anything fails on the way)."""
    try:
        threading.Event().wait(1.0)  # real time: the load runs in other processes
        srv.stop()
        out, _ = load.communicate(timeout=WAIT)
        return out
    finally:
        if load.poll() is None:
            load.kill()


def goload_run(goload: pathlib.Path, tmp: pathlib.Path, h2: bool = False, go: bool = False) -> tuple[float, list[int], int, Optional[float]]:
    """One run under the Go load client: (gap in ms, each connection's 503s, every answer, and
    under HTTP/2 the ms from NotAcceptingNewRequest to the last connection's GOAWAY)."""
    srv = Serve(tmp, go=go)
    ready(srv.port)
    extra = ["-h2", "-streams", str(STREAMS)] if h2 else []
    load = subprocess.Popen([str(goload), "keepalive", "-url", f"https://127.0.0.1:{srv.port}/echo?message=hops",
                             "-c", str(CLIENTS), "-token", TOKEN, "-max", "30s", *extra],
                            stdout=subprocess.PIPE, text=True)
    assert load.stdout is not None
    if load.stdout.readline().strip() != "started":
        load.kill()
        raise RuntimeError("the load client did not start")
    out = sigterm_under_load(srv, load)
    gap = srv.finish()
    tallies = [json.loads(line) for line in out.splitlines() if line.strip()]
    per_conn = [t["status"].get("503", 0) for t in tallies]
    answers = sum(sum(t["status"].values()) for t in tallies)
    last_goaway = None
    if h2:
        if not all(t.get("goaway_unix_us") for t in tallies):
            raise RuntimeError("a connection got no GOAWAY:\n" + out)
        last_goaway = (max(time_of_day(t["goaway_unix_us"]) for t in tallies) - srv.marks["not accepting"]) * 1000
    return gap, per_conn, answers, last_goaway


def http2_run(tmp: pathlib.Path) -> tuple[float, int, int]:
    """One HTTP/2 run with h2load: (gap in ms, 5xx answers, every answer)."""
    srv = Serve(tmp)
    ready(srv.port)
    load = subprocess.Popen(["h2load", "-c", str(CLIENTS), "-m", str(STREAMS), "-D", "6", "-H", f"authorization: Bearer {TOKEN}",
                             f"https://127.0.0.1:{srv.port}/echo?message=hops"], stdout=subprocess.PIPE, text=True)
    out = sigterm_under_load(srv, load)
    gap = srv.finish()
    codes = h2load_status_codes(out)
    return gap, codes[3], sum(codes)


def h2load_status_codes(out: str) -> list[int]:
    """h2load's ``status codes: A 2xx, B 3xx, C 4xx, D 5xx`` line as [A, B, C, D]."""
    m = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    if m is None:
        raise RuntimeError("h2load printed no status codes:\n" + out)
    return [int(g) for g in m.groups()]


def _row(name: str, gaps: list[float], refusals: str, goaways: Optional[list[float]] = None) -> None:
    worst = max(gaps + (goaways or []))
    verdict = "within" if worst < TARGET_MS else "OVER"
    last = f"; last GOAWAY median {statistics.median(goaways):.1f} ms (max {max(goaways):.1f})" if goaways else ""
    print(f"  {name:40s} gap median {statistics.median(gaps):7.1f} ms (max {max(gaps):7.1f}{last}, {verdict} the target); "
          f"{refusals}")


def report_goload(tmp: pathlib.Path, h2: bool, reference: bool = False) -> None:
    """The rows of the Go load client: 503s per connection, and the most any one met; with
    ``reference``, the same load on genericserver-go, Go's own numbers."""
    go = go_toolchain()
    name = f"HTTP/2, {CLIENTS} x {STREAMS} streams (goload)" if h2 else f"HTTP/1.1, {CLIENTS} keep-alive connections (goload)"
    if reference:
        name = name.replace("(goload)", "(goload, genericserver-go)")
        if not GO_SERVER.exists():
            print(f"  {name}: skipped, {GO_SERVER.relative_to(ROOT)} is missing: run `make reference`")
            return
    if go is None:
        print(f"  {name}: skipped, no Go toolchain (set GO=/path/to/go, or `make parity` installs one)")
        return
    from bench.versus_go import NoGoload, build

    try:
        goload = build(go)
    except NoGoload as err:
        print(f"  {name}: skipped, {err}")
        return
    gaps, goaways, worst, total, answers = [], [], 0, 0, 0
    for _ in range(RUNS):
        gap, per_conn, n, last_goaway = goload_run(goload, tmp, h2, go=reference)
        gaps.append(gap)
        if last_goaway is not None:
            goaways.append(last_goaway)
        worst, total, answers = max(worst, max(per_conn, default=0)), total + sum(per_conn), answers + n
    bound = STREAMS if h2 else 1
    _row(name, gaps, f"503s per connection {total / (RUNS * CLIENTS):.2f} on average, at most {worst} "
                     f"(target <= {bound}; {total} of {answers} answers)", goaways)


def report_h2load(tmp: pathlib.Path) -> None:
    """The row of h2load, which counts the 5xx answers of all its connections together."""
    name = f"HTTP/2, {CLIENTS} x {STREAMS} streams (h2load)"
    if shutil.which("h2load") is None:
        print(f"  {name}: skipped, h2load is not installed (Debian: apt-get install nghttp2-client)")
        return
    gaps, fives, answers = [], [], 0
    for _ in range(RUNS):
        gap, n5, n = http2_run(tmp)
        gaps.append(gap)
        fives.append(n5)
        answers += n
    _row(name, gaps, f"503s per connection {sum(fives) / (RUNS * CLIENTS):.2f} on average, {max(fives)} at most in a "
                     f"run (target <= {CLIENTS * STREAMS}, one per open stream; {sum(fives)} of {answers} answers)")


def main() -> None:
    print(f"NotAcceptingNewRequest -> 'Stopped listening' and the last HTTP/2 GOAWAY under load ({RUNS} runs each, "
          f"SIGTERM 1 s into the load, 2 s delay, TLS, bearer token); target < {TARGET_MS:.0f} ms in the worst run")
    with tempfile.TemporaryDirectory(prefix="bench-hops-") as tmpdir:
        tmp = pathlib.Path(tmpdir)
        report_goload(tmp, h2=False)
        report_goload(tmp, h2=True)
        report_h2load(tmp)
        print("  the same loads on Go's GenericAPIServer (k8s.io/apiserver v0.36.0), what the targets come from:")
        report_goload(tmp, h2=False, reference=True)
        report_goload(tmp, h2=True, reference=True)


if __name__ == "__main__":
    main()

"""Tests for ``genericserver load`` (genericserver.cluster.loadcmd): the load-client Job's command, on loopback.

A small WSGI app on our HTTP server stands in for the Service; the runs last a fraction of a
second (``--duration 0.3s``) and the assertions are about outcomes, not counts.
"""

from __future__ import annotations

import argparse
import io
import json
import signal
import subprocess
import sys

import pytest

from genericserver import runtime as rt
from genericserver.cluster import loadcmd
from genericserver.net.http.server import Server, ServerClosed, listen


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="genericserver")
    loadcmd.add_parser(p.add_subparsers(dest="command"))
    return p.parse_args(["load", *argv])


@pytest.fixture
def service():
    seen: list[str] = []

    def app(environ, start_response):
        seen.append(environ["PATH_INFO"] + "?" + environ.get("QUERY_STRING", ""))
        status = "503 Service Unavailable" if environ.get("QUERY_STRING") == "fail" else "200 OK"
        start_response(status, [("Content-Length", "2")])
        return [b"ok"]

    server = Server(app)
    ln = listen("127.0.0.1", 0)

    def serve():
        try:
            server.serve(ln)
        except ServerClosed:
            pass

    g = rt.go(serve, name="test-load-service")
    yield ln.getsockname()[1], seen
    server.close()
    g.join()


def test_steady_load_reports_what_it_sent_and_exits_0(service):
    port, seen = service
    out = io.StringIO()
    # a progress line is printed at each report that wakes before the end: eleven chances here
    # (with two, 100 ms apart in 300 ms, a machine running two suites once overslept them all)
    code = loadcmd.run(parse("--url", f"http://127.0.0.1:{port}/echo?message=load", "--duration", "600ms",
                             "--workers", "2", "--report-every", "50ms"), out)
    lines = out.getvalue().splitlines()
    assert code == 0, lines
    assert lines[-1].startswith("sent ") and " failed 0 (refused 0, reset 0, 503 0, 429 0, other 0) in " in lines[-1]
    sent = int(lines[-1].split()[1])
    assert sent == len(seen) > 0 and set(seen) == {"/echo?message=load"}
    assert any(ln.startswith("  sent ") for ln in lines[:-1])  # progress lines came first


def test_failures_are_counted_by_kind_and_exit_1(service):
    port, _ = service
    out = io.StringIO()
    assert loadcmd.run(parse("--url", f"http://127.0.0.1:{port}/?fail", "--duration", "100ms", "--workers", "1"), out) == 1
    last = out.getvalue().splitlines()[-1]
    sent = int(last.split()[1])
    assert f"ok 0 failed {sent} (refused 0, reset 0, 503 {sent}," in last


def test_bad_urls_and_flags_exit_2_with_one_line(capsys):
    assert loadcmd.run(parse("--url", "https://web/")) == 2
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(SystemExit):
        parse("--url", "http://web/", "--duration", "soon")


@pytest.mark.parametrize("flag", ["--timeout", "--interval", "--report-every"])
def test_a_negative_duration_exits_2_naming_the_flag(flag, capsys):
    # --timeout=-1s sent nothing and exited 0 ("failed 0"), every worker's dial refused by Python
    assert loadcmd.run(parse("--url", "http://web/", f"{flag}=-1s")) == 2
    assert capsys.readouterr().err == f"genericserver load: error: {flag} -1s can not be negative\n"


def test_a_timeout_of_0_is_no_timeout_as_in_gos_client(service):
    # Go's http.Client and net.Dialer read a zero Timeout as none; Python's socket as "do not
    # wait at all", so every request failed at once
    port, _ = service
    out = io.StringIO()
    assert loadcmd.run(parse("--url", f"http://127.0.0.1:{port}/", "--duration", "100ms", "--workers", "1",
                             "--timeout", "0s"), out) == 0
    assert " failed 0 " in out.getvalue().splitlines()[-1]


def test_the_load_command_is_dispatched(monkeypatch):
    from genericserver import cmd

    called = []
    monkeypatch.setattr(loadcmd, "run", lambda args: called.append(args.url) or 0)
    assert cmd.main(["load", "--url", "http://web/"]) == 0
    assert called == ["http://web/"]


def test_samples_file_has_every_request_on_the_wall_clock(service, tmp_path):
    # the real node's recorder lines these up with the kubelet's and containerd's log times
    port, seen = service
    out = io.StringIO()
    path = tmp_path / "samples.jsonl"
    before = rt.wall()
    code = loadcmd.run(parse("--url", f"http://127.0.0.1:{port}/echo?message=load", "--duration", "200ms",
                             "--workers", "2", "--report-every", "0s", "--samples", str(path)), out)
    after = rt.wall()
    assert code == 0
    samples = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(samples) == int(out.getvalue().split()[1]) == len(seen)
    assert {s["outcome"] for s in samples} == {"ok"}
    assert all(before <= s["sent"] <= s["done"] <= after for s in samples)
    assert [s["sent"] for s in samples] == sorted(s["sent"] for s in samples)


def test_sigterm_ends_the_run_early_with_the_summary_and_the_samples(service, tmp_path):
    # record_node.py stops the load once the pod is gone: the samples must still be written
    port, seen = service
    path = tmp_path / "samples.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "genericserver", "load", "--url", f"http://127.0.0.1:{port}/echo",
                             "--duration", "10m", "--workers", "1", "--report-every", "20ms", "--samples", str(path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("  sent ")  # it is sending
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    last = out.splitlines()[-1]
    assert last.startswith("sent ") and " failed 0 " in last
    assert len(path.read_text().splitlines()) == int(last.split()[1]) > 0

"""``genericserver serve`` end to end in a subprocess: flags, logs, signals and exit codes."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading

import pytest

from genericserver import cmd

import zygote
from serverprocess import ServerProcess

WAIT = 30.0


@pytest.fixture
def server_process():
    started: list[ServerProcess] = []

    def start(*flags: str) -> ServerProcess:
        sp = ServerProcess(*flags)
        started.append(sp)
        return sp

    yield start
    for sp in started:
        sp.kill()


def signal_lines(log: list[str]) -> list[str]:
    return [m.group(1) for line in log if (m := re.search(r'"\[graceful-termination\] shutdown event" name="(\w+)"', line))]


def test_sigterm_shuts_down_gracefully_in_the_default_mode(server_process, tmp_path):
    audit_log = tmp_path / "audit.log"
    sp = server_process("--v=1", "--shutdown-delay-duration", "1s", "--audit-log-path", str(audit_log), "--audit-log-mode", "blocking")
    sp.wait_ready()

    slow_result = {}
    slow = threading.Thread(target=lambda: slow_result.setdefault("r", sp.client().get("/slow?seconds=2", timeout=WAIT)), name="slow-client")
    slow.start()

    sp.signal()
    sp.expect(r'name="ShutdownInitiated"')
    with sp.client() as c:
        r = c.get("/readyz")
        assert r.status == 500 and b"[-]shutdown failed: reason withheld" in r.body
        assert c.get("/echo?message=during-the-delay").status == 200
    sp.expect(r'name="HTTPServerStoppedListening"')
    with sp.client() as c:
        assert c.get("/echo?message=after").refused
    slow.join(WAIT)
    assert slow_result["r"].status == 200

    assert sp.wait() == 0
    assert signal_lines(sp.seen) == [
        "ShutdownInitiated",
        "AfterShutdownDelayDuration",
        "NotAcceptingNewRequest",
        "HTTPServerStoppedListening",
        "InFlightRequestsDrained",
    ]
    # every admitted request has a ResponseComplete event in the audit log
    events = [json.loads(line) for line in audit_log.read_text().splitlines()]
    received = {e["auditID"] for e in events if e["stage"] == "RequestReceived"}
    complete = {e["auditID"] for e in events if e["stage"] == "ResponseComplete"}
    assert received and received == complete
    assert any(e["requestURI"].startswith("/slow") and e["stage"] == "ResponseComplete" for e in events)


def test_retry_after_mode_answers_429_then_exits_0(server_process):
    # the delay makes sure /slow is in flight (admitted) before the server stops accepting, and
    # still running when the late request comes
    sp = server_process("--v=1", "--shutdown-send-retry-after", "--shutdown-delay-duration", "1s")
    slow_result = {}
    slow = threading.Thread(target=lambda: slow_result.setdefault("r", sp.client().get("/slow?seconds=2", timeout=WAIT)), name="slow-client")
    slow.start()
    sp.signal()
    sp.expect(r'name="NotAcceptingNewRequest"')
    with sp.client() as c:
        r = c.get("/echo?message=late")
    assert r.status == 429 and r.header("Retry-After") == "5"
    slow.join(WAIT)
    assert slow_result["r"].status == 200
    assert sp.wait() == 0
    # both logged; not their order: Go logs each after signalling it (genericapiserver.go's
    # deferred Signal and InfoS), from two goroutines, and two suites at once once printed the
    # listener's line first. The signals' own order (drained, then the listener stopped, in
    # this mode) is the lifecycle invariants' (testing/invariants.py, test_fuzz_lifecycle.py).
    names = signal_lines(sp.seen)
    assert {"InFlightRequestsDrained", "HTTPServerStoppedListening"} <= set(names)


def test_a_second_signal_exits_1_at_once(server_process):
    sp = server_process("-v", "1", "--shutdown-delay-duration", "60s")
    sp.signal()
    sp.expect(r'name="ShutdownInitiated"')
    sp.signal()
    assert sp.wait() == 1


@pytest.mark.parametrize(
    "flags, flag_name",
    [
        (["--shutdown-delay-duration", "abc"], "--shutdown-delay-duration"),
        (["--max-requests-inflight", "many"], "--max-requests-inflight"),
        (["--shutdown-delay-duration", "-1s"], "--shutdown-delay-duration"),
        (["--authorization-mode", "RBAC"], "authorization-mode"),
        (["--no-such-flag"], "--no-such-flag"),
    ],
    ids=["bad-duration", "bad-int", "negative-delay", "unknown-mode", "unknown-flag"],
)
def test_a_bad_flag_exits_2_with_one_line_naming_it(flags, flag_name, capsys):
    # in process: main() is what the console script and python -m run (see the next test)
    code, _, err = run_main(["serve", "--secure-port", "0", *flags], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert flag_name in lines[0]
    assert "Traceback" not in err


def test_the_process_exits_2_with_the_one_line_and_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "genericserver", "serve", "--secure-port", "0", "--no-such-flag"],
                          capture_output=True, text=True, timeout=WAIT)
    assert (proc.returncode, proc.stderr) == (2, "genericserver: error: unrecognized arguments: --no-such-flag\n")


def run_main(argv: list[str], capsys) -> tuple[int, str, str]:
    """``genericserver ARGV`` in process: its exit code, stdout and stderr (argparse exits)."""
    try:
        code = cmd.main(argv)
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_version_prints_the_pinned_kubernetes_version(capsys):
    for argv in (["--version"], ["serve", "--version"]):
        code, out, _ = run_main(argv, capsys)
        assert code == 0
        assert re.fullmatch(r"genericserver \S+ \(a port of k8s\.io/apiserver v1\.36\.0\)\n", out), out


def test_a_bad_verbosity_is_pflag_s_one_line_error(capsys):
    code, _, err = run_main(["serve", "-v", "x"], capsys)
    assert code == 2
    assert err.strip().endswith('invalid argument "x" for "-v, --v" flag: strconv.ParseUint: parsing "x": invalid syntax')


def test_json_logging_and_the_v1_graceful_termination_lines(server_process):
    sp = server_process("--logging-format=json", "--v=1")
    sp.signal()
    assert sp.wait() == 0
    entries = [json.loads(line) for line in sp.seen if line.startswith("{")]
    assert len(entries) == len(sp.seen), sp.seen  # every line is one JSON object
    (serving,) = [e for e in entries if e["msg"].startswith("Serving insecurely on ")]
    assert list(serving) == ["ts", "caller", "msg", "v"]
    assert re.fullmatch(r"genericserver/secure_serving\.py:\d+", serving["caller"]) and serving["v"] == 0
    events = [(e["caller"].split(":")[0], e["v"], e["name"]) for e in entries if e["msg"] == "[graceful-termination] shutdown event"]
    assert {name for _, _, name in events} == {"ShutdownInitiated", "AfterShutdownDelayDuration", "NotAcceptingNewRequest",
                                               "HTTPServerStoppedListening", "InFlightRequestsDrained"}
    assert {(caller, v) for caller, v, _ in events} == {("genericserver/genericapiserver.py", 1)}


def test_help_explains_each_flag(capsys):
    code, out, _ = run_main(["serve", "--help"], capsys)
    assert code == 0
    for flag in ("--bind-address", "--secure-port", "--tls-cert-file", "--tls-private-key-file", "--shutdown-delay-duration",
                 "--shutdown-send-retry-after", "--shutdown-watch-termination-grace-period", "--max-requests-inflight",
                 "--max-mutating-requests-inflight", "--request-timeout", "--min-request-timeout", "--audit-log-path",
                 "--token-auth-file", "--authorization-mode", "--anonymous-auth", "--v", "--logging-format", "--version"):
        assert flag in out, flag
    code, top, _ = run_main(["--help"], capsys)
    assert code == 0 and "serve" in top and "demo" in top


def test_a_used_port_is_a_one_line_error(server_process):
    sp = server_process()
    proc = zygote.Process(["serve", "--secure-port", str(sp.port)])
    _, err = proc.communicate(WAIT)
    assert proc.returncode == 1
    assert "address already in use" in err and "Traceback" not in err
    sp.signal()
    assert sp.wait() == 0


def test_cluster_serve_api_takes_serves_checks_before_any_pod_runs(tmp_path):
    # a token file serve cannot read ended the command only after the cluster had started, its
    # pods' timeline printed and then the load client's "lost 0% (0 of 4)". A process of its own:
    # serve sets up what a process has once (its logging, a goroutine's panic ending it)
    proc = zygote.Process(["cluster", "--serve-api", "--kubeconfig", str(tmp_path / "kubeconfig"), "--secure-port", "0",
                           "--token-auth-file", str(tmp_path / "missing.csv")])
    out, err = proc.communicate(WAIT)
    assert (proc.returncode, out, err) == (
        1, "", f"genericserver cluster: error: open {tmp_path / 'missing.csv'}: no such file or directory\n")
    assert not (tmp_path / "kubeconfig").exists()


@pytest.mark.parametrize("argv", [
    ["load", "--url", "http://127.0.0.1:1/", "--duration", "60s", "--report-every", "10ms"],
    ["demo", "--no-live", "--mode", "default"],
], ids=["load", "demo"])
def test_ctrl_c_ends_a_command_at_once_without_a_traceback(argv):
    # ^C in a room: thirty lines of KeyboardInterrupt traceback from a goroutine's wait. Now as
    # kubectl ends: no message, killed by SIGINT as the shell sees it, what it printed kept
    proc = zygote.Process(argv)
    first = proc.stdout.readline()  # it runs: a progress line, the demo's heading
    assert first.strip()
    proc.send_signal(signal.SIGINT)
    out, err = proc.stdout.read(), proc.stderr.read()
    assert (proc.wait(WAIT), err) == (-signal.SIGINT, "")
    assert "Traceback" not in out


def test_a_hung_handler_is_bounded_by_the_request_timeout_and_bad_input_gets_a_4xx(server_process):
    import socket

    sp = server_process("--request-timeout", "1s")
    with sp.client() as c:
        r = c.get("/slow?seconds=30", timeout=WAIT)
    assert r.status == 504
    assert b"Timeout: request did not complete within the allotted timeout" in r.body
    # a malformed request line: 400, and the server keeps serving
    with socket.create_connection(("127.0.0.1", sp.port), timeout=WAIT) as s:
        s.sendall(b"NONSENSE\r\n\r\n")
        assert s.recv(4096).startswith(b"HTTP/1.1 400 Bad Request")
    with sp.client() as c:
        assert c.get("/echo?message=still-here").status == 200
        # ?timeout= that does not parse is the request's fault: 400
        assert c.get("/slow?seconds=1&timeout=soon").status == 400
    sp.signal()
    assert sp.wait() == 0


def test_with_a_certificate_it_serves_securely(tls_cert):
    import http.client
    import ssl

    cert, key = tls_cert
    proc = zygote.Process(["serve", "--secure-port", "0", "--tls-cert-file", cert, "--tls-private-key-file", key])
    try:
        for line in proc.stderr:
            m = re.search(r"Serving securely on 127\.0\.0\.1:(\d+)", line)
            if m:
                break
        else:
            pytest.fail("the server never said it serves securely")
        conn = http.client.HTTPSConnection("127.0.0.1", int(m.group(1)), context=ssl.create_default_context(cafile=cert), timeout=WAIT)
        try:
            conn.request("GET", "/echo?message=over-tls")
            r = conn.getresponse()
            assert (r.status, r.getheader("echo")) == (200, "over-tls")
        finally:
            conn.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(WAIT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.parametrize("command", ["serve", "demo", "cluster"])
def test_each_command_is_dispatched(command, monkeypatch):
    from genericserver import cmd
    from genericserver.cluster import cli as cluster_cli
    from genericserver.demo import cli as demo_cli

    called = []
    monkeypatch.setattr(cmd, "serve", lambda opts, prog="": called.append("serve") or 0)
    monkeypatch.setattr(demo_cli, "run", lambda args: called.append("demo") or 0)
    monkeypatch.setattr(cluster_cli, "run", lambda args, serve=None: called.append("cluster") or 0)
    assert cmd.main([command]) == 0
    assert called == [command]


def test_a_reader_that_goes_away_gets_no_traceback():
    # `genericserver lab list | head -1`: the pipe closes before Python flushes its output
    proc = zygote.Process(["lab", "list"])
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(WAIT) == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    proc.stderr.close()


def test_serve_waits_for_no_goroutine_of_another_server(monkeypatch):
    # the cluster's replicas run servers of their own in the process: their "listener-stopped"
    # goroutines live on after the API server stopped, and serve used to join each for a second
    from genericserver import cmd, signal_handler
    from genericserver.context import context as gocontext

    joined = []

    class Foreign:
        name = "listener-stopped"

        def join(self, timeout=None):
            joined.append(timeout)
            return False

    class Server:
        def prepare_run(self):
            return self

        def run_with_context(self, ctx):
            return None

    monkeypatch.setattr(cmd, "build_server", lambda opts, install, configure: Server())
    monkeypatch.setattr(signal_handler, "setup_signal_context", gocontext.background)
    monkeypatch.setattr(cmd.rt.THREADS, "live", lambda: [Foreign()])
    # serve makes an unrecovered goroutine panic end the process: undone after this test, or a
    # later test's deliberate panic would kill the pytest worker
    monkeypatch.setattr(cmd.rt.THREADS, "on_panic", None)
    assert cmd.serve(cmd.ServeOptions()) == 0
    assert joined == []

"""The lifecycle corpus: shutdown scenarios played against a running server, Go's or ours.

A scenario is the server's flags and a list of steps a client takes around a signal: requests on new
connections or on a kept-alive one, a request left in flight, the signal, and waits on the server's
own `[graceful-termination]` log lines (so each step lands in the phase it means, on a slow machine
too). `play` runs one against a started server and returns what the client saw, step by step
(status, `Retry-After`, `Connection`, the Status message; or `refused`, `reset`, `closed`), the
`[graceful-termination]` lines in the order logged, how many lines hold each of `COUNTED` (the
timeout filter's "Post-timeout activity", net/http's "http: panic serving", RunServer's "Failed to
shutdown server"), and the exit code. `record_lifecycle.py` plays
every scenario against reference/genericserver-go (a GenericAPIServer of k8s.io/apiserver v0.36.0)
and writes `go-lifecycle.json`; `tests/test_parity_lifecycle*.py` play them against `genericserver
serve` and compare.

The masking rule, the same on both sides: a log line is kept as its message and its `name=` key
only (no timestamp, PID, file:line or other keys: the two languages name their own files); a
response body is kept as the Status `code` and `message` when it is a Status, else as it is (the
first 2000 characters). Nothing else is masked.

A request left in flight is one whose handler sends its head at once (a watch, `/slow?flush=1`): the
step returns when the head is in. A POST whose body stalls (`stall`) sends its head and the first
bytes of its body on a raw TLS connection (tests/rawconn.py) and the rest only at `rest`, if ever;
its answer is what came back by the time the connection ended. A few steps wait on real time, each saying why: `settle` after a
request whose handler must not answer early (one the request timeout is to end), and after a line
whose effect follows it in another goroutine (Go logs "Stopped listening" when Serve returns; the idle
connections are closed a moment after, by Shutdown's goroutine).
"""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import re
import signal as signals
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CERT = ROOT / "tests" / "data" / "localhost-cert.pem"
TOKEN = "reference-admin-token"
READER_TOKEN = "reader-token"
# the token file both servers are given: an admin in system:masters (max-in-flight's exempt group) and
# a plain user
TOKENS = f'{TOKEN},admin,admin-uid,"system:masters"\n{READER_TOKEN},reader,reader-uid\n'
# a policy for Go's audit backend that logs what ours logs without one: every request at Metadata
AUDIT_POLICY = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"
WAIT = 30.0

WAITING_LINE = "[graceful-termination] waiting for shutdown to be initiated"
# other lines both servers log in the same words, counted: the timeout filter's (Go's HandleError),
# net/http's panic report (an abort is no panic), RunServer's Shutdown that gave up
COUNTED = ("Post-timeout activity", "http: panic serving", "Failed to shutdown server")
# of those, what nothing orders before the process's exit: the timeout filter's post-timeout
# goroutine logs whenever the abandoned handler ends, which nobody waits for (in Go as here), so a
# loaded machine may lose it to the exit; the replay holds ours to at most Go's count of it
UNORDERED = ("Post-timeout activity",)
GRACEFUL = re.compile(r'\[graceful-termination\][^"]*')
NAME = re.compile(r'\bname="([^"]+)"')


# -- the steps ----------------------------------------------------------------------------------

@dataclass
class Step:
    op: str
    tag: str = ""
    arg: Any = None
    conn: str = ""
    user: str = "reader"
    method: str = "GET"
    body: bool = True


def get(tag: str, path: str, *, conn: str = "", user: str = "reader", method: str = "GET", body: bool = True) -> Step:
    """A request; on a new connection unless `conn` names a kept-alive one (opened by the first
    request that names it). `body=False` keeps the answer's body out of the record (said why where
    it is used)."""
    return Step("request", tag, path, conn, user, method, body)


def start(tag: str, path: str, *, user: str = "reader", method: str = "GET", head: bool = True) -> Step:
    """A request on a new connection left to run in the background; its answer is read at `join`.
    With `head` the step waits for the response's head: for a handler that sends it at once (a
    watch, `/slow?flush=1`), the sign that the request is in flight."""
    return Step("start", tag, path, user=user, method=method, conn="head" if head else "")


def stall(tag: str, path: str, *, sent: str = "abc", length: int = 10, user: str = "reader") -> Step:
    """A POST on a new connection announcing a body of `length` bytes and sending only `sent`; the
    rest comes at `rest(tag)`, or never. Its answer is read in the background and taken at `join`."""
    return Step("stall", tag, [path, sent, length], user=user, method="POST")


def rest(tag: str) -> Step:
    """The rest of a stalled body (see `stall`)."""
    return Step("rest", tag)


def join(tag: str) -> Step:
    return Step("join", tag)


def signal(name: str = "TERM") -> Step:
    return Step("signal", arg=name)


def line(pattern: str) -> Step:
    """Wait until the server has logged a line matching `pattern` (a regular expression)."""
    return Step("line", arg=pattern)


def event(name: str) -> Step:
    """Wait for the `[graceful-termination]` line naming lifecycle signal `name`."""
    return line(rf'name="{name}"')


def settle(seconds: float, why: str) -> Step:
    """Wait on real time; `why` says what there is no signal for."""
    return Step("settle", arg=seconds, tag=why)


def exits() -> Step:
    """Wait for the process to exit (its code is recorded)."""
    return Step("exit")


@dataclass
class Scenario:
    name: str
    about: str
    flags: list[str]
    steps: list[Step]
    go_flags: list[str] = field(default_factory=list)  # flags only the Go server needs (said why)
    audit: bool = False  # compare the audit log's events too
    racy: str = ""  # why Go's own answers vary from run to run: each answer seen is one Go gives
    group: str = ""  # the replay's test file: tests/test_parity_lifecycle_<group>.py

    def digest(self) -> str:
        """What the recording played: its flags and steps (a replay refuses a scenario whose steps
        changed since it was recorded)."""
        played = {"flags": self.flags, "go_flags": self.go_flags, "steps": [vars(s) for s in self.steps],
                  "audit": self.audit, "racy": bool(self.racy)}
        return hashlib.sha256(json.dumps(played, sort_keys=True).encode()).hexdigest()[:16]


# -- a running server ---------------------------------------------------------------------------

class Lines:
    """A process's stderr lines as they come, and waiting for one."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self.closed = False

    def add(self, text: Optional[str]) -> None:
        with self._cond:
            if text is None:
                self.closed = True
            else:
                self.lines.append(text)
            self._cond.notify_all()

    def wait_for(self, pattern: str, start: int = 0, timeout: float = WAIT) -> int:
        """The index of the first line from `start` matching `pattern`."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._cond:
            i = start
            while True:
                while i < len(self.lines):
                    if rx.search(self.lines[i]):
                        return i
                    i += 1
                if self.closed:
                    raise AssertionError(f"the server exited before logging {pattern!r}:\n" + "\n".join(self.lines[-40:]))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no line matched {pattern!r} in {timeout:.0f} s:\n" + "\n".join(self.lines[-40:]))
                self._cond.wait(left)


class Target:
    """What `play` needs of a started server: its port, its log, a signal, its exit."""

    port: int
    log: Lines

    def signal(self, sig: int) -> None:
        raise NotImplementedError

    def wait(self, timeout: float) -> int:
        raise NotImplementedError


# -- the client ---------------------------------------------------------------------------------

def tls_context() -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(CERT))
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def outcome_of_error(err: BaseException) -> str:
    if isinstance(err, ConnectionRefusedError):
        return "refused"
    if isinstance(err, ConnectionResetError):
        return "reset"
    if isinstance(err, (http.client.RemoteDisconnected, http.client.IncompleteRead, ssl.SSLEOFError, BrokenPipeError)):
        return "closed"
    if isinstance(err, (socket.timeout, TimeoutError)):
        return "timeout"
    return f"error {type(err).__name__}"


def body_summary(headers: http.client.HTTPMessage, body: bytes) -> str:
    """The masked body: a Status's message, else the first line."""
    text = body.decode("utf-8", "replace")
    if (headers.get("Content-Type") or "").startswith("application/json"):
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and doc.get("kind") == "Status":
            return f"Status {doc.get('code')}: {doc.get('message')}"
    return text[:2000]


class Client:
    """Requests over HTTP/1.1 and TLS, each on a new connection or a named kept-alive one."""

    def __init__(self, port: int, timeout: float = WAIT) -> None:
        self.port = port
        self.timeout = timeout
        self.conns: dict[str, http.client.HTTPSConnection] = {}
        self.ctx = tls_context()

    def _new(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=self.timeout, context=self.ctx)

    def request(self, path: str, *, conn: str = "", user: str = "reader", method: str = "GET",
                head: Optional[threading.Event] = None) -> dict:
        """What the answer was; `head` is set once the response's head is in (or the request failed)."""
        try:
            return self._request(path, conn=conn, user=user, method=method, head=head)
        finally:
            if head is not None:
                head.set()

    def _request(self, path: str, *, conn: str, user: str, method: str, head: Optional[threading.Event]) -> dict:
        token = TOKEN if user == "admin" else READER_TOKEN
        headers = {"Authorization": f"Bearer {token}"} if user != "anonymous" else {}
        if conn:
            c = self.conns.get(conn)
            if c is None:
                c = self.conns[conn] = self._new()
            elif c.sock is None:
                # the server's last answer on it said Connection: close, and the client hung up
                return {"outcome": "closed-before"}
        else:
            c = self._new()
        try:
            c.request(method, path, headers=headers)
            r = c.getresponse()
            if head is not None:
                head.set()
            body = r.read()
        except (OSError, http.client.HTTPException) as err:
            c.close()
            return {"outcome": outcome_of_error(err)}
        finally:
            if not conn:
                c.close()
        out = {"outcome": "answered", "status": r.status, "body": body_summary(r.headers, body)}
        for name in ("Retry-After", "Connection"):
            if r.headers.get(name) is not None:
                out[name] = r.headers[name]
        if conn and r.will_close:
            c.close()
        return out

    def close(self) -> None:
        for c in self.conns.values():
            c.close()


class StalledPost:
    """A `stall` step's connection: a POST whose body stalls, over TLS on a raw connection."""

    def __init__(self, port: int, step: Step) -> None:
        from rawconn import RawConn  # tests/ is on the path (pytest's rootdir; record_lifecycle.py adds it)

        path, self.sent, length = step.arg
        self.length = length
        token = TOKEN if step.user == "admin" else READER_TOKEN
        self.conn = RawConn(port, time.monotonic, tls=tls_context())
        self.conn.send(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                       f"Content-Length: {length}\r\n\r\n{self.sent}".encode())

    def rest(self) -> None:
        self.conn.send(b"x" * (self.length - len(self.sent)))

    def answer(self) -> dict:
        """What came back by the time the connection ended: a response, or how it ended."""
        if not self.conn.ended():
            return {"outcome": "timeout"}
        data = bytes(self.conn.received)
        if not data:
            return {"outcome": {"EOF": "closed", "RST": "reset"}.get(self.conn.end or "", self.conn.end)}

        class Received:
            def makefile(self, *args: Any, **kw: Any) -> io.BytesIO:
                return io.BytesIO(data)

        r = http.client.HTTPResponse(Received())  # type: ignore[arg-type]
        try:
            r.begin()
            body = r.read()
        except (http.client.HTTPException, OSError) as err:
            return {"outcome": outcome_of_error(err)}
        out = {"outcome": "answered", "status": r.status, "body": body_summary(r.headers, body)}
        for name in ("Retry-After", "Connection"):
            if r.headers.get(name) is not None:
                out[name] = r.headers[name]
        return out

    def close(self) -> None:
        self.conn.close()


# -- playing a scenario -------------------------------------------------------------------------

def graceful_lines(lines: list[str]) -> list[str]:
    """The `[graceful-termination]` lines, masked: the message and its `name=` value."""
    out = []
    for text in lines:
        m = GRACEFUL.search(text)
        if m:
            n = NAME.search(text)
            out.append(m.group(0).strip() + (f" name={n.group(1)}" if n else ""))
    return out


def counted_lines(lines: list[str]) -> dict[str, int]:
    """How many lines hold each of `COUNTED`."""
    return {text: sum(text in line for line in lines) for text in COUNTED}


def play(scenario: Scenario, target: Target, wait: float = WAIT) -> dict:
    """Run the steps against `target`; what the client saw and what the server logged. `wait`
    bounds each wait on a line of the server's log (a test that expects one never to come
    shortens it)."""
    client = Client(target.port)
    answers: dict[str, Any] = {}
    background: dict[str, threading.Thread] = {}
    stalled: dict[str, StalledPost] = {}
    # the server is ready to be stopped once its main goroutine waits for the signal (before that,
    # a signal's lines would race with this one)
    seen = target.log.wait_for(re.escape(WAITING_LINE)) + 1
    code: Optional[int] = None
    try:
        for step in scenario.steps:
            if step.op == "request":
                answers[step.tag] = client.request(step.arg, conn=step.conn, user=step.user, method=step.method)
                if not step.body:
                    answers[step.tag].pop("body", None)
            elif step.op == "start":
                head = threading.Event()

                def run(s: Step = step, head: threading.Event = head) -> None:
                    answers[s.tag] = Client(target.port).request(s.arg, user=s.user, method=s.method, head=head)
                t = threading.Thread(target=run, name=f"client-{step.tag}", daemon=True)
                t.start()
                background[step.tag] = t
                if step.conn == "head" and not head.wait(WAIT):
                    raise AssertionError(f"{step.tag}: no response head in {WAIT:.0f} s")
            elif step.op == "stall":
                stalled[step.tag] = StalledPost(target.port, step)
            elif step.op == "rest":
                stalled[step.tag].rest()
            elif step.op == "join" and step.tag in stalled:
                answers[step.tag] = stalled[step.tag].answer()
            elif step.op == "join":
                background.pop(step.tag).join(WAIT)
            elif step.op == "signal":
                target.signal(getattr(signals, "SIG" + step.arg))
            elif step.op == "line":
                seen = target.log.wait_for(step.arg, seen, timeout=wait) + 1
            elif step.op == "settle":
                time.sleep(step.arg)  # a real server in another process: the step says what has no signal
            elif step.op == "exit":
                code = target.wait(WAIT)
            else:
                raise ValueError(step.op)
        for tag, t in background.items():
            t.join(WAIT)
        if code is None:
            code = target.wait(WAIT)
        for tag, post in stalled.items():
            if tag not in answers:
                answers[tag] = post.answer()
    finally:
        client.close()
        for post in stalled.values():
            post.close()
    return {"answers": answers, "lines": graceful_lines(target.log.lines), "counted": counted_lines(target.log.lines),
            "exit": code}


def constant_order(runs: list[list[str]], lines: list[str]) -> list[tuple[int, int]]:
    """The pairs (i, j) of `lines` (the lines every run logged) where every run logged lines[i]
    before lines[j]: the order Go's code makes, as opposed to the order two goroutines happened
    to race to."""
    pairs = []
    for i, a in enumerate(lines):
        for j, b in enumerate(lines):
            if i != j and all(run.index(a) < run.index(b) for run in runs):
                pairs.append((i, j))
    return pairs


def order_differences(lines: list[str], order: list[tuple[int, int]], ours: list[str]) -> list[str]:
    """What in `ours` breaks Go's lines: a line missing or extra, a constant pair out of order."""
    problems = [f"missing: {l}" for l in lines if l not in ours]
    problems += [f"extra: {l}" for l in ours if l not in lines]
    for i, j in order:
        a, b = lines[i], lines[j]
        if a in ours and b in ours and ours.index(a) > ours.index(b):
            problems.append(f"out of order: {b!r} before {a!r}")
    return problems


SERVING = re.compile(r"Serving securely on 127\.0\.0\.1:(\d+)")


class ProcessTarget(Target):
    """A server process whose stderr is read line by line; ready once it logs where it serves.
    `proc` is a started process with a text `stderr`, `send_signal` and `wait` (a Popen, or the
    suite's zygote.Process)."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.log = Lines()
        self._reader = threading.Thread(target=self._read, name="server-stderr", daemon=True)
        self._reader.start()
        i = self.log.wait_for(SERVING.pattern)
        self.port = int(SERVING.search(self.log.lines[i]).group(1))

    def _read(self) -> None:
        for text in self.proc.stderr:
            self.log.add(text.rstrip("\n"))
        self.log.add(None)

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(timeout)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)


def server_flags(scenario: Scenario, folder: Path, go: bool) -> list[str]:
    """The scenario's flags with its files made in `folder` ({audit}, {policy}), and the flags
    both servers take from the player: TLS with the test certificate, the token file, --v=1."""
    tokens = folder / "tokens.csv"
    tokens.write_text(TOKENS)
    (folder / "policy.yaml").write_text(AUDIT_POLICY)
    names = {"audit": str(folder / "audit.log"), "policy": str(folder / "policy.yaml")}
    flags = [f.format(**names) for f in scenario.flags + (scenario.go_flags if go else [])]
    return ["--bind-address=127.0.0.1", f"--tls-cert-file={CERT}",
            f"--tls-private-key-file={CERT.with_name('localhost-key.pem')}",
            f"--token-auth-file={tokens}", "--v=1", *flags]


def run(scenario: Scenario, start: Callable[[list[str]], Any], go: bool, wait: float = WAIT) -> dict:
    """Start a server with `start(flags)` (a process, as ProcessTarget takes it), play `scenario`
    against it, and add the audit events and the whole log to what `play` returns."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        target = ProcessTarget(start(server_flags(scenario, folder, go=go)))
        try:
            result = play(scenario, target, wait)
        finally:
            target.kill()
        if scenario.audit:
            result["audit"] = audit_events(folder)
        result["log"] = target.log.lines
        return result


def audit_events(folder: Path) -> list[list]:
    """The audit log's events, masked: stage, verb, URI, user, response code."""
    path = folder / "audit.log"
    if not path.exists():
        return []
    out = []
    for text in path.read_text().splitlines():
        ev = json.loads(text)
        out.append([ev.get("stage"), ev.get("verb"), ev.get("requestURI"), ev.get("user", {}).get("username"),
                    ev.get("responseStatus", {}).get("code")])
    return out

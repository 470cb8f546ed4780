"""Send a parity case over a raw socket, read what comes back, and compare two answers (no Go twin).

One *answer* is what a server did with a case's bytes on one connection::

    {"responses": [{"status": "HTTP/1.1 200 OK", "headers": {"content-length": ["12"], ...},
                    "json": {...} | "body": "..." | "body_length": N, "body_sha256": "...",
                    "incomplete": true}, ...],       # incomplete: only if cut short
     "connection": "alive" | "closed" | "waiting",
     "unparsed": "..."}                      # only when bytes came that are no HTTP response

After the case's bytes the client sends :data:`PROBE`, a complete request on the same connection.
The server answering it (``probe-alive``) means the connection was kept open: ``alive``. End of
stream or a reset means ``closed`` (which of the two depends on timing, so they are one outcome).
Neither within the wait means ``waiting``: the server still expects bytes (an incomplete body, say),
and the probe went into what it waits for. The wait is long (:data:`ANSWER_TIMEOUT`) unless the
caller knows how many responses to expect before a quiet period (``quiet_after``): only "nothing
more" is waited for with the short :data:`QUIET`, so a loaded machine slows answers down but
cannot turn one into a different outcome.

The probe's own response is not listed. Response bodies are framed as RFC 9112 says (HEAD,
1xx, 204 and 304 have none; chunked; Content-Length; else until the connection closes); the
responses to HEAD requests are named by the case (``head_responses``), since the client does not
parse its own requests.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import select
import socket
import struct
import time
from typing import Any, Iterable, Optional, Union

PROBE = b"GET /probe-alive HTTP/1.1\r\nHost: probe\r\n\r\n"
PROBE_BODY = b"probe-alive\n"
ANSWER_TIMEOUT = 10.0  # seconds of silence before giving up on an answer that should come
QUIET = 0.5  # seconds of silence that mean "nothing more", once the expected answers are in
MAX_BODY = 16 << 10  # longer bodies are recorded by length and digest
MAX_UNPARSED = 2000


@dataclasses.dataclass(frozen=True)
class Await:
    """A step of a case: wait until ``heads`` response heads (interim ``1xx`` ones too) are in."""

    heads: int


Step = Union[bytes, Await]


@dataclasses.dataclass(frozen=True)
class Case:
    """One corpus case: the steps to send on one connection (the probe follows them)."""

    id: str
    category: str
    description: str
    steps: tuple  # of Step
    waits: bool = False  # Go is expected to leave the connection waiting for more bytes
    head_responses: frozenset = frozenset()  # indices of the final responses that answer a HEAD

    @property
    def size(self) -> int:
        return sum(len(s) for s in self.steps if isinstance(s, bytes))

    def digest(self) -> str:
        """A digest of what the case sends, so an answer recorded for other bytes is noticed."""
        h = hashlib.sha256()
        for s in self.steps:
            h.update(b"await %d\n" % s.heads if isinstance(s, Await) else b"send %d\n" % len(s) + s)
        h.update(repr(sorted(self.head_responses)).encode())
        return h.hexdigest()[:16]


class ResponseParser:
    """Parse a stream of HTTP/1 responses as bytes arrive; what is not a response stays unparsed."""

    _HEAD_END = re.compile(rb"\r?\n\r?\n")
    _STATUS = re.compile(rb"HTTP/\d\.\d \d{3}(?: [^\r\n]*)?\Z")

    def __init__(self, head_responses: Iterable[int] = ()):
        self.buf = bytearray()
        self.head_responses = frozenset(head_responses)
        self.responses: list[dict] = []
        self.heads = 0  # response heads seen, interim ones included
        self.finals = 0  # final (non-1xx) responses seen, the probe's included
        self.probe_answered = self.eof = self.stuck = self.timed_out = False

    def feed(self, data: bytes) -> None:
        self.buf += data
        self._parse()

    def feed_eof(self, timed_out: bool = False) -> None:
        """The end of the stream, or (``timed_out``) of the wait: what is pending is cut short."""
        self.eof, self.timed_out = True, timed_out
        self._parse()

    def unparsed(self) -> str:
        rest = bytes(self.buf)
        text = _DATE_LINE.sub("Date: <date>", rest[:MAX_UNPARSED].decode("latin-1"))
        return text + (f"... ({len(rest)} bytes)" if len(rest) > MAX_UNPARSED else "")

    def _parse(self) -> None:
        while not self.stuck and not self.probe_answered and self.buf:
            m = self._HEAD_END.search(self.buf)
            if m is None:
                if self.eof or not self.buf.startswith(b"HTTP/"[: len(self.buf)]):
                    self.stuck = True
                return
            lines = bytes(self.buf[: m.start()]).split(b"\n")
            status = lines[0].rstrip(b"\r")
            if not self._STATUS.match(status):
                self.stuck = True
                return
            headers: dict[str, list] = {}
            for line in lines[1:]:
                name, colon, value = line.rstrip(b"\r").decode("latin-1").partition(":")
                if colon:
                    headers.setdefault(name.strip().lower(), []).append(value.strip(" \t"))
                else:  # not a header line: keep it whole, so that an injected line shows
                    headers.setdefault(name, []).append(None)
            code = int(status[9:12])
            interim = 100 <= code < 200
            framed = self._body(code, headers, m.end(), interim)
            if framed is None:
                return  # wait for more bytes
            body, end, incomplete = framed
            del self.buf[:end]
            self.heads += 1
            if interim:
                self.responses.append({"status": status.decode("latin-1"), "headers": _no_date(headers)})
                continue
            self.finals += 1
            if code == 200 and body == PROBE_BODY:
                self.probe_answered = True
                return
            rec: dict[str, Any] = {"status": status.decode("latin-1"), "headers": _no_date(headers)}
            rec.update(body_record(headers, body))
            if incomplete:
                rec["incomplete"] = True
            self.responses.append(rec)

    def _body(self, code: int, headers: dict, start: int, interim: bool) -> Optional[tuple[bytes, int, bool]]:
        """(body, end offset, cut short) of the response whose head ends at ``start``; None: need more."""
        if interim or code in (204, 304) or self.finals in self.head_responses:
            return b"", start, False
        te = ",".join(v or "" for v in headers.get("transfer-encoding", [])).lower()
        if te.replace(" ", "").split(",")[-1] == "chunked":
            return self._chunked(start)
        cl = headers.get("content-length")
        if cl:
            try:
                n = int(cl[0])
            except (TypeError, ValueError):
                self.stuck = True
                return None
            if len(self.buf) - start >= n:
                return bytes(self.buf[start : start + n]), start + n, False
            if self.eof:
                return bytes(self.buf[start:]), len(self.buf), True
            return None
        if not self.eof:
            return None  # delimited by the end of the connection
        return bytes(self.buf[start:]), len(self.buf), self.timed_out

    def _chunked(self, pos: int) -> Optional[tuple[bytes, int, bool]]:
        body = bytearray()
        while True:
            nl = self.buf.find(b"\r\n", pos)
            if nl < 0:
                return self._cut(body)
            try:
                size = int(bytes(self.buf[pos:nl]).split(b";")[0], 16)
            except ValueError:
                self.stuck = True
                return None
            pos = nl + 2
            if size == 0:
                while True:  # trailer fields, then the empty line
                    nl = self.buf.find(b"\r\n", pos)
                    if nl < 0:
                        return self._cut(body)
                    line, pos = self.buf[pos:nl], nl + 2
                    if not line:
                        return bytes(body), pos, False
            if len(self.buf) < pos + size + 2:
                return self._cut(body)
            body += self.buf[pos : pos + size]
            if self.buf[pos + size : pos + size + 2] != b"\r\n":
                self.stuck = True
                return None
            pos += size + 2

    def _cut(self, body: bytearray) -> Optional[tuple[bytes, int, bool]]:
        if self.eof:
            return bytes(body), len(self.buf), True
        return None


_DATE_LINE = re.compile(r"(?im)^date:[^\r\n]*")


def _no_date(headers: dict) -> dict:
    return {k: v for k, v in sorted(headers.items()) if k != "date"}


def body_record(headers: dict, body: bytes) -> dict:
    """A response body as recorded: parsed JSON, latin-1 text, or (if long) length and digest."""
    if len(body) > MAX_BODY:
        return {"body_length": len(body), "body_sha256": hashlib.sha256(body).hexdigest()}
    if (headers.get("content-type") or [""])[0] == "application/json":
        try:
            return {"json": json.loads(body.decode("utf-8"))}
        except ValueError:
            pass
    return {"body": body.decode("latin-1")}


def exchange(port: int, steps: Iterable[Step], *, head_responses: Iterable[int] = (),
             quiet_after: Optional[int] = None, quiet: float = QUIET,
             timeout: float = ANSWER_TIMEOUT, host: str = "127.0.0.1") -> dict:
    """Send ``steps`` and the probe on one new connection; return the answer (see the module doc).

    ``quiet_after``: once that many final responses are in and everything is sent, ``quiet``
    seconds of silence end the exchange as ``waiting``. Otherwise only ``timeout`` seconds of
    silence do (also ``waiting``).
    """
    parser = ResponseParser(head_responses)
    queue: list[Step] = [*steps, PROBE]
    out = memoryview(b"")
    outcome = None
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        sock.setblocking(False)
        last = time.monotonic()
        while outcome is None:
            while not out and queue:
                step = queue[0]
                if isinstance(step, Await):
                    if parser.heads < step.heads:
                        break
                    queue.pop(0)
                else:
                    out = memoryview(queue.pop(0))
            done_sending = not out and not queue
            expected_in = quiet_after is not None and parser.finals >= quiet_after
            left = last + (quiet if done_sending and expected_in else timeout) - time.monotonic()
            if left <= 0:
                parser.feed_eof(timed_out=True)
                outcome = "waiting"
                break
            readable, writable, _ = select.select([sock], [sock] if out else [], [], left)
            if writable:
                try:
                    n = sock.send(out[: 64 << 10])
                    out, last = out[n:], time.monotonic()
                except (BrokenPipeError, ConnectionResetError):
                    out, queue = memoryview(b""), []  # the server stopped reading: just listen
            if readable:
                try:
                    data = sock.recv(64 << 10)
                except ConnectionResetError:
                    data = b""
                if not data:
                    parser.feed_eof()
                    outcome = "closed"
                    break
                parser.feed(data)
                last = time.monotonic()
                if parser.probe_answered:
                    outcome = "alive"
    finally:
        # close with a reset: no TIME_WAIT socket is left behind (a test run opens hundreds)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    answer: dict[str, Any] = {"responses": parser.responses, "connection": outcome}
    if parser.buf and not parser.probe_answered:
        answer["unparsed"] = parser.unparsed()
    return answer


# -- comparison ------------------------------------------------------------------------------


def _joined(values: Optional[list]) -> str:
    # a WSGI environ holds one string per header name (CGI joins repeats with a comma)
    return re.sub(r",[ \t]+", ",", ",".join(v for v in values or [] if v is not None))


def normalise_reflection(j: Any) -> Any:
    """The reflecting handler's JSON as compared: see README.md, "How answers are compared"."""
    if not isinstance(j, dict) or "method" not in j:
        return j
    j = dict(j)
    j.pop("trailers", None)  # WSGI has no trailers to show an app
    j["headers"] = {name: _joined(values) for name, values in sorted((j.get("headers") or {}).items())}
    return j


def normalise(answer: dict) -> dict:
    """An answer as compared: reflections normalised, a JSON body's length only as present (a
    HEAD response's too: the reflection it leaves out is of the same JSON)."""
    responses = []
    for r in answer.get("responses", []):
        r = dict(r)
        if "json" in r:
            r["json"] = normalise_reflection(r["json"])
        is_json = (r["headers"].get("content-type") or [""])[0] == "application/json"
        if is_json and "content-length" in r["headers"]:  # two JSON encoders differ in their bytes
            r["headers"] = {**r["headers"], "content-length": ["<the JSON's length>"]}
        responses.append(r)
    out = {"responses": responses, "connection": answer.get("connection")}
    if answer.get("unparsed"):
        out["unparsed"] = answer["unparsed"]
    return out


def same(a: dict, b: dict) -> bool:
    return normalise(a) == normalise(b)


def show(answer: dict, indent: Optional[int] = 2) -> str:
    """An answer, normalised, as JSON text (``indent=None``: on one line)."""
    return json.dumps(normalise(answer), indent=indent, sort_keys=True, ensure_ascii=True)

"""The HTTP/2 corpus from kube-apiserver (no Go twin: a test tool shared by its recorder and its replay).

What an HTTP/2 client sees, frame by frame, from kube-apiserver v1.36.0 (and, where a case needs
serve's ``/slow``, anonymous access or a limit of one stream, from genericserver-go: the same
GenericAPIServer chain): the GOAWAY at shutdown in both ``--shutdown-send-retry-after`` modes, a
stream opened after it, an anonymous request's ``Connection: close``, the connection window after
a handler left a body unread, and the HTTP/2 errors issue 49 lists. tests/parity/README.md ("The HTTP/2 corpus from kube-apiserver") says how it is recorded.

:class:`FrameClient` speaks HTTP/2 by hand on a TLS socket (ALPN ``h2``): ``hyperframe`` frames,
``hpack`` headers and ``h2``'s frame buffer, no stream state machine, so it can do what a real
client must not (open a stream after a GOAWAY, send DATA on a stream the server reset) and keeps
every frame the server sends. Each case in :data:`CASES` runs against a :class:`Server` (the
recorder's is the Go program, the replay's ``genericserver serve``) and returns its observation,
made by :func:`observe`: the one masking rule, the same on both sides.
"""

from __future__ import annotations

import select
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import hpack
from h2.errors import ErrorCodes
from h2.frame_buffer import FrameBuffer
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame, RstStreamFrame,
                              SettingsFrame, WindowUpdateFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
WAIT = 10.0  # for what must come: an answer, a GOAWAY after a signal
# for the close that follows a GOAWAY (Go's timer: a second after the last stream): the wait ends
# at the close, so only a server that never closes pays it all, and a loaded machine has room
SETTLE = 5.0
# for what Go sends at once if at all (the window given back, an answer to a dropped stream): the
# recorder waits 1.5 s, the replay 0.5 s, so that a known difference costs the suite little
QUIET = 0.5
TOKEN = "reference-admin-token"  # reference/pair.py's admin (system:masters)
# the token file both sides serve (reference/pair.py's TOKENS): token,user,uid,"groups"
TOKENS = f'{TOKEN},admin,admin-uid,"system:masters"\nreader-token,reader,reader-uid\n'
# the masking rule for a response's header (see observe): Date is a time, dropped; these are
# each server's own identities (a request's audit id, APF's uids), compared as present
DROPPED_HEADERS = ("date",)
MASKED_HEADERS = ("audit-id", "x-kubernetes-pf-flowschema-uid", "x-kubernetes-pf-prioritylevel-uid")
MASK = "<masked>"


def code_name(code: int) -> str:
    try:
        return ErrorCodes(code).name
    except ValueError:
        return f"UNKNOWN_{code}"


class FrameClient:
    """One HTTP/2 connection to ``127.0.0.1:port`` over TLS, driven frame by frame from one thread.

    It acknowledges the server's SETTINGS and PINGs and gives back the window of every DATA frame
    it reads (a client that keeps up), and does nothing else on its own. ``frames`` holds every
    frame the server sent (a HEADERS frame with its CONTINUATIONs joined, its block decoded in
    ``headers``); ``eof`` says the server closed the connection (or reset it)."""

    def __init__(self, port: int, ca_file: str):
        ctx = ssl.create_default_context(cafile=ca_file)
        ctx.set_alpn_protocols(["h2"])
        self.raw = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.incoming, self.outgoing, server_hostname="127.0.0.1")
        self._handshake()
        assert self.tls.selected_alpn_protocol() == "h2", self.tls.selected_alpn_protocol()
        self.buffer = FrameBuffer(server=False)
        self.buffer.max_frame_size = 1 << 24  # whatever the server sends is kept, not judged
        self.encoder, self.decoder = hpack.Encoder(), hpack.Decoder()
        self.frames: list[Frame] = []
        self.headers: dict[int, list[dict[str, str]]] = {}  # stream -> each header block, decoded
        self.eof = False
        self.next_stream = 1
        self.preface: list[Frame] = []  # what the server sent before it answered our first PING
        settings = SettingsFrame(0)
        settings.settings = {SettingsFrame.ENABLE_PUSH: 0}
        self._send_bytes(PREFACE + settings.serialize())

    # -- the wire ------------------------------------------------------------------------
    def _handshake(self) -> None:
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.raw.sendall(self.outgoing.read())
                data = self.raw.recv(65536)
                if not data:
                    raise ConnectionError("the server closed the connection during the TLS handshake")
                self.incoming.write(data)
        self.raw.sendall(self.outgoing.read())

    def _send_bytes(self, data: bytes) -> None:
        self.tls.write(data)
        try:
            self.raw.sendall(self.outgoing.read())
        except OSError:
            self.eof = True  # the server is gone (it reset the connection)

    def send(self, *frames: Frame) -> None:
        self._send_bytes(b"".join(f.serialize() for f in frames))

    def _receive(self, timeout: float) -> bool:
        """Read what the server sent within ``timeout``; False when nothing came."""
        if self.eof:
            return False
        ready, _, _ = select.select([self.raw], [], [], max(timeout, 0))
        if not ready:
            return False
        try:
            data = self.raw.recv(65536)
        except OSError:
            data = b""
        if not data:
            self.eof = True
            return True
        self.incoming.write(data)
        plain = bytearray()
        while True:
            try:
                chunk = self.tls.read(65536)
            except ssl.SSLWantReadError:
                break
            except (ssl.SSLZeroReturnError, ssl.SSLError):
                self.eof = True
                break
            if not chunk:  # the server's close_notify
                self.eof = True
                break
            plain += chunk
        pending = self.outgoing.read()
        if pending:
            try:
                self.raw.sendall(pending)
            except OSError:
                self.eof = True
        self.buffer.add_data(bytes(plain))
        for frame in self.buffer:
            self._take(frame)
        return True

    def _take(self, frame: Frame) -> None:
        self.frames.append(frame)
        if isinstance(frame, HeadersFrame):  # (the frame buffer joined its CONTINUATIONs)
            block = self.decoder.decode(frame.data, raw=False)
            self.headers.setdefault(frame.stream_id, []).append(dict(block))
        elif isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
            self.send(SettingsFrame(0, flags=["ACK"]))
        elif isinstance(frame, PingFrame) and "ACK" not in frame.flags:
            self.send(PingFrame(0, frame.opaque_data, flags=["ACK"]))
        elif isinstance(frame, DataFrame) and frame.flow_controlled_length:
            n = frame.flow_controlled_length
            self.send(WindowUpdateFrame(0, n), WindowUpdateFrame(frame.stream_id, n))

    def pump(self, until: Callable[[], Any], timeout: float = WAIT) -> bool:
        """Read until ``until()`` holds, the connection ends, or ``timeout`` passes; ``until()``."""
        deadline = time.monotonic() + timeout
        while not until() and not self.eof:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._receive(left)
        return bool(until())

    def settle(self, timeout: float = SETTLE) -> None:
        """Read until the server closes the connection or ``timeout`` passes."""
        self.pump(lambda: False, timeout)

    def ping(self) -> None:
        """A PING round trip: the server has read every frame sent before it."""
        acks = sum(isinstance(f, PingFrame) and "ACK" in f.flags for f in self.frames)
        self.send(PingFrame(0, b"pingpong"))
        self.pump(lambda: sum(isinstance(f, PingFrame) and "ACK" in f.flags for f in self.frames) > acks)

    def read_preface(self) -> None:
        """Everything the server sends before it answers a PING: its SETTINGS and the window it grants."""
        self.ping()
        self.preface = list(self.frames)

    # -- streams -------------------------------------------------------------------------
    def request(self, path: str, method: str = "GET", token: Optional[str] = TOKEN, end: bool = True,
                stream_id: Optional[int] = None, headers: tuple[tuple[str, str], ...] = ()) -> int:
        """Open a stream (HEADERS; END_STREAM unless ``end`` is False); its id."""
        sid = stream_id or self.next_stream
        self.next_stream = max(self.next_stream, sid + 2)
        hdrs = [(":method", method), (":scheme", "https"), (":authority", "127.0.0.1"), (":path", path), *headers]
        if token:
            hdrs.append(("authorization", f"Bearer {token}"))
        flags = ["END_HEADERS"] + (["END_STREAM"] if end else [])
        self.send(HeadersFrame(sid, self.encoder.encode(hdrs), flags=flags))
        return sid

    def data(self, sid: int, size: int, end: bool = False) -> int:
        """``size`` bytes of body on stream ``sid``, in 16 KiB DATA frames; ``size``."""
        frames, left = [], size
        while left > 0:
            n = min(left, 16384)
            left -= n
            frames.append(DataFrame(sid, b"x" * n, flags=["END_STREAM"] if end and not left else []))
        if end and not frames:
            frames.append(DataFrame(sid, b"", flags=["END_STREAM"]))
        self.send(*frames)
        return size

    def answered(self, sid: int) -> bool:
        """The stream ended (END_STREAM from the server) or was reset."""
        return any(f.stream_id == sid and (isinstance(f, RstStreamFrame) or "END_STREAM" in f.flags)
                   for f in self.frames if isinstance(f, (HeadersFrame, DataFrame, RstStreamFrame)))

    def goaways(self) -> list[GoAwayFrame]:
        return [f for f in self.frames if isinstance(f, GoAwayFrame)]

    def credited(self, since: int = 0) -> int:
        """The connection window the server gave back in the frames from index ``since`` on."""
        return sum(f.window_increment for f in self.frames[since:] if isinstance(f, WindowUpdateFrame) and f.stream_id == 0)

    def close(self) -> None:
        try:
            self.raw.close()
        except OSError:
            pass


def header_of(block: dict[str, str]) -> dict[str, str]:
    """A response's header under the masking rule: every field but the pseudo-headers and
    ``DROPPED_HEADERS``; the values of ``MASKED_HEADERS`` masked, and ``content-length``'s for a
    2xx JSON body (an API object, whose bytes hold each server's identity and times, such as
    /version's or a created object's uid; a Status, an error's JSON, is compared to the byte)."""
    ctype = block.get("content-type", "")
    api_object = block.get(":status", "").startswith("2") and ctype.startswith("application/json")
    out = {}
    for name, value in block.items():
        if name.startswith(":") or name in DROPPED_HEADERS:
            continue
        masked = name in MASKED_HEADERS or (name == "content-length" and api_object)
        out[name] = MASK if masked else value
    return out


def observe(c: FrameClient, streams: list[int], since: int = 0, bodies: bool = True, frames: bool = True,
            resets: bool = False) -> dict:
    """The masking rule, the same on both sides: what a case records of a connection.

    Kept: for each stream the case opened, its status, its header (:func:`header_of`: all of
    it but Date, a few identities masked), whether DATA came with bytes (``data``), its body
    when it is ``text/plain`` (JSON bodies are the API corpus's business) and how it ended (``end``: END_STREAM, ``reset CODE`` or ``none``); each GOAWAY's
    error code and last stream id; whether the server closed the connection; unless ``frames`` is
    False, the frames from index ``since`` on as ``TYPE[:stream]`` (minus the SETTINGS and PING
    exchange, WINDOW_UPDATEs and DATA, whose split and pacing are each server's own); with
    ``resets``, the code of the first RST_STREAM on each stream (``reset``) even after its end.
    Where a body races the answer, the frames and the later resets depend on timing (a DATA frame
    read after the stream closed gets its own RST_STREAM STREAM_CLOSED), so those cases keep neither.
    Each GOAWAY's code and last stream id are two fields, compared apart. Dropped: everything
    else: Date, JSON bytes, times."""
    out: dict[str, Any] = {"streams": {}}
    for sid in streams:
        s: dict[str, Any] = {}
        blocks = c.headers.get(sid, [])
        if blocks:
            first = blocks[0]
            s["status"] = int(first.get(":status", 0))
            s["headers"] = header_of(first)
            data = b"".join(f.data for f in c.frames if isinstance(f, DataFrame) and f.stream_id == sid)
            s["data"] = bool(data)  # whatever the body's type: a HEAD's answer has none
            if bodies and first.get("content-type", "").startswith("text/plain"):
                s["body"] = data.decode("latin-1")
        ends = [f for f in c.frames if getattr(f, "stream_id", None) == sid
                and (isinstance(f, RstStreamFrame) or (isinstance(f, (HeadersFrame, DataFrame)) and "END_STREAM" in f.flags))]
        if not ends:
            s["end"] = "none"
        elif isinstance(ends[0], RstStreamFrame):
            s["end"] = "reset " + code_name(ends[0].error_code)
        else:
            s["end"] = "END_STREAM"
        rsts = [f for f in c.frames if isinstance(f, RstStreamFrame) and f.stream_id == sid]
        if resets and rsts:
            s["reset"] = code_name(rsts[0].error_code)
        out["streams"][str(sid)] = s
    out["goaways"] = [{"code": code_name(g.error_code), "last_stream_id": g.last_stream_id} for g in c.goaways()]
    if frames:
        out["frames"] = [f"{type(f).__name__.removesuffix('Frame').upper()}" + (f":{f.stream_id}" if f.stream_id else "")
                         for f in c.frames[since:]
                         if not isinstance(f, (SettingsFrame, PingFrame, WindowUpdateFrame, DataFrame))]
    out["closed"] = c.eof
    return out


class Server:
    """A started server a case runs against: its port, SIGTERM, its log."""

    port: int

    def signal(self) -> None:
        """SIGTERM."""
        raise NotImplementedError

    def expect(self, pattern: str) -> None:
        """Wait for a line of the server's log matching ``pattern``."""
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


@dataclass
class Case:
    id: str
    description: str
    run: Callable[["Server", str], dict]
    flags: tuple[str, ...] = ()
    generic: bool = False  # recorded from genericserver-go (it needs serve's sample endpoints)


CASES: list[Case] = []


def case(id: str, description: str, flags: tuple[str, ...] = (), generic: bool = False):
    def register(fn: Callable[["Server", str], dict]) -> Callable[["Server", str], dict]:
        CASES.append(Case(id, description, fn, flags, generic))
        return fn
    return register


SHORT_DELAY = ("--shutdown-delay-duration=300ms",)
NOT_ACCEPTING = r'name="NotAcceptingNewRequest"'


def after_goaway(c: FrameClient, path: str = "/version") -> int:
    """A stream opened once the GOAWAY is read (a client that raced it)."""
    c.pump(lambda: c.goaways())
    return c.request(path)


# -- the connection's start ---------------------------------------------------------------------
@case("preface", "the server's SETTINGS and the connection window it grants before any request")
def _preface(srv: Server, ca: str) -> dict:
    c = FrameClient(srv.port, ca)
    c.read_preface()
    settings = [f for f in c.preface if isinstance(f, SettingsFrame) and "ACK" not in f.flags]
    names = {v: k for k, v in vars(SettingsFrame).items() if k.isupper() and isinstance(v, int)}
    return {
        "settings": {names.get(k, str(k)): v for k, v in sorted(settings[0].settings.items())} if settings else None,
        "connection_window": 65535 + c.credited(),
        "frames": observe(c, [])["frames"],
    }


# -- GOAWAY at shutdown -----------------------------------------------------------------------
@case("shutdown-idle", "default mode: a connection idle after one answer gets a GOAWAY at Shutdown; "
      "a stream opened after it", flags=SHORT_DELAY)
def _shutdown_idle(srv: Server, ca: str) -> dict:
    c = FrameClient(srv.port, ca)
    first = c.request("/version")
    c.pump(lambda: c.answered(first))
    srv.signal()
    late = after_goaway(c)
    c.pump(lambda: c.answered(late))
    c.settle()
    return observe(c, [first, late])


@case("shutdown-idle-retry-after", "retry-after mode: nothing in flight, so the drain is over at once and "
      "Shutdown sends the GOAWAY; a stream opened after it", flags=SHORT_DELAY + ("--shutdown-send-retry-after",))
def _shutdown_idle_retry_after(srv: Server, ca: str) -> dict:
    return _shutdown_idle(srv, ca)


@case("shutdown-idle-two-connections", "default mode: two idle connections, three streams (one after the other) and none: "
      "each GOAWAY names its own last stream", flags=SHORT_DELAY)
def _shutdown_two(srv: Server, ca: str) -> dict:
    a, b = FrameClient(srv.port, ca), FrameClient(srv.port, ca)
    sids = []
    for _ in range(3):  # one after the other: streams in parallel are answered in any order
        sids.append(a.request("/version"))
        a.pump(lambda: a.answered(sids[-1]))
    b.read_preface()
    srv.signal()
    a.pump(lambda: a.goaways())
    b.pump(lambda: b.goaways())
    a.settle()
    b.settle()
    return {"used": observe(a, sids), "unused": observe(b, [], since=len(b.preface))}


def hold(c: FrameClient) -> int:
    """A POST whose body is still coming: in flight for as long as the case likes (the handler
    waits for the rest of it); end it with :func:`release`."""
    held = c.request("/api/v1/namespaces/default/configmaps", method="POST", end=False,
                     headers=(("content-type", "application/json"),))
    c.send(DataFrame(held, b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held"}'))
    c.ping()  # the server has read the HEADERS and the DATA: the handler starts, and waits
    return held


def release(c: FrameClient, held: int) -> None:
    c.send(DataFrame(held, b"}", flags=["END_STREAM"]))
    c.pump(lambda: c.answered(held))


@case("shutdown-in-flight", "default mode: a POST whose body is still coming is in flight at Shutdown: the "
      "GOAWAY comes, a stream opened after it is dropped, then the body ends and the POST is answered",
      flags=SHORT_DELAY)
def _shutdown_in_flight(srv: Server, ca: str) -> dict:
    c = FrameClient(srv.port, ca)
    held = hold(c)
    srv.signal()
    late = after_goaway(c)
    c.pump(lambda: c.answered(late), QUIET)
    release(c, held)
    c.settle()
    return observe(c, [held, late])


@case("retry-after-in-flight", "retry-after mode: while a POST whose body is still coming keeps the drain "
      "going, a new stream gets 429 with Connection: close (a GOAWAY); a stream opened after that GOAWAY; "
      "then the POST's body ends and it is answered", flags=SHORT_DELAY + ("--shutdown-send-retry-after",))
def _retry_after_in_flight(srv: Server, ca: str) -> dict:
    c = FrameClient(srv.port, ca)
    held = hold(c)
    srv.signal()
    srv.expect(NOT_ACCEPTING)
    refused = c.request("/version")
    c.pump(lambda: c.answered(refused))
    late = after_goaway(c)
    c.pump(lambda: c.answered(late), QUIET)
    release(c, held)
    c.settle()
    return observe(c, [held, refused, late])


@case("shutdown-after-refused-stream", "one stream allowed: a second is refused with RST_STREAM while /slow "
      "runs; the GOAWAY at Shutdown names the refused stream as the last one taken",
      flags=SHORT_DELAY + ("--http2-max-streams-per-connection=1",), generic=True)
def _shutdown_after_refused(srv: Server, ca: str) -> dict:
    c = FrameClient(srv.port, ca)
    c.read_preface()  # our SETTINGS ACK is in: the limit is known to us, whatever Go makes of that
    slow = c.request("/slow?seconds=1.5&flush=1")
    c.pump(lambda: c.headers.get(slow))
    over = c.request("/echo?message=over-the-limit")
    c.pump(lambda: c.answered(over))
    srv.signal()
    c.pump(lambda: c.goaways())
    c.pump(lambda: c.answered(slow))
    c.settle()
    return observe(c, [slow, over], since=len(c.preface))


@case("client-error-goaway", "the client sends GOAWAY INTERNAL_ERROR (last stream 0) while /slow runs: "
      "what becomes of the stream in flight and of the connection", generic=True)
def _client_error_goaway(srv: Server, ca: str) -> dict:
    c = FrameClient(srv.port, ca)
    slow = c.request("/slow?seconds=1.5&flush=1")  # long enough that the GOAWAY meets it running
    c.pump(lambda: c.headers.get(slow))
    c.send(GoAwayFrame(0, last_stream_id=0, error_code=ErrorCodes.INTERNAL_ERROR))
    c.pump(lambda: c.answered(slow))
    c.settle()
    return observe(c, [slow])


def after_one_answer(srv: Server, ca: str) -> tuple[FrameClient, int]:
    """A connection with one ``/version`` answered on it: the client and that stream."""
    c = FrameClient(srv.port, ca)
    first = c.request("/version")
    c.pump(lambda: c.answered(first))
    return c, first


@case("connection-error", "a HEADERS frame on an even stream id (a connection error) after one answer: "
      "the GOAWAY's code and last stream id; then 16 KiB of DATA, whose window Go does not give back")
def _connection_error(srv: Server, ca: str) -> dict:
    c, first = after_one_answer(srv, ca)
    bad = c.request("/version", stream_id=2)
    c.pump(lambda: c.goaways())
    start = len(c.frames)
    sent = c.data(first, 16384)  # (Go gives back 4 KiB or more at a time)
    c.pump(lambda: c.credited(start) >= sent, QUIET)
    c.settle()
    out = observe(c, [first, bad])
    out["window"] = {"sent": sent, "credited": c.credited(start)}
    return out


@case("hpack-undecodable", "after one answer, a header block HPACK cannot decode (an index past both "
      "tables): the GOAWAY's code and last stream id (Go's framer: COMPRESSION_ERROR, naming the block's stream)")
def _hpack_undecodable(srv: Server, ca: str) -> dict:
    c, first = after_one_answer(srv, ca)
    c.send(HeadersFrame(c.next_stream, b"\xff\x80\x01", flags=["END_HEADERS", "END_STREAM"]))  # index 255
    c.pump(lambda: c.goaways())
    c.settle()
    return observe(c, [first])


def with_the_next_stream(c: FrameClient, sid: int) -> dict:
    """Stream ``sid`` to its end, then a plain request on the same connection (HPACK's table in
    step, or not): both observed."""
    c.pump(lambda: c.answered(sid))
    after = c.request("/version")
    c.pump(lambda: c.answered(after))
    c.settle()
    return observe(c, [sid, after])


@case("header-list-431", "a header list over MaxHeaderBytes + 320: a 4,000-byte field indexed, then named by "
      "its index 299 times more (1.2 MB of list from a 4 KiB block), so the token after it is past the limit; "
      "Go answers 431 on the stream (its page sniffed as HTML) and HPACK stays in step for the next stream")
def _header_list_431(srv: Server, ca: str) -> dict:
    c = FrameClient(srv.port, ca)
    return with_the_next_stream(c, c.request("/version", headers=(("x-big", "v" * 4000),) * 300))



@case("malformed-over-the-limit", "a header list just under MaxHeaderBytes + 320 (a 4,000-byte field named by "
      "its index 259 times), then a malformed field (an upper-case name) that would also cross the limit: Go "
      "judges the field before it counts it, so the stream is reset, not answered 431; the next stream answered")
def _malformed_over_the_limit(srv: Server, ca: str) -> dict:
    c = FrameClient(srv.port, ca)
    return with_the_next_stream(c, c.request("/version", headers=(("x-big", "v" * 4000),) * 259 + (("X-Upper", "v" * 4000),)))


@case("unknown-pseudo-continued", "a HEADERS frame with an unknown pseudo-field (:foo) and no END_HEADERS, then "
      "its CONTINUATION: Go reads the whole block and then resets the stream (checkPseudos); the next stream answered")
def _unknown_pseudo_continued(srv: Server, ca: str) -> dict:
    c = FrameClient(srv.port, ca)
    sid = c.next_stream
    c.next_stream += 2
    first = c.encoder.encode([(":method", "GET"), (":scheme", "https"), (":authority", "127.0.0.1"),
                              (":path", "/version"), (":foo", "1")])
    rest = c.encoder.encode([("authorization", f"Bearer {TOKEN}")])
    c.send(HeadersFrame(sid, first, flags=["END_STREAM"]), ContinuationFrame(sid, rest, flags=["END_HEADERS"]))
    return with_the_next_stream(c, sid)


def anonymous_then_late_stream(srv: Server, ca: str, bodies: bool) -> dict:
    """A request without Authorization, its answer and the GOAWAY its Connection: close becomes,
    then a stream opened after the GOAWAY."""
    c = FrameClient(srv.port, ca)
    sid = c.request("/version", token=None)
    c.pump(lambda: c.answered(sid) and c.goaways())
    late = after_goaway(c)
    c.pump(lambda: c.answered(late))
    c.settle()
    return observe(c, [sid, late], bodies=bodies)


# -- an anonymous request's Connection: close ---------------------------------------------------
@case("anonymous-200", "an anonymous request (no Authorization header) let in: its 200, and the "
      "Connection: close the authentication filter sets, which the HTTP/2 server turns into a GOAWAY; "
      "a stream opened after it", generic=True)
def _anonymous(srv: Server, ca: str) -> dict:
    return anonymous_then_late_stream(srv, ca, bodies=True)


@case("anonymous-401", "kube-apiserver's own setting: anonymous auth is off under AlwaysAllow, so a "
      "request without Authorization gets 401, whose Connection: close also becomes a GOAWAY; a stream "
      "opened after it")
def _anonymous_401(srv: Server, ca: str) -> dict:
    return anonymous_then_late_stream(srv, ca, bodies=False)


@case("bad-token-401", "a wrong token: 401, and the failed authentication's Connection: close (a GOAWAY)")
def _bad_token(srv: Server, ca: str) -> dict:
    c = FrameClient(srv.port, ca)
    sid = c.request("/version", token="no-such-token")
    c.pump(lambda: c.answered(sid) and c.goaways())
    c.settle()
    return observe(c, [sid], bodies=False)


# -- what an answer's header says ----------------------------------------------------------------
def one_answer(srv: Server, ca: str, path: str, method: str = "GET") -> dict:
    c = FrameClient(srv.port, ca)
    c.read_preface()
    sid = c.request(path, method=method)
    c.pump(lambda: c.answered(sid))
    c.ping()  # anything sent after the end of the stream (a DATA a HEAD must not have) has come
    return observe(c, [sid], since=len(c.preface))


@case("head-healthz", "HEAD /healthz: the handler writes \"ok\", Go sends its length and ends the stream "
      "with the HEADERS (no DATA)")
def _head_healthz(srv: Server, ca: str) -> dict:
    return one_answer(srv, ca, "/healthz", "HEAD")


@case("head-405", "HEAD /version, a method go-restful does not serve there: 405, the Status's length, "
      "no DATA")
def _head_405(srv: Server, ca: str) -> dict:
    return one_answer(srv, ca, "/version", "HEAD")


@case("empty-answer", "serve's /echo: 200 with the message in a header and nothing written: "
      "content-length 0", generic=True)
def _empty_answer(srv: Server, ca: str) -> dict:
    return one_answer(srv, ca, "/echo?message=hello")


@case("healthz", "GET /healthz: the header of a plain-text answer, and its body")
def _healthz(srv: Server, ca: str) -> dict:
    return one_answer(srv, ca, "/healthz")


# -- the window after an unread body -------------------------------------------------------------
BODY = 48 * 1024  # under every initial window (65535), so the client needs no grant to send it


def unread_body(srv: Server, ca: str, path: str, end: bool, token: Optional[str] = TOKEN, more: int = 0) -> dict:
    """POST ``BODY`` bytes to a handler that does not read them (ended, or left open and, once
    answered, ``more`` bytes sent after the answer); what the server gives back of the
    connection window, against what was sent."""
    c = FrameClient(srv.port, ca)
    c.read_preface()
    start = len(c.frames)  # the window granted in the preface is not a give-back
    sid = c.request(path, method="POST", token=token, end=False)
    sent = c.data(sid, BODY, end=end)
    c.pump(lambda: c.answered(sid))
    if more:
        sent += c.data(sid, more, end=True)
    c.pump(lambda: c.credited(start) >= sent, QUIET)
    if c.goaways():
        c.settle()  # so that "closed" says whether the GOAWAY's connection was closed, not when
    out = observe(c, [sid], frames=False, resets=not end)
    out["window"] = {"sent": sent, "credited": c.credited(start)}
    return out


@case("unread-body-404", "POST with a 48 KiB body (ended) to a path nobody serves: 404 without reading it; "
      "the connection window given back")
def _unread_404(srv: Server, ca: str) -> dict:
    return unread_body(srv, ca, "/no-such-path", end=True)


@case("unread-body-404-open", "POST with 48 KiB and the body left open: 404, the stream reset; 16 KiB more "
      "sent after the answer; the connection window given back")
def _unread_404_open(srv: Server, ca: str) -> dict:
    return unread_body(srv, ca, "/no-such-path", end=False, more=16384)


@case("unread-body-401", "POST with a 48 KiB body and a wrong token: 401 (body unread) and a GOAWAY; the "
      "connection window given back")
def _unread_401(srv: Server, ca: str) -> dict:
    return unread_body(srv, ca, "/api/v1/namespaces/default/configmaps", end=True, token="no-such-token")


CASES_BY_ID = {c.id: c for c in CASES}

"""genericserver.net.http.internal.http2.server against the h2 library's client over TLS: Go's HTTP/2 server
decisions (GOAWAY on Shutdown, in-flight streams finishing, new streams dropped, Connection:
close, idle timeout, resets, flow control, the response buffer) one by one."""

from __future__ import annotations

import http.client
import socket
import ssl
import threading

import h2.errors
import h2.events
import h2.settings
import pytest

from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.context import context as gocontext
from genericserver.net.http import server as hs
from genericserver.net.http.internal.http2 import server as http2server
from h2client import H2Client, StreamWasReset, raw_frames
from hyperframe.frame import GoAwayFrame
from rawconn import handshake

WAIT = 10.0
NO_ERROR = h2.errors.ErrorCodes.NO_ERROR


class H2Harness:
    """An httpserver.Server with HTTP/2 on TLS, serving ``app`` on a fresh port."""

    def __init__(self, app, tls_cert, **opts):
        self.tls_cert = tls_cert
        self.logs: list[str] = []
        ctx = hs.ssl_context_from_files(*tls_cert, alpn=("h2", "http/1.1"))
        opts.setdefault("go_away_timeout", 0.05)  # Go's tests shorten it too
        self.h2srv = http2server.Server(http2server.Options(**opts))
        self.closed = 0  # connections the server has closed
        self.cond = threading.Condition()
        self.srv = hs.Server(app, ssl_context=ctx, http2=self.h2srv, error_log=self.logs.append,
                             conn_state_hook=self._state)
        ln = hs.listen()
        self.port = ln.getsockname()[1]
        self.serving = rt.go(self._serve, ln, name="test-serve")
        self.clients: list[H2Client] = []

    def _state(self, c, state):
        if state == hs.CLOSED:
            with self.cond:
                self.closed += 1
                self.cond.notify_all()

    def wait_closed(self, n: int) -> None:
        """Until the server has closed ``n`` connections (its HTTP/2 side ended on each)."""
        with self.cond:
            assert self.cond.wait_for(lambda: self.closed >= n, WAIT)

    def _serve(self, ln):
        try:
            self.srv.serve(ln)
        except hs.ServerClosed:
            pass

    def client(self, **kw) -> H2Client:
        c = H2Client(self.port, self.tls_cert[0], **kw)
        self.clients.append(c)
        return c

    def shutdown_in_background(self) -> tuple[rt.Event, dict]:
        """Start ``Shutdown`` in a goroutine; the event is set when it returned."""
        done, result = rt.event("test-shutdown-returned"), {}

        def run():
            try:
                self.srv.shutdown(gocontext.background())
                result["err"] = None
            except BaseException as err:  # noqa: BLE001 - the test reads it
                result["err"] = err
            done.set()

        rt.go(run, name="test-shutdown")
        return done, result

    def stop(self):
        for c in self.clients:
            c.close()
        self.srv.close()
        assert self.serving.join(WAIT)


@pytest.fixture
def serve(tls_cert):
    started: list[H2Harness] = []

    def start(app, **opts):
        h = H2Harness(app, tls_cert, **opts)
        started.append(h)
        return h

    yield start
    for h in started:
        h.stop()


def text(body: bytes, status: str = "200 OK", extra=()):
    def app(environ, start_response):
        start_response(status, [("Content-Type", "text/plain"), *extra])
        return [body]
    return app


class Gate:
    """A handler that says it started and waits until the test opens the gate."""

    def __init__(self):
        self.started, self.open = threading.Event(), threading.Event()
        self.calls = 0

    def __call__(self, environ, start_response):
        self.calls += 1
        self.started.set()
        assert self.open.wait(WAIT)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"finished"]


def held_stream(serve, **opts) -> tuple[Gate, H2Harness, H2Client, int]:
    """A connection whose first stream's handler has started and waits at the gate."""
    gate = Gate()
    h = serve(gate, **opts)
    c = h.client()
    sid = c.request("/slow")
    assert gate.started.wait(WAIT)
    return gate, h, c, sid


# -- requests and answers --------------------------------------------------------------------
def test_a_request_over_h2_reaches_the_wsgi_app_as_http_2(serve):
    seen = {}

    def app(environ, start_response):
        seen.update(proto=environ["SERVER_PROTOCOL"], host=environ.get("HTTP_HOST"), query=environ["QUERY_STRING"],
                    accept=environ.get("HTTP_ACCEPT"), method=environ["REQUEST_METHOD"], path=environ["PATH_INFO"])
        start_response("200 OK", [("Content-Type", "text/plain"), ("Connection", "keep-alive")])
        return [b"hello"]

    h = serve(app)
    c = h.client()
    status, headers, body = c.response(c.request("/api/v1/pods?watch=0", headers=(("accept", "application/json"),)))
    assert (status, body) == (200, b"hello")
    assert seen == dict(proto="HTTP/2.0", host="127.0.0.1", query="watch=0", accept="application/json", method="GET", path="/api/v1/pods")
    # the whole answer fit the first buffer: a content-length; no HTTP/1 connection header
    assert headers["content-length"] == "5" and "date" in headers and "connection" not in headers


def test_the_answer_s_fields_are_sorted_and_judged_as_go_s_encode_headers_judges_them(serve):
    fields = [("X-Zeta", "1"), ("Keep-Alive", "timeout=5"), ("Audit-Id", "a"),
              ("X-Zeta", "2"), ("Bad Name", "x"), ("X-Ctl", "a\x01b"), ("Transfer-Encoding", "chunked"),
              ("Te-Kept", "ok"), ("X-Ünicode", "x"), ("Connection", "keep-alive")]
    c = serve(text(b"hi", extra=fields)).client(validate=False)
    sid = c.request("/")
    c.response(sid)
    headers = c.of(h2.events.ResponseReceived, sid)[0].headers
    # :status, the handler's fields sorted by name (each name's values in their order), then the
    # length and the date Go adds; a name that is no token or not ASCII, a value with a control
    # character and a transfer-encoding other than "trailers" left out, keep-alive sent as Go sends it
    # (only Connection is taken out: h2 would have refused the answer for it, or for "Bad Name")
    assert [n for n, _ in headers] == [":status", "audit-id", "content-type", "keep-alive", "te-kept",
                                       "x-zeta", "x-zeta", "content-length", "date"]
    assert [v for n, v in headers if n == "x-zeta"] == ["1", "2"]


def test_an_answer_longer_than_the_first_buffer_has_no_content_length(serve):
    big = b"x" * (http2server.HANDLER_CHUNK_WRITE_SIZE + 1)
    c = serve(text(big)).client()
    status, headers, body = c.response(c.request("/"))
    assert (status, body) == (200, big) and "content-length" not in headers


def test_each_chunk_a_streaming_handler_yields_is_sent_at_once(serve):
    first, second = threading.Event(), threading.Event()

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])
        yield b""  # a watch with nothing yet: the header goes out now
        assert first.wait(WAIT)
        yield b'{"type":"ADDED"}\n'
        assert second.wait(WAIT)
        yield b'{"type":"DELETED"}\n'

    c = serve(app).client()
    sid = c.request("/watch")
    # the header alone, while the handler waits (it stayed in h2's buffer once: kubectl's
    # watch then saw nothing until the connection's next frame)
    c.wait_for(lambda: c.of(h2.events.ResponseReceived, sid), "the header")
    assert not c.of(h2.events.DataReceived, sid)
    first.set()
    c.wait_for(lambda: c.of(h2.events.DataReceived, sid), "the first event")
    assert "content-length" not in dict(c.of(h2.events.ResponseReceived, sid)[0].headers)
    assert [e.data for e in c.of(h2.events.DataReceived, sid)] == [b'{"type":"ADDED"}\n']
    second.set()
    assert c.response(sid)[2] == b'{"type":"ADDED"}\n{"type":"DELETED"}\n'


def test_the_end_of_the_stream_goes_out_after_the_iterable_is_closed(serve):
    # the chain's releases (a wait-group slot) run in close(): Go ends the stream only after
    # the handler's deferred calls, so a client that saw the end finds the slot released
    closed = threading.Event()
    ended_before_close = []

    class Body:
        def __iter__(self):
            yield b"part"

        def close(self):
            ended_before_close.append(bool(c.of(h2.events.StreamEnded)))
            closed.set()

    def app(environ, start_response):
        start_response("200 OK", [])
        return Body()

    c = serve(app).client()
    assert c.response(c.request("/"))[2] == b"part"
    assert closed.is_set() and ended_before_close == [False]


def test_the_request_body_flows_past_the_stream_window(serve):
    # 1 MiB through a 256 KiB per-stream window: the server gives the window back as the handler reads
    def app(environ, start_response):
        data = environ["wsgi.input"].read()
        start_response("200 OK", [])
        return [str(len(data)).encode()]

    c = serve(app).client()
    sid = c.request("/upload", method="POST", end=False)
    payload = b"y" * (1 << 20)
    sent = 0
    while sent < len(payload):
        with c.cond:
            c.cond.wait_for(lambda: c.conn.local_flow_control_window(sid) > 0, WAIT)
            n = min(c.conn.local_flow_control_window(sid), c.conn.max_outbound_frame_size, len(payload) - sent)
        c.send_data(sid, payload[sent:sent + n], end=sent + n == len(payload))
        sent += n
    assert c.response(sid)[2] == b"1048576", c.events


def test_the_request_body_reads_by_line(serve):
    def app(environ, start_response):
        body = environ["wsgi.input"]
        lines = [body.readline(), body.readline(3), body.readline(), body.read()]
        start_response("200 OK", [])
        return [repr(lines).encode()]

    c = serve(app).client()
    sid = c.request("/lines", method="POST", body=b"one\ntwo\n", end=False)
    c.send_data(sid, b"three\nrest", end=True)
    assert c.response(sid)[2] == repr([b"one\n", b"two", b"\n", b"three\nrest"]).encode()


def test_settings_are_secure_servings(serve):
    h = serve(text(b"ok"), **vars(http2server.options_for(1000)) | {"go_away_timeout": 0.05})
    c = h.client()
    c.wait_for(lambda: c.of(h2.events.RemoteSettingsChanged), "the server's SETTINGS")
    changed = c.of(h2.events.RemoteSettingsChanged)[0].changed_settings
    codes = h2.settings.SettingCodes
    assert changed[codes.MAX_CONCURRENT_STREAMS].new_value == 1000
    assert changed[codes.INITIAL_WINDOW_SIZE].new_value == 256 << 10
    assert changed[codes.MAX_FRAME_SIZE].new_value == 256 << 10
    # what Go's serve writes and no more (kube-apiserver sends no ENABLE_PUSH or ENABLE_CONNECT_PROTOCOL)
    assert set(changed) == {codes.MAX_FRAME_SIZE, codes.MAX_CONCURRENT_STREAMS, codes.MAX_HEADER_LIST_SIZE,
                            codes.HEADER_TABLE_SIZE, codes.INITIAL_WINDOW_SIZE}
    # Go's maxHeaderListSize: the HTTP/1 server's MaxHeaderBytes (kube's 1 MiB) + 10 fields x 32 bytes
    assert changed[codes.MAX_HEADER_LIST_SIZE].new_value == (1 << 20) + 320
    # Go's prefaceTimeout, firstSettingsTimeout and goAwayTimeout (the tests shorten them)
    assert (http2server.Options().preface_timeout, http2server.Options().first_settings_timeout) == (10.0, 2.0)
    assert http2server.Options().go_away_timeout == 1.0


def test_a_client_offering_only_http_1_1_gets_it_on_the_same_port(serve, tls_cert):
    h = serve(text(b"one"))
    ctx = ssl.create_default_context(cafile=tls_cert[0])
    ctx.set_alpn_protocols(["http/1.1"])
    conn = http.client.HTTPSConnection("127.0.0.1", h.port, context=ctx, timeout=WAIT)
    conn.request("GET", "/")
    r = conn.getresponse()
    assert (r.status, r.version, r.read()) == (200, 11, b"one")
    conn.close()


# -- ends of streams: resets, panics, a client that leaves ----------------------------------
def test_a_client_reset_cancels_the_request_context(serve):
    cancelled, started = threading.Event(), threading.Event()

    def app(environ, start_response):
        started.set()
        ctx = reqctx.context_from(environ)
        if rt.select(ctx.done(), timeout=WAIT) is ctx.done():
            cancelled.set()
        start_response("200 OK", [])
        return [b"late"]

    c = serve(app).client()
    sid = c.request("/slow")
    assert started.wait(WAIT)
    c.reset(sid)
    assert cancelled.wait(WAIT)


def test_a_dropped_connection_cancels_every_request_on_it(serve):
    cancelled, started = [], threading.Semaphore(0)
    lock = threading.Condition()

    def app(environ, start_response):
        started.release()
        ctx = reqctx.context_from(environ)
        if rt.select(ctx.done(), timeout=WAIT) is ctx.done():
            with lock:
                cancelled.append(environ["PATH_INFO"])
                lock.notify_all()
        start_response("200 OK", [])
        return []

    h = serve(app)
    c = h.client()
    c.request("/a")
    c.request("/b")
    assert started.acquire(timeout=WAIT) and started.acquire(timeout=WAIT), (c.events, h.logs)
    c.close()
    with lock:
        assert lock.wait_for(lambda: len(cancelled) == 2, WAIT)
    assert sorted(cancelled) == ["/a", "/b"]


def test_a_raising_handler_resets_its_stream_and_the_connection_serves_on(serve):
    def app(environ, start_response):
        if environ["PATH_INFO"] == "/boom":
            raise RuntimeError("kaboom")
        start_response("200 OK", [])
        return [b"fine"]

    h = serve(app)
    c = h.client()
    with pytest.raises(StreamWasReset) as err:
        c.response(c.request("/boom"))
    assert err.value.code == h2.errors.ErrorCodes.INTERNAL_ERROR
    assert c.response(c.request("/ok"))[2] == b"fine"
    assert any(line.startswith("http2: panic serving 127.0.0.1:") and "kaboom" in line for line in h.logs)


def test_err_abort_handler_resets_the_stream_without_a_log_line(serve):
    def app(environ, start_response):
        start_response("200 OK", [])
        yield b"part of it"
        raise hs.ERR_ABORT_HANDLER

    h = serve(app)
    c = h.client()
    with pytest.raises(StreamWasReset) as err:
        c.response(c.request("/abort"))
    assert err.value.code == h2.errors.ErrorCodes.INTERNAL_ERROR
    assert h.logs == []


def test_an_answer_before_the_body_ended_resets_the_stream_with_no_error(serve):
    c = serve(text(b"early", status="413 Request Entity Too Large")).client()
    sid = c.request("/upload", method="POST", body=b"part", end=False)
    status, _, body = c.response(sid)
    assert (status, body) == (413, b"early")
    c.wait_for(lambda: c.of(h2.events.StreamReset, sid), "RST_STREAM")
    assert c.of(h2.events.StreamReset, sid)[0].error_code == NO_ERROR


def one_stream_too_many(serve):
    """A server that takes one stream at a time, one stream in its handler, and a second one the
    server refused (the client ignores the limit); (harness, client, gate, first, extra)."""
    gate = Gate()
    h = serve(gate, max_concurrent_streams=1)
    c = h.client()
    c.ignore_stream_limit()
    first = c.request("/slow")
    assert gate.started.wait(WAIT)
    extra = c.request("/one-too-many")
    c.wait_for(lambda: c.of(h2.events.StreamReset, extra), "the extra stream's reset")
    return h, c, gate, first, extra


def test_a_stream_over_the_limit_is_reset_alone_and_the_connection_serves_on(serve):
    _, c, gate, first, extra = one_stream_too_many(serve)
    assert c.of(h2.events.StreamReset, extra)[0].error_code == h2.errors.ErrorCodes.PROTOCOL_ERROR
    gate.open.set()
    assert c.response(first)[2] == b"finished"
    assert not c.of(h2.events.ConnectionTerminated) and gate.calls == 1
    assert c.response(c.request("/next"))[0] == 200  # the connection goes on (HPACK in step)


# -- GOAWAY ------------------------------------------------------------------------------------
def test_shutdown_sends_goaway_lets_the_stream_in_flight_finish_and_drops_a_new_one(serve):
    gate, h, c, first = held_stream(serve)
    returned, result = h.shutdown_in_background()
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (NO_ERROR, first)
    late = c.request_after_goaway("/late")  # newer than the GOAWAY's last id: never answered
    assert not returned.is_set()  # the stream in flight holds Shutdown
    gate.open.set()
    assert c.response(first) == (200, c.response(first)[1], b"finished")
    c.wait_closed()  # go_away_timeout after its last stream ended
    assert returned.wait(WAIT) and result["err"] is None
    assert gate.calls == 1 and not c.of(h2.events.ResponseReceived, late)


def test_shutdown_with_a_quiet_connection_closes_it_after_the_goaway(serve):
    h = serve(text(b"ok"))
    c = h.client()
    assert c.response(c.request("/"))[0] == 200
    returned, result = h.shutdown_in_background()
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (NO_ERROR, 1)
    c.wait_closed()
    assert returned.wait(WAIT) and result["err"] is None


def test_connection_close_from_a_handler_becomes_a_graceful_goaway(serve):
    gate = Gate()

    def app(environ, start_response):
        if environ["PATH_INFO"] == "/slow":
            return gate(environ, start_response)
        start_response("429 Too Many Requests", [("Retry-After", "1"), ("Connection", "close")])
        return [b"retry"]

    c = serve(app).client()
    slow = c.request("/slow")
    assert gate.started.wait(WAIT)
    status, headers, body = c.response(c.request("/refused"))
    assert (status, headers["retry-after"], "connection" in headers) == (429, "1", False)
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (NO_ERROR, 3)
    gate.open.set()
    assert c.response(slow)[0] == 200  # the stream in flight was not cut
    c.wait_closed()


def test_an_idle_connection_gets_a_goaway(serve):
    # idle from its start: no stream ever opened (a request racing a 50 ms timer would make the
    # test depend on the machine's load), so the GOAWAY's last stream is 0
    h = serve(text(b"ok"), idle_timeout=0.05)
    c = h.client()
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (NO_ERROR, 0)
    c.wait_closed()


def test_a_goaway_from_the_client_is_answered_with_ours(serve):
    gate = Gate()
    c = serve(gate).client()
    sid = c.request("/slow")
    assert gate.started.wait(WAIT)
    c.send_goaway()
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (NO_ERROR, sid)
    gate.open.set()
    c.wait_closed()


# -- Go's serve goroutine: a shutdown message goes before the next frame ----------------------
def test_a_shutdown_that_comes_between_two_frames_of_one_read_is_answered_before_the_second(serve, monkeypatch):
    # Go's serve loop takes startGracefulShutdown's message between two frames: the GOAWAY's
    # last id is the stream read before it, and the streams read after it are never served.
    # Here the hook runs while the read loop holds the connection for a read of three HEADERS
    # (one TLS record): it must neither wait for that read to be processed, nor let it start
    # the two streams behind the message
    gate = Gate()
    h = serve(gate)
    schedule = http2server.ServerConn.schedule_handler
    returned = threading.Event()

    def schedule_then_shutdown(sc, st):
        schedule(sc, st)
        if st.id == 1:
            rt.go(lambda: (h.h2srv.graceful_shutdown(), returned.set()), name="test-hook")
            assert returned.wait(WAIT), "the hook waited for the read in progress"

    monkeypatch.setattr(http2server.ServerConn, "schedule_handler", schedule_then_shutdown)
    c = h.client()
    first, *later = c.requests(["/first", "/second", "/third"])
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (NO_ERROR, first)
    assert gate.started.wait(WAIT)
    gate.open.set()
    assert c.response(first)[2] == b"finished"
    c.wait_closed()
    assert gate.calls == 1 and not any(c.of(h2.events.ResponseReceived, sid) for sid in later)


def test_a_connection_that_finds_its_server_stopped_listening_sends_its_goaway_before_the_next_stream(serve):
    # issue 49: the on-shutdown hook that posts the GOAWAY message may wait for the GIL behind
    # the busy streams; a turn of the connection that finds its server shutting down takes the
    # message itself, so the next stream it reads is one past the GOAWAY's last id
    gate, h, c, first = held_stream(serve)
    h.srv.stop_listening()  # Shutdown's first step alone: no on-shutdown hook has run
    late = c.request("/late")
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (NO_ERROR, first)
    gate.open.set()
    assert c.response(first)[2] == b"finished"
    c.wait_closed()  # go_away_timeout after its last stream ended: nothing more will come
    assert gate.calls == 1 and not c.of(h2.events.ResponseReceived, late)


# -- flow control -----------------------------------------------------------------------------------
def test_a_post_answered_without_reading_its_body_leaves_the_connection_window_where_it_was(serve):
    c = serve(text(b"no", status="401 Unauthorized")).client()
    c.ping()  # the server's SETTINGS and its connection WINDOW_UPDATE are in
    before = c.conn.outbound_flow_control_window
    sid = c.request("/upload", method="POST", body=b"z" * (16 << 10))  # never read: a 401 first
    assert c.response(sid)[0] == 401
    c.ping()  # whatever the server sent for it has arrived
    assert c.conn.outbound_flow_control_window == before


def test_data_that_comes_after_the_stream_was_answered_gives_the_connection_window_back(serve):
    # Go's processData for a closed stream: the connection's window at once (h2's own rule
    # would wait for half of it: 12.8 MB)
    c = serve(text(b"too big", status="413 Request Entity Too Large")).client()
    sid = c.request("/upload", method="POST", body=b"part", end=False)
    assert c.response(sid)[0] == 413
    c.wait_for(lambda: c.of(h2.events.StreamReset, sid), "RST_STREAM NO_ERROR")
    c.ping()
    updates = len(c.of(h2.events.WindowUpdated))
    late = 16 << 10  # DATA the client had sent before it read the reset
    c.send_raw(late.to_bytes(3, "big") + b"\x00\x00" + sid.to_bytes(4, "big") + b"d" * late)
    c.ping()
    given = [e.delta for e in c.of(h2.events.WindowUpdated)[updates:] if e.stream_id == 0]
    assert sum(given) == late + len(b"part")  # with the 4 unread bytes, owed since the close (under 4 KiB)


def test_a_body_read_gives_its_window_back_in_go_steps(serve):
    # Go's inflow: a WINDOW_UPDATE once 4 KiB are owed, not h2's half of the window
    def app(environ, start_response):
        environ["wsgi.input"].read()
        start_response("200 OK", [])
        return [b"read"]

    c = serve(app).client()
    c.ping()
    before = c.conn.outbound_flow_control_window
    sid = c.request("/upload", method="POST", body=b"z" * (8 << 10))
    assert c.response(sid)[2] == b"read"
    c.ping()
    assert c.conn.outbound_flow_control_window == before


# -- GOAWAY -------------------------------------------------------------------------------------------
def test_the_goaway_counts_a_stream_refused_over_the_limit(serve):
    # Go's processHeaders notes the stream id before it checks the limit (maxClientStreamID)
    h, c, gate, first, extra = one_stream_too_many(serve)
    h.h2srv.graceful_shutdown()
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (NO_ERROR, extra)
    gate.open.set()
    assert c.response(first)[2] == b"finished"


def test_a_goaway_with_an_error_from_the_client_lets_the_stream_in_flight_finish(serve):
    gate, h, c, sid = held_stream(serve)
    c.send_goaway(h2.errors.ErrorCodes.PROTOCOL_ERROR)
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (NO_ERROR, sid)
    gate.open.set()
    assert c.response(sid)[2] == b"finished"
    c.wait_closed()
    assert h.logs == ["http2: received GOAWAY &{FrameHeader:[FrameHeader GOAWAY len=8] LastStreamID:0 "
                      "ErrCode:PROTOCOL_ERROR debugData:[]}, starting graceful shutdown"]


def test_a_connection_error_sends_goaway_and_closes_go_away_timeout_later(serve):
    # Go lingers after the GOAWAY, so the client reads it before a reset could destroy it
    gate, h, c, sid = held_stream(serve, go_away_timeout=0.5)
    sent = rt.now()
    c.send_raw(b"\x00\x00\x08\x06\x00\x00\x00\x00\x01" + b"p" * 8)  # a PING on stream 1: a connection error
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (h2.errors.ErrorCodes.PROTOCOL_ERROR, sid)
    c.wait_closed()
    assert rt.now() - sent >= 0.5  # a lower bound: a busy machine only makes it later
    gate.open.set()
    assert not c.of(h2.events.ResponseReceived, sid)  # nothing more is written after an error GOAWAY
    assert any(line.startswith("http2: server connection error from 127.0.0.1:") and
               line.endswith(": connection error: PROTOCOL_ERROR") for line in h.logs), h.logs


# -- timeouts -----------------------------------------------------------------------------------------
def tls_h2(h) -> tuple:
    """A TLS connection that chose h2 and has sent nothing yet: (socket, TLS object, out buffer)."""
    ctx = ssl.create_default_context(cafile=h.tls_cert[0])
    ctx.set_alpn_protocols(["h2"])
    raw = socket.create_connection(("127.0.0.1", h.port), timeout=WAIT)
    tls, _, outgoing = handshake(raw, ctx)
    assert tls.selected_alpn_protocol() == "h2"
    return raw, tls, outgoing


def read_to_eof(raw) -> None:
    while raw.recv(65536):
        pass


def test_a_client_that_never_sends_the_preface_is_closed_quietly(serve):
    h = serve(text(b"ok"), preface_timeout=0.05)
    raw, _, _ = tls_h2(h)
    read_to_eof(raw)  # Go's prefaceTimeout: no GOAWAY, no log line ("boring")
    raw.close()
    assert h.logs == []


def test_a_client_that_sends_no_frame_after_its_preface_is_closed_and_logged(serve):
    h = serve(text(b"ok"), first_settings_timeout=0.05)
    raw, tls, outgoing = tls_h2(h)
    tls.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    raw.sendall(outgoing.read())
    read_to_eof(raw)
    raw.close()
    assert len(h.logs) == 1 and h.logs[0].startswith("timeout waiting for SETTINGS frames from 127.0.0.1:")


def test_a_bogus_greeting_is_logged(serve):
    h = serve(text(b"ok"))
    raw, tls, outgoing = tls_h2(h)
    tls.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    raw.sendall(outgoing.read())
    read_to_eof(raw)
    raw.close()
    assert len(h.logs) == 1
    assert h.logs[0].endswith(r': bogus greeting "GET / HTTP/1.1\r\nHost: x\r"')  # Go reads 24 bytes
    assert h.logs[0].startswith("http2: server: error reading preface from client 127.0.0.1:")


# -- write failures ---------------------------------------------------------------------------------
def test_a_write_that_fails_because_the_client_left_is_not_a_panic(serve):
    wrote, left, finished = threading.Event(), threading.Event(), threading.Event()

    class Watch:
        def __iter__(self):
            yield b"first"
            wrote.set()
            assert left.wait(WAIT)
            while True:  # the next write finds the connection gone
                yield b"more"

        def close(self):
            finished.set()

    def app(environ, start_response):
        start_response("200 OK", [])
        return Watch()

    h = serve(app)
    c = h.client()
    c.request("/watch")
    assert wrote.wait(WAIT)
    c.close()
    h.wait_closed(1)  # the server saw it go
    left.set()
    assert finished.wait(WAIT)
    assert h.logs == []


def test_a_first_frame_that_is_not_settings_is_a_connection_error(serve):
    # Go's processFrame: "first_settings", a ConnectionError(PROTOCOL_ERROR)
    h = serve(text(b"ok"))
    # a PING first; the server's frames until it closes, goAwayTimeout after its GOAWAY
    frames = raw_frames(h.port, h.tls_cert[0], b"\x00\x00\x08\x06\x00\x00\x00\x00\x00" + b"p" * 8)
    goaways = [f for f in frames if isinstance(f, GoAwayFrame)]
    assert [(f.error_code, f.last_stream_id) for f in goaways] == [(h2.errors.ErrorCodes.PROTOCOL_ERROR, 0)]
    assert len(h.logs) == 1 and h.logs[0].endswith(": connection error: PROTOCOL_ERROR"), h.logs

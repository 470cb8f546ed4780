"""Go's decisions where the h2 library decides otherwise, made first by the port
(genericserver.net.http.internal.http2.processframe): which frames are connection errors and what their GOAWAY
names (Go's ``processFrameFromReader``, ``processFrame``), which are the stream's alone, the
REFUSED_STREAM before our SETTINGS are acknowledged (``processHeaders``), a body against its
content-length (``processData``, ``endStream``), and ``scheduleHandler``'s handler limit and
early-reset guard."""

from __future__ import annotations

import threading

import h2.errors
import h2.events
import hpack
from hyperframe.frame import (DataFrame, GoAwayFrame, HeadersFrame, PriorityFrame, RstStreamFrame,
                              SettingsFrame, WindowUpdateFrame)

from genericserver.net.http.internal.http2 import server as http2server
import h2client
from test_http2server import WAIT, Gate, held_stream, serve, text  # noqa: F401 - serve is the fixture

E = h2.errors.ErrorCodes


def goaway_of(c):
    ga = c.goaway()
    return ga.error_code, ga.last_stream_id


# -- connection errors, and the stream their GOAWAY names ------------------------------------------
def test_data_on_a_stream_not_yet_opened_names_that_stream_in_the_goaway(serve):
    # Go raises maxClientStreamID to the frame's stream (h2 named the highest stream it opened: 1)
    h = serve(text(b"ok"))
    c = h.client()
    assert c.response(c.request("/"))[0] == 200
    c.send_raw(DataFrame(5, b"x").serialize())
    assert goaway_of(c) == (E.PROTOCOL_ERROR, 5)
    assert any(line.endswith(": connection error: PROTOCOL_ERROR") for line in h.logs), h.logs


def test_headers_on_an_even_stream_names_it_in_the_goaway(serve):
    h = serve(text(b"ok"))
    c = h.client()
    assert c.response(c.request("/"))[0] == 200
    block = c.conn.encoder.encode([(":method", "GET"), (":path", "/"), (":scheme", "https"), (":authority", "x")])
    c.send_raw(HeadersFrame(2, block, flags=["END_HEADERS", "END_STREAM"]).serialize())
    assert goaway_of(c) == (E.PROTOCOL_ERROR, 2)


def test_a_reset_of_a_stream_not_yet_opened_is_a_connection_error(serve):
    c = serve(text(b"ok")).client()
    c.send_raw(RstStreamFrame(7).serialize())  # h2 let it pass
    assert goaway_of(c) == (E.PROTOCOL_ERROR, 7)


def test_a_settings_ack_for_no_settings_of_ours_is_a_connection_error(serve):
    c = serve(text(b"ok")).client()
    assert c.response(c.request("/"))[0] == 200  # our SETTINGS were acknowledged by then
    c.send_raw(SettingsFrame(0, flags=["ACK"]).serialize())  # Go's "ack_mystery"; h2 let it pass
    assert goaway_of(c) == (E.PROTOCOL_ERROR, 1)


def test_a_frame_over_the_size_limit_keeps_the_last_stream_read(serve):
    # Go's framer refuses it before the frame is read: FRAME_SIZE_ERROR, the last stream id unraised
    c = serve(text(b"ok"), max_read_frame_size=16384).client()
    assert c.response(c.request("/"))[0] == 200
    c.send_raw(DataFrame(9, b"x" * 16385).serialize())
    assert goaway_of(c) == (E.FRAME_SIZE_ERROR, 1)


# -- errors of one stream: RST_STREAM, and the connection serves on -------------------------------
def reset_code(c, sid):
    c.wait_for(lambda: c.of(h2.events.StreamReset, sid), f"stream {sid}'s reset")
    return c.of(h2.events.StreamReset, sid)[0].error_code


def serves_on(c):
    """A next stream is answered on the same connection, and no GOAWAY came."""
    c.response(c.request("/next"))
    assert not c.of(h2.events.ConnectionTerminated)


def test_a_window_update_of_0_on_a_stream_resets_that_stream(serve):
    # Go's framer: a stream error; h2 ended the connection
    gate, h, c, sid = held_stream(serve)
    c.send_raw(WindowUpdateFrame(sid, 0).serialize())
    assert reset_code(c, sid) == E.PROTOCOL_ERROR
    gate.open.set()
    serves_on(c)


def test_a_stream_that_depends_on_itself_is_reset(serve):
    gate, h, c, sid = held_stream(serve)
    c.send_raw(PriorityFrame(sid, depends_on=sid).serialize())  # checkPriority
    assert reset_code(c, sid) == E.PROTOCOL_ERROR
    gate.open.set()
    serves_on(c)


def test_trailers_that_do_not_end_the_stream_reset_it(serve):
    reads = []

    def app(environ, start_response):
        try:
            environ["wsgi.input"].read()
        except OSError as err:
            reads.append(str(err))
        start_response("200 OK", [])
        return [b"ok"]

    c = serve(app).client()
    sid = c.request("/upload", method="POST", body=b"part", end=False)
    block = c.conn.encoder.encode([("x-trailer", "1")])
    c.send_raw(HeadersFrame(sid, block, flags=["END_HEADERS"]).serialize())  # "trailers_not_ended"
    assert reset_code(c, sid) == E.PROTOCOL_ERROR
    serves_on(c)


def test_a_body_longer_than_its_content_length_resets_its_stream_and_the_handler_reads_why(serve):
    reads, read = [], threading.Event()

    def app(environ, start_response):
        try:
            environ["wsgi.input"].read()
        except OSError as err:
            reads.append(str(err))
        read.set()
        start_response("200 OK", [])
        return [b"ok"]

    c = serve(app).client()
    sid = c.request("/upload", method="POST", headers=(("content-length", "2"),), end=False)
    c.send_raw(DataFrame(sid, b"four").serialize())  # h2 ended the connection
    assert reset_code(c, sid) == E.PROTOCOL_ERROR
    assert read.wait(WAIT) and reads == ["sender tried to send more than declared Content-Length of 2 bytes"]
    serves_on(c)


def test_a_body_shorter_than_its_content_length_is_the_handlers_error_alone(serve):
    reads = []

    def app(environ, start_response):
        try:
            while environ["wsgi.input"].read(1024):  # the bytes that came, then the error
                pass
        except OSError as err:
            reads.append(str(err))
        start_response("400 Bad Request", [])
        return [b"short"]

    c = serve(app).client()
    sid = c.request("/upload", method="POST", headers=(("content-length", "5"),), end=False)
    c.send_raw(DataFrame(sid, b"xy", flags=["END_STREAM"]).serialize())
    assert c.response(sid)[0] == 400
    assert reads == ["request declared a Content-Length of 5 but only wrote 2 bytes"]
    serves_on(c)


# -- a stream over the limit before our SETTINGS are acknowledged ---------------------------------
def raw_frames(h, frames, until) -> list:
    """A client that never acknowledges our SETTINGS: its preface, its SETTINGS and ``frames``;
    the server's frames until ``until(frames)`` holds."""
    return h2client.raw_frames(h.port, h.tls_cert[0], SettingsFrame(0).serialize() + b"".join(f.serialize() for f in frames),
                               until)


def test_a_stream_over_the_limit_before_our_settings_are_acknowledged_is_refused(serve):
    # Go's processHeaders: the client may not know the limit yet (REFUSED_STREAM, retry it);
    # once it acknowledged our SETTINGS, PROTOCOL_ERROR (test_http2server)
    gate = Gate()
    h = serve(gate, max_concurrent_streams=1)
    enc = hpack.Encoder()
    heads = [HeadersFrame(sid, enc.encode([(":method", "GET"), (":path", f"/{sid}"), (":scheme", "https"),
                                           (":authority", "x")]), flags=["END_HEADERS", "END_STREAM"]) for sid in (1, 3)]
    got = raw_frames(h, heads, lambda fs: any(isinstance(f, RstStreamFrame) for f in fs))
    gate.open.set()
    assert [(f.stream_id, f.error_code) for f in got if isinstance(f, RstStreamFrame)] == [(3, E.REFUSED_STREAM)]


# -- scheduleHandler ---------------------------------------------------------------------------------
def test_a_handler_still_running_for_a_reset_stream_holds_its_place(serve):
    # Go's scheduleHandler: at most as many handlers as streams advertised; the reset stream's
    # place in the limit is free, its handler's is not, so the next stream's handler waits
    gate, h, c, first = held_stream(serve, max_concurrent_streams=1)
    c.reset(first)
    second = c.request("/second")
    c.ping()  # the server has read the new stream
    assert gate.calls == 1  # (it ran at once before: two handlers for one stream allowed)
    gate.open.set()
    assert c.response(second)[2] == b"finished"
    assert gate.calls == 2


def test_streams_reset_before_their_handler_started_past_four_times_the_limit_end_the_connection(serve):
    # the rapid-reset attack (CVE-2023-44487): Go's too_many_early_resets, ENHANCE_YOUR_CALM
    gate, h, c, first = held_stream(serve, max_concurrent_streams=1)
    c.reset(first)
    for _ in range(5):  # each waits for the one running handler's place, and is reset meanwhile
        c.reset(c.request("/queued"))
    last = c.request("/one-more")
    assert goaway_of(c) == (E.ENHANCE_YOUR_CALM, last)
    gate.open.set()
    assert gate.calls == 1  # none of the reset streams' handlers ran


# -- a request's header fields, judged by Go's rules (readMetaFrame, newWriterAndRequest) ----------
def get(enc, sid, *fields, path="/"):
    base = [(":method", "GET"), (":path", path), (":scheme", "https"), (":authority", "x")]
    return HeadersFrame(sid, enc.encode([f for f in base if f[0] not in dict(fields)] + [f for f in fields if f[1] is not None]),
                        flags=["END_HEADERS", "END_STREAM"])


def answered(frames, sid):
    return any(getattr(f, "stream_id", None) == sid and "END_STREAM" in f.flags for f in frames if isinstance(f, (HeadersFrame, DataFrame)))


def test_a_malformed_field_resets_its_stream_alone(serve):
    # Go's framer: a stream error (h2 ended the connection); the stream after it is answered
    h = serve(text(b"ok"))
    enc = hpack.Encoder()
    for bad in ((("X-Upper", "1"),), (("x-ctl", "a\x01b"),), ((":path", None),), ((":scheme", "ftp"),),
                ((":status", "200"),)):
        got = raw_frames(h, [get(enc, 1, *bad), get(enc, 3)], lambda fs: answered(fs, 3))
        assert [(f.stream_id, f.error_code) for f in got if isinstance(f, RstStreamFrame)] == [(1, E.PROTOCOL_ERROR)], bad
        assert answered(got, 3) and not any(isinstance(f, GoAwayFrame) for f in got), bad
        enc = hpack.Encoder()


def test_a_connection_specific_field_is_answered_400(serve):
    # Go's checkValidHTTP2RequestHeaders and new400Handler (h2 ended the connection)
    h = serve(text(b"ok"))
    for fields, why in (((("connection", "keep-alive"),), 'request header "Connection" is not valid in HTTP/2'),
                        ((("te", "gzip"),), 'request header "TE" may only be "trailers" in HTTP/2')):
        enc, dec = hpack.Encoder(), hpack.Decoder()
        got = raw_frames(h, [get(enc, 1, *fields)], lambda fs: answered(fs, 1))
        head = dict(dec.decode(next(f for f in got if isinstance(f, HeadersFrame)).data, raw=False))
        body = b"".join(f.data for f in got if isinstance(f, DataFrame) and f.stream_id == 1)
        assert (head[":status"], head["content-type"], body) == ("400", "text/plain; charset=utf-8", why.encode() + b"\n")


def test_a_stream_with_a_malformed_field_is_not_the_last_stream_read(serve):
    # the framer refused it before processHeaders: Go's GOAWAY names the stream before it
    h = serve(text(b"ok"))
    enc = hpack.Encoder()
    shut = []

    def until(frames):
        if not shut and any(isinstance(f, RstStreamFrame) for f in frames):
            shut.append(True)
            h.h2srv.graceful_shutdown()
        return any(isinstance(f, GoAwayFrame) for f in frames)

    got = raw_frames(h, [get(enc, 1), get(enc, 3, ("X-Upper", "1"))], until)
    assert [(f.error_code, f.last_stream_id) for f in got if isinstance(f, GoAwayFrame)] == [(E.NO_ERROR, 1)]


def test_a_header_block_of_a_stream_dropped_after_the_goaway_still_keeps_hpack_in_step(serve, monkeypatch):
    # Go's framer decodes every header block, processFrame then drops the newer stream; the
    # in-flight stream's trailers may index what that block added to the table
    reads, started = [], threading.Event()

    def app(environ, start_response):
        started.set()
        reads.append(environ["wsgi.input"].read())
        start_response("200 OK", [])
        return [b"done"]

    conns = []
    init = http2server.ServerConn.__init__

    def recorded(self, *args):
        init(self, *args)
        conns.append(self)

    monkeypatch.setattr(http2server.ServerConn, "__init__", recorded)
    h = serve(app)
    c = h.client()
    sid = c.request("/upload", method="POST", body=b"part", end=False)
    assert started.wait(WAIT)
    h.h2srv.graceful_shutdown()
    c.goaway()
    with c.cond:
        late = c.conn.encoder.encode([(":method", "GET"), (":path", "/late"), (":scheme", "https"),
                                      (":authority", "127.0.0.1"), ("x-shared", "in the table")])
        trailers = c.conn.encoder.encode([("x-shared", "in the table")])  # an index into the table
    c.send_raw(HeadersFrame(sid + 2, late, flags=["END_HEADERS", "END_STREAM"]).serialize())
    c.send_raw(HeadersFrame(sid, trailers, flags=["END_HEADERS", "END_STREAM"]).serialize())
    assert c.response(sid)[2] == b"done" and reads == [b"part"]
    assert [(g.error_code, g.last_stream_id) for g in c.of(h2.events.ConnectionTerminated)] == [(E.NO_ERROR, sid)]
    # the server's table holds what the client's does (it missed the dropped block's entries)
    server_table = [(f.name, f.value) for f in reversed(conns[0].h2.meta_decoder.dyn_tab.table.ents)]  # newest first
    assert server_table == list(c.conn.encoder.header_table.dynamic_entries)

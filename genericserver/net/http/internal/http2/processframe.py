"""Port of Go's net/http/internal/http2 package (Go 1.27): server.go's reading side (``processFrameFromReader``, ``processFrame``, ``processHeaders``, ``processData``, ``scheduleHandler``, ``handlerDone``), split from server.py to keep each readable.

The client's bytes are cut into frames here, and each frame is judged by Go's rules before the
``h2`` library sees it, where ``h2`` would decide otherwise (the port decides first):

* **which errors end the connection.** A frame Go's ``processFrame`` refuses is a connection
  error: a first frame that is not SETTINGS, a SETTINGS ACK for no SETTINGS of ours
  (``ack_mystery``; h2 ignores it), more than 100 settings or a setting twice, PUSH_PROMISE,
  HEADERS on an even stream or on one lower than a stream already opened, DATA, RST_STREAM
  (h2 ignores it) or WINDOW_UPDATE on a stream not yet opened (``stream_idle``). Its GOAWAY
  names the frame's stream as the last one if it is higher (``maxClientStreamID``); one the
  framer refuses (a frame over the size limit: FRAME_SIZE_ERROR, and whatever h2 rejects
  besides) keeps the last stream read. Both GOAWAYs are written here, not h2's.
* **which are the stream's alone** (RST_STREAM, the connection serves on), where h2 ends the
  connection: a malformed header field (Go's ``readMetaFrame``: an upper-case or non-token name,
  a control byte in a value, a pseudo-field after a regular one, twice, or unknown; such a
  stream never opens, so it is not the GOAWAY's last stream), a request without ``:method``,
  ``:path`` or an http(s) ``:scheme`` (``newWriterAndRequest``), a WINDOW_UPDATE of 0 on a stream, a stream that depends on itself (PRIORITY, or
  HEADERS with a priority), trailers without END_STREAM (h2conn.py reports the last two), and a
  body longer than its ``content-length`` (PROTOCOL_ERROR; its handler reads Go's error); one
  shorter ends the handler's body with Go's error and nothing more (h2 ended the connection).
* **a connection-specific field** (``Connection``, ``Keep-Alive``, ``Proxy-Connection``,
  ``Transfer-Encoding``, ``Upgrade``, a ``TE`` but "trailers"): answered 400 with Go's text
  (``checkValidHTTP2RequestHeaders``), where h2 ended the connection.
* **a stream over the advertised limit**: REFUSED_STREAM while our SETTINGS are not yet
  acknowledged (the client may not know the limit yet), PROTOCOL_ERROR after.
* **the handlers** (``scheduleHandler``): at most as many running as the streams advertised;
  a stream the client reset while its handler runs frees its stream but not the handler's
  place, so the next stream's handler waits for one (``unstartedHandlers``), and is skipped if
  reset meanwhile. More than four times the limit waiting is the rapid-reset attack (CVE-2023-44487):
  a connection error, ENHANCE_YOUR_CALM.
"""

from __future__ import annotations

import struct
from collections import deque
from typing import Any, Callable

import h2.errors
import h2.events
import h2.exceptions

from genericserver import runtime as rt
from genericserver.net.http import request as httprequest
from genericserver.net.http.internal.http2.errors import err_code_string
from genericserver.net.http.internal.http2.h2conn import DataOnClosedStream, RequestRefused, StreamRejected
from genericserver.net.textproto import reader as textproto
from genericserver.x.net.http.httpguts import httplex as httpguts

E = h2.errors.ErrorCodes
FRAME_HEADER_LEN = 9
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
FLAG_ACK = FLAG_END_STREAM = 0x1
FLAG_PADDED = 0x8
FLAG_PRIORITY = 0x20
MAX_SETTINGS = 100  # Go's processSettings: more in one frame is suspicious
HANDLER_DONE_MSG = "handlerDoneMsg"  # a handler's goroutine to the serve goroutine: its place is free


class GoConnectionError(Exception):
    """Go's ``ConnectionError``: the connection ends with a GOAWAY of this code."""

    def __init__(self, code: int, with_frame: bool = True):
        super().__init__(err_code_string(code))
        # False for what Go's framer refuses: no frame reaches processFrameFromReader, so the
        # GOAWAY's last stream id is not raised to its stream's
        self.code, self.with_frame = code, with_frame


class StreamError(Exception):
    """Go's ``StreamError``: this stream is reset with this code; the connection serves on."""

    def __init__(self, stream_id: int, code: int):
        super().__init__(f"stream error: stream ID {stream_id}; {err_code_string(code)}")
        self.stream_id, self.code = stream_id, code


CONN_HEADERS = ("Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade")
REQUEST_PSEUDO = (b":method", b":path", b":scheme", b":authority", b":protocol")


def meta_field_error(name: bytes, value: bytes, saw_regular: bool) -> str:
    """Go's ``readMetaFrame``, its judgement of one decoded field: what makes it malformed (a
    stream error), or "". A value without control bytes; a pseudo-field before any regular one;
    a regular name a lower-case token. Go judges in that order and keeps the last it found."""
    invalid = ""
    if not httpguts.valid_header_field_value(value.decode("latin-1")):
        invalid = f"invalid header field value for {name.decode('latin-1')!r}"
    if name.startswith(b":"):
        if saw_regular:
            invalid = "pseudo header field after regular"
    else:
        text = name.decode("latin-1")
        if not httpguts.valid_header_field_name(text) or text != text.lower():  # (a token is ASCII)
            invalid = f"invalid header field name {text!r}"
    return invalid


def check_pseudos(headers: list) -> str:
    """Go's ``checkPseudos`` once the block is read: each pseudo-field a request's, and once."""
    pseudos = [name for name, _ in headers if name.startswith(b":")]
    for i, name in enumerate(pseudos):
        if name not in REQUEST_PSEUDO:  # (":status" too: a response's, in a request)
            return f"invalid pseudo-header {name.decode('latin-1')!r}"
        if name in pseudos[:i]:
            return f"duplicate pseudo-header {name.decode('latin-1')!r}"
    return ""


def check_valid_http2_request_headers(header: dict) -> str:
    """Go's ``checkValidHTTP2RequestHeaders``: a connection-specific field, or a TE other
    than "trailers", is answered 400 with this text ("" if none)."""
    for k in CONN_HEADERS:
        if k in header:
            return f'request header "{k}" is not valid in HTTP/2'
    te = header.get("Te", [])
    if te and (len(te) > 1 or te[0] not in ("trailers", "")):
        return 'request header "TE" may only be "trailers" in HTTP/2'
    return ""


def new_400_handler(text: str) -> Callable:
    """Go's ``new400Handler``: ``http.Error(w, text, 400)``."""
    def app(environ: dict, start_response: Callable) -> list:
        start_response("400 Bad Request", [("Content-Type", "text/plain; charset=utf-8"), ("X-Content-Type-Options", "nosniff")])
        return [text.encode() + b"\n"]
    return app


def handle_header_list_too_long(environ: dict, start_response: Callable) -> list:
    """Go's ``handleHeaderListTooLong``: 431 with Go's little page. Go sets no type and its
    response writer sniffs the page as HTML; the server sniffs nothing, so the type is named."""
    start_response("431 Request Header Fields Too Large", [("Content-Type", "text/html; charset=utf-8")])
    return [b"<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>"]


class FrameSide:
    """``ServerConn``'s methods that read the client's frames (see the module docstring)."""

    # ServerConn's, which these methods use
    h2: Any
    c: Any
    opts: Any
    streams: dict
    inflow: Any
    max_client_stream_id: int
    in_go_away: bool
    go_away_code: int
    h2_broken: bool
    saw_first_settings: bool
    unacked_settings: int
    cur_handlers: int
    unstarted_handlers: deque
    read_buf: bytearray
    settings_timer: Any
    idle_timer: Any
    logf: Callable[..., None]
    flush: Callable[[], None]
    go_away: Callable[[int], None]
    run_serve_msgs: Callable[[], None]
    reset_stream: Callable[[int, int], None]
    send_window_update: Callable[[Any, int], None]
    notify_window_waiters: Callable[[], None]
    run_handler: Callable[[Any], None]
    new_stream: Callable[[int, dict], Any]
    process_reset_stream: Callable[[Any], None]
    process_window_update: Callable[[Any], None]
    process_settings: Callable[[Any], None]
    process_go_away: Callable[[Any], None]

    def process_frames_from_reader(self, data: bytes) -> None:
        """Go's ``processFrameFromReader``, frame by frame, for what one read brought (the caller
        holds mu). A frame not yet whole waits for the next read."""
        if self.h2_broken:
            return  # after a connection error: drained unparsed, as Go drops every frame then
        self.read_buf += data
        while not self.h2_broken:
            if len(self.read_buf) < FRAME_HEADER_LEN:
                break
            length = int.from_bytes(self.read_buf[:3], "big")
            if length > self.opts.max_read_frame_size:  # Go's ErrFrameTooLarge, before the frame is read
                self.connection_error(GoConnectionError(E.FRAME_SIZE_ERROR, with_frame=False), 0)
                break
            if len(self.read_buf) < FRAME_HEADER_LEN + length:
                break
            raw = bytes(self.read_buf[:FRAME_HEADER_LEN + length])
            del self.read_buf[:FRAME_HEADER_LEN + length]
            self.run_serve_msgs()  # a message sent meanwhile goes first, as Go's select takes it between two frames
            self.process_one_frame(raw)
            if self.settings_timer is not None:
                self.settings_timer.stop()
                self.settings_timer = None
        self.flush()

    def process_one_frame(self, raw: bytes) -> None:
        ftype, flags, sid = raw[3], raw[4], int.from_bytes(raw[5:9], "big") & 0x7FFFFFFF
        try:
            # a frame of a stream newer than the GOAWAY's last id is not judged (Go's processFrame
            # drops it first), but h2 still reads it: a header block keeps HPACK's table in step,
            # and process_frame drops what it makes of it
            if not (self.in_go_away and self.saw_first_settings and sid > self.max_client_stream_id):
                self.check_frame(ftype, flags, sid, memoryview(raw)[FRAME_HEADER_LEN:])
            self.flush()  # so that what h2 queues for this frame alone can be told apart
            try:
                events = self.h2.receive_data(raw)
            except h2.exceptions.ProtocolError as err:
                self.h2.data_to_send()  # h2's own GOAWAY: ours goes out instead
                self.h2_broken = True  # h2 has closed its state machine: later frames are drained unparsed
                raise GoConnectionError(getattr(err, "error_code", None) or E.PROTOCOL_ERROR,
                                        with_frame=getattr(err, "with_frame", False)) from None
            for ev in events:
                self.process_frame(ev)
        except StreamError as err:
            self.reset_stream(err.stream_id, err.code)
        except GoConnectionError as err:
            self.connection_error(err, sid)

    def check_frame(self, ftype: int, flags: int, sid: int, payload: memoryview) -> None:
        """Go's rules for a frame, where h2 would decide otherwise; raises Go's error."""
        if not self.saw_first_settings:
            if ftype != SETTINGS:
                raise GoConnectionError(E.PROTOCOL_ERROR)  # "first_settings"
            self.saw_first_settings = True
        idle = sid != 0 and (sid % 2 == 0 or sid > self.max_client_stream_id)  # Go's stateIdle
        if ftype == SETTINGS:
            if flags & FLAG_ACK:
                self.unacked_settings -= 1
                if self.unacked_settings < 0:
                    raise GoConnectionError(E.PROTOCOL_ERROR)  # "ack_mystery"
            elif len(payload) % 6 == 0:
                ids = [payload[i] << 8 | payload[i + 1] for i in range(0, len(payload), 6)]
                if len(ids) > MAX_SETTINGS or len(set(ids)) != len(ids):
                    raise GoConnectionError(E.PROTOCOL_ERROR)  # "settings_big_or_dups"
        elif ftype == PUSH_PROMISE:
            raise GoConnectionError(E.PROTOCOL_ERROR)  # a client cannot push
        elif ftype == HEADERS:
            if sid % 2 != 1:
                raise GoConnectionError(E.PROTOCOL_ERROR)  # "headers_even"
            if sid not in self.streams and sid <= self.max_client_stream_id:
                raise GoConnectionError(E.PROTOCOL_ERROR)  # "stream_went_down"
            self.note_header_fragment(flags, payload, first=True)
        elif ftype == CONTINUATION:
            self.note_header_fragment(flags, payload, first=False)
        elif ftype in (DATA, RST_STREAM, WINDOW_UPDATE) and idle:
            raise GoConnectionError(E.PROTOCOL_ERROR)  # "data_on_idle", "reset_idle_stream", "stream_idle"
        elif ftype == DATA and sid not in self.streams and sid not in self.h2.streams:
            # a stream refused over the limit, closed before h2 opened it: Go's DATA on a closed
            # stream, its window given back and the stream reset
            self.inflow.take(len(payload))
            self.send_window_update(None, len(payload))
            raise StreamError(sid, E.STREAM_CLOSED)
        elif ftype == WINDOW_UPDATE and len(payload) == 4 and struct.unpack(">I", payload)[0] & 0x7FFFFFFF == 0:
            if sid == 0:
                raise GoConnectionError(E.PROTOCOL_ERROR, with_frame=False)
            raise StreamError(sid, E.PROTOCOL_ERROR)  # the framer's: an increment of 0
        elif ftype == PRIORITY and len(payload) == 5 and sid != 0 and struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF == sid:
            raise StreamError(sid, E.PROTOCOL_ERROR)  # checkPriority: a stream cannot depend on itself
        elif ftype == DATA:
            self.check_declared_length(sid, flags, payload)

    def note_header_fragment(self, flags: int, payload: memoryview, first: bool) -> None:
        """The length of a frame's fragment of a header block, for Go's size checks, which are
        made fragment by fragment (h2conn.read_meta_headers; h2 joins the fragments)."""
        n = len(payload)
        if first:
            self.h2.header_fragments = []
            if flags & FLAG_PADDED and payload:
                n -= payload[0] + 1
            if flags & FLAG_PRIORITY:
                n -= 5
        self.h2.header_fragments.append(n)

    def check_declared_length(self, sid: int, flags: int, payload: memoryview) -> None:
        """Go's ``processData``: a body longer than its ``content-length`` is a stream error (its
        window given back, its handler told why)."""
        st = self.streams.get(sid)
        if st is None or st.remote_closed or st.declared_length < 0:
            return
        pad = payload[0] + 1 if flags & FLAG_PADDED and payload else 0
        n = len(payload) - pad
        if st.body_bytes + n > st.declared_length:
            self.inflow.take(len(payload))
            self.send_window_update(None, len(payload))
            st.body.end(EOFError(f"sender tried to send more than declared Content-Length of {st.declared_length} bytes"))
            raise StreamError(sid, E.PROTOCOL_ERROR)  # "send_too_much"

    def connection_error(self, err: GoConnectionError, sid: int) -> None:
        """Go's ``ConnectionError`` in ``processFrameFromReader``: the last stream id raised to
        the frame's, logged, then a GOAWAY with its code; the connection lives ``goAwayTimeout``
        on, every frame dropped."""
        if err.with_frame:
            self.max_client_stream_id = max(self.max_client_stream_id, sid)
        self.logf("http2: server connection error from %s: connection error: %s", self.c.remote_addr, err_code_string(err.code))
        self.go_away(err.code)
        self.h2_broken = True
        self.flush()
        self.notify_window_waiters()  # a handler's write stops: nothing more is written

    def process_frame(self, ev: Any) -> None:
        """Go's ``processFrame``, for one of h2's events."""
        sid = getattr(ev, "stream_id", None) or 0
        if self.in_go_away and (self.go_away_code != E.NO_ERROR or sid > self.max_client_stream_id):
            # a stream newer than the GOAWAY's last id (any frame, after an error GOAWAY):
            # dropped unanswered, its DATA still returning the connection's window (RFC 9113 6.8)
            if isinstance(ev, (h2.events.DataReceived, DataOnClosedStream)):
                self.inflow.take(ev.flow_controlled_length)
                self.send_window_update(None, ev.flow_controlled_length)
            return
        if isinstance(ev, (h2.events.RequestReceived, RequestRefused, StreamRejected)):
            self.process_headers(ev)
        elif isinstance(ev, (h2.events.DataReceived, DataOnClosedStream)):
            self.process_data(ev)
        elif isinstance(ev, h2.events.StreamEnded):
            st = self.streams.get(sid)
            if st is not None:
                st.end_stream()
        elif isinstance(ev, h2.events.StreamReset):
            self.process_reset_stream(ev)
        elif isinstance(ev, h2.events.WindowUpdated):
            self.process_window_update(ev)
        elif isinstance(ev, h2.events.RemoteSettingsChanged):
            self.process_settings(ev)
        elif isinstance(ev, h2.events.ConnectionTerminated):
            self.process_go_away(ev)

    def process_headers(self, ev: Any) -> None:
        """Go's ``processHeaders``: a new stream and its handler, or its refusal."""
        if isinstance(ev, StreamRejected) and (ev.stream_id in self.streams or not ev.opened):
            raise StreamError(ev.stream_id, ev.code)  # trailers without END_STREAM, a malformed field
        self.max_client_stream_id = ev.stream_id  # before the limit: a refused stream counts too
        if self.idle_timer is not None:
            self.idle_timer.stop()
        if isinstance(ev, RequestRefused):
            # over the advertised limit: the client knew it once it acknowledged our SETTINGS
            raise StreamError(ev.stream_id, E.REFUSED_STREAM if self.unacked_settings else E.PROTOCOL_ERROR)
        if isinstance(ev, StreamRejected):
            raise StreamError(ev.stream_id, ev.code)  # (it depends on itself)
        pseudo, header = {}, {}
        for name, value in ev.headers:
            n, v = name.decode("latin-1"), value.decode("latin-1")
            if n.startswith(":"):
                pseudo[n] = v
            else:
                header.setdefault(textproto.canonical_mime_header_key(n), []).append(v)
        method = pseudo.get(":method", "")
        if ":protocol" in pseudo or (method == "CONNECT" and (":path" in pseudo or ":scheme" in pseudo or not pseudo.get(":authority"))) \
                or (method != "CONNECT" and (not method or not pseudo.get(":path") or pseudo.get(":scheme") not in ("http", "https"))):
            # Go's newWriterAndRequest: "bad_connect", "bad_path_method" (extended CONNECT is off)
            raise StreamError(ev.stream_id, E.PROTOCOL_ERROR)
        env = dict(httprequest._connection_environ(self.c))
        path, _, query = pseudo.get(":path", "").partition("?")
        env.update(REQUEST_METHOD=pseudo.get(":method", ""), PATH_INFO=path, QUERY_STRING=query,
                   REQUEST_URI=pseudo.get(":path", ""), RAW_URI=pseudo.get(":path", ""), SERVER_PROTOCOL="HTTP/2.0")
        if pseudo.get(":authority"):
            env["HTTP_HOST"] = pseudo[":authority"]
        for name, values in header.items():
            key = httprequest.wsgi_key(name)
            if key:
                env[key] = ",".join(values)
        st = self.new_stream(ev.stream_id, env)
        bad = check_valid_http2_request_headers(header)
        if getattr(ev, "header_list_truncated", False):  # over MaxHeaderBytes + 320
            st.app = handle_header_list_too_long
        elif bad:
            st.app = new_400_handler(bad)
        lengths = header.get("Content-Length", [])
        st.declared_length = int(lengths[0]) if len(lengths) == 1 and lengths[0].isascii() and lengths[0].isdigit() else -1
        env["wsgi.input"] = st.body
        if ev.stream_ended is not None:
            st.end_stream()
        self.streams[ev.stream_id] = st
        self.schedule_handler(st)

    def schedule_handler(self, st: Any) -> None:
        """Go's ``scheduleHandler``: the handler's goroutine now, if fewer handlers run than the
        streams advertised, or once one is done; too many waiting is a connection error."""
        if self.cur_handlers < self.opts.max_concurrent_streams:
            self.cur_handlers += 1
            rt.go(self.run_handler, st, name=f"http2-stream-{self.c.remote_addr}-{st.id}")
            return
        if len(self.unstarted_handlers) > 4 * self.opts.max_concurrent_streams:
            raise GoConnectionError(E.ENHANCE_YOUR_CALM)  # "too_many_early_resets"
        self.unstarted_handlers.append(st)

    def handler_done(self) -> None:
        """Go's ``handlerDone`` (a handler's message): its place goes to the next stream waiting,
        skipping those reset before their handler started."""
        self.cur_handlers -= 1
        while self.unstarted_handlers:
            st = self.unstarted_handlers[0]
            if st.id in self.streams and self.cur_handlers >= self.opts.max_concurrent_streams:
                break
            self.unstarted_handlers.popleft()
            if st.id in self.streams:  # (one reset before its handler started is skipped)
                self.cur_handlers += 1
                rt.go(self.run_handler, st, name=f"http2-stream-{self.c.remote_addr}-{st.id}")

    def process_data(self, ev: Any) -> None:
        """Go's ``processData``: body bytes for the handler, padding's window back at once."""
        n = ev.flow_controlled_length
        st = self.streams.get(ev.stream_id)
        if st is None or st.remote_closed:  # (h2 sends the RST_STREAM, STREAM_CLOSED)
            self.inflow.take(n)  # the stream is over here: the connection's window comes back
            self.send_window_update(None, n)
            return
        self.inflow.take(n)
        st.inflow.take(n)
        if ev.data:
            st.body_bytes += len(ev.data)
            st.body.feed(ev.data)
        pad = n - len(ev.data)  # refunded now, since no read will
        self.send_window_update(None, pad)
        self.send_window_update(st, pad)


__all__ = ["HANDLER_DONE_MSG", "FrameSide", "GoConnectionError", "StreamError", "check_pseudos", "check_valid_http2_request_headers",
           "meta_field_error"]

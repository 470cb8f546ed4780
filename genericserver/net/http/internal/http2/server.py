"""Port of Go's net/http/internal/http2 package: its server (server.go, Go 1.27; kube-apiserver runs the same one from golang.org/x/net/http2), on the h2 library.

Over TLS, a client that offers ``h2`` in ALPN gets HTTP/2: Go's ``http.Server`` hands the
connection to the http2 server (``serve()``'s ``TLSNextProto`` path), which keeps it marked
*active* for the HTTP/1 server's bookkeeping, so ``Shutdown`` never closes it as idle (Go issue
39776): it ends on its own. The ``h2`` library does the framing, HPACK, flow-control arithmetic
and the stream state machine; the decisions below are Go's:

* **graceful shutdown**: ``http.Server.Shutdown`` runs the on-shutdown hook the http2 server
  registered (``ConfigureServer``), which sends every connection a GOAWAY with NO_ERROR and the
  highest client stream id it took (``startGracefulShutdown``). Streams up to that id run to
  their end; frames of newer streams are dropped without an answer (RFC 9113 6.8). Once no
  stream is open, the connection closes ``goAwayTimeout`` (1 s) later, so the client reads the
  GOAWAY before the FIN. A GOAWAY from the client starts the same.
* a handler's ``Connection: close`` (the retry-after mode's answer, ``--goaway-chance``) is not
  sent - HTTP/2 has no such header - but starts the same graceful GOAWAY.
* ``idle_timeout``: a connection without open streams that long gets a graceful GOAWAY.
* ``max_concurrent_streams`` is advertised in SETTINGS; the request body's window is the
  per-stream upload buffer, given back as the handler reads (Go's ``inflow``).
* a stream reset by the client, or a connection that drops, cancels the request's context; a
  handler that raises resets its stream with INTERNAL_ERROR (Go's ``handlerPanicRST``) after
  logging ``http2: panic serving ADDR: ...`` (not for ``ERR_ABORT_HANDLER``); a response done
  before the client finished its body ends with RST_STREAM NO_ERROR.
* an answer whose chunks are all at hand (a list) goes out when the handler is done, with a
  ``content-length`` if it fits the first 4 KiB (Go's ``handlerChunkWriteSize`` buffer, full
  before the handler returned); each chunk a streaming handler yields is sent at once, as Go's
  ``Flush`` sends it (an empty one sends the header: a watch with nothing to report yet);
  ``date`` is added. The end of the stream goes out after the app's iterable is closed, as Go
  ends it after the handler's deferred calls.

Requests reach the same WSGI chain as HTTP/1 ones, with ``SERVER_PROTOCOL`` ``HTTP/2.0``.

Differences from Go: one lock serialises the connection's state and its writes where Go runs a
serve loop goroutine that owns both; no server push, no priorities.
"""

from __future__ import annotations

import logging
import socket
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Optional

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings
from h2.connection import _decode_headers
from hyperframe.frame import GoAwayFrame, RstStreamFrame

from genericserver import request as reqctx
from genericserver import runtime as rt
from genericserver.context import context as gocontext
from genericserver.net.http import request as httprequest
from genericserver.net.http import response as httpresponse
from genericserver.net.http.server import ERR_ABORT_HANDLER
from genericserver.net.textproto import reader as textproto
from genericserver.wsgi import close_iterable, known_chunks

log = logging.getLogger("genericserver.net.http.internal.http2.server")

GO_AWAY_TIMEOUT = 1.0  # how long a connection lingers after its GOAWAY (Go issue 18701)
HANDLER_CHUNK_WRITE_SIZE = 4 << 10  # the response writer's buffer: what fits gets a content-length
READ_SIZE = 64 << 10
CONN_HEADERS = ("connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade")


@dataclass
class Options:
    """The ``http2.Server`` fields secure_serving.go sets (its defaults where it sets none)."""

    max_concurrent_streams: int = 100
    max_upload_buffer_per_stream: int = 256 << 10
    max_upload_buffer_per_connection: int = (256 << 10) * 100
    max_read_frame_size: int = 256 << 10
    idle_timeout: Optional[float] = 90.0
    # how long a connection lingers after its GOAWAY; a package var in Go that its tests shorten
    go_away_timeout: float = GO_AWAY_TIMEOUT


def options_for(max_streams_per_connection: int) -> Options:
    """secure_serving.go's: 256 KiB per stream and frame; the streams flag, else 100; the
    connection's buffer one stream's times the streams."""
    streams = max_streams_per_connection if max_streams_per_connection > 0 else 100
    return Options(max_concurrent_streams=streams, max_upload_buffer_per_connection=(256 << 10) * streams)


class GracefulH2Connection(h2.connection.H2Connection):
    """h2's connection, except for a graceful GOAWAY read from the peer, and a stream over the
    advertised limit (reset alone, as Go resets it).

    h2 closes its state machine on any GOAWAY it reads, so nothing more could be sent or read on
    the streams in flight; RFC 9113 6.8 (and Go, both ways) lets a GOAWAY with NO_ERROR finish
    the streams at or below its last id. Such a GOAWAY is only reported here."""

    def _receive_headers_frame(self, frame: Any) -> tuple[list, list]:
        if frame.stream_id not in self.streams and self.open_inbound_streams + 1 > self.local_settings.max_concurrent_streams:
            # one stream too many: Go resets that stream (PROTOCOL_ERROR, a stream error) and the
            # connection serves on, where h2 would end the connection; the header block is still
            # decoded, so HPACK's table stays in step with the client's
            _decode_headers(self.decoder, frame.data)
            self.highest_inbound_stream_id = max(self.highest_inbound_stream_id, frame.stream_id)
            return [RstStreamFrame(frame.stream_id, error_code=h2.errors.ErrorCodes.PROTOCOL_ERROR)], []
        return super()._receive_headers_frame(frame)

    def _receive_goaway_frame(self, frame: Any) -> tuple[list, list]:
        if frame.error_code != h2.errors.ErrorCodes.NO_ERROR:
            return super()._receive_goaway_frame(frame)
        event = h2.events.ConnectionTerminated()
        event.error_code = h2.errors.ErrorCodes.NO_ERROR
        event.last_stream_id, event.additional_data = frame.last_stream_id, frame.additional_data or None
        return [], [event]


class Server:
    """Go's ``http2.Server``: the options, and the connections it serves (for the GOAWAY)."""

    def __init__(self, options: Optional[Options] = None):
        self.options = options or Options()
        self._mu = rt.lock()
        self._conns: set[ServerConn] = set()

    def graceful_shutdown(self) -> None:
        """The on-shutdown hook: a graceful GOAWAY on every connection."""
        with self._mu:
            conns = list(self._conns)
        for sc in conns:
            sc.start_graceful_shutdown()

    def serve_conn(self, hs: Any, c: Any) -> None:
        """Serve HTTP/2 on ``c`` (an accepted :class:`genericserver.net.http.server.Conn` whose TLS
        handshake chose ``h2``) for the HTTP/1 server ``hs`` until the connection ends."""
        sc = ServerConn(self, hs, c)
        with self._mu:
            self._conns.add(sc)
        try:
            sc.serve()
        finally:
            with self._mu:
                self._conns.discard(sc)


class Body:
    """A stream's request body as ``wsgi.input``: bytes as DATA frames bring them; reading
    gives the flow-control window back, so the client sends no more than the handler takes."""

    def __init__(self, sc: "ServerConn", stream_id: int):
        self.sc, self.stream_id = sc, stream_id
        self._cond = rt.condition(rt.lock())
        self._chunks: list[bytes] = []
        self._eof = False
        self._err: Optional[BaseException] = None

    def feed(self, data: bytes) -> None:
        with self._cond:
            self._chunks.append(data)
            self._cond.notify_all()

    def end(self, err: Optional[BaseException] = None) -> None:
        with self._cond:
            self._eof, self._err = True, self._err or err
            self._cond.notify_all()

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all, for -1); fewer only at the end of the body, as a WSGI
        caller takes a short read for the end. A reset or a dropped connection with nothing
        read is :class:`genericserver.net.http.request.BodyError`."""
        return self._take(size, line=False)

    def readline(self, size: int = -1) -> bytes:
        """Up to and including the next newline (or ``size`` bytes, or the end)."""
        return self._take(size, line=True)

    def _take(self, size: int, line: bool) -> bytes:
        out = bytearray()
        while size < 0 or len(out) < size:
            with self._cond:
                while not self._chunks and not self._eof:
                    self._cond.wait()
                if not self._chunks:  # the end: clean, or with the error that ended it
                    if self._err is not None and not out:
                        raise httprequest.BodyError(str(self._err))
                    break
                chunk = self._chunks.pop(0)
                want = len(chunk) if size < 0 else min(len(chunk), size - len(out))
                if line and b"\n" in chunk[:want]:
                    want = chunk.index(b"\n") + 1
                if want < len(chunk):
                    chunk, rest = chunk[:want], chunk[want:]
                    self._chunks.insert(0, rest)
            out += chunk
            # each piece taken gives its window back at once (Go's inflow), outside the
            # body's lock: the connection's lock is taken before it elsewhere
            self.sc.consumed(self.stream_id, len(chunk))
            if line and chunk.endswith(b"\n"):
                break
        return bytes(out)

    def __iter__(self) -> Any:
        return iter(lambda: self.read(READ_SIZE), b"")


class Stream:
    """One request: its environ, body, context, and what its handler has written."""

    def __init__(self, sc: "ServerConn", stream_id: int, environ: dict):
        self.id, self.environ = stream_id, environ
        self.body = Body(sc, stream_id)
        self.ctx, self.cancel = gocontext.with_cancel(sc.ctx)
        self.remote_closed = False  # the client sent END_STREAM
        self.reset = False
        self.status: Optional[int] = None
        self.headers: list[tuple[str, str]] = []
        self.sent_headers = False


class ServerConn:
    """Go's ``serverConn``: one HTTP/2 connection."""

    def __init__(self, srv: Server, hs: Any, c: Any):
        self.srv, self.hs, self.c = srv, hs, c
        self.opts = srv.options
        self.mu = rt.lock()
        self.sendable = rt.condition(self.mu)  # flow-control window opened, or the end
        config = h2.config.H2Configuration(client_side=False, header_encoding=None)
        self.h2 = GracefulH2Connection(config=config)
        self.streams: dict[int, Stream] = {}
        self.max_client_stream_id = 0
        self.in_goaway = self.goaway_sent = self.done = False
        self.goaway_code = h2.errors.ErrorCodes.NO_ERROR
        self.ctx, self.cancel = gocontext.with_cancel(c.ctx)
        self._timer: Any = None  # the idle or shutdown timer pending now
        self._shutdown_timer = False

    # -- the read loop (Go's serve and readFrames) ---------------------------------------------
    def serve(self) -> None:
        s = h2.settings.SettingCodes
        self.h2.local_settings = h2.settings.Settings(client=False, initial_values={
            s.MAX_CONCURRENT_STREAMS: self.opts.max_concurrent_streams,
            s.MAX_FRAME_SIZE: self.opts.max_read_frame_size,
            s.INITIAL_WINDOW_SIZE: self.opts.max_upload_buffer_per_stream,
            s.MAX_HEADER_LIST_SIZE: self.hs.max_header_bytes + 4096,
            s.ENABLE_PUSH: 0})
        # settings given as initial values count at once in h2, where a change waits for the
        # client's ACK; so the frame size limit is set as Go sets its framer's, from the start
        self.h2.max_inbound_frame_size = self.opts.max_read_frame_size
        self.c.r.set_timeout(None)  # the handshake's deadline is over; frames come when they come
        with self.mu:
            self.h2.initiate_connection()
            extra = self.opts.max_upload_buffer_per_connection - 65535
            if extra > 0:
                self.h2.increment_flow_control_window(extra)
            self._flush()
        self._arm_idle_timer()
        try:
            while True:
                data = self.c.sock.recv(READ_SIZE)
                if not data:
                    break
                with self.mu:
                    try:
                        events = self.h2.receive_data(data)
                    except h2.exceptions.ProtocolError:
                        self._flush()  # h2 queued the GOAWAY of a connection error
                        break
                    for ev in events:
                        self._handle(ev)
                    self._flush()
                    self._maybe_start_shutdown_timer()
        except OSError:
            pass  # the client went away, or a timer shut the socket down
        finally:
            self._end()

    def _end(self) -> None:
        with self.mu:
            self.done = True
            self.sendable.notify_all()
            streams = list(self.streams.values())
            self._stop_timer()
        for st in streams:  # a connection that drops cancels every request on it
            st.body.end(EOFError("client disconnected"))
            st.cancel()
        self.cancel()

    def _flush(self) -> None:
        # the caller holds mu: one writer at a time, frames in the order h2 produced them
        data = self.h2.data_to_send()
        if data and not self.done:
            try:
                self.c.send(data)
            except OSError:
                self.done = True
                self.sendable.notify_all()
                self._close_socket()

    def _close_socket(self) -> None:
        try:
            socket.socket.shutdown(self.c.sock, socket.SHUT_RDWR)
        except OSError:
            pass

    # -- frames in --------------------------------------------------------------------------------
    def _handle(self, ev: Any) -> None:
        sid = getattr(ev, "stream_id", None)
        if self.in_goaway and sid and (self.goaway_code != 0 or sid > self.max_client_stream_id):
            # a stream newer than the GOAWAY's last id (any stream, after an error GOAWAY):
            # dropped unanswered, its DATA still returning the connection's window (RFC 9113 6.8)
            if isinstance(ev, h2.events.DataReceived):
                self.h2.acknowledge_received_data(ev.flow_controlled_length, sid)
            return
        if isinstance(ev, h2.events.RequestReceived):
            self._start_stream(ev)
        elif isinstance(ev, h2.events.DataReceived):
            st = self.streams.get(sid)
            if st is None:
                self.h2.acknowledge_received_data(ev.flow_controlled_length, sid)
            else:
                st.body.feed(ev.data)
                padding = ev.flow_controlled_length - len(ev.data)
                if padding:
                    self.h2.acknowledge_received_data(padding, sid)
        elif isinstance(ev, h2.events.StreamEnded):
            st = self.streams.get(sid)
            if st is not None:
                st.remote_closed = True
                st.body.end()
        elif isinstance(ev, h2.events.StreamReset):
            st = self.streams.pop(sid, None)
            if st is not None:  # the client gave up: the handler's context ends
                st.reset = True
                st.body.end(EOFError("client reset the stream"))
                st.cancel()
                self._stream_closed()
            self.sendable.notify_all()
        elif isinstance(ev, (h2.events.WindowUpdated, h2.events.RemoteSettingsChanged)):
            self.sendable.notify_all()
        elif isinstance(ev, h2.events.ConnectionTerminated):
            self._go_away(h2.errors.ErrorCodes.NO_ERROR)  # the client's GOAWAY: ours too

    def _start_stream(self, ev: Any) -> None:
        self.max_client_stream_id = ev.stream_id
        self._stop_timer()  # not idle any more
        pseudo, header = {}, {}
        for name, value in ev.headers:
            n, v = name.decode("latin-1"), value.decode("latin-1")
            if n.startswith(":"):
                pseudo[n] = v
            else:
                header.setdefault(textproto.canonical_mime_header_key(n), []).append(v)
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
        st = Stream(self, ev.stream_id, env)
        env["wsgi.input"] = st.body
        if ev.stream_ended is not None:
            st.remote_closed = True
            st.body.end()
        self.streams[ev.stream_id] = st
        rt.go(self._run_handler, st, name=f"http2-stream-{self.c.remote_addr}-{ev.stream_id}")

    def consumed(self, stream_id: int, n: int) -> None:
        """The handler read ``n`` bytes of its body: give the window back (Go's inflow)."""
        with self.mu:
            if self.done:
                return
            try:
                self.h2.acknowledge_received_data(n, stream_id)
            except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                return
            self._flush()

    # -- the handler (Go's runHandler and responseWriter) --------------------------------------
    def _run_handler(self, st: Stream) -> None:
        reqctx.with_context(st.environ, st.ctx)
        body: Any = None
        try:
            body = self.hs.app(st.environ, lambda status, headers, exc_info=None: self._start_response(st, status, headers))
            chunks = known_chunks(body)
            if chunks is not None:
                last = b"".join(chunks)  # all at hand: it goes out with the end of the stream
            else:
                last = b""
                for chunk in body:  # each chunk the app yields is sent at once (Go's Flush)
                    if chunk or (not st.sent_headers and st.status is not None):
                        self._send(st, bytes(chunk), end=False)  # an empty one flushes the header
            # the iterable's close is the handler's return (its deferred releases): it runs
            # before the end of the answer goes out, as Go ends the stream after the handler
            body, done = None, body
            close_iterable(done)
            self._send(st, last, end=True)
            self._reset_if_body_unread(st)
        except Exception as err:
            # a reset stream's failed write is no panic, and ErrAbortHandler is a silent one
            if (not isinstance(err, httprequest.BodyError) or not st.reset) and err is not ERR_ABORT_HANDLER:
                self.hs.logf("http2: panic serving %s: %s\n%s", self.c.remote_addr, str(err) or repr(err), traceback.format_exc())
            self._reset(st, h2.errors.ErrorCodes.INTERNAL_ERROR)
        finally:
            try:
                close_iterable(body)
            except Exception:
                pass
            st.cancel()
            st.body.end()

    def _start_response(self, st: Stream, status: str, headers: list) -> Callable[[bytes], None]:
        code = httpresponse._status_code(status)
        out = []
        for name, value in headers:
            lname = name.lower()
            if lname == "connection":
                # not an HTTP/2 header; "close" asks for the same graceful GOAWAY
                if value.strip() == "close":
                    self.start_graceful_shutdown()
                continue
            if lname in CONN_HEADERS:
                continue
            out.append((lname, str(value)))
        st.status, st.headers = code, out
        return lambda data: self._send(st, bytes(data), end=False)

    def _reset_if_body_unread(self, st: Stream) -> None:
        with self.mu:
            if st.id in self.streams and not st.remote_closed and not self.done:
                # answered before the client finished its body: stop it sending (RFC 9113 8.1)
                self._reset_locked(st, h2.errors.ErrorCodes.NO_ERROR)

    def _send(self, st: Stream, data: bytes, *, end: bool) -> None:
        with self.mu:
            if self.done or st.reset:
                raise httprequest.BodyError("http2: stream closed")
            if not st.sent_headers:
                self._send_headers_locked(st, data, end)
            view = memoryview(data)
            while True:
                if self.done or st.reset:
                    raise httprequest.BodyError("http2: stream closed")
                if not view and not end:
                    self._flush()  # a header alone (a watch with nothing yet) goes out now too
                    return
                try:
                    window = min(self.h2.local_flow_control_window(st.id), self.h2.max_outbound_frame_size)
                except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                    raise httprequest.BodyError("http2: stream closed") from None
                if window <= 0 and view:
                    self.sendable.wait()
                    continue
                part, view = view[:window], view[window:]
                last = end and not view
                self.h2.send_data(st.id, bytes(part), end_stream=last)
                self._flush()
                if last:
                    self._closed_locally_locked(st)
                    return
                if not view and not end:
                    return

    def _send_headers_locked(self, st: Stream, first: bytes, end: bool) -> None:
        code = st.status if st.status is not None else 200
        names = {n for n, _ in st.headers}
        headers = [(":status", str(code))] + st.headers
        if "date" not in names:
            headers.append(("date", httpresponse.http_date()))
        if end and "content-length" not in names and httpresponse.body_allowed_for_status(code) \
                and 0 < len(first) <= HANDLER_CHUNK_WRITE_SIZE:
            headers.append(("content-length", str(len(first))))  # the whole answer fit the first buffer
        st.sent_headers = True
        self.h2.send_headers(st.id, headers, end_stream=end and not first)
        if end and not first:
            self._flush()
            self._closed_locally_locked(st)

    def _closed_locally_locked(self, st: Stream) -> None:
        if st.remote_closed and self.streams.pop(st.id, None) is not None:
            self._stream_closed()

    def _reset(self, st: Stream, code: int) -> None:
        with self.mu:
            self._reset_locked(st, code)

    def _reset_locked(self, st: Stream, code: int) -> None:
        if self.done:
            return
        try:
            self.h2.reset_stream(st.id, code)
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            pass
        self._flush()
        if self.streams.pop(st.id, None) is not None:
            self._stream_closed()

    def _stream_closed(self) -> None:
        # the caller holds mu (Go's closeStream): an idle connection starts its idle timer; a
        # connection whose GOAWAY went out closes once its last stream did
        if not self.streams:
            self._arm_idle_timer()
        self._maybe_start_shutdown_timer()

    # -- GOAWAY and the timers ----------------------------------------------------------------------
    def start_graceful_shutdown(self) -> None:
        """Go's ``startGracefulShutdown``: a GOAWAY with NO_ERROR, once."""
        with self.mu:
            self._go_away(h2.errors.ErrorCodes.NO_ERROR)

    def _go_away(self, code: int) -> None:
        if self.in_goaway or self.done:
            return
        self.in_goaway, self.goaway_code = True, code
        # h2 would close its state machine on a GOAWAY it sent, ending the streams in flight;
        # Go's graceful GOAWAY lets them finish, so the frame is written beside h2's own
        frame = GoAwayFrame(0)
        frame.last_stream_id, frame.error_code = self.max_client_stream_id, code
        self._flush()
        try:
            self.c.send(frame.serialize())
        except OSError:
            self.done = True
            self._close_socket()
            return
        self.goaway_sent = True
        self._maybe_start_shutdown_timer()

    def _maybe_start_shutdown_timer(self) -> None:
        # the caller holds mu: after the GOAWAY went out, and (graceful) once no stream is open
        if self.goaway_sent and not self._shutdown_timer and (self.goaway_code != 0 or not self.streams):
            self._shutdown_timer = True
            self._start_timer(self.opts.go_away_timeout, self._close_socket, "http2-goaway-close")

    def _arm_idle_timer(self) -> None:
        if self.opts.idle_timeout and not self.in_goaway and not self.done:
            self._start_timer(self.opts.idle_timeout, self.start_graceful_shutdown, "http2-idle")

    def _start_timer(self, seconds: float, fire: Callable[[], None], name: str) -> None:
        # Go's time.AfterFunc for its idle and shutdown timers: one at a time per connection
        self._stop_timer()
        self._timer = rt.after_func(seconds, fire, name=name)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None


__all__ = ["GO_AWAY_TIMEOUT", "Options", "Server", "ServerConn", "options_for"]

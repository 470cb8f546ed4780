"""Port of Go's net/http/internal/http2 package: its server (server.go, Go 1.27; kube-apiserver runs the same one from golang.org/x/net/http2 v0.49.0), on the h2 library.

Over TLS, a client that offers ``h2`` in ALPN gets HTTP/2: Go's ``http.Server`` hands the
connection to the http2 server (``serve()``'s ``TLSNextProto`` path), which keeps it marked
*active* for the HTTP/1 server's bookkeeping, so ``Shutdown`` never closes it as idle (Go issue
39776): it ends on its own. The ``h2`` library does the framing and the stream state machine;
HPACK is a port of Go's (genericserver/x/net/http2/hpack), so the answers' header blocks are the
octets Go's would be and the requests' are read as Go's framer reads them. The decisions below are Go's, in methods named after Go's (``process_headers``,
``process_data``, ``close_stream``, ``go_away``, ``shut_down_in``...), which ``h2``'s events drive:

* **the serve goroutine**: Go's ``serve`` loop owns a connection's state and takes, between two
  frames, the messages other goroutines send it (a timer fired, ``startGracefulShutdown``). Here
  ``ServerConn.mu`` is that role: whoever holds it acts as the serve goroutine (the read loop for
  a read's frames, a handler for its write), and a message (:meth:`ServerConn.send_serve_msg`)
  runs before the next frame is processed, or when the holder lets go - never waiting for a
  handler's write, as Go's message never waits for one.
* **graceful shutdown**: ``http.Server.Shutdown`` runs the on-shutdown hook the http2 server
  registered (``ConfigureServer``), which sends every connection's serve goroutine the message
  to send a GOAWAY with NO_ERROR and the highest client stream id it read, a stream refused over
  the limit included (``startGracefulShutdown``). Streams up to that id run to their end; frames
  of newer streams are dropped without an answer (RFC 9113 6.8). Once no stream is open, the
  connection closes ``goAwayTimeout`` (1 s) later, so the client reads the GOAWAY before the FIN.
  A GOAWAY from the client, whatever its code, starts the same (an error code is logged).
  Go's hook sends its messages microseconds after ``Shutdown`` starts; here its goroutine may
  wait for the GIL behind the busy streams, so a turn of the serve goroutine that finds the
  HTTP/1 server shutting down (``shutting_down()``) takes the message itself, first: no
  connection reads a new stream once the listener is shut without its GOAWAY going out first.
* **frames** are cut out of each read and judged one by one by Go's rules before ``h2`` sees
  them (processframe.py): which errors end the connection and which reset one stream, the
  GOAWAY's last stream id with the frame that caused it, REFUSED_STREAM before our SETTINGS are
  acknowledged, a body against its ``content-length``, and ``scheduleHandler``'s handler limit
  and early-reset guard.
* **a header block** (``readMetaFrame``, h2conn.py): one HPACK cannot decode ends the connection
  with COMPRESSION_ERROR; a header list over ``MaxHeaderBytes`` + 320 (Go's
  ``maxHeaderListSize``, advertised as ``MAX_HEADER_LIST_SIZE`` and enforced from the start) is
  answered 431 (``handleHeaderListTooLong``), the fields past the limit decoded for HPACK's
  table only; a fragment more than twice what the list may still hold is a PROTOCOL_ERROR.
* **a connection error**: logged, a GOAWAY with its code (ours, not h2's), then every frame is
  dropped, no handler's frame is written, and the connection closes ``goAwayTimeout`` later, as
  Go lingers so the client reads the GOAWAY before a reset could destroy it.
* **timeouts**: the client's 24-byte preface within 10 s (``prefaceTimeout``, closed quietly),
  its first frame within 2 s more (``firstSettingsTimeout``, logged); ``idle_timeout``: a
  connection without open streams that long gets a graceful GOAWAY.
* a handler's ``Connection: close`` (the retry-after mode's answer, ``--goaway-chance``) is not
  sent - HTTP/2 has no such header - but starts the same graceful GOAWAY.
* **flow control**: ``max_concurrent_streams`` and ``MaxHeaderBytes`` + 320 (Go's
  ``maxHeaderListSize``) are advertised in SETTINGS; the request body's window is the per-stream
  upload buffer, given back as the handler reads by Go's ``inflow`` rule (flow.py); bytes a
  handler never read give the connection's window back when its stream closes (Go issue 16481).
* a stream reset by the client, or a connection that drops, cancels the request's context; a
  handler that raises resets its stream with INTERNAL_ERROR (Go's ``handlerPanicRST``) after
  logging ``http2: panic serving ADDR: ...`` (not for ``ERR_ABORT_HANDLER``, nor for a write
  that failed because the client left: Go's handler gets that error back, no panic); a response
  done before the client finished its body ends with RST_STREAM NO_ERROR.
* an answer whose chunks are all at hand (a list) goes out when the handler is done, with a
  ``content-length`` if it fits the first 4 KiB (Go's ``handlerChunkWriteSize`` buffer, full
  before the handler returned), ``content-length: 0`` for an empty one; each chunk a streaming
  handler yields is sent at once, as Go's ``Flush`` sends it (an empty one sends the header: a
  watch with nothing to report yet); ``date`` is added. A HEAD's HEADERS end its stream: no
  DATA, whatever the handler writes, and the length of what it wrote (``writeChunk``'s
  ``isHeadResp``). The end of the stream goes out after the app's iterable is closed, as Go
  ends it after the handler's deferred calls, and after the request's context ended (Go's
  deferred ``cancelCtx`` runs before ``handlerDone``).

Requests reach the same WSGI chain as HTTP/1 ones, with ``SERVER_PROTOCOL`` ``HTTP/2.0``. The
decisions follow the server kube-apiserver v1.36.0 runs: golang.org/x/net v0.49.0's http2 (which
secure_serving.go configures), the same code as Go 1.26.8's bundled copy (net/http/h2_bundle.go);
the recorded corpora (tests/parity/README.md) come from those programs and that Go.

Differences from Go: a frame is written by the thread that made it, under ``mu``, where Go's
serve loop hands each to a writer goroutine; after a connection error the frames that follow are
drained unparsed (Go parses and drops them; neither answers them); no server push, no
priorities; no ``Content-Type`` sniffing (the 431 page names its type, which Go sniffs), as over HTTP/1 (a WSGI app names its type: request.py's
``sniff-content-type``).
"""

from __future__ import annotations

import collections
import socket
from typing import Any, Optional

import h2.config
import h2.errors
import h2.exceptions
import h2.settings
from hyperframe.frame import GoAwayFrame, RstStreamFrame

from genericserver import runtime as rt
from genericserver.context import context as gocontext
from genericserver.net.http.internal.http2.config import (DEFAULT_MAX_HEADER_BYTES, GO_AWAY_TIMEOUT, Options,
                                                          adjust_http1_max_header_size, options_for)
from genericserver.net.http.internal.http2.errors import (ERR_CLIENT_DISCONNECTED, ERR_PREFACE_TIMEOUT, ERR_STREAM_CLOSED,
                                                          go_away_frame_string)
from genericserver.net.http.internal.http2.flow import Inflow
from genericserver.net.http.internal.http2.processframe import HANDLER_DONE_MSG, FrameSide, check_pseudos, meta_field_error
from genericserver.net.http.internal.http2.h2conn import GracefulH2Connection
from genericserver.net.http.internal.http2.pipe import Body
from genericserver.net.http.internal.http2.responsewriter import HANDLER_CHUNK_WRITE_SIZE, HandlerSide
from genericserver.net.textproto import reader as textproto

INITIAL_WINDOW_SIZE = 65535  # every HTTP/2 window's size before SETTINGS or WINDOW_UPDATE
READ_SIZE = 64 << 10
CLIENT_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
NO_ERROR = h2.errors.ErrorCodes.NO_ERROR

BORING_PREFACE_ERRORS = ("EOF", "unexpected EOF", ERR_PREFACE_TIMEOUT)  # Go's condlogf keeps these quiet

# what other goroutines send the serve goroutine (Go's serverMessage values)
SETTINGS_TIMER_MSG = "settingsTimerMsg"
IDLE_TIMER_MSG = "idleTimerMsg"
SHUTDOWN_TIMER_MSG = "shutdownTimerMsg"
GRACEFUL_SHUTDOWN_MSG = "gracefulShutdownMsg"


class Server:
    """Go's ``http2.Server``: the options, and the connections it serves (for the GOAWAY)."""

    def __init__(self, options: Optional[Options] = None):
        self.options = options or Options()
        self._mu = rt.lock()
        self._conns: set[ServerConn] = set()

    def graceful_shutdown(self) -> None:
        """The on-shutdown hook (Go's ``serverInternalState.startGracefulShutdown``): a message
        to each connection's serve goroutine, none waited for. All are posted before any is
        run here: a GOAWAY this thread writes (a send lets other threads run) must not leave
        the other connections reading new streams meanwhile, as Go's messages go out at once."""
        with self._mu:
            conns = list(self._conns)
        for sc in conns:
            sc.start_graceful_shutdown(deliver=False)
        for sc in conns:
            sc.deliver_serve_msgs()

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


class Stream:
    """One request: its environ, body, context, window, and what its handler has written."""

    def __init__(self, sc: "ServerConn", stream_id: int, environ: dict):
        self.id, self.environ = stream_id, environ
        self.body = Body(sc, self)
        self.ctx, self.cancel = gocontext.with_cancel(sc.ctx)
        self.inflow = Inflow(sc.opts.max_upload_buffer_per_stream)
        self.remote_closed = False  # the client sent END_STREAM (Go's half-closed remote)
        self.closed = False  # close_stream ran: reset, finished, or the connection ended
        self.status: Optional[int] = None
        self.is_head = environ.get("REQUEST_METHOD") == "HEAD"  # its HEADERS end the stream
        self.app: Any = None  # the handler, if not the server's (Go's new400Handler)
        self.headers: list[tuple[str, str]] = []
        self.sent_headers = False
        self.declared_length = -1  # the request's content-length, -1 if none (Go's declBodyBytes)
        self.body_bytes = 0  # the body's bytes read so far

    def end_stream(self) -> None:
        """Go's ``endStream``: the client's END_STREAM; the body reads to its end, or to Go's
        error if it was shorter than its content-length."""
        self.remote_closed = True
        if self.declared_length not in (-1, self.body_bytes):
            self.body.end(EOFError(f"request declared a Content-Length of {self.declared_length} but only wrote {self.body_bytes} bytes"))
        else:
            self.body.end()


class ServeGoroutine:
    """``with sc.serve_g:`` holds the connection's lock as Go's serve goroutine would run: on the
    way in, a shutdown of the server that began meanwhile posts its message; on the way out, the
    messages sent meanwhile run and the shutdown timer starts if it is time."""

    __slots__ = ("sc",)

    def __init__(self, sc: "ServerConn"):
        self.sc = sc

    def __enter__(self) -> None:
        sc = self.sc
        sc.mu.acquire()
        if sc.hs.shutting_down():
            # Go's Shutdown sends its message to every connection microseconds after it starts;
            # here the hook that sends it may wait for the GIL behind the busy streams, so a turn
            # that finds the server shutting down takes the message itself, before its frames
            sc.start_graceful_shutdown(deliver=False)

    def __exit__(self, *exc: Any) -> None:
        self.sc.unlock()


def h2_config() -> h2.config.H2Configuration:
    """The h2 connection's configuration: the fields both ways are judged by Go's rules
    (processframe.meta_field_error and check_pseudos, write.encode_headers), not h2's."""
    return h2.config.H2Configuration(client_side=False, header_encoding=None, validate_inbound_headers=False,
                                     validate_outbound_headers=False, normalize_outbound_headers=False)


class ServerConn(FrameSide, HandlerSide):
    """Go's ``serverConn``: one HTTP/2 connection."""

    def __init__(self, srv: Server, hs: Any, c: Any):
        self.srv, self.hs, self.c = srv, hs, c
        self.opts = srv.options
        self.mu = rt.lock()
        self.serve_g = ServeGoroutine(self)
        self.serve_msgs: collections.deque[str] = collections.deque()  # Go's serveMsgCh
        self.window_waiters: list[Any] = []  # handlers' writes waiting for window (or the end)
        self.h2 = GracefulH2Connection(config=h2_config(), check_field=meta_field_error, check_pseudos=check_pseudos)
        self.h2.max_header_list_size = self.max_header_list_size()  # Go's framer has it from the start
        self.inflow = Inflow(INITIAL_WINDOW_SIZE)
        self.streams: dict[int, Stream] = {}
        self.max_client_stream_id = 0
        self.read_buf = bytearray()  # the client's bytes not yet a whole frame
        self.unacked_settings = 1  # our first SETTINGS, until the client's ACK
        self.cur_handlers = 0  # handlers running (Go's curHandlers)
        self.unstarted_handlers: collections.deque[Stream] = collections.deque()
        self.in_go_away = self.sent_go_away = self.done = self.h2_broken = self.saw_first_settings = False
        self.go_away_code = NO_ERROR
        self.ctx, self.cancel = gocontext.with_cancel(c.ctx)
        self.shutdown_once = rt.once()
        self.idle_timer: Any = None
        self.settings_timer: Any = None
        self.shutdown_timer: Any = None

    def logf(self, fmt: str, *args: Any) -> None:
        self.hs.logf(fmt, *args)

    def max_header_list_size(self) -> int:
        """Go's ``maxHeaderListSize``: the HTTP/1 server's ``MaxHeaderBytes``, in HTTP/2's unit."""
        n = self.hs.max_header_bytes
        return adjust_http1_max_header_size(n if n > 0 else DEFAULT_MAX_HEADER_BYTES)

    # -- the serve goroutine (Go's serve, readPreface, processFrameFromReader) --------------------
    def serve(self) -> None:
        s = h2.settings.SettingCodes
        self.h2.local_settings = h2.settings.Settings(client=False, initial_values={
            s.MAX_CONCURRENT_STREAMS: self.opts.max_concurrent_streams,
            s.MAX_FRAME_SIZE: self.opts.max_read_frame_size,
            s.INITIAL_WINDOW_SIZE: self.opts.max_upload_buffer_per_stream,
            s.MAX_HEADER_LIST_SIZE: self.max_header_list_size()})
        # settings given as initial values count at once in h2, where a change waits for the
        # client's ACK; so the frame size limit is set as Go sets its framer's, from the start
        self.h2.max_inbound_frame_size = self.opts.max_read_frame_size
        self.c.r.set_timeout(None)  # the handshake's deadline is over; frames come when they come
        try:
            with self.serve_g:
                self.h2.initiate_connection()
                self.send_window_update(None, self.opts.max_upload_buffer_per_connection - INITIAL_WINDOW_SIZE)
                self.flush()
            err = self.read_preface()
            if err is not None:
                if err not in BORING_PREFACE_ERRORS:
                    self.logf("http2: server: error reading preface from client %s: %s", self.c.remote_addr, err)
                return
            with self.serve_g:
                if self.opts.idle_timeout:
                    self.idle_timer = rt.after_func(self.opts.idle_timeout, self.on_idle_timer, name="http2-idle")
                self.settings_timer = rt.after_func(self.opts.first_settings_timeout, self.on_settings_timer,
                                                    name="http2-settings-timeout")
            while True:
                data = self.c.sock.recv(READ_SIZE)
                if not data:
                    break  # the client went away
                with self.serve_g:
                    self.process_frames_from_reader(data)
        except OSError:
            pass  # the client went away, or the serve goroutine's end shut the socket down
        finally:
            with self.serve_g:
                self.close_all_streams_on_conn_close()

    def read_preface(self) -> Optional[str]:
        """Go's ``readPreface``: the client's greeting within ``preface_timeout``; the error's
        text, or None. The timer shuts the socket down, as Go's select stops waiting."""
        timed_out: list[bool] = []

        def expire() -> None:
            timed_out.append(True)
            self.close_socket()

        timer = rt.after_func(self.opts.preface_timeout, expire, name="http2-preface-timeout")
        buf = b""
        try:
            while len(buf) < len(CLIENT_PREFACE):
                chunk = self.c.sock.recv(len(CLIENT_PREFACE) - len(buf))
                if not chunk:
                    break
                buf += chunk
        except OSError as err:
            if not timed_out:
                return str(err)
        finally:
            timer.stop()
        if timed_out:
            return ERR_PREFACE_TIMEOUT
        if len(buf) < len(CLIENT_PREFACE):
            return "unexpected EOF" if buf else "EOF"
        if buf != CLIENT_PREFACE:
            return f"bogus greeting {textproto.go_quote(buf)}"
        with self.serve_g:
            self.h2.receive_data(buf)  # h2 checks it too, and then reads frames
        return None

    def new_stream(self, stream_id: int, environ: dict) -> Stream:
        return Stream(self, stream_id, environ)

    def process_reset_stream(self, ev: Any) -> None:
        """Go's ``processResetStream``: the client gave up; the handler's context ends."""
        st = self.streams.get(ev.stream_id)
        if st is not None:
            st.cancel()
            self.close_stream(st, EOFError(ERR_STREAM_CLOSED))

    def process_window_update(self, ev: Any) -> None:
        """Go's ``processWindowUpdate``: h2 did the sum; a write waiting for room may go on."""
        self.notify_window_waiters()

    def process_settings(self, ev: Any) -> None:
        """Go's ``processSettings``: h2 applied them (and ACKs); a new initial window may free a write."""
        self.notify_window_waiters()

    def process_go_away(self, ev: Any) -> None:
        """Go's ``processGoAway``: whatever the client's code, the streams in flight finish."""
        if ev.error_code != NO_ERROR:  # (Go logs a NO_ERROR one in its verbose mode only)
            self.logf("http2: received GOAWAY %s, starting graceful shutdown", go_away_frame_string(ev))
        self.start_graceful_shutdown_internal()

    def close_stream(self, st: Stream, err: BaseException) -> None:
        """Go's ``closeStream`` (the caller holds mu)."""
        if self.streams.pop(st.id, None) is None:
            return  # closed already
        st.closed = True
        if not self.streams and self.idle_timer is not None and not self.done:
            self.idle_timer.stop()
            self.idle_timer = rt.after_func(self.opts.idle_timeout, self.on_idle_timer, name="http2-idle")
        # the bytes the handler never read give the connection's window back (Go issue 16481)
        self.send_window_update(None, st.body.break_with_error(err))
        st.cancel()
        self.notify_window_waiters()  # its handler's write, if waiting, fails now

    def close_all_streams_on_conn_close(self) -> None:
        """Go's deferred ``closeAllStreamsOnConnClose``: every request on it is cancelled."""
        self.done = True
        for timer in (self.idle_timer, self.settings_timer, self.shutdown_timer):
            if timer is not None:
                timer.stop()
        for st in list(self.streams.values()):
            self.close_stream(st, EOFError(ERR_CLIENT_DISCONNECTED))
        self.cancel()

    # -- messages to the serve goroutine, GOAWAY and the timers ----------------------------------
    def send_serve_msg(self, msg: str) -> None:
        """Go's ``sendServeMsg``: the message runs on the serve goroutine's role - here, now if
        mu is free, else by its holder before its next frame or as it lets go (:meth:`unlock`)."""
        self.serve_msgs.append(msg)
        self.deliver_serve_msgs()

    def deliver_serve_msgs(self) -> None:
        if self.serve_msgs and self.mu.acquire(blocking=False):
            self.unlock()

    def run_serve_msgs(self) -> None:
        while self.serve_msgs:  # (only mu's holder takes them out)
            msg = self.serve_msgs.popleft()
            if msg == GRACEFUL_SHUTDOWN_MSG:
                self.start_graceful_shutdown_internal()
            elif msg == IDLE_TIMER_MSG:
                self.go_away(NO_ERROR)
            elif msg == SETTINGS_TIMER_MSG:
                self.logf("timeout waiting for SETTINGS frames from %s", self.c.remote_addr)
                self.close_conn()
            elif msg == SHUTDOWN_TIMER_MSG:
                self.close_conn()
            elif msg == HANDLER_DONE_MSG:
                self.handler_done()

    def unlock(self) -> None:
        """The end of a turn of Go's serve loop: the messages that came, the shutdown timer
        once the GOAWAY is out (a graceful one: once no stream is open), then mu let go. A
        message sent while mu was held and not yet run is taken again here."""
        while True:
            self.run_serve_msgs()
            if self.sent_go_away and not self.done and self.shutdown_timer is None and (self.go_away_code != NO_ERROR or not self.streams):
                self.shut_down_in(self.opts.go_away_timeout)
            self.mu.release()
            if not self.serve_msgs or not self.mu.acquire(blocking=False):
                return

    def start_graceful_shutdown(self, deliver: bool = True) -> None:
        """Go's ``startGracefulShutdown``: once, a message to the serve goroutine; not waited for."""
        self.shutdown_once.do(lambda: self.serve_msgs.append(GRACEFUL_SHUTDOWN_MSG))
        if deliver:
            self.deliver_serve_msgs()

    def start_graceful_shutdown_internal(self) -> None:
        self.go_away(NO_ERROR)

    def go_away(self, code: int) -> None:
        """Go's ``goAway``: one GOAWAY with the last client stream id; a later error only
        raises the code (the caller holds mu)."""
        if self.in_go_away:
            if self.go_away_code == NO_ERROR:
                self.go_away_code = code
            return
        self.in_go_away, self.go_away_code = True, code
        # h2 would close its state machine on a GOAWAY it sent, ending the streams in flight;
        # Go's graceful GOAWAY lets them finish, so the frame is written beside h2's own
        frame = GoAwayFrame(0)
        frame.last_stream_id, frame.error_code = self.max_client_stream_id, code
        self.sent_go_away = self.write_frame(frame)

    def shut_down_in(self, d: float) -> None:
        """Go's ``shutDownIn``: the connection closes ``d`` from now."""
        self.shutdown_timer = rt.after_func(d, self.on_shutdown_timer, name="http2-goaway-close")

    def on_idle_timer(self) -> None:
        self.send_serve_msg(IDLE_TIMER_MSG)

    def on_settings_timer(self) -> None:
        self.send_serve_msg(SETTINGS_TIMER_MSG)

    def on_shutdown_timer(self) -> None:
        self.send_serve_msg(SHUTDOWN_TIMER_MSG)

    def close_conn(self) -> None:
        """The serve goroutine returns: no more writes, and the read loop wakes to end."""
        self.done = True
        self.notify_window_waiters()
        self.close_socket()

    def close_socket(self) -> None:
        try:
            socket.socket.shutdown(self.c.sock, socket.SHUT_RDWR)
        except OSError:
            pass

    # -- frames out ---------------------------------------------------------------------------------
    def flush(self) -> None:
        """What h2 queued goes out, in order (the caller holds mu: one writer at a time)."""
        data = self.h2.data_to_send()
        if data and not self.done:
            try:
                self.c.send(data)
            except OSError:
                self.close_conn()

    def write_frame(self, frame: Any) -> bool:
        """A frame h2 does not know of, after what h2 queued; False if it could not go out."""
        self.flush()
        if self.done:
            return False
        try:
            self.c.send(frame.serialize())
        except OSError:
            self.close_conn()
            return False
        return True

    def send_window_update(self, st: Optional[Stream], n: int) -> None:
        """Go's ``sendWindowUpdate``: ``n`` bytes given back, for the connection (``st`` None) or
        a stream, in a WINDOW_UPDATE once Go's ``inflow`` says it is worth one."""
        if n <= 0 or self.done or self.h2_broken:
            return
        send = (self.inflow if st is None else st.inflow).add(n)
        if send:
            try:
                self.h2.increment_flow_control_window(send, None if st is None else st.id)
            except (KeyError, h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                pass  # a stream h2 closed meanwhile

    def note_body_read(self, st: Stream, n: int) -> None:
        """Go's ``noteBodyRead``: the handler read ``n`` bytes of its body."""
        with self.serve_g:
            self.send_window_update(None, n)
            if not st.remote_closed and not st.closed:
                self.send_window_update(st, n)
            self.flush()

    def reset_stream(self, stream_id: int, code: int) -> None:
        """Go's ``resetStream``: RST_STREAM, and the stream closes (the caller holds mu)."""
        if stream_id in self.h2.streams:
            try:
                self.h2.reset_stream(stream_id, code)
            except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                pass
            self.flush()
        else:  # one h2 never opened (refused over the limit)
            self.write_frame(RstStreamFrame(stream_id, error_code=code))
        st = self.streams.get(stream_id)
        if st is not None:
            self.close_stream(st, EOFError(ERR_STREAM_CLOSED))

    def notify_window_waiters(self) -> None:
        waiters, self.window_waiters = self.window_waiters, []
        for woken in waiters:
            woken.set()

    def wait_for_window(self) -> None:
        """Wait (holding mu, which is let go meanwhile) until a window opens or the stream or
        connection ends: a handler's write, as Go's waits on its stream's channels."""
        woken = rt.event("http2-window")
        self.window_waiters.append(woken)
        self.unlock()
        woken.wait()
        self.mu.acquire()



__all__ = ["GO_AWAY_TIMEOUT", "HANDLER_CHUNK_WRITE_SIZE", "GracefulH2Connection", "Options", "Server", "ServerConn", "h2_config", "options_for"]

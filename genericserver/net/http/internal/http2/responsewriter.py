"""Port of Go's net/http/internal/http2 package (Go 1.27): server.go's handler side (``runHandler``, ``responseWriter``), split from server.py to keep each readable.

:class:`HandlerSide` is the part of :class:`genericserver.net.http.internal.http2.server.ServerConn`
a stream's handler goroutine runs: the WSGI app, its ``start_response``, and Go's
``writeDataFromHandler`` / ``writeHeaders``, which write under the connection's lock as the serve
goroutine's role (``serve_g``), waiting for flow-control window outside it.
"""

from __future__ import annotations

import traceback
from typing import Any, Callable

import h2.errors
import h2.exceptions

from genericserver import request as reqctx
from genericserver.net.http import request as httprequest
from genericserver.net.http import response as httpresponse
from genericserver.net.http.internal.http2.errors import ERR_CLIENT_DISCONNECTED, ERR_HANDLER_COMPLETE, ERR_STREAM_CLOSED
from genericserver.net.http.internal.http2.processframe import HANDLER_DONE_MSG
from genericserver.net.http.internal.http2.write import response_fields
from genericserver.net.http.server import AbortHandler
from genericserver.wsgi import close_iterable, known_chunks

HANDLER_CHUNK_WRITE_SIZE = 4 << 10  # the response writer's buffer: what fits gets a content-length
NO_ERROR = h2.errors.ErrorCodes.NO_ERROR


def is_content_length(value: str) -> bool:
    """Go's ``strconv.ParseUint(value, 10, 63)`` succeeds: decimal digits, under 2**63."""
    return value.isascii() and value.isdigit() and int(value) < 1 << 63


class HandlerSide:
    """``ServerConn``'s methods that its handlers' goroutines call (see the module docstring)."""

    # ServerConn's, which these methods use
    hs: Any
    c: Any
    h2: Any
    serve_g: Any
    done: bool
    in_go_away: bool
    go_away_code: int
    logf: Callable[..., None]
    flush: Callable[[], None]
    reset_stream: Callable[[int, int], None]
    close_stream: Callable[[Any, BaseException], None]
    wait_for_window: Callable[[], None]
    start_graceful_shutdown: Callable[[], None]
    send_serve_msg: Callable[[str], None]

    # -- the handler (Go's runHandler and responseWriter) --------------------------------------
    def run_handler(self, st: Any) -> None:
        """Go's ``runHandler``: the WSGI app, its answer, and a reset if it raised."""
        reqctx.with_context(st.environ, st.ctx)
        body: Any = None
        try:
            app = st.app or self.hs.app
            body = app(st.environ, lambda status, headers, exc_info=None: self.start_response(st, status, headers))
            chunks = known_chunks(body)
            if chunks is not None:
                last = b"".join(chunks)  # all at hand: it goes out with the end of the stream
            else:
                last = b""
                for chunk in body:  # each chunk the app yields is sent at once (Go's Flush)
                    if chunk or (not st.sent_headers and st.status is not None):
                        self.write_data_from_handler(st, bytes(chunk), end=False)  # an empty one flushes the header
            # the iterable's close is the handler's return (its deferred releases): it runs
            # before the end of the answer goes out, as Go ends the stream after the handler
            body, done = None, body
            close_iterable(done)
            # the handler has returned: its context ends before what completes its answer goes
            # out (Go's deferred cancelCtx runs before handlerDone flushes the end of the stream)
            st.cancel()
            self.write_data_from_handler(st, last, end=True)
        except Exception as err:
            st.cancel()
            with self.serve_g:
                # a write that failed because the client left (or reset the stream) is an error
                # Go's handler gets back, not a panic; ErrAbortHandler is a silent one
                gone = self.done or st.closed
                if not gone:
                    self.reset_stream(st.id, h2.errors.ErrorCodes.INTERNAL_ERROR)  # Go's handlerPanicRST
            if not gone and not isinstance(err, AbortHandler):
                self.logf("http2: panic serving %s: %s\n%s", self.c.remote_addr, str(err) or repr(err), traceback.format_exc())
        finally:
            try:
                close_iterable(body)
            except Exception:
                pass
            st.cancel()
            self.send_serve_msg(HANDLER_DONE_MSG)  # Go's deferred handlerDoneMsg: its place goes to the next

    def start_response(self, st: Any, status: str, headers: list) -> Callable[[bytes], None]:
        """WSGI's ``start_response``: the status and header for :meth:`write_headers`."""
        code = httpresponse._status_code(status)
        out = []
        for name, value in headers:
            if name.lower() == "connection":
                # not an HTTP/2 header; "close" asks for the same graceful GOAWAY
                if value.strip() == "close":
                    self.start_graceful_shutdown()
                continue
            out.append((name, str(value)))
        st.status, st.headers = code, out
        return lambda data: self.write_data_from_handler(st, bytes(data), end=False)

    def write_data_from_handler(self, st: Any, data: bytes, *, end: bool) -> None:
        """Go's ``writeDataFromHandler``: DATA as the windows allow; the header first."""
        with self.serve_g:
            if st.is_head and st.sent_headers:
                return  # a HEAD's body is counted, never sent: its HEADERS ended the stream
            if data and not httpresponse.body_allowed_for_status(st.status if st.status is not None else 200):
                data = b""  # Go refuses a body to a 1xx, 204 or 304 (ErrBodyNotAllowed): not sent
            view = memoryview(data)
            while True:
                if self.done or st.closed:  # Go's errClientDisconnected, errStreamClosed
                    raise httprequest.BodyError(ERR_CLIENT_DISCONNECTED if self.done else ERR_STREAM_CLOSED)
                if self.in_go_away and self.go_away_code != NO_ERROR:
                    self.wait_for_window()  # after an error GOAWAY nothing more is written: until the end
                    continue
                if not st.sent_headers:
                    if self.write_headers(st, data, end):
                        return
                if not view and not end:
                    self.flush()  # a header alone (a watch with nothing yet) goes out now too
                    return
                try:
                    window = min(self.h2.local_flow_control_window(st.id), self.h2.max_outbound_frame_size)
                    if window <= 0 and view:
                        self.wait_for_window()
                        continue
                    part, view = view[:window], view[window:]
                    last = end and not view
                    self.h2.send_data(st.id, bytes(part), end_stream=last)
                except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                    raise httprequest.BodyError(ERR_STREAM_CLOSED) from None  # h2 closed it first
                self.flush()
                if last:
                    self.wrote_end_stream(st)
                    return
                if not view and not end:
                    return

    def write_headers(self, st: Any, first: bytes, end: bool) -> bool:
        """Go's ``writeChunk`` for the first bytes of an answer (``writeHeaders``); True if it
        ended the stream: an answer without a body, or any answer to a HEAD, whose HEADERS end
        the stream whatever the handler writes.

        ``content-length`` as Go writes it: the app's, if it is a number (one that is not is
        dropped, and the rule below decides); else, when the handler is done (``end``) and its whole answer fits the first
        buffer, the answer's length, 0 included, except for a status without a body and for a
        HEAD the handler wrote nothing to."""
        code = st.status if st.status is not None else 200
        app_lengths = [v for n, v in st.headers if n.lower() == "content-length"]
        fields = st.headers
        clen = ""
        if app_lengths and app_lengths[0] != "":
            fields = [(n, v) for n, v in st.headers if n.lower() != "content-length"]
            if is_content_length(app_lengths[0]):
                clen = app_lengths[0]
        if not clen and not any(n.lower() == "content-length" for n, _ in fields) and end \
                and httpresponse.body_allowed_for_status(code) and (first or not st.is_head) \
                and len(first) <= HANDLER_CHUNK_WRITE_SIZE:
            clen = str(len(first))  # the whole answer fit the first buffer
        date = "" if any(n.lower() == "date" for n, _ in fields) else httpresponse.http_date()
        headers = response_fields(code, fields, clen, date)
        st.sent_headers = True
        end_stream = (end and not first) or st.is_head
        self.h2.send_headers(st.id, headers, end_stream=end_stream)
        if end_stream:
            self.flush()
            self.wrote_end_stream(st)
            return True
        return False

    def wrote_end_stream(self, st: Any) -> None:
        """Go's ``wroteFrame`` for a frame that ended the stream: closed, or - the client still
        sending its body - RST_STREAM NO_ERROR to stop it (RFC 9113 8.1), then closed."""
        if st.remote_closed:
            self.close_stream(st, EOFError(ERR_HANDLER_COMPLETE))
        else:
            self.reset_stream(st.id, NO_ERROR)


__all__ = ["HANDLER_CHUNK_WRITE_SIZE", "HandlerSide"]

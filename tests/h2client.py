"""An HTTP/2 client for tests, on the ``h2`` library: TLS with ALPN ``h2``, every frame the server
sends kept as an event, and ``wait_for`` to block until the events say what a test waits for."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from typing import Any, Callable, Iterator, Optional

import h2.config
import h2.events
import h2.exceptions
import h2.settings
from hyperframe.frame import Frame, GoAwayFrame, HeadersFrame

from genericserver.net.http.internal.http2.h2conn import GracefulH2Connection
from rawconn import handshake
from genericserver.testing.client import Result

WAIT = 10.0


class H2Client:
    """One HTTP/2 connection to ``127.0.0.1:port``; a reader thread records the server's events."""

    def __init__(self, port: int, ca_file: str, *, window: Optional[int] = None, token: str = "",
                 on_events: Optional[Callable[["H2Client"], None]] = None, validate: bool = True):
        ctx = ssl.create_default_context(cafile=ca_file)
        ctx.set_alpn_protocols(["h2", "http/1.1"])
        # TLS through memory buffers, every TLS call under one lock: OpenSSL does not allow a
        # read in one thread beside a write in another on the same connection (the reader thread
        # handles the server's session tickets while a test thread sends)
        self.raw = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        self.tls, self.incoming, self.outgoing = handshake(self.raw, ctx)
        assert self.tls.selected_alpn_protocol() == "h2"
        self.raw.settimeout(None)
        # validate=False: the server's fields as sent, where h2 would refuse one it finds malformed
        self.conn = GracefulH2Connection(h2.config.H2Configuration(
            client_side=True, header_encoding="utf-8", validate_inbound_headers=validate))
        self.conn.initiate_connection()
        if window:
            self.conn.increment_flow_control_window(window)
        self.cond = threading.Condition()
        self.events: list[Any] = []
        self.closed = False  # the server's FIN (or a reset) reached us
        self.sent: list[int] = []  # the streams this client opened
        self.on_events = on_events  # called (holding cond) after each batch of the server's frames
        # a bearer token on every request: an anonymous HTTP/2 client gets a GOAWAY after each
        # answer (the apiserver's UnauthenticatedHTTP2DOSMitigation)
        self.auth = (("authorization", f"Bearer {token}"),) if token else ()
        self._send_pending()
        self._reader = threading.Thread(target=self._read, name="h2-client-reader", daemon=True)
        self._reader.start()

    def _send_pending(self) -> None:
        # the caller holds cond
        data = self.conn.data_to_send()
        if data:
            self._send_raw(data)

    def _send_raw(self, data: bytes) -> None:
        # the caller holds cond: encrypt, then put the records on the wire
        self.tls.write(data)
        self.raw.sendall(self.outgoing.read())

    def _decrypt(self, data: bytes) -> bytes:
        # the caller holds cond: what the records that came hold, as plain bytes
        self.incoming.write(data)
        out = bytearray()
        while True:
            try:
                out += self.tls.read(65536)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                break
        pending = self.outgoing.read()
        if pending:
            self.raw.sendall(pending)
        return bytes(out)

    def _read(self) -> None:
        try:
            while True:
                raw = self.raw.recv(65536)
                if not raw:
                    break
                with self.cond:
                    data = self._decrypt(raw)
                    try:
                        events = self.conn.receive_data(data)
                    except h2.exceptions.ProtocolError as err:
                        self.events.append(err)
                        break
                    self.events.extend(events)
                    for ev in events:  # read bodies at once, as a client that keeps up
                        if isinstance(ev, h2.events.DataReceived):
                            self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                    try:
                        self._send_pending()
                    except OSError:
                        pass
                    if self.on_events is not None:
                        self.on_events(self)
                    self.cond.notify_all()
        except OSError:
            pass
        finally:
            with self.cond:
                self.closed = True
                self.cond.notify_all()

    # -- requests ------------------------------------------------------------------------
    def request(self, path: str, method: str = "GET", body: Optional[bytes] = None,
                headers: tuple[tuple[str, str], ...] = (), end: bool = True) -> int:
        """Open a stream; returns its id. ``end=False`` leaves the request body open."""
        with self.cond:
            sid = self.conn.get_next_available_stream_id()
            hdrs = [(":method", method), (":path", path), (":scheme", "https"), (":authority", "127.0.0.1"), *self.auth, *headers]
            self.conn.send_headers(sid, hdrs, end_stream=end and body is None)
            self.sent.append(sid)
            if body is not None:
                self.conn.send_data(sid, body, end_stream=end)
            self._send_pending()
            return sid

    def requests(self, paths: list[str]) -> list[int]:
        """Several GET streams in one write (one TLS record): the server reads them together."""
        with self.cond:
            sids = []
            for path in paths:
                sid = self.conn.get_next_available_stream_id()
                self.conn.send_headers(sid, [(":method", "GET"), (":path", path), (":scheme", "https"),
                                             (":authority", "127.0.0.1"), *self.auth], end_stream=True)
                self.sent.append(sid)
                sids.append(sid)
            self._send_pending()
            return sids

    def ping(self) -> None:
        """A PING, and wait for its ACK: what the server sent before it has arrived."""
        with self.cond:
            n = len([e for e in self.events if isinstance(e, h2.events.PingAckReceived)])
            self.conn.ping(b"h2client")
            self._send_pending()
        self.wait_for(lambda: len(self.of(h2.events.PingAckReceived)) > n, "the PING's ACK")

    def send_raw(self, data: bytes) -> None:
        """Bytes as they are (a frame h2 would not send)."""
        with self.cond:
            self._send_raw(data)

    def request_after_goaway(self, path: str) -> int:
        """A new stream on a connection the server already sent GOAWAY on: h2's client refuses
        to open one then, so the HEADERS frame is written by hand (a client that raced it)."""
        with self.cond:
            sid = self.conn.highest_outbound_stream_id + 2 if self.conn.highest_outbound_stream_id else 1
            self.conn.highest_outbound_stream_id = sid
            block = self.conn.encoder.encode([(":method", "GET"), (":path", path), (":scheme", "https"), (":authority", "127.0.0.1"), *self.auth])
            frame = HeadersFrame(sid, block, flags=["END_HEADERS", "END_STREAM"])
            self._send_raw(frame.serialize())
            return sid

    def ignore_stream_limit(self) -> None:
        """Behave as a client that opens more streams than the server allows (h2 keeps to the
        server's MAX_CONCURRENT_STREAMS otherwise): its own view of the limit is raised."""
        self.wait_for(lambda: self.of(h2.events.RemoteSettingsChanged), "the server's SETTINGS")
        with self.cond:
            self.conn.remote_settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = 1 << 20
            self.conn.remote_settings.acknowledge()

    def send_goaway(self, code: int = 0) -> None:
        """A GOAWAY of the client's (graceful by default), written by hand: h2 would close its
        own side and read nothing more, where the server's answers to the streams in flight must
        still come."""
        frame = GoAwayFrame(0)
        frame.last_stream_id, frame.error_code = 0, code
        with self.cond:
            self._send_raw(frame.serialize())

    def send_data(self, sid: int, data: bytes, end: bool = False) -> None:
        with self.cond:
            self.conn.send_data(sid, data, end_stream=end)
            self._send_pending()

    def reset(self, sid: int) -> None:
        with self.cond:
            self.conn.reset_stream(sid)
            self._send_pending()

    # -- what came back --------------------------------------------------------------------
    def wait_for(self, pred: Callable[[], Any], what: str = "", timeout: float = WAIT) -> Any:
        with self.cond:
            got = self.cond.wait_for(pred, timeout)
            assert got, f"timed out waiting for {what}; events: {self.events}"
            return got

    def of(self, kind: type, sid: Optional[int] = None) -> list[Any]:
        with self.cond:
            return [e for e in self.events if isinstance(e, kind) and (sid is None or getattr(e, "stream_id", None) == sid)]

    def goaway(self) -> Any:
        """Wait for the server's GOAWAY and return it."""
        self.wait_for(lambda: self.of(h2.events.ConnectionTerminated), "a GOAWAY")
        return self.of(h2.events.ConnectionTerminated)[0]

    def response(self, sid: int) -> tuple[int, dict[str, str], bytes]:
        """Wait for stream ``sid``'s whole answer: (status, headers, body)."""
        self.wait_for(lambda: self.of(h2.events.StreamEnded, sid) or self.of(h2.events.StreamReset, sid), f"stream {sid}'s end")
        if self.of(h2.events.StreamReset, sid) and not self.of(h2.events.StreamEnded, sid):
            raise StreamWasReset(self.of(h2.events.StreamReset, sid)[0].error_code)
        headers = dict(self.of(h2.events.ResponseReceived, sid)[0].headers)
        body = b"".join(e.data for e in self.of(h2.events.DataReceived, sid))
        return int(headers[":status"]), headers, body

    def result(self, sid: int, timeout: Optional[float]) -> Result:
        """Stream ``sid``'s answer as the HTTP/1 test client's :class:`Result` (an error if the
        stream was reset, the connection closed first, or ``timeout`` passed)."""
        def ended() -> bool:
            return bool(self.of(h2.events.StreamEnded, sid) or self.of(h2.events.StreamReset, sid) or self.closed)

        with self.cond:
            if not self.cond.wait_for(ended, timeout):
                return Result(error=TimeoutError(f"stream {sid}: no answer within {timeout} s"))
        if not self.of(h2.events.StreamEnded, sid):
            return Result(error=ConnectionResetError(f"stream {sid} ended without its answer"))
        headers = dict(self.of(h2.events.ResponseReceived, sid)[0].headers)
        body = b"".join(e.data for e in self.of(h2.events.DataReceived, sid))
        return Result(status=int(headers.pop(":status")), headers=headers, body=body)

    def takes_new_streams(self) -> bool:
        """Go's transport sends a new request here: open, and no GOAWAY read."""
        return not self.closed and not self.of(h2.events.ConnectionTerminated)

    def open_streams(self) -> list[int]:
        """The streams sent and not yet ended or reset (the caller holds cond)."""
        over = {e.stream_id for e in self.events if isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset))}
        return [sid for sid in self.sent if sid not in over]

    def shutdown_socket(self) -> None:
        """Hang up without waiting for the reader (callable from the reader itself)."""
        try:
            self.raw.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def wait_closed(self) -> None:
        self.wait_for(lambda: self.closed, "the server to close the connection")

    def close(self) -> None:
        try:
            try:
                self.raw.shutdown(socket.SHUT_RDWR)  # wakes the reader's recv; close alone does not
            except OSError:
                pass
            self.raw.close()
        finally:
            self._reader.join(WAIT)


class StreamWasReset(Exception):
    def __init__(self, code: int):
        super().__init__(f"stream reset with {code!r}")
        self.code = code


class H2Doer:
    """The graceful-termination tests' HTTP/2 client (Go's ``newClient``), with the HTTP/1 test
    client's ``get``: one connection reused until it read a GOAWAY, or (``new_connection``) a
    connection per request; a refused dial is a result, as Go's ``client.Do`` returns it."""

    def __init__(self, port: int, ca_file: str, *, new_connection: bool = False):
        self.port, self.ca_file, self.new_connection = port, ca_file, new_connection
        self.conn: Optional[H2Client] = None
        self.conns: list[H2Client] = []
        self._mu = threading.Lock()

    def _connection(self) -> tuple[H2Client, bool]:
        with self._mu:
            if self.conn is not None and not self.new_connection and self.conn.takes_new_streams():
                return self.conn, True
            self.conn = H2Client(self.port, self.ca_file)
            self.conns.append(self.conn)
            return self.conn, False

    def get(self, path: str, timeout: Optional[float] = 5.0) -> Result:
        try:
            c, reused = self._connection()
        except OSError as err:
            return Result(error=err)
        r = c.result(c.request(path), timeout)
        r.reused = reused
        if self.new_connection:
            c.close()
        return r

    def close(self) -> None:
        for c in self.conns:
            c.close()

    def __enter__(self) -> "H2Doer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class H2Pool:
    """What Go's HTTP/2 transport does with connections: reuse one until it reads a GOAWAY, then
    open a new one for the next request (``conns`` counts Go's tests' TCP connections)."""

    def __init__(self, port: int, ca_file: str):
        self.port, self.ca_file = port, ca_file
        self.conns: list[H2Client] = []

    def request(self, path: str, headers: tuple[tuple[str, str], ...] = ()) -> tuple[H2Client, int]:
        if not self.conns or not self.conns[-1].takes_new_streams():
            self.conns.append(H2Client(self.port, self.ca_file))
        c = self.conns[-1]
        return c, c.request(path, headers=headers)

    def close(self) -> None:
        for c in self.conns:
            c.close()


@contextlib.contextmanager
def h2_pool(app: Callable, tls_cert: tuple[str, str], **options: Any) -> Iterator[H2Pool]:
    """``app`` served over TLS with HTTP/2 (its GOAWAY timer shortened, as Go's tests shorten
    it), and a pool of connections to it; both closed at the end."""
    import pytest

    from genericserver.net.http.internal.http2 import server as http2server
    from genericserver.net.http import server as hs
    from genericserver import runtime as rt

    options.setdefault("go_away_timeout", 0.05)
    ctx = hs.ssl_context_from_files(*tls_cert, alpn=("h2", "http/1.1"))
    srv = hs.Server(app, ssl_context=ctx, http2=http2server.Server(http2server.Options(**options)))
    ln = hs.listen()
    serving = rt.go(lambda: pytest.raises(hs.ServerClosed, srv.serve, ln), name="test-serve")
    pool = H2Pool(ln.getsockname()[1], tls_cert[0])
    try:
        yield pool
    finally:
        pool.close()
        srv.close()
        assert serving.join(WAIT)


def raw_frames(port: int, ca_file: str, after_preface: bytes, until: Callable[[list], bool] = lambda got: False) -> list:
    """A client with no HTTP/2 state of its own: the preface and ``after_preface`` (raw frames,
    as a test writes them), then the server's frames, parsed, until ``until(frames)`` holds or
    the server closes the connection."""
    ctx = ssl.create_default_context(cafile=ca_file)
    ctx.set_alpn_protocols(["h2"])
    raw = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    try:
        tls, incoming, outgoing = handshake(raw, ctx)
        tls.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + after_preface)
        raw.sendall(outgoing.read())
        got: list = []
        plain = bytearray()
        while not until(got):
            chunk = raw.recv(65536)
            if not chunk:
                break
            incoming.write(chunk)
            try:
                while data := tls.read(65536):
                    plain += data
            except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                pass
            while len(plain) >= 9:
                frame, length = Frame.parse_frame_header(memoryview(plain[:9]))
                if len(plain) < 9 + length:
                    break
                frame.parse_body(memoryview(plain[9:9 + length]))
                got.append(frame)
                del plain[:9 + length]
            pending = outgoing.read()
            if pending:
                raw.sendall(pending)
        return got
    finally:
        raw.close()

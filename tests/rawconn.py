"""A raw client connection for the HTTP/1 shutdown corpus's replay (tests/parity/README.md): bytes
in, bytes out, and how the connection ended, as the Go recorder's raw connections see it.

Over TLS the records go through memory buffers under one lock (OpenSSL allows no read in one
thread beside a write in another on one connection), so that ``close_write`` can send
close_notify and then a FIN without waiting for the server's own close_notify, as Go's
``tls.Conn.CloseWrite`` followed by the TCP half-close does."""

from __future__ import annotations

import errno
import socket
import ssl
import threading
from typing import Callable, Optional

WAIT = 10.0


def handshake(raw: socket.socket, ctx: ssl.SSLContext) -> tuple[ssl.SSLObject, ssl.MemoryBIO, ssl.MemoryBIO]:
    """A client's TLS handshake on ``raw`` through memory buffers: (the TLS object, its incoming
    and outgoing buffers), every later TLS call to be made under one lock (see above)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            raw.sendall(outgoing.read())
            data = raw.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection during the TLS handshake")
            incoming.write(data)
    raw.sendall(outgoing.read())
    return tls, incoming, outgoing


class RawConn:
    def __init__(self, port: int, since: Callable[[], float], tls: Optional[ssl.SSLContext] = None):
        self.since = since
        self.received = bytearray()
        self.end: Optional[str] = None  # EOF, RST, or open (we closed it)
        self.at_ms = 0.0
        self.cond = threading.Condition()
        self._closing = False
        self.raw = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        self.tls: Optional[ssl.SSLObject] = None
        if tls is not None:
            self.tls, self.incoming, self.outgoing = handshake(self.raw, tls)
        self.raw.settimeout(None)
        self._reader = threading.Thread(target=self._read, name="rawconn-reader", daemon=True)
        self._reader.start()

    def _finish(self, end: str) -> None:
        with self.cond:
            if self.end is None:
                self.end, self.at_ms = ("open" if self._closing else end), self.since()
            self.cond.notify_all()

    def _read(self) -> None:
        try:
            while True:
                data = self.raw.recv(65536)
                if not data:
                    return self._finish("EOF")
                with self.cond:
                    if self.tls is None:
                        self.received += data
                    else:
                        self.incoming.write(data)
                        try:
                            while True:
                                chunk = self.tls.read(65536)
                                if not chunk:
                                    # the server's close_notify (CPython 3.11's SSLObject.read says
                                    # b"" where a later one raises SSLZeroReturnError): Go's reader says EOF
                                    self.cond.notify_all()
                                    return self._finish("EOF")
                                self.received += chunk
                        except ssl.SSLWantReadError:
                            pass
                        except ssl.SSLZeroReturnError:
                            self.cond.notify_all()
                            return self._finish("EOF")
                    self.cond.notify_all()
        except OSError as err:
            self._finish("RST" if err.errno == errno.ECONNRESET else "EOF")

    def send(self, data: bytes) -> None:
        try:
            with self.cond:
                if self.tls is None:
                    self.raw.sendall(data)
                else:
                    self.tls.write(data)
                    self.raw.sendall(self.outgoing.read())
        except OSError:
            pass  # the server is gone: what the reader saw says how

    def wait(self, predicate: Callable[[], bool]) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: predicate() or self.end is not None, WAIT)

    def seen(self, text: bytes) -> bool:
        return self.wait(lambda: text in self.received)

    def ended(self) -> bool:
        return self.wait(lambda: False) and self.end is not None

    def close_write(self) -> None:
        with self.cond:
            if self.tls is not None:
                try:
                    self.tls.unwrap()  # close_notify out; the server's answer is not waited for
                except ssl.SSLWantReadError:
                    pass
                self.raw.sendall(self.outgoing.read())
            self.raw.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        """The client leaves: whatever the connection was, it ends here as ``open``."""
        with self.cond:
            self._closing = True
        try:
            self.raw.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._reader.join(WAIT)
        self.raw.close()

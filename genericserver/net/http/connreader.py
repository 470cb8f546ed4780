"""Port of Go's net/http package: ``connReader`` (server.go, Go 1.26.8), a connection's reads and its background read.

:class:`ConnReader` is what a connection's :class:`genericserver.bufio.bufio.Reader` reads from: the
socket, bounded by a read limit while a request's header is read (Go's ``setReadLimit``: the
header may take ``MaxHeaderBytes`` + 4096 bytes; past that every read is an end of stream and
the request gets 431) and by a deadline (read-header and idle timeouts).

:class:`BackgroundReads` is Go's ``startBackgroundRead`` / ``abortPendingRead``: while a handler
runs, with its request body fully read, the server watches the connection; if the client goes
away (end of stream, or a reset), the request's context is cancelled at once, so a watch with
nothing to send, or a slow request, ends instead of holding the shutdown up until its timeout.
Go does this with one goroutine per connection blocked in a one-byte read that the handler's end
aborts with a past deadline. A Python thread blocked in ``recv`` cannot be woken without shutting
the socket down, so here one goroutine per server waits on all watched sockets at once (epoll
on Linux, ``selectors`` elsewhere), and aborting a watch is a flag under a lock. It peeks rather than
reads (``MSG_PEEK``): bytes of a pipelined next request stay in the socket for the next read, where
Go keeps its one byte in the ``connReader``. Over TLS the peek sees raw bytes, which a thread
cannot decrypt while another writes (an OpenSSL connection is not shared between threads), so a
TLS connection is watched for bytes too, and the bytes are judged by their record: an alert
(close_notify, or any other: Go's ``tls.Conn`` reads close_notify as the end of the stream and
any other alert as an error) cancels the request, with or without the peer's FIN after it.
TLS 1.3 hides the record type, but not the size: an encrypted alert is 19 bytes (the 2-byte
alert, its inner type and a 16-byte tag), which no whole pipelined request could be. Bytes
followed by the peer's FIN (the connection is in CLOSE_WAIT) cancel it too; other bytes end the
watch as a pipelined byte would; a client that closes without close_notify is seen as gone, as
in Go.
"""

from __future__ import annotations

import errno
import select
import selectors
import socket
import ssl
from typing import Any, Callable, Optional

from genericserver import runtime as rt

INFINITE = 1 << 62


class ConnReader:
    """A connection's source of bytes: ``read(n)`` with Go's read limit and a deadline.

    ``on_error`` runs when a read fails or meets the end of the stream, before the caller sees
    it: Go's ``handleReadError`` cancels the connection's context there, so a handler learns
    that its client is gone from the context as soon as its read does."""

    __slots__ = ("sock", "remain", "deadline", "_timeout", "on_error")

    def __init__(self, sock: Any, on_error: Optional[Callable[[], None]] = None):
        self.sock = sock
        self.on_error = on_error
        self.remain = INFINITE  # bytes that may still be read (the header's limit)
        self.deadline: Optional[float] = None  # runtime time after which reads fail
        self._timeout: Optional[float] = None

    def set_read_limit(self, remain: int) -> None:
        self.remain = remain

    def set_infinite_read_limit(self) -> None:
        self.remain = INFINITE

    def hit_read_limit(self) -> bool:
        return self.remain <= 0

    def set_timeout(self, t: Optional[float]) -> None:
        if t != self._timeout:
            self.sock.settimeout(t)
            self._timeout = t

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes; ``b""`` at the end of the stream or of the read limit. A passed
        deadline raises ``TimeoutError``; a failed socket its ``OSError``."""
        if self.remain <= 0:
            return b""
        n = min(n, self.remain)
        if self.deadline is None:
            self.set_timeout(None)
        else:
            left = self.deadline - rt.now()
            if left <= 0:
                raise TimeoutError("i/o timeout")
            self.set_timeout(left)
        try:
            data = self.sock.recv(n)
        except OSError:
            if self.on_error is not None:
                self.on_error()
            raise
        if not data and self.on_error is not None:
            self.on_error()  # io.EOF is a read error to Go's connReader too
        self.remain -= len(data)
        return data


IDLE, WATCHING, READING = "idle", "watching", "reading"


class _Watch:
    __slots__ = ("sock", "gone", "state")

    def __init__(self, sock: Any, gone: Callable[[], None]):
        self.sock, self.gone, self.state = sock, gone, IDLE


class BackgroundReads:
    """Go's background reads for every connection of one server, on one goroutine.

    :meth:`start` and :meth:`abort` bracket each request's handler; :meth:`forget` ends a
    connection. On Linux a connection is registered with epoll once, for hang-ups only
    (``EPOLLRDHUP``: the peer shut its side; a reset or error is always reported): a request
    then costs no system call, and a keep-alive client's next request wakes nobody. Elsewhere
    (``selectors``) each request registers the socket for reading and takes it out again.
    """

    def __init__(self, name: str = "http-background-read"):
        self._name = name
        self._mu = rt.lock()
        self._cond = rt.condition(self._mu)
        self._watches: dict[int, _Watch] = {}  # by the socket's file descriptor
        self._poller: Optional[_Poller] = None  # while the goroutine runs
        self._running = self._stopping = False

    def start(self, sock: Any, gone: Callable[[], None]) -> None:
        """Go's ``startBackgroundRead``: call ``gone()`` if the client hangs up before ``abort``."""
        with self._mu:
            fd = sock.fileno()
            if fd < 0:
                return
            w = self._watches.get(fd)
            if w is None or w.sock is not sock:
                if self._poller is None:
                    self._poller = _Poller.new()
                elif w is not None:
                    self._poller.remove(fd)  # a closed connection's, whose descriptor was reused
                w = self._watches[fd] = _Watch(sock, gone)
                self._poller.add(fd)
                if not self._running:
                    self._running = True
                    rt.go(self._loop, self._poller, name=self._name)
            w.gone, w.state = gone, WATCHING
            self._poller.arm(fd, tls=isinstance(sock, ssl.SSLSocket))  # type: ignore[union-attr]

    def abort(self, sock: Any) -> None:
        """Go's ``abortPendingRead``: stop watching ``sock``, waiting out a peek in progress."""
        with self._mu:
            w = self._settled_watch_locked(sock)
            if w is not None and w.state == WATCHING:
                w.state = IDLE
                self._poller.disarm(sock.fileno())  # type: ignore[union-attr]

    def forget(self, sock: Any) -> None:
        """The connection ends: stop watching it for good (before its socket is closed)."""
        with self._mu:
            w = self._settled_watch_locked(sock)
            if w is not None and self._watches.get(sock.fileno()) is w:  # (a peek may have let go of it)
                self._forget_locked(sock.fileno())

    def _settled_watch_locked(self, sock: Any) -> Optional[_Watch]:
        """``sock``'s watch once no peek at it is in progress; None if it is not watched."""
        w = self._watches.get(sock.fileno())
        if w is None or w.sock is not sock:
            return None
        while w.state == READING:
            self._cond.wait()
        return w

    def stop_when_idle(self) -> None:
        """Let the goroutine end once nothing is watched (the server is shutting down)."""
        with self._mu:
            self._stopping = True
            if self._running and not self._watches:
                self._poller.wake()  # type: ignore[union-attr]

    def _forget_locked(self, fd: int) -> None:
        del self._watches[fd]
        self._poller.remove(fd)  # type: ignore[union-attr]
        if self._stopping and not self._watches:
            self._poller.wake()  # type: ignore[union-attr]

    def _loop(self, poller: "_Poller") -> None:
        while True:
            for fd in poller.wait():
                self._peek(fd)
            with self._mu:
                if self._stopping and not self._watches:
                    self._running = False
                    poller.close()
                    self._poller = None
                    return

    def _peek(self, fd: int) -> None:
        with self._mu:
            w = self._watches.get(fd)
            if w is None:
                return
            if w.state != WATCHING:
                # the peer hung up between two requests: the connection's own read will see it
                self._forget_locked(fd)
                return
            w.state = READING
        gone = rearm = False
        try:
            # the raw socket's recv even over TLS: look, do not consume, do not block
            gone = socket.socket.recv(w.sock, 1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
            if not gone and isinstance(w.sock, ssl.SSLSocket):
                # an alert (close_notify), or bytes then the peer's FIN: Go's tls.Conn reads the
                # end of the stream there, and the request is over (a pipelined request followed
                # by a hang-up is taken for the same; Go would decrypt it first)
                gone = _tls_alert(w.sock) or _peer_finished(w.sock)
        except BlockingIOError:
            rearm = True  # woken for nothing: keep watching
        except OSError as err:
            gone = err.errno != errno.EAGAIN
        with self._mu:
            if rearm:
                w.state = WATCHING
            else:
                # bytes of a pipelined request (Go keeps its one byte and stops watching), or the
                # end: either way this connection is not watched until its next request
                w.state = IDLE
                if self._watches.get(fd) is w:
                    self._forget_locked(fd)
            self._cond.notify_all()
        if gone:
            w.gone()


_TCP_CLOSE_WAIT = 8  # linux/tcp_states.h: the peer sent its FIN, we have not closed yet


def _peer_finished(sock: Any) -> bool:
    """Whether the peer has shut its side (the connection is in CLOSE_WAIT), where the system says."""
    if not hasattr(socket, "TCP_INFO"):
        return False
    try:
        return socket.socket.getsockopt(sock, socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == _TCP_CLOSE_WAIT
    except OSError:
        return False


_TLS_ALERT, _TLS_APPLICATION_DATA = 21, 23  # TLS record content types
_TLS13_ALERT_RECORD_LENGTH = 2 + 1 + 16  # an alert, its inner content type, the AEAD tag


def _tls_alert(sock: Any) -> bool:
    """Whether the bytes waiting are one TLS record holding an alert (see the module docstring)."""
    try:
        head = socket.socket.recv(sock, 5 + _TLS13_ALERT_RECORD_LENGTH + 1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except OSError:
        return False
    if len(head) < 5:
        return False
    length = int.from_bytes(head[3:5], "big")
    if head[0] == _TLS_ALERT:  # TLS 1.2 shows the type
        return True
    return head[0] == _TLS_APPLICATION_DATA and length == _TLS13_ALERT_RECORD_LENGTH and len(head) == 5 + length


class _Poller:
    """Waits for the watched sockets, and for :meth:`wake`; :meth:`new` picks the best this
    system has. A subclass registers descriptors and says which are ready (:meth:`_ready`)."""

    @staticmethod
    def new() -> "_Poller":
        return _EpollHangups() if hasattr(select, "epoll") and hasattr(select, "EPOLLRDHUP") else _SelectorReads()

    def __init__(self) -> None:
        self._wake_r, self._wake_w = socket.socketpair()  # a byte in it ends a wait

    def add(self, fd: int) -> None:
        """A new connection (under the watcher's lock)."""

    def arm(self, fd: int, tls: bool = False) -> None:
        """Its handler starts (over TLS, bytes are looked at too: a close_notify has no FIN)."""

    def disarm(self, fd: int) -> None:
        """Its handler ended."""

    def remove(self, fd: int) -> None:
        """The connection ends, or its hang-up was handled."""

    def wait(self) -> list[int]:
        """Block until sockets need a look, or :meth:`wake`; the sockets' descriptors."""
        fds = []
        for fd in self._ready():
            if fd == self._wake_r.fileno():
                self._wake_r.recv(4096)
            else:
                fds.append(fd)
        return fds

    def _ready(self) -> list[int]:
        raise NotImplementedError

    def wake(self) -> None:
        """Make :meth:`wait` return (for the loop to see that it should end)."""
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def close(self) -> None:
        self._wake_r.close()
        self._wake_w.close()


class _EpollHangups(_Poller):
    """Linux: each connection registered once, for its peer hanging up (``EPOLLRDHUP``); a
    socket's readability (a keep-alive client's next request) wakes nobody, but for a TLS
    connection's while its handler runs (its close_notify)."""

    def __init__(self) -> None:
        super().__init__()
        self._ep = select.epoll()
        self._ep.register(self._wake_r.fileno(), select.EPOLLIN)
        self._reading: set[int] = set()  # TLS connections watched for bytes as well

    def add(self, fd: int) -> None:
        self._ep.register(fd, select.EPOLLRDHUP)  # errors and hang-ups are always reported

    def arm(self, fd: int, tls: bool = False) -> None:
        if tls:  # a close_notify alert comes as bytes, with no hang-up behind it
            self._ep.modify(fd, select.EPOLLRDHUP | select.EPOLLIN)
            self._reading.add(fd)

    def disarm(self, fd: int) -> None:
        if fd in self._reading:  # (a plain connection's request costs no system call)
            self._reading.discard(fd)
            try:
                self._ep.modify(fd, select.EPOLLRDHUP)
            except (OSError, ValueError):
                pass

    def remove(self, fd: int) -> None:
        self._reading.discard(fd)
        try:
            self._ep.unregister(fd)
        except (OSError, ValueError):
            pass

    def _ready(self) -> list[int]:
        return [fd for fd, _ in self._ep.poll()]

    def close(self) -> None:
        self._ep.close()
        super().close()


class _SelectorReads(_Poller):
    """Elsewhere: a socket is registered for reading while its handler runs."""

    def __init__(self) -> None:
        super().__init__()
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._wake_r, selectors.EVENT_READ)
        self._notices_new = type(self._sel).__name__ in ("EpollSelector", "KqueueSelector", "DevpollSelector")

    def arm(self, fd: int, tls: bool = False) -> None:
        self._sel.register(fd, selectors.EVENT_READ)
        if not self._notices_new:
            self.wake()  # a poll()- or select()-based selector sees a new socket on its next call only

    def disarm(self, fd: int) -> None:
        self.remove(fd)

    def remove(self, fd: int) -> None:
        try:
            self._sel.unregister(fd)
        except (KeyError, ValueError, OSError):
            pass

    def _ready(self) -> list[int]:
        return [key.fd for key, _ in self._sel.select()]

    def close(self) -> None:
        self._sel.close()
        super().close()

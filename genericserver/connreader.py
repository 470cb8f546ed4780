"""Port of Go's net/http package: ``connReader`` (server.go), a connection's reads and its background read.

:class:`ConnReader` is what a connection's :class:`genericserver.bufio.Reader` reads from: the
socket, bounded by a read limit while a request's header is read (Go's ``setReadLimit``: the
header may take ``MaxHeaderBytes`` + 4096 bytes; past that every read is an end of stream and
the request gets 431) and by a deadline (read-header and idle timeouts).

:class:`BackgroundReads` is Go's ``startBackgroundRead`` / ``abortPendingRead``: while a handler
runs, with its request body fully read, the server watches the connection; if the client goes
away (end of stream, or a reset), the request's context is cancelled at once, so a watch with
nothing to send, or a slow request, ends instead of holding the shutdown up until its timeout.
Go does this with one goroutine per connection blocked in a one-byte read that the handler's end
aborts with a past deadline. A Python thread blocked in ``recv`` cannot be woken without shutting
the socket down, so here one goroutine per server waits on all watched sockets at once
(``selectors``), and aborting a watch is taking the socket out of the set. It peeks rather than
reads (``MSG_PEEK``): bytes of a pipelined next request stay in the socket for the next read, where
Go keeps its one byte in the ``connReader``. Over TLS the peek sees raw bytes, which a thread
cannot decrypt while another writes (an OpenSSL connection is not shared between threads): any
bytes, a close_notify alert too, end the watch as a pipelined byte would; a client that closes
without close_notify is seen as gone, as in Go.
"""

from __future__ import annotations

import errno
import selectors
import socket
from typing import Any, Callable, Optional

from genericserver import runtime as rt

INFINITE = 1 << 62


class ConnReader:
    """A connection's source of bytes: ``read(n)`` with Go's read limit and a deadline."""

    __slots__ = ("sock", "remain", "deadline", "_timeout")

    def __init__(self, sock: Any):
        self.sock = sock
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
        data = self.sock.recv(n)
        self.remain -= len(data)
        return data


IDLE, WATCHING, READING = "idle", "watching", "reading"


class _Watch:
    __slots__ = ("sock", "gone", "state")

    def __init__(self, sock: Any, gone: Callable[[], None]):
        self.sock, self.gone, self.state = sock, gone, WATCHING


class BackgroundReads:
    """Go's background reads for every connection of one server, on one goroutine."""

    def __init__(self, name: str = "http-background-read"):
        self._name = name
        self._mu = rt.lock()
        self._cond = rt.condition(self._mu)
        self._watches: dict[int, _Watch] = {}  # by the socket's file descriptor
        self._sel: Optional[selectors.BaseSelector] = None  # with the two below, while the goroutine runs
        self._wake_r: Optional[socket.socket] = None
        self._wake_w: Optional[socket.socket] = None
        self._running = self._stopping = False

    def start(self, sock: Any, gone: Callable[[], None]) -> None:
        """Go's ``startBackgroundRead``: call ``gone()`` if the client hangs up before ``abort``."""
        with self._mu:
            fd = sock.fileno()
            if fd < 0 or fd in self._watches:
                return
            self._watches[fd] = _Watch(sock, gone)
            if self._sel is None:
                self._sel = selectors.DefaultSelector()
                self._wake_r, self._wake_w = socket.socketpair()
                self._sel.register(self._wake_r, selectors.EVENT_READ)
            self._sel.register(fd, selectors.EVENT_READ)
            if not self._running:
                self._running = True
                rt.go(self._loop, self._sel, self._wake_r, name=self._name)
            elif not isinstance(self._sel, (getattr(selectors, "EpollSelector", ()), getattr(selectors, "KqueueSelector", ()))):
                self._wake()  # a poll()- or select()-based selector only sees new sockets on its next call

    def abort(self, sock: Any) -> None:
        """Go's ``abortPendingRead``: stop watching ``sock``, waiting out a peek in progress."""
        with self._mu:
            fd = sock.fileno()
            w = self._watches.get(fd)
            if w is None or w.sock is not sock:
                return
            while w.state == READING:
                self._cond.wait()
            if self._watches.get(fd) is w:
                self._forget_locked(fd)

    def stop_when_idle(self) -> None:
        """Let the goroutine end once nothing is watched (the server is shutting down)."""
        with self._mu:
            self._stopping = True
            if self._running and not self._watches:
                self._wake()

    def _forget_locked(self, fd: int) -> None:
        del self._watches[fd]
        try:
            self._sel.unregister(fd)  # type: ignore[union-attr]
        except (KeyError, ValueError, OSError):
            pass
        if self._stopping and not self._watches:
            self._wake()

    def _wake(self) -> None:
        if self._wake_w is not None:
            try:
                self._wake_w.send(b"x")
            except OSError:
                pass

    def _loop(self, sel: selectors.BaseSelector, wake_r: socket.socket) -> None:
        while True:
            for key, _ in sel.select():
                if key.fileobj is wake_r:
                    wake_r.recv(4096)
                else:
                    self._peek(key.fd)
            with self._mu:
                if self._stopping and not self._watches:
                    self._running = False
                    sel.close()
                    wake_r.close()
                    self._wake_w.close()  # type: ignore[union-attr]
                    self._sel = self._wake_r = self._wake_w = None
                    return

    def _peek(self, fd: int) -> None:
        with self._mu:
            w = self._watches.get(fd)
            if w is None or w.state != WATCHING:
                return
            w.state = READING
        gone = rearm = False
        try:
            # the raw socket's recv even over TLS: look, do not consume, do not block
            gone = socket.socket.recv(w.sock, 1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            rearm = True  # woken for nothing: keep watching
        except OSError as err:
            gone = err.errno != errno.EAGAIN
        with self._mu:
            w.state = WATCHING if rearm else IDLE
            if not rearm and self._watches.get(fd) is w:
                self._forget_locked(fd)
            self._cond.notify_all()
        if gone:
            w.gone()

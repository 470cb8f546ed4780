"""Port of Go's net package (dial.go ``Listen``, sock_linux.go ``maxListenerBacklog``, ipsock.go ``JoinHostPort``, net.go ``OpError``, Go 1.26.8): a listening TCP socket.

What a server listens on: a TCP socket with ``SO_REUSEADDR`` (as Go sets on Unix) and the
kernel's largest accept queue, and a bind failure worded as Go's ``*net.OpError``.

Four Go files in one module: the listener needs a few lines of each.
"""

from __future__ import annotations

import socket
from typing import Optional

__all__ = ["BindError", "join_host_port", "listen", "max_listener_backlog"]


class BindError(OSError):
    """Listening failed; the message is Go's ``listen tcp <addr>: bind: <reason>``."""

    def __init__(self, err: OSError, address: str):
        reason = err.strerror or str(err)
        super().__init__(err.errno, f"listen tcp {address}: bind: {reason[:1].lower()}{reason[1:]}")
        self.address = address

    def __str__(self) -> str:
        return str(self.strerror)


def join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def max_listener_backlog() -> int:
    """Go's ``maxListenerBacklog`` (net/sock_linux.go): the kernel's ``somaxconn``, not 128.

    With Python's default of 128, a burst of connects overflows the accept queue and the client
    waits out SYN retransmits (about a second each); Go asks for what the kernel allows.
    """
    try:
        with open("/proc/sys/net/core/somaxconn") as f:
            n = int(f.readline().split()[0])
    except (OSError, ValueError, IndexError):
        return socket.SOMAXCONN
    if n <= 0:
        return socket.SOMAXCONN
    return min(n, (1 << 32) - 1) if n > (1 << 16) - 1 else n


def listen(host: str = "127.0.0.1", port: int = 0, *, backlog: Optional[int] = None) -> socket.socket:
    """``net.Listen("tcp", host:port)``; port 0 picks a free port. Raises :class:`BindError`."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Go does on Unix
        sock.bind((host, port))
        sock.listen(max_listener_backlog() if backlog is None else backlog)
    except OSError as err:
        sock.close()
        raise BindError(err, join_host_port(host, port)) from err
    return sock

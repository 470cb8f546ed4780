"""Leak checks for tests: goroutines still running and TCP sockets still listening (no Go twin).

The rules of the project say every test ends with no stray threads and no open listener;
``tests/conftest.py`` calls these after each test.
"""

from __future__ import annotations

import os
import threading
from typing import Iterable


def _socket_inodes() -> set[str]:
    inodes = set()
    fd_dir = "/proc/self/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def listening_ports() -> set[int]:
    """TCP ports this process holds a listening socket on (Linux ``/proc``; empty elsewhere)."""
    mine = _socket_inodes()
    ports: set[int] = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    cols = line.split()
                    if len(cols) > 9 and cols[3] == "0A" and cols[9] in mine:
                        ports.add(int(cols[1].rsplit(":", 1)[1], 16))
        except OSError:
            continue
    return ports


def stray_threads(before: Iterable[threading.Thread], wait: float = 5.0) -> list[threading.Thread]:
    """Threads started since ``before`` that are still alive after up to ``wait`` seconds of joining."""
    known = set(before)
    stray = [t for t in threading.enumerate() if t not in known and t is not threading.current_thread()]
    alive = []
    for t in stray:
        t.join(wait)
        if t.is_alive():
            alive.append(t)
            wait = 0.0  # after the first stuck thread, do not wait again for each of the others
    return alive

"""Leak checks for tests: goroutines still running and TCP sockets still listening (no Go twin).

The rules of the project say every test ends with no stray threads and no open listener;
``tests/conftest.py`` calls these after each test.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Iterable

from genericserver import runtime
from genericserver.testing import sim_threads


def _socket_fds() -> list[int]:
    """This process's file descriptors that are sockets (Linux ``/proc``; none elsewhere)."""
    fd_dir = "/proc/self/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return []
    found = []
    for fd in fds:
        try:
            if os.readlink(os.path.join(fd_dir, fd)).startswith("socket:["):
                found.append(int(fd))
        except OSError:
            continue
    return found


def listening_ports() -> set[int]:
    """TCP ports this process holds a listening socket on (Linux ``/proc``; empty elsewhere).

    Each socket descriptor is asked directly (``SO_ACCEPTCONN`` on a duplicate of it), which
    costs microseconds; reading ``/proc/net/tcp`` walks the kernel's whole table, and costs
    milliseconds per call, twice per test."""
    ports: set[int] = set()
    for fd in _socket_fds():
        try:
            s = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue  # closed meanwhile, or not a socket Python can wrap
        try:
            if s.type == socket.SOCK_STREAM and s.family in (socket.AF_INET, socket.AF_INET6) \
                    and s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                ports.add(s.getsockname()[1])
        except OSError:
            pass
        finally:
            s.close()
    return ports


def stray_threads(before: Iterable[threading.Thread], wait: float = 5.0) -> list[threading.Thread]:
    """Threads started since ``before`` that are still alive after up to ``wait`` seconds of joining.

    The simulation's idle goroutine threads (:mod:`genericserver.testing.sim_threads`) are
    told to end rather than waited for while they linger, also one that goes idle while we
    wait (a goroutine that escaped the simulation's control and came back late).
    """
    sim_threads.release_idle()
    known = set(before)
    stray = [t for t in threading.enumerate() if t not in known and t is not threading.current_thread()]
    alive = []
    for t in stray:
        deadline = time.monotonic() + wait
        while t.is_alive() and time.monotonic() < deadline:
            t.join(min(0.05, max(0.0, deadline - time.monotonic())))
            sim_threads.release_idle()
        if t.is_alive():
            alive.append(t)
            wait = 0.0  # after the first stuck thread, do not wait again for each of the others
    return alive


def goroutines_started_since(before: Iterable[object]) -> list:
    """The threads runtime's live goroutines that ``before`` (a snapshot of ``live()``) did not
    hold: a test is blamed for what it left, not for what an earlier test that failed left."""
    known = set(before)
    return [g for g in runtime.THREADS.live() if g not in known]

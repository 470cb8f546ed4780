"""A ``genericserver serve`` subprocess for end-to-end tests (its stderr read line by line)."""

from __future__ import annotations

import os
import queue
import re
import signal
import threading
from typing import Optional

import pytest

import zygote
from genericserver.testing.client import Client

WAIT = 30.0


SERVING = r"Serving (?:in)?securely on (127\.0\.0\.1):(\d+)"


class ServerProcess:
    """``python -m genericserver serve ...`` with its stderr read line by line; ``command``
    and ``ready`` (a pattern whose second group is the port) for another command that serves."""

    def __init__(self, *flags: str, command: tuple[str, ...] = ("serve",), ready: str = SERVING):
        # `python -m genericserver ...`, forked warm (tests/zygote.py)
        self.proc = zygote.Process(
            [*command, "--secure-port", "0", *flags],
            # a server that hangs can be made to print every thread's stack (see expect)
            env={**os.environ, "PYTHONFAULTHANDLER": "1"},
        )
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, name="stderr-reader", daemon=True)
        self._reader.start()
        m = self.expect(ready)
        self.port = int(m.group(2))

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, pattern: str) -> re.Match:
        """Read stderr until a line matches (the server's own log tells us where it is)."""
        rx = re.compile(pattern)
        while True:
            try:
                line = self.lines.get(timeout=WAIT)
            except queue.Empty:
                self._fail_hung(pattern)
            if line is None:
                pytest.fail(f"server exited before logging {pattern!r}; log:\n" + "\n".join(self.seen))
            self.seen.append(line)
            m = rx.search(line)
            if m:
                return m

    def _fail_hung(self, pattern: str) -> None:
        # SIGABRT makes faulthandler write every thread's stack to stderr before the process dies
        self.proc.send_signal(signal.SIGABRT)
        self.wait()
        pytest.fail(f"no line matching {pattern!r} within {WAIT:g} s; log and stacks:\n" + "\n".join(self.seen))

    def signal(self, sig: int = signal.SIGTERM) -> None:
        self.proc.send_signal(sig)

    def wait(self) -> int:
        code = self.proc.wait(WAIT)
        self._reader.join(WAIT)
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.seen.append(line)
        return code

    def wait_ready(self) -> None:
        """Poll /readyz until 200, as a load balancer does (and Go's tests, with wait.Poll).

        The post-start hooks run in goroutines of another process, so there is no signal to wait
        on here; /readyz is red until they finished (``[-]poststarthook/... failed``).
        """
        seen = threading.Event()  # never set: only its timed wait paces the polling
        for _ in range(int(WAIT / 0.02)):
            with self.client() as c:
                r = c.get("/readyz")
            if r.status == 200:
                return
            assert r.status == 500 and b"poststarthook/" in r.body, r
            seen.wait(0.02)
        pytest.fail("/readyz never turned green")

    def client(self, new_connection: bool = True) -> Client:
        return Client("127.0.0.1", self.port, new_connection=new_connection)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def served():
    """A plain ``serve`` for a module's tests to share (make it a fixture of the module)."""
    sp = ServerProcess()
    yield sp
    sp.kill()

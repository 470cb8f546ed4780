"""``python -m genericserver`` for tests, forked from a warm interpreter instead of started cold.

A cold start spends 0.3 CPU-seconds importing genericserver before it serves, and the suite starts
some forty servers (tests/serverprocess.py, the docs' sessions). The zygote is one plain ``python``
(this file run as a script) that imports ``genericserver.__main__`` once and then forks a child per
command. There is one per run: ``make test``'s parent starts it (:func:`start`) before it collects,
on the core that collection leaves idle, and the workers forked from the parent (tests/forkdist.py)
share it; a plain ``pytest`` starts one on first use. The child takes the caller's
arguments, environment, working directory and three standard streams (passed as descriptors over
a Unix socket) and runs ``python -m genericserver`` as the interpreter would: the exit code
``sys.exit`` gives, a traceback and 1 for an uncaught exception, non-daemon threads joined and
``atexit`` run before it ends, ``PYTHONFAULTHANDLER`` honoured. It is a process of its own: signals
reach it by its pid, ``/proc/<pid>`` is its own. :class:`Process` has what the tests use of
``subprocess.Popen``: ``pid``, ``stdout``, ``stderr``, ``send_signal``, ``kill``, ``poll``,
``communicate``, ``wait`` (``subprocess.TimeoutExpired``) and ``returncode`` (minus the signal
that ended it); its standard input is empty, or the ``input`` given.

The process that starts the zygote binds and listens on its socket first and hands it over, so a
command can be sent at once: it waits in the socket's backlog while the zygote imports. The
zygote reaps its children and sends each exit status on the socket the command came on. It ends
when the processes that could send it commands have (its standard input, a pipe from the process
that started it and inherited by the workers forked from that one, closes). What it buys,
measured on 2 cores as the whole machine's CPU time (``/proc/stat``; a zygote's children are not
its test process's, so ``time`` misses them), two runs each of the suite alternating: 102 and 84
CPU-seconds with a zygote per worker, 142 and 117 with every server started cold; one zygote for
the run instead of one per worker saves each worker's imports again (0.3 CPU-seconds apiece).
"""

from __future__ import annotations

import atexit
import os
import pickle
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from typing import IO, Optional

_STATUS = struct.Struct("!q")
# (the pid of the process that started it, the zygote, its socket's path); a forked worker inherits it
_zygote: Optional[tuple[int, subprocess.Popen, str]] = None


def start() -> str:
    """Start the zygote for this process and those it forks from now on; its socket's path."""
    global _zygote
    path = os.path.join(tempfile.mkdtemp(prefix="genericserver-zygote-"), "socket")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    with listener:
        proc = subprocess.Popen([sys.executable, __file__, path, str(listener.fileno())], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, pass_fds=[listener.fileno()])
    _zygote = (os.getpid(), proc, path)
    atexit.register(_stop, os.getpid(), proc)
    return path


def _address() -> str:
    """The zygote's socket path, starting one if none was started or the one this process started ended."""
    if _zygote is None or _zygote[0] == os.getpid() and _zygote[1].poll() is not None:
        return start()
    return _zygote[2]


def _stop(owner: int, proc: subprocess.Popen) -> None:
    if os.getpid() == owner and proc.stdin is not None:  # not in a process forked from the owner
        proc.stdin.close()  # its end of the pipe: it exits once the workers forked since have too
        proc.wait()


class Process:
    """``python -m genericserver *args``, forked by the zygote; stdout and stderr are pipes."""

    def __init__(self, args: list[str], *, env: Optional[dict] = None, text: bool = True, input: Optional[str] = None) -> None:
        self.args = [sys.executable, "-m", "genericserver", *args]
        self.returncode: Optional[int] = None
        self._read: Optional[dict] = None  # what communicate() has read of stdout and stderr
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        if input is None:
            in_r = os.open(os.devnull, os.O_RDONLY)
        else:  # what a person types at its prompts, all of it at once (a pipe's buffer holds it)
            in_r, in_w = os.pipe()
            os.write(in_w, input.encode())
            os.close(in_w)
        request = {"args": list(args), "env": dict(os.environ if env is None else env), "cwd": os.getcwd()}
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._conn.connect(_address())
            socket.send_fds(self._conn, [pickle.dumps(request)], [in_r, out_w, err_w])
            reply = self._conn.recv(_STATUS.size)
            if not reply:
                raise RuntimeError(f"the zygote went away before it started {self.args}")
            (self.pid,) = _STATUS.unpack(reply)
        finally:
            for fd in (in_r, out_w, err_w):
                os.close(fd)
        mode = "r" if text else "rb"
        self.stdout: IO = open(out_r, mode)
        self.stderr: IO = open(err_r, mode)

    def _got(self, data: bytes) -> int:
        if not data:
            raise RuntimeError(f"the zygote went away before {self.args} ended")
        (status,) = _STATUS.unpack(data)
        self.returncode = os.waitstatus_to_exitcode(status)
        self._conn.close()
        return self.returncode

    def poll(self) -> Optional[int]:
        if self.returncode is None:
            self._conn.setblocking(False)
            try:
                data = self._conn.recv(_STATUS.size)
            except BlockingIOError:
                return None
            self._got(data)
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        if self.returncode is None:
            self._conn.settimeout(timeout)
            try:
                data = self._conn.recv(_STATUS.size)
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout) from None
            self._got(data)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # not once reaped: the pid may be another process's by then
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass  # it ended and the zygote reaped it; its status is on its way (as Popen's)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: Optional[float] = None) -> tuple:
        """``subprocess.Popen.communicate`` for a process none of whose output was read yet: both
        streams read to their end side by side (so neither fills its pipe while the other is
        read), closed, and the process waited for (``returncode``). ``timeout`` bounds it all:
        past it, ``subprocess.TimeoutExpired``, and what was read is kept for the next call."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._read is None:
            self._read = {self.stdout: [], self.stderr: []}
        with selectors.DefaultSelector() as selector:
            for stream in self._read:
                if not stream.closed:
                    selector.register(stream.fileno(), selectors.EVENT_READ, stream)
            while selector.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                ready = selector.select(left) if left is None or left > 0 else []
                if not ready:
                    raise subprocess.TimeoutExpired(self.args, timeout)
                for key, _ in ready:
                    data = os.read(key.fd, 65536)
                    if data:
                        self._read[key.data].append(data)
                    else:
                        selector.unregister(key.fd)
                        key.data.close()
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        text = "b" not in self.stdout.mode
        out, err = (b"".join(self._read[s]) for s in (self.stdout, self.stderr))
        return (out.decode(), err.decode()) if text else (out, err)


# -- the zygote itself (this file run as a script) ---------------------------------------------


def _serve(path: str, fd: int) -> None:
    sys.path[0] = os.getcwd()  # not this file's folder: as python -m has it
    import genericserver.__main__  # noqa: F401 - the warm-up: what every command imports first

    listener = socket.socket(fileno=fd)  # bound and listening already (start)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # its wake-up byte is what matters
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    selector.register(0, selectors.EVENT_READ)  # EOF once its starter and the workers it forked have ended
    children: dict[int, socket.socket] = {}
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                conn, _ = listener.accept()
                message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
                pid = os.fork()
                if pid == 0:
                    for fd in (listener.fileno(), wake_r, wake_w, 0, *(c.fileno() for c in children.values())):
                        os.close(fd)
                    conn.close()
                    _child(pickle.loads(message), fds)
                for fd in fds:
                    os.close(fd)
                children[pid] = conn
                _tell(conn, pid)
            elif key.fileobj == wake_r:
                os.read(wake_r, 4096)
                while children:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                    if pid == 0:
                        break
                    conn = children.pop(pid)
                    _tell(conn, status)
                    conn.close()
            elif not os.read(0, 4096):
                os.unlink(path)
                os.rmdir(os.path.dirname(path))
                return  # every process that could send it a command has ended


def _tell(conn: socket.socket, n: int) -> None:
    try:
        conn.sendall(_STATUS.pack(n))
    except OSError:
        pass  # the caller went away (its test failed, say): the zygote serves the others on


def _child(request: dict, fds: list[int]) -> None:
    """In the forked child: become ``python -m genericserver ARGS``; never returns."""
    import atexit
    import faulthandler
    import runpy
    import threading
    import traceback

    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    # Ctrl-C as in a terminal, even when the suite runs as a shell's background job (which
    # starts with SIGINT ignored, and python -m would keep ignoring it)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in zip((0, 1, 2), fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if os.environ.get("PYTHONFAULTHANDLER"):
        faulthandler.enable()
    sys.path[0] = request["cwd"]  # as python -m puts the working directory first
    sys.argv = [os.path.join(os.path.dirname(sys.modules["genericserver"].__file__), "__main__.py"), *request["args"]]
    sys.modules.pop("genericserver.__main__")  # run afresh as __main__, as -m does (runpy warns otherwise)
    code = 0
    try:
        runpy.run_module("genericserver", run_name="__main__", alter_sys=True)
    except SystemExit as exit_:
        if isinstance(exit_.code, int) or exit_.code is None:
            code = exit_.code or 0
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    threading._shutdown()  # what the interpreter does at its end: wait for non-daemon threads
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a reader that went away
            pass
    os._exit(code)


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]))

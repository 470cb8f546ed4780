"""``make test``'s workers: the suite is collected once, then forked; each worker runs whole test files.

pytest-xdist starts every worker as a new interpreter that imports and collects the whole suite
on its own: 2.3 CPU-seconds a worker, so six workers spent 14 of the suite's ~120 CPU-seconds (and
the first seven seconds of its wall time on two cores) before their first test. Here the parent
collects once, gives the frozen heap to ``fork`` and starts ``--forks N`` workers that begin with
everything imported and collected. The parent hands out one file at a time in the collected order
(``conftest.LONGEST_FIRST``'s); a worker runs a file's tests through pytest's own
``pytest_runtest_protocol`` (fixtures, capture, timeouts, warnings as in any run) and sends each
report back through a pipe; the parent's terminal shows them as a serial run shows its own.

A worker that dies (a crash, ``os._exit``, a signal) fails the test it was running, naming how it
ended; the rest of its file goes back to the front of the queue, for the next worker that asks (a
fresh one is forked in its place). ``pytest`` alone (no
``--forks``), ``--pdb`` and ``--collect-only`` run in this one process, as a debugger needs.
"""

from __future__ import annotations

import collections
import gc
import os
import pickle
import selectors
import signal
import struct
import sys
import traceback
import warnings
from typing import Any, Optional

import pytest
from _pytest.reports import TestReport

_HEADER = struct.Struct("!I")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("forkdist").addoption(
        "--forks", type=int, default=0, metavar="N",
        help="run the test files in N workers forked after collection (make test); 0: in this process")


def forks(config: pytest.Config) -> int:
    """How many workers this run forks (0: the tests run in this process)."""
    if config.option.collectonly or config.option.usepdb:
        return 0
    return max(0, config.getoption("forks"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Optional[bool]:
    n = forks(session.config)
    if not n or not session.items:
        return None  # pytest's own loop
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        return None  # pytest's own loop stops on collection errors, with its message
    _Parent(session, n).run()
    if session.shouldfail:
        raise session.Failed(session.shouldfail)
    if session.shouldstop:
        raise session.Interrupted(session.shouldstop)
    return True


def _send(fd: int, message: Any) -> None:
    data = pickle.dumps(message)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            raise EOFError("the parent went away")
        data += chunk
    return data


def _receive(fd: int) -> Any:
    (n,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    return pickle.loads(_read_exactly(fd, n))


class _Worker:
    def __init__(self, number: int, pid: int, commands: int, results: int) -> None:
        self.number, self.pid, self.commands, self.results = number, pid, commands, results
        self.buffer = bytearray()
        self.assigned: list[int] = []  # indices into session.items not finished yet
        self.running: Optional[int] = None  # the one started and not finished


class _Parent:
    def __init__(self, session: pytest.Session, n: int) -> None:
        self.session = session
        self.config = session.config
        self.hook = session.config.hook
        self.queue: collections.deque[list[int]] = collections.deque(self._files())
        self.n = min(n, len(self.queue))
        self.workers: dict[int, _Worker] = {}  # by results fd
        self.selector = selectors.DefaultSelector()
        self.stopping = False
        self.started = 0

    def _files(self) -> list[list[int]]:
        by_file: dict[str, list[int]] = {}
        for i, item in enumerate(self.session.items):
            by_file.setdefault(str(item.path), []).append(i)
        return list(by_file.values())

    def run(self) -> None:
        self.basetemp = self.config._tmp_path_factory.getbasetemp()  # made once; a folder in it per worker
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(f"forkdist: {self.n} workers, {len(self.queue)} files")
            terminal.showfspath = False  # the files' results interleave: a file name per line would lie
        _warm_up()
        gc.freeze()  # the collected heap stays shared: a worker's collections do not copy it
        try:
            for _ in range(self.n):
                self._fork()
            while self.workers:
                for key, _ in self.selector.select():
                    self._read(key.data)
        except BaseException:
            for worker in self.workers.values():
                os.kill(worker.pid, signal.SIGKILL)
                os.waitpid(worker.pid, 0)
            raise
        finally:
            gc.unfreeze()

    def _fork(self) -> None:
        commands_r, commands_w = os.pipe()
        results_r, results_w = os.pipe()
        number = self.started
        self.started += 1
        pid = os.fork()
        if pid == 0:
            for worker in self.workers.values():
                os.close(worker.commands)
                os.close(worker.results)
            os.close(commands_w)
            os.close(results_r)
            _worker_main(self.session, number, self.basetemp, commands_r, results_w)
        os.close(commands_r)
        os.close(results_w)
        worker = _Worker(number, pid, commands_w, results_r)
        self.workers[results_r] = worker
        self.selector.register(results_r, selectors.EVENT_READ, worker)

    def _read(self, worker: _Worker) -> None:
        data = os.read(worker.results, 1 << 16)
        if not data:
            self._ended(worker)
            return
        worker.buffer += data
        while len(worker.buffer) >= _HEADER.size:
            (n,) = _HEADER.unpack_from(worker.buffer)
            if len(worker.buffer) < _HEADER.size + n:
                break
            message = pickle.loads(worker.buffer[_HEADER.size:_HEADER.size + n])
            del worker.buffer[:_HEADER.size + n]
            self._handle(worker, *message)

    def _handle(self, worker: _Worker, kind: str, *args: Any) -> None:
        if kind == "next":
            work = None if self.stopping or not self.queue else self.queue.popleft()
            worker.assigned = list(work or [])
            _send(worker.commands, work)
        elif kind == "logstart":
            index, nodeid, location = args
            worker.running = index
            self.hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
        elif kind == "report":
            report = self.hook.pytest_report_from_serializable(config=self.config, data=args[0])
            self.hook.pytest_runtest_logreport(report=report)
            if self.session.shouldfail or self.session.shouldstop:
                self.stopping = True
        elif kind == "logfinish":
            index, nodeid, location = args
            worker.running = None
            worker.assigned.remove(index)
            self.hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
        elif kind == "warning":
            message, category, filename, lineno, when, nodeid, location = args
            warning = warnings.WarningMessage(category(message), category, filename, lineno)
            self.hook.pytest_warning_recorded.call_historic(
                kwargs=dict(warning_message=warning, when=when, nodeid=nodeid, location=location))

    def _ended(self, worker: _Worker) -> None:
        self.selector.unregister(worker.results)
        os.close(worker.results)
        os.close(worker.commands)
        del self.workers[worker.results]
        _, status = os.waitpid(worker.pid, 0)
        if not worker.assigned:
            return
        how = (f"was killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
               else f"exited with status {os.waitstatus_to_exitcode(status)}")
        if worker.running is not None:
            item = self.session.items[worker.running]
            self.hook.pytest_runtest_logreport(report=TestReport(
                item.nodeid, item.location, {}, "failed",
                f"forkdist: worker {worker.number} (pid {worker.pid}) {how} while running this test", "call"))
            self.hook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
            worker.assigned.remove(worker.running)
        if worker.assigned and not self.stopping:
            self.queue.appendleft(worker.assigned)  # the rest of its file, for a fresh worker
            self._fork()


def _warm_up() -> None:
    """Work every worker would do on its own, done once before the fork."""
    try:
        from hypothesis.internal.conjecture.providers import _get_local_constants
        from hypothesis.internal.entropy import deterministic_PRNG
    except ImportError:
        return
    _get_local_constants()  # Hypothesis scans the loaded modules for constants at its first test (0.2 s)
    # and at a thread's first example it makes that thread a Random and registers it, with a full
    # collection to check that something else refers to it: 0.1-0.4 CPU-seconds in each worker
    with deterministic_PRNG():
        pass


class _Forwarder:
    """In a worker: what pytest reports of a test goes to the parent instead of a terminal."""

    def __init__(self, config: pytest.Config, fd: int, index: dict[str, int]) -> None:
        self.config, self.fd, self.index = config, fd, index
        self.live = False  # registering replays the warnings already recorded, the parent's own

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        _send(self.fd, ("logstart", self.index[nodeid], nodeid, location))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        _send(self.fd, ("report", self.config.hook.pytest_report_to_serializable(config=self.config, report=report)))

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        _send(self.fd, ("logfinish", self.index[nodeid], nodeid, location))

    def pytest_warning_recorded(self, warning_message: Any, when: str, nodeid: str, location: Any) -> None:
        if not self.live:
            return
        category = warning_message.category
        try:
            pickle.dumps(category)
        except Exception:
            category = UserWarning
        _send(self.fd, ("warning", str(warning_message.message), category, warning_message.filename,
                        warning_message.lineno, when, nodeid, location))


class _WriterOnly:
    """In a worker, in the terminal reporter's place: its terminal writer only (``_tw``, what
    ``config.get_terminal_writer()`` returns), on the worker's stderr; no hook of the reporter's."""

    def __init__(self, config: pytest.Config) -> None:
        from _pytest.config import create_terminal_writer

        self._tw = create_terminal_writer(config, sys.stderr)


def _worker_main(session: pytest.Session, number: int, basetemp: Any, commands: int, results: int) -> None:
    code = 1
    try:
        config = session.config
        # The capture files the parent opened are shared with every worker: each makes its own.
        capture = config.pluginmanager.getplugin("capturemanager")
        capture.stop_global_capturing()
        capture.start_global_capturing()
        capture.suspend_global_capture()
        config.pluginmanager.unregister(name="terminalreporter")
        # pytest-timeout writes the threads' stacks of a test out of time through the reporter's
        # writer: in a worker, to its stderr, which the test's capture reports with the failure
        config.pluginmanager.register(_WriterOnly(config), "terminalreporter")
        worker_temp = basetemp / f"fork{number}"
        worker_temp.mkdir()
        config._tmp_path_factory._basetemp = worker_temp  # as xdist gives each worker a --basetemp
        index = {item.nodeid: i for i, item in enumerate(session.items)}
        forwarder = _Forwarder(config, results, index)
        config.pluginmanager.register(forwarder, "forkdist-forwarder")
        forwarder.live = True
        while True:
            _send(results, ("next",))
            work = _receive(commands)
            if work is None:
                break
            items = [session.items[i] for i in work]
            for i, item in enumerate(items):
                nextitem = items[i + 1] if i + 1 < len(items) else None  # a file's end tears all down
                config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

"""Containers' logs for ``kubectl logs``: what each replica of the server printed (no Go twin).

In a cluster each container's stdout and stderr are its own: the container runtime keeps them,
the kubelet serves them, and kube-apiserver's ``pods/log`` passes them on to ``kubectl logs``.
The simulated replicas share one Python process, one klog and one stderr, so a line is routed
by who printed it: a container's start runs in its :class:`ContainerLog` (:func:`writing_to`),
every goroutine it starts inherits that (a goroutine starts with its spawner's context
variables, :mod:`genericserver.runtime`), and while :func:`capture` is on, klog's lines from
those goroutines go to the container's log, in klog's text format. Lines printed anywhere else
(the API server the cluster is served by, the simulation's own parts) go on as before, where
the cluster shows only errors.

A log is read as the kubelet serves one: whole, the last ``tail`` lines, each prefixed with
its RFC 3339 time (``timestamps``), and followed until the container exits (``follow``).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from datetime import datetime, timezone
from typing import Iterator, Optional, Sequence

from genericserver import klog
from genericserver import runtime as rt

# the log of the container whose goroutine runs now (None: not a container's)
CURRENT: contextvars.ContextVar[Optional["ContainerLog"]] = contextvars.ContextVar("container-log", default=None)


class ContainerLog:
    """One container's output: lines with the wall time each was written, until it exits."""

    def __init__(self) -> None:
        self.lines: list[tuple[float, str]] = []
        self._lock = rt.lock()
        self._grown = rt.event("container-log-grown")  # set (and replaced) on each write and at the end
        self.closed = False

    def write(self, text: str) -> None:
        """One printed record; each of its lines is a line of the log (the runtime stamps each)."""
        with self._lock:
            if self.closed:
                return
            when = rt.wall()
            self.lines.extend((when, line) for line in text.split("\n"))
            grown, self._grown = self._grown, rt.event("container-log-grown")
        grown.set()

    def close(self) -> None:
        """The container exited: a follower reads what is left and ends."""
        with self._lock:
            self.closed = True
            grown = self._grown
        grown.set()

    def read(self, *, tail: Optional[int] = None, timestamps: bool = False, follow: bool = False,
             since: Optional[float] = None, stops: Sequence[rt.Event] = ()) -> Iterator[bytes]:
        """The log as the kubelet streams it: from the wall time ``since``, its last ``tail``
        lines; following, until the container exits or one of ``stops`` (the request's end) is set."""
        with self._lock:
            at = 0 if since is None else next((i for i, (when, _) in enumerate(self.lines) if when >= since), len(self.lines))
            if tail is not None:
                at = max(at, len(self.lines) - tail)
        while True:
            with self._lock:
                lines, closed, grown = self.lines[at:], self.closed, self._grown
            at += len(lines)
            if lines:
                yield "".join(_line(when, text, timestamps) for when, text in lines).encode()
            if not follow or closed:
                return
            if rt.select(grown, *stops) is not grown:
                return


def _line(when: float, text: str, timestamps: bool) -> str:
    if not timestamps:
        return text + "\n"
    stamp = datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")
    return f"{stamp}000Z {text}\n"  # the runtime's RFC 3339 with nanoseconds


@contextlib.contextmanager
def writing_to(log: ContainerLog) -> Iterator[None]:
    """What runs in the block, and every goroutine it starts, prints to ``log``."""
    token = CURRENT.set(log)
    try:
        yield
    finally:
        CURRENT.reset(token)


class _ToContainers(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(klog.TextFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        log = CURRENT.get()
        if log is not None:
            log.write(self.format(record))
        elif record.levelno >= logging.ERROR:  # not a container's: as the cluster showed it before
            logging.getLogger().handle(record)


@contextlib.contextmanager
def capture(logger: str = "genericserver") -> Iterator[None]:
    """klog's lines go to the containers' logs for the block; the rest print only from errors up.
    (klog's ``-v`` is the process's: the replicas' is set by whoever runs them, and put back here.)"""
    log = logging.getLogger(logger)
    saved = log.level, log.propagate, klog.verbosity()
    handler = _ToContainers()
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(saved[0])
        log.propagate = saved[1]
        klog.set_verbosity(saved[2])

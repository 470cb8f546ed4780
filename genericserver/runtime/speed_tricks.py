"""The threads runtime's speed tricks: where goroutine threads run, what a ``select`` parks on, who makes a ``go_after`` call, and which system calls keep the GIL (no Go twin).

Nothing here changes what any primitive does; it changes only which CPU a goroutine's thread
runs on, how a thread blocked in ``select`` is woken, which thread makes a ``go_after``
goroutine's call, whether a system call that cannot block lets go of the GIL, and how a
condition on a plain lock is made.
:mod:`genericserver.runtime`
calls the three hooks of a placer (:class:`SpawnerCPU` on
Linux with two or more CPUs, :data:`NO_PLACEMENT` elsewhere), makes its ``select`` parkers
as :class:`ParkedLock` objects around locks of its own, and its ``go_after`` calls
:class:`Relay` objects, so a reader of the runtime can skip
this module entirely (which, like server code, makes no thread, lock or clock of its own).

What it buys, as ``make bench`` prints it (``bench_chain``: the default chain in process, called
from a goroutine, with and without placement, on this 2-core VM): about 53 us a request with
placement against 170 us without, and over loopback about 2.3x the requests per second.
Where the time goes without it: every request hands off to the timeout filter's goroutine and
back, and Linux often wakes the other thread on the other core (a lock round trip costs ~70 us
across cores here against ~5 us on one).

* **A goroutine starts on its spawner's CPU**, as Go puts a new goroutine in the spawning P's
  ``runnext`` slot: spawn-then-wait never crosses cores. Only one thread runs Python code at a
  time anyway, so little parallelism is given up. A long-lived goroutine stays where it
  started; its thread moves when it is reused for another goroutine. Threads and processes a
  goroutine starts inherit its CPU (server code starts none).
* **Not a trick: goroutine threads keep Linux's default policy.** They used to run SCHED_BATCH
  (a woken thread waits for its waker to block instead of preempting it): about 10 % more
  answers under 20 x 10 HTTP/2 streams, but every wake-up under load comes later, and the
  shutdown's wake-ups are the ones that count. ``bench_hops`` measured it both ways: the last
  connection's GOAWAY 37 ms after NotAcceptingNewRequest (median of 10 runs) with it, 21 ms
  without; at most 8 answers 503 on one connection with it, 2 without. The simulation's
  threads still run SCHED_BATCH (:func:`no_wakeup_preemption`), where only one runs at a time.
* **A select parks on a plain lock** (:class:`ParkedLock`), not on a ``threading.Event``: the
  same ``set``/``wait``/``clear`` for the one thread that waits, without the event's condition
  (its waiter list, the waiter lock it makes for each wait, the notify loop). The events a
  select watches are ``threading.Event`` objects all the same; only the selecting thread's own
  wake-up call is cheaper. Every request's timeout filter selects once: ``bench_primitives``
  prints the hand-off both ways (3 to 5 us saved a request on this VM).

* **A go_after goroutine's call is made by the thread that sets its event** (:class:`Relay`),
  right after the set, before any woken thread runs. ``go_after(ev, fn)`` is Go's
  ``go func() { <-ev; fn() }()`` for an ``fn`` that does not block; the goroutine still starts,
  waits and wakes (a goroutine dump lists it, a test's leak check waits for it), and finds the
  call made. Go readies such a goroutine in microseconds; a CPython thread woken from a wait
  queues for the GIL behind every busy request thread, each of which may keep it for the 5 ms
  switch interval. Between NotAcceptingNewRequest and the listeners' shutdown Go has three
  goroutine hops (stop-http-server, internal-stop, RunServer's stop goroutine); under 20 x 10
  HTTP/2 streams each cost 1 to 150 ms here. All three are relays (cancel a context, close a
  channel, and ``Server.stop_listening``, the first step of RunServer's ``Shutdown``): the thread
  that fires NotAcceptingNewRequest has turned keep-alives off and shut the listeners before it
  returns, in about 0.2 ms whatever the load. What is left to wake is the serve goroutine, whose
  ``accept`` fails and which then logs "Stopped listening"; ``make bench`` (``bench_hops``)
  prints that gap and the last GOAWAY under load.
  The call runs with the registering goroutine's context variables; a panic in it is that
  goroutine's (``panics``), never the setter's.
* **System calls that cannot block keep the GIL** (:func:`shutdown_socket`,
  :func:`close_socket`, and ``sched_getcpu`` for placement): CPython lets go of the GIL around
  every socket call and every ``ctypes.CDLL`` call, and under load a thread that let go of it
  queues behind the busy request threads to get it back. ``shutdown(2)``, ``close(2)`` of a
  listener and ``sched_getcpu`` never block, so they are called through ``ctypes.PyDLL``, which
  keeps it. Measured in the relay above under 20 x 10 HTTP/2 streams: the listener's shutdown
  took up to 52 ms with the socket's own method, a few microseconds this way.

* **A condition on a plain lock is made without looking for what the lock lacks**
  (:class:`PlainLockCondition`). ``threading.Condition`` looks for three methods of an
  ``RLock`` on the lock it is given, and each lookup on a plain ``Lock`` fails with an
  ``AttributeError`` it catches, after which it uses its own. The runtime's ``condition()``
  makes its conditions on plain locks, one for each HTTP/2 stream's request body among them;
  this one is the same class with the same methods, made without the three exceptions. In
  ``make instructions``: 27k instructions less an HTTP/2 request (1,416k to 1,389k).

Where the OS refuses (no ``sched_setaffinity``, one CPU, a cgroup that changes, no libc
``sched_getcpu``), placement is given up and nothing else changes.
"""

from __future__ import annotations

import collections
import os
import socket
import threading
from typing import Any, Callable, Optional

CurrentCPU = Callable[[], int]
Pin = Callable[[int, int], None]


def detect() -> Optional[tuple[CurrentCPU, Pin]]:
    """``(current_cpu, pin)`` where the OS lets threads be placed, else None.

    ``current_cpu()`` is the CPU the calling thread runs on; ``pin(tid, cpu)`` keeps thread
    ``tid`` (a native id, 0 for the caller) on that CPU. Linux only (``sched_getcpu`` is not in
    the standard library, so it comes from libc); with a single usable CPU there is nothing to
    gain.
    """
    try:
        if not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2:
            return None
        import ctypes

        current_cpu = ctypes.PyDLL(None).sched_getcpu  # a vDSO read: keeps the GIL (see close_socket)
        current_cpu.restype = ctypes.c_int
        current_cpu.argtypes = []
    except (OSError, AttributeError, ImportError):  # not allowed here, no libc symbol, no ctypes
        return None
    if current_cpu() < 0:
        return None

    def pin(tid: int, cpu: int) -> None:
        os.sched_setaffinity(tid, (cpu,))

    return current_cpu, pin


def no_wakeup_preemption() -> None:
    """Mark the calling thread so that, when woken, it waits for its waker to block (Linux only;
    the simulation's threads, of which one runs at a time)."""
    batch = getattr(os, "SCHED_BATCH", None)
    if batch is None:
        return
    try:
        os.sched_setscheduler(0, batch, os.sched_param(0))
    except OSError:
        pass


class NoPlacement:
    """The placer that places nothing: threads go wherever the OS puts them."""

    def spawner_cpu(self) -> int:
        """The CPU a new goroutine thread should start on (-1: anywhere)."""
        return -1

    def start_worker(self, slot: Any, cpu: int) -> None:
        """Called first thing on a new pool thread, with the CPU ``spawner_cpu`` gave."""
        slot.cpu = cpu

    def move_to_spawner(self, slot: Any) -> None:
        """Called by the spawner before it hands an idle pool thread a new goroutine."""


NO_PLACEMENT = NoPlacement()


class SpawnerCPU(NoPlacement):
    """Start each goroutine on the CPU of the thread that started it.

    ``placement`` is what :func:`detect` returns (``None``: the OS would not say or allow it).
    """

    def __init__(self, placement: Optional[tuple[CurrentCPU, Pin]]):
        self.placement = placement

    def spawner_cpu(self) -> int:
        return self.placement[0]() if self.placement is not None else -1

    def start_worker(self, slot: Any, cpu: int) -> None:
        slot.cpu = cpu
        if cpu >= 0:
            self._pin(0, cpu)

    def move_to_spawner(self, slot: Any) -> None:
        cpu = self.spawner_cpu()
        if cpu >= 0 and cpu != slot.cpu:
            self._pin(slot.tid, cpu)  # placed first: the thread wakes where it will run
            slot.cpu = cpu

    def _pin(self, tid: int, cpu: int) -> None:
        try:
            self.placement[1](tid, cpu)  # type: ignore[index]
        except OSError:  # the CPU left our set (a cgroup changed): stop placing threads
            self.placement = None


def default_placer() -> NoPlacement:
    """This machine's placer: pinning where the OS allows it."""
    return SpawnerCPU(detect())


def _libc_keeping_gil() -> Any:
    """libc through ``ctypes.PyDLL``, whose functions run *without* letting go of the GIL (a
    ``CDLL`` call lets go of it, as CPython's socket methods do); None where it cannot be loaded."""
    try:
        import ctypes

        return ctypes.PyDLL(None, use_errno=True)
    except (OSError, ImportError):
        return None


_LIBC = _libc_keeping_gil()


def shutdown_socket(sock: socket.socket, how: int) -> None:
    """``sock.shutdown(how)``, keeping the GIL: shutdown(2) never blocks, so nothing is gained by
    letting other threads run meanwhile, and under load a thread that let go of the GIL queues
    behind the busy request threads to get it back. Raises ``OSError`` as the method does."""
    if _LIBC is None:
        socket.socket.shutdown(sock, how)
        return
    if _LIBC.shutdown(sock.fileno(), how) != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def close_socket(sock: socket.socket) -> None:
    """``sock.close()``, keeping the GIL as :func:`shutdown_socket` does, for a socket no other
    thread uses (a listener whose ``accept`` has failed: closing it never blocks). The socket
    object lets go of its descriptor first (``detach``), so it is closed exactly once."""
    if _LIBC is None or sock.fileno() < 0:
        sock.close()
        return
    _LIBC.close(sock.detach())


class ParkedLock:
    """``threading.Event``'s ``set``, ``wait`` and ``clear`` for one waiting thread, on ``lock``
    (a plain lock the runtime makes), held while the parker is clear: ``wait`` acquires it again
    (so it blocks until a ``set`` releases it), and a ``wait`` that returns True leaves the
    parker clear again."""

    __slots__ = ("_lock",)

    def __init__(self, lock: Any) -> None:
        self._lock = lock
        self._lock.acquire()

    def set(self) -> None:
        try:
            self._lock.release()
        except RuntimeError:  # set already (two events of one select fired)
            pass

    def clear(self) -> None:
        self._lock.acquire(False)  # takes a set that nobody waited for, if there was one

    def wait(self, timeout: Optional[float] = None) -> bool:
        # a deadline already past (a select woken late on a loaded machine) is a poll, as
        # threading.Event.wait takes it; a lock refuses a negative timeout
        return self._lock.acquire(True, -1 if timeout is None else max(timeout, 0))


class Relay:
    """A ``go_after`` goroutine's call, made once: by the thread that sets the goroutine's event
    (the event calls ``set`` right after its flag, as it wakes a select), or by the goroutine
    itself when it wakes, whichever comes first. ``claim`` is a plain lock nobody holds yet."""

    __slots__ = ("_claim", "_call")

    def __init__(self, claim: Any, call: Callable[[], None]) -> None:
        self._claim, self._call = claim, call

    def set(self) -> None:
        self.run()

    def run(self) -> None:
        if self._claim.acquire(False):
            self._call()


class PlainLockCondition(threading.Condition):
    """What ``threading.Condition`` makes of a plain ``Lock``: the same object, with the
    condition's own ``_release_save``, ``_acquire_restore`` and ``_is_owned`` (a plain lock has
    none), made without the three failed lookups ``Condition.__init__`` would catch."""

    def __init__(self, lock: Any) -> None:  # (not super().__init__: that is what it saves)
        self._lock = lock
        self.acquire = lock.acquire
        self.release = lock.release
        self._waiters = collections.deque()


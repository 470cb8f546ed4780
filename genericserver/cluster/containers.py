"""The container runtime the kubelet drives: SIGTERM, SIGKILL, exit; replicas of our server as containers (no Go twin).

A :class:`Container` is started once, receives ``SIGTERM`` and ``SIGKILL`` and sets ``exited``
when its process is gone. ``uninterruptible`` models a process in uninterruptible sleep (Linux's
D state): signals are recorded but have no effect until :meth:`Container.fix` delivers the last
one, so the container keeps running - one of the reasons a pod hangs in Terminating.

* :class:`FakeContainer` exits ``term_after`` cluster seconds after SIGTERM (never, if None):
  the simulation runtime tests of the kubelet's timing use it.
* :class:`ServerContainer` runs a replica of our apiserver on 127.0.0.1: SIGTERM cancels the
  context of ``run_with_context`` (the graceful shutdown), SIGKILL force-closes the HTTP server
  (``Server.close()``) and abandons the run; its goroutines still end on their own (the shutdown
  delay elapses, handlers finish), and :meth:`ServerContainer.join` waits for that. What the
  replica's klog prints is the container's log (:mod:`.logs`, ``kubectl logs``).

SIGKILL ends a process: it writes, records and answers nothing more (nor does one that exited). Threads cannot be killed
(design.md section 10), so a container is *fenced* at the kill instead, before the runtime
records the SIGKILL: its log is closed and its lifecycle signals stop reaching the event stream
(the fence and each record share a lock, so a record lands before the SIGKILL line or not at
all), and a replica's connections are shut down, so a handler still running writes into a dead
socket. What the abandoned goroutines do afterwards is seen by nobody, as with a dead process.

A :class:`Sandbox` is the pod's shared part: a name -> port map (the pod's network namespace:
containers find each other by port name), an emptyDir volume (a temporary directory) and the
pod's cgroup (a flag).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Optional

from genericserver import runtime as rt
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.logs import ContainerLog, writing_to
from genericserver.context import context as gocontext
from genericserver.events import EventStream

SIGTERM, SIGKILL = "SIGTERM", "SIGKILL"


class Sandbox:
    """What a pod's containers share: named ports, an emptyDir volume and the pod cgroup."""

    def __init__(self, pod_name: str, uid: str):
        self.pod_name, self.uid = pod_name, uid
        self.ports: dict[str, int] = {}
        self.volume: Optional[str] = None
        self.cgroup = False

    def mount_volume(self) -> str:
        self.volume = tempfile.mkdtemp(prefix=f"emptydir-{self.pod_name}-")
        # a pod still running when its world is dropped (a scenario's end, a test's) never has
        # its volume unmounted: the directory goes with the sandbox, or at exit, instead
        self._remove_volume = weakref.finalize(self, shutil.rmtree, self.volume, True)
        return self.volume

    def unmount_volume(self) -> None:
        if self.volume is not None:
            self._remove_volume()
            self.volume = None

    def path(self, name: str) -> str:
        if self.volume is None:
            raise FileNotFoundError(f"pod {self.pod_name} has no volume mounted")
        return os.path.join(self.volume, name)


class Container:
    """A container's process as the runtime sees it; subclasses say what the signals do."""

    def __init__(self, name: str, pod_name: str = "", events: Optional[EventStream] = None):
        self.name, self.pod_name = name, pod_name
        self.events = events if events is not None else EventStream()
        self.exited = rt.event(f"{pod_name}-{name}-exited")
        self.exit_code: Optional[int] = None
        self.started = False
        self.uninterruptible = False
        self.signals: list[tuple[str, float]] = []
        self._pending: Optional[str] = None
        self._lock = rt.lock()
        self.fenced = False  # killed: nothing it does from now on is seen (see the module's docstring)
        self._fence_lock = rt.lock()
        self.log = ContainerLog()  # its stdout and stderr, as the runtime keeps them (kubectl logs)

    def running(self) -> bool:
        return self.started and not self.exited.is_set()

    def start(self) -> None:
        self.started = True

    def signal(self, sig: str) -> None:
        with self._lock:
            self.signals.append((sig, rt.now()))
            if self.uninterruptible:
                if self._pending != SIGKILL:
                    self._pending = sig
                sig = ""
        if sig == SIGKILL:
            self.fence()  # before the runtime's line: nothing of the process may follow it
        self.events.record("container", f"{self.pod_name}/{self.name}: {sig or 'signal ignored (uninterruptible)'}")
        if sig == SIGTERM:
            self.on_sigterm()
        elif sig == SIGKILL:
            self.on_sigkill()

    def fix(self) -> None:
        """Leave uninterruptible sleep: the last signal sent meanwhile is delivered now."""
        with self._lock:
            self.uninterruptible = False
            pending, self._pending = self._pending, None
        if pending:
            self.signal(pending)

    def fence(self) -> None:
        """The process is killed (or exited): its log takes no more lines, its records are dropped."""
        with self._fence_lock:
            self.fenced = True
        self.log.close()

    def record(self, kind: str, name: str, **fields: Any) -> None:
        """Record what the process itself did, unless it was killed or has exited."""
        with self._fence_lock:
            if not self.fenced:
                self.events.record(kind, name, **fields)

    def exit(self, code: int) -> None:
        with self._lock:
            if self.exited.is_set():
                return
            self.exit_code = code
        self.fence()  # an exited process has nothing left to write with
        self.events.record("container", f"{self.pod_name}/{self.name}: exited with code {code}")
        self.exited.set()

    def on_sigterm(self) -> None:
        raise NotImplementedError

    def on_sigkill(self) -> None:
        self.exit(137)

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait until everything the container started has ended (for teardown)."""
        return self.exited.wait(timeout)


class FakeContainer(Container):
    """Exits ``term_after`` cluster seconds after SIGTERM, or never (``None``) until SIGKILL."""

    def __init__(self, name: str, pod_name: str = "", *, term_after: Optional[float] = 0.0,
                 clock: Optional[ClusterClock] = None, events: Optional[EventStream] = None):
        super().__init__(name, pod_name, events)
        self.term_after = term_after
        self.clock = clock if clock is not None else ClusterClock()

    def on_sigterm(self) -> None:
        if self.term_after is None:
            return

        def stop_later() -> None:
            if self.clock.select(self.exited, timeout=self.term_after) is None:
                self.exit(0)

        rt.go(stop_later, name=f"{self.pod_name}-{self.name}-sigterm")


# A replica's --request-timeout runs on the cluster's clock like every other duration, but never
# below ten real seconds: a request's own work takes real time at any time scale, and at a fifth of
# real time the manifest's 10 s is 2 s, which two suites on two cores once starved an /echo past (a
# 504, and the rollout lost a request the cluster would not have). No scenario relies on a request
# timing out, so only the starved case changes (the kubelet's probe timeout has such a floor too).
REQUEST_TIMEOUT_FLOOR = 10.0


@dataclass(frozen=True)
class ServerOptions:
    """How each replica of our server is configured (durations in cluster seconds)."""

    shutdown_delay: float = 0.0
    retry_after: bool = False
    request_timeout: float = 60.0
    # klog's -v, as deploy/deployment.yaml passes it: the [graceful-termination] lines (V(1)) and
    # the failed readyz checks (V(2)) are in the container's log. The replicas share one process,
    # so whoever runs them sets it for all (cluster --serve-api)
    verbosity: int = 2
    # from run_with_context's return to the process's exit: the interpreter's teardown and the
    # runtime's reaping. `serve` in a container on the real node took 0.2-1.5 s after its last
    # [graceful-termination] line (tests/parity/real-node.json); the replicas here are threads: none
    exit_after: float = 0.0


class ServerContainer(Container):
    """A replica of our server as a container; its port is published as ``http`` in the sandbox."""

    def __init__(self, name: str, pod_name: str, sandbox: Sandbox, options: Optional[ServerOptions] = None, *,
                 clock: Optional[ClusterClock] = None, events: Optional[EventStream] = None, port_name: str = "http"):
        super().__init__(name, pod_name, events)
        self.sandbox, self.options, self.port_name = sandbox, options or ServerOptions(), port_name
        self.clock = clock if clock is not None else ClusterClock()
        self.http_servers: list[Any] = []
        self._run: Optional[rt.Goroutine] = None
        self._cancel: Optional[Callable[[], None]] = None
        self.run_error: Optional[BaseException] = None

    def _server_factory(self, *args: Any, **kwargs: Any) -> Any:
        server = _killable_server_class()(*args, **kwargs)
        self.http_servers.append(server)  # SIGKILL needs it: kill() is the force-close
        return server

    def start(self) -> None:
        with writing_to(self.log):  # the server's goroutines print to this container's log
            self._start()

    def _start(self) -> None:
        from genericserver import sampleapi
        from genericserver.config import new_config
        from genericserver.net.http.server import listen
        from genericserver.secure_serving import SecureServingInfo

        config = new_config()
        config.shutdown_delay_duration = self.clock.to_runtime(self.options.shutdown_delay)
        config.shutdown_send_retry_after = self.options.retry_after
        config.request_timeout = max(self.clock.to_runtime(self.options.request_timeout), REQUEST_TIMEOUT_FLOOR)
        config.secure_serving = SecureServingInfo(listener=listen("127.0.0.1", 0), server_factory=self._server_factory)
        server = config.complete().new(self.pod_name)
        sampleapi.install(server.handler.non_go_restful_mux, metrics=server.metrics)
        self.lifecycle_signals = server.lifecycle_signals
        server.lifecycle_signals.observe(
            lambda sig, at: self.record("pod", f"{self.pod_name}: {sig.name}", signal=sig.name, pod=self.pod_name))
        self.sandbox.ports[self.port_name] = config.secure_serving.listener.getsockname()[1]
        prepared = server.prepare_run()
        ctx, self._cancel = gocontext.with_cancel(gocontext.background())

        def run() -> None:
            try:
                prepared.run_with_context(ctx)
            except Exception as err:
                self.run_error = err
            finally:
                if self.options.exit_after > 0:  # a SIGKILL meanwhile exits at once (137)
                    self.clock.select(self.exited, timeout=self.options.exit_after)
                self.exit(0)

        self._run = rt.go(run, name=f"{self.pod_name}-{self.name}-run")
        super().start()

    def on_sigterm(self) -> None:
        if self._cancel is not None:
            self._cancel()

    def on_sigkill(self) -> None:
        # the process is gone (fenced already: nothing it records is seen); its sockets go first,
        # then what is left of run_with_context unwinds along its shutdown path, unseen
        for s in self.http_servers:
            s.kill()
        if self._cancel is not None:
            self._cancel()
        self.exit(137)

    def join(self, timeout: Optional[float] = None) -> bool:
        return self._run is None or self._run.join(timeout)


_KILLABLE: list = []


def _killable_server_class() -> type:
    """``httpserver.Server`` with ``kill()``: force-close it, as the death of its process would.

    A killed process has no goroutines left, but threads cannot be killed: the abandoned
    ``run_with_context`` unwinds along its normal shutdown path instead (its context is
    cancelled too). ``serve`` would return at once and secure_serving would take that for an
    unexpected stop (a panic); so after a kill it returns only once the shutdown reaches
    ``shutdown()``, as it would have anyway.
    """
    if _KILLABLE:
        return _KILLABLE[0]
    from genericserver.net.http.server import Server, ServerClosed

    class KillableServer(Server):
        def __init__(self, *args: Any, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self.killed = rt.event("http-server-killed")
            self._shutdown_called = rt.event("http-server-shutdown-called")

        def kill(self) -> None:
            self.killed.set()
            self.close()

        def serve(self, listener: Any) -> None:
            try:
                super().serve(listener)
            except ServerClosed:
                if self.killed.is_set():
                    self._shutdown_called.wait()
                raise

        def shutdown(self, ctx: Any) -> None:
            self._shutdown_called.set()
            super().shutdown(ctx)

    _KILLABLE.append(KillableServer)
    return KillableServer

"""Lifecycle hook handlers: exec, httpGet and sleep (no Go twin: models k8s.io/kubernetes pkg/kubelet/lifecycle/handlers.go).

* :class:`ExecAction` - in Kubernetes a command run inside the container; here a callable
  ``fn(ctx, sandbox)`` (an exception is a non-zero exit). ``command`` is only for display.
* :class:`HTTPGetAction` - ``GET http://<pod>:<port><path>`` against the pod's own network
  namespace (a named port of the :class:`~genericserver.cluster.containers.Sandbox` or a number).
  Like the kubelet, only a failed request is an error: the status code is not looked at.
* :class:`SleepAction` - KEP-3960's ``sleep`` action: waits ``seconds`` (cluster seconds), or
  fails with "container terminated before sleep hook finished" if the container goes first.

:func:`run_handler` raises :class:`HookError` with the kubelet's message on failure. ``ctx`` is
cancelled by the kubelet when the container is stopped, so an abandoned hook ends too (in a real
cluster its process dies with the container).
"""

from __future__ import annotations

import http.client
import socket
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from genericserver import runtime as rt
from genericserver.cluster.clock import ClusterClock
from genericserver.context import context as gocontext


class HookError(Exception):
    """A hook failed; the message is the kubelet's (``... lifecycle hook ... failed - error: ...``)."""


@dataclass(frozen=True)
class ExecAction:
    fn: Callable[[gocontext.Context, Any], None]
    command: list[str] = field(default_factory=lambda: ["<callable>"])


@dataclass(frozen=True)
class HTTPGetAction:
    path: str
    port: Union[int, str]
    host: str = "127.0.0.1"


@dataclass(frozen=True)
class SleepAction:
    seconds: int


Handler = Union[ExecAction, HTTPGetAction, SleepAction]


def describe(h: Handler) -> str:
    if isinstance(h, ExecAction):
        return "exec " + " ".join(h.command)
    if isinstance(h, HTTPGetAction):
        return f"httpGet :{h.port}{h.path}"
    return f"sleep {h.seconds}"


def _pod_ref(pod: dict) -> str:
    m = pod["metadata"]
    return f"{m['name']}_{m.get('namespace', 'default')}({m.get('uid', '')})"


def run_handler(h: Handler, pod: dict, container: str, sandbox: Any, ctx: gocontext.Context,
                clock: Optional[ClusterClock] = None) -> None:
    """Run one hook to its end; raise :class:`HookError` if it failed."""
    clock = clock if clock is not None else ClusterClock()
    try:
        if isinstance(h, ExecAction):
            h.fn(ctx, sandbox)
            if ctx.err() is not None:
                # the container stopped under the command: its process was killed with it
                raise RuntimeError("command terminated: the container was stopped")
        elif isinstance(h, HTTPGetAction):
            port = sandbox.ports[h.port] if isinstance(h.port, str) else h.port
            http_get(h.host, port, h.path, ctx)
        elif isinstance(h, SleepAction):
            if clock.select(ctx.done(), timeout=h.seconds) is not None:
                raise RuntimeError("container terminated before sleep hook finished")
        else:
            raise TypeError(f"unknown lifecycle handler {h!r}")
    except Exception as err:
        if isinstance(h, ExecAction):
            msg = f'Exec lifecycle hook ({h.command}) for Container "{container}" in Pod "{_pod_ref(pod)}" failed - error: {err}, message: ""'
        elif isinstance(h, HTTPGetAction):
            msg = f'HTTP lifecycle hook ({h.path}) for Container "{container}" in Pod "{_pod_ref(pod)}" failed - error: {err}'
        else:
            msg = f'Sleep lifecycle hook ({getattr(h, "seconds", "?")}) for Container "{container}" in Pod "{_pod_ref(pod)}" failed - error: {err}'
        raise HookError(msg) from err


def http_get(host: str, port: int, path: str, ctx: gocontext.Context, timeout: Optional[float] = None) -> tuple[int, bytes]:
    """One ``GET`` on its own connection; returns (status, body). When ``ctx`` ends first the
    socket is shut down (that wakes the blocked read) and the call raises the context's error."""
    if ctx.err() is not None:  # Go's client fails a request whose context is already done at once
        raise ctx.err().with_traceback(None)  # type: ignore[union-attr]
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    conn.connect()
    sock = conn.sock
    finished = rt.event("http-get-finished")

    def cancel_on_done() -> None:
        if rt.select(ctx.done(), finished) is ctx.done():
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watcher = rt.go(cancel_on_done, name="http-get-cancel")
    try:
        conn.request("GET", path, headers={"User-Agent": "kube-lifecycle/1.36"})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, body
    except (OSError, http.client.HTTPException) as err:
        if ctx.err() is not None:
            raise ctx.err().with_traceback(None) from err
        raise
    finally:
        finished.set()
        watcher.join()
        conn.close()

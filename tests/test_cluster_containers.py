"""Tests for genericserver.cluster.containers, .handlers and .loadclient with replicas of our server on real sockets.

SIGTERM is the server's graceful shutdown; SIGKILL force-closes it and abandons the run, whose
goroutines must still end (the conftest leak check runs after each test).
"""

from __future__ import annotations

import gc
import http.client
import os
import socket

import pytest

from genericserver.cluster import logs
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.containers import SIGKILL, SIGTERM, Sandbox, ServerContainer, ServerOptions
from genericserver.cluster.handlers import HookError, HTTPGetAction, SleepAction, http_get, run_handler
from genericserver.cluster.kubectl import delete_pod
from genericserver.cluster.kubelet import Kubelet
from genericserver.cluster.loadclient import classify
from genericserver.cluster.scenario import container_factory, image_name
from genericserver.cluster.store import Store, new_pod
from genericserver.context import context as gocontext
from genericserver.events import EventStream

WAIT = 10.0


def get(port: int, path: str = "/echo?message=x") -> int:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        return r.status
    finally:
        c.close()


@pytest.fixture
def server():
    sandbox = Sandbox("pod-x", "uid-x")
    c = ServerContainer("app", "pod-x", sandbox, ServerOptions(shutdown_delay=0.3))
    c.start()
    yield c, sandbox.ports["http"]
    if c.running():
        c.signal(SIGKILL)
    assert c.join(WAIT)


def test_a_replica_s_request_timeout_gives_a_request_real_seconds_at_any_time_scale():
    # 10 cluster seconds at a hundredth of real time would be 0.1 s: a request that takes 0.3 s of
    # real time (a busy machine's /echo; here /slow) would get the timeout filter's 504
    c = ServerContainer("app", "pod-t", Sandbox("pod-t", "uid-t"), ServerOptions(request_timeout=10.0),
                        clock=ClusterClock(scale=0.01))
    c.start()
    try:
        assert get(c.sandbox.ports["http"], "/slow?seconds=0.3") == 200
    finally:
        c.signal(SIGKILL)
        assert c.join(WAIT)


def test_an_emptydir_volume_goes_with_its_sandbox_if_never_unmounted():
    """A scenario that ends with its pods running never unmounts their volumes: the temporary
    directory is removed when the sandbox is dropped, instead of staying in /tmp."""
    sandbox = Sandbox("pod-v", "uid-v")
    path = sandbox.mount_volume()
    with open(sandbox.path("ready"), "w") as f:
        f.write("ok")
    del sandbox
    gc.collect()
    assert not os.path.exists(path)


def test_unmounting_an_emptydir_volume_removes_it_at_once():
    sandbox = Sandbox("pod-v", "uid-v")
    path = sandbox.mount_volume()
    sandbox.unmount_volume()
    assert not os.path.exists(path) and sandbox.volume is None
    sandbox.unmount_volume()  # twice is harmless


def test_sigterm_is_the_graceful_shutdown(server):
    c, port = server
    assert get(port) == 200
    c.signal(SIGTERM)
    assert c.lifecycle_signals.shutdown_initiated.signaled().wait(WAIT)
    assert get(port) == 200  # still served during the shutdown delay
    assert c.exited.wait(WAIT) and c.exit_code == 0
    with pytest.raises(ConnectionRefusedError):
        get(port)
    assert c.run_error is None


def test_sigkill_force_closes_and_abandons_the_run(server):
    c, port = server
    keep = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    keep.request("GET", "/echo?message=x")
    keep.getresponse().read()
    c.signal(SIGTERM)
    assert c.lifecycle_signals.shutdown_initiated.signaled().wait(WAIT)
    c.signal(SIGKILL)  # in the middle of the 0.3 s delay
    assert c.exited.is_set() and c.exit_code == 137
    assert not c.lifecycle_signals.not_accepting_new_request.is_signaled()
    with pytest.raises(ConnectionRefusedError):
        get(port)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)):
        keep.request("GET", "/echo?message=again")
        keep.getresponse()
    keep.close()
    # what is left of run_with_context unwinds on its own, without a goroutine panic
    assert c.join(WAIT)
    assert c.lifecycle_signals.http_server_stopped_listening.signaled().wait(WAIT)  # its own goroutine fires it


SHUTDOWN_SIGNALS = ("shutdown_initiated", "after_shutdown_delay_duration", "pre_shutdown_hooks_stopped",
                    "not_accepting_new_request", "in_flight_requests_drained", "http_server_stopped_listening")


def after_the_kill(events: EventStream, pod: str) -> list[str]:
    """What the stream holds from the runtime's SIGKILL of ``pod``'s container on."""
    names = [e.name for e in events.events()]
    return names[names.index(f"{pod}/app: SIGKILL"):]


@pytest.mark.parametrize("sigterm_first", [True, False], ids=["sigterm-then-sigkill", "sigkill-alone"])
def test_a_killed_replica_records_and_logs_nothing_after_the_kill(sigterm_first):
    """A SIGKILLed process writes nothing more: the goroutines its run leaves behind (threads
    cannot be killed) still step through the shutdown, but none of it reaches the timeline or
    the container's log. SIGKILL alone (a teardown's) is no graceful shutdown either: no
    ShutdownInitiated after it."""
    events = EventStream()
    c = ServerContainer("app", "pod-k", Sandbox("pod-k", "uid-k"), ServerOptions(shutdown_delay=0.3), events=events)
    with logs.capture():
        c.start()
        if sigterm_first:
            c.signal(SIGTERM)
            assert c.lifecycle_signals.shutdown_initiated.signaled().wait(WAIT)
        lines_at_the_kill = len(c.log.lines)
        c.signal(SIGKILL)
        assert c.join(WAIT)
        # every shutdown step the abandoned run takes has been taken (an observer runs before its signal is set)
        for name in SHUTDOWN_SIGNALS:
            assert getattr(c.lifecycle_signals, name).signaled().wait(WAIT), name
    assert after_the_kill(events, "pod-k") == ["pod-k/app: SIGKILL", "pod-k/app: exited with code 137"]
    assert len(c.log.lines) == lines_at_the_kill
    assert ("pod-k: ShutdownInitiated" in events.names("pod")) == sigterm_first


def test_the_kubelet_sigkills_a_server_whose_shutdown_outlasts_the_grace_period():
    clock = ClusterClock(0.1)
    store = Store(clock)
    kubelet = Kubelet(store, container_factory(clock, store.events), clock=clock)
    kubelet.run()
    try:
        # grace 2 s, a 5 s shutdown delay: the delay never ends before SIGKILL
        spec = {"name": "app", "image": "genericserver", "portName": "http", "options": ServerOptions(shutdown_delay=5.0)}
        store.create(new_pod("p", termination_grace_period_seconds=2, containers=[spec]))
        w = kubelet.wait_started("p", WAIT)
        app = w.containers["app"]
        delete_pod(store, "p")
        assert w.terminated.wait(WAIT)
        (term, t_term), (kill, t_kill) = app.signals
        assert (term, kill, app.exit_code) == (SIGTERM, SIGKILL, 137)
        # SIGKILL when the 2 s grace ran out: not before, and long before the 5 s delay could end
        assert 2.0 <= clock.from_runtime(t_kill) - clock.from_runtime(t_term) < 5.0
        assert not app.lifecycle_signals.not_accepting_new_request.is_signaled()
    finally:
        kubelet.stop()
        kubelet.kill_all()


def test_http_get_hook_and_sleep_hook(server):
    c, port = server
    sandbox = c.sandbox
    pod = new_pod("pod-x")
    pod["metadata"]["uid"] = "uid-x"
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    # the kubelet does not look at the status code of a hook's response
    run_handler(HTTPGetAction("/no-such-path", "http"), pod, "app", sandbox, ctx)
    cancel()
    with pytest.raises(HookError) as e:
        run_handler(SleepAction(5), pod, "app", sandbox, ctx)
    assert str(e.value) == ('Sleep lifecycle hook (5) for Container "app" in Pod "pod-x_default(uid-x)" failed - '
                            "error: container terminated before sleep hook finished")
    with pytest.raises(gocontext.Canceled):
        http_get("127.0.0.1", port, "/readyz", ctx)


def test_http_get_is_cancelled_by_its_context():
    ln = socket.create_server(("127.0.0.1", 0))
    try:
        ctx, cancel = gocontext.with_timeout(gocontext.background(), 0.05)
        with pytest.raises(gocontext.DeadlineExceeded):
            http_get("127.0.0.1", ln.getsockname()[1], "/never-answered", ctx)  # accepted, never read
        cancel()
    finally:
        ln.close()


@pytest.mark.parametrize(
    "status,err,outcome",
    [(200, None, "ok"), (429, None, "429"), (503, None, "503"), (500, None, "other"),
     (None, ConnectionRefusedError(), "refused"), (None, ConnectionResetError(), "reset"),
     (None, http.client.RemoteDisconnected(), "reset"), (None, socket.timeout(), "other")],
    ids=["ok", "429", "503", "500", "refused", "reset", "remote-disconnected", "timeout"],
)
def test_load_client_outcomes(status, err, outcome):
    assert classify(status, err) == outcome


@pytest.mark.parametrize("reference, program", [
    ("genericserver", "genericserver"), ("genericserver:dev", "genericserver"),
    # the real node's image (reference/node.py): with a registry it ran a FakeContainer, and no pod got Ready
    ("localhost/genericserver:node", "genericserver"), ("localhost:5000/envoy@sha256:0123", "envoy"),
    ("registry.example/team/shutdown-manager:v1", "shutdown-manager"),
])
def test_any_registry_and_tag_of_an_image_runs_the_same_program(reference, program):
    assert image_name(reference) == program


def test_a_process_that_takes_a_while_to_exit_after_its_server_returned():
    # exit_after: serve in a container on the real node exited 0.2-1.5 s after its last line; a
    # SIGKILL in that time ends it at once (137). No stopped listener means an exited process
    sandbox = Sandbox("pod-e", "uid-e")
    c = ServerContainer("app", "pod-e", sandbox, ServerOptions(exit_after=3600.0))
    c.start()
    port = sandbox.ports["http"]
    c.signal(SIGTERM)
    assert c.lifecycle_signals.http_server_stopped_listening.signaled().wait(WAIT)
    with pytest.raises(ConnectionRefusedError):
        get(port)
    assert c.running() and c.exit_code is None  # the server returned; the process is still there
    c.signal(SIGKILL)
    assert c.exited.is_set() and c.exit_code == 137
    assert c.join(WAIT)

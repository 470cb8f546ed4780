"""Tests for genericserver.cluster.shutdownmanager, .envoy and .backoff: Contour's drain of an Envoy.

Real loopback sockets for the servers (an Envoy stand-in in front of a tiny upstream, the
shutdown-manager); the simulation runtime for the exact times of the retry backoff and the
drain delay. Tests wait on the components' own log events, never on the clock.
"""

from __future__ import annotations

import re

import http.client
import os
import socket
from typing import Any, Callable, Optional

import pytest

from genericserver import runtime as rt
from genericserver.cluster import backoff
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.envoy import UPSTREAM_FAILURE, Envoy
from genericserver.cluster.logs import ContainerLog
from genericserver.cluster.shutdownmanager import (
    EnvoyAdmin,
    ShutdownManager,
    ShutdownOptions,
    logrus_line,
    parse_open_connections,
    shutdown,
)
from genericserver.events import Event, EventStream
from genericserver.net.http.server import Server, ServerClosed, listen
from genericserver.testing.sim import Simulation

WAIT = 10.0


class Watcher:
    """Waits until an event matching a predicate has been recorded on a stream."""

    def __init__(self, stream: EventStream):
        self._cond = rt.condition(rt.lock())
        self.seen: list[Event] = []
        stream.subscribe(self._on)

    def _on(self, ev: Event) -> None:
        with self._cond:
            self.seen.append(ev)
            self._cond.notify_all()

    def wait(self, pred: Callable[[Event], bool], count: int = 1, timeout: float = WAIT) -> list[Event]:
        with self._cond:
            ok = self._cond.wait_for(lambda: len([e for e in self.seen if pred(e)]) >= count, timeout)
            assert ok, f"never saw it; saw {[e.name for e in self.seen]}"
            return [e for e in self.seen if pred(e)]


def text(sub: str) -> Callable[[Event], bool]:
    return lambda e: sub in e.name


class Served:
    """A server running in a goroutine until close()."""

    def __init__(self, server: Any, serve: Optional[Callable[[Any], None]] = None):
        self.server = server
        self.ln = listen("127.0.0.1", 0)
        self.port = self.ln.getsockname()[1]
        self.g = rt.go(self._run, serve or server.serve, name="test-server")

    def _run(self, serve: Callable[[Any], None]) -> None:
        try:
            serve(self.ln)
        except ServerClosed:
            pass

    def close(self) -> None:
        self.server.close()
        self.g.join()


def upstream_app(environ: dict, start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Length", "2"), ("X-Upstream", "yes")])
    return [b"hi"]


@pytest.fixture
def envoy():
    up = Served(Server(upstream_app))
    e = Envoy(lambda: ("127.0.0.1", up.port))
    e.start()
    yield e, up
    e.close()
    e.join()
    up.close()


def request(port: int, method: str = "GET", path: str = "/", conn: Optional[http.client.HTTPConnection] = None) -> tuple:
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        c.request(method, path)
        r = c.getresponse()
        return r.status, r.read(), r.getheader("Connection")
    finally:
        if conn is None:
            c.close()


# -- the Envoy stand-in --------------------------------------------------------------------------


def test_envoy_proxies_reports_and_drains_after_the_health_check_fails(envoy):
    e, up = envoy
    closed = rt.event("ingress-http-connection-closed")
    e.servers["ingress_http"].conn_state_hook = lambda conn, state: state == "closed" and closed.set()
    assert request(e.ports["ingress_http"]) == (200, b"hi", None)
    # Envoy counts that connection until it has seen the client close it (on a loaded machine
    # that can come after the scrape below)
    assert closed.wait(WAIT)
    assert request(e.ports["admin"], path="/ready") == (200, b"LIVE\n", None)
    assert request(e.ports["admin"], path="/healthcheck/fail")[0] == 405  # POST only
    keep = http.client.HTTPConnection("127.0.0.1", e.ports["ingress_https"], timeout=WAIT)
    assert request(0, conn=keep)[0] == 200
    stats = request(e.ports["admin"], path="/stats/prometheus")[1].decode()
    assert 'envoy_http_downstream_cx_active{envoy_http_conn_manager_prefix="ingress_https"} 1' in stats
    assert parse_open_connections(stats) == 1  # the admin connection itself is not counted
    assert request(e.ports["admin"], "POST", "/healthcheck/fail") == (200, b"OK\n", None)
    assert request(e.ports["admin"], path="/ready") == (503, b"DRAINING\n", None)
    # still accepting, but every response now closes its connection
    assert request(0, conn=keep) == (200, b"hi", "close")
    keep.close()
    up.close()
    assert request(e.ports["ingress_http"]) == (503, UPSTREAM_FAILURE.encode(), "close")


def test_parse_open_connections():
    stats = ("# TYPE envoy_http_downstream_cx_active gauge\n"
             'envoy_http_downstream_cx_active{envoy_http_conn_manager_prefix="admin"} 4\n'
             'envoy_http_downstream_cx_active{envoy_http_conn_manager_prefix="ingress_http"} 2\n'
             'envoy_http_downstream_cx_active{envoy_http_conn_manager_prefix="ingress_https"} 3\n')
    assert parse_open_connections(stats) == 5
    with pytest.raises(RuntimeError, match='error finding Prometheus stat "envoy_http_downstream_cx_active" in the request result'):
        parse_open_connections("envoy_server_live 1\n")


# -- the shutdown-manager's /shutdown --------------------------------------------------------------


@pytest.fixture
def manager(tmp_path):
    events = EventStream()
    m = ShutdownManager(str(tmp_path / "ok"), events=events, check_interval=0.02)
    served = Served(m.server, m.serve)
    yield m, served.port, Watcher(events), tmp_path / "ok"
    m.close()
    served.g.join()


def test_shutdown_returns_only_after_the_ok_file_exists(manager):
    m, port, watch, ok = manager
    assert request(port, path="/healthz") == (200, b"OK", None)
    result: list = []
    done = rt.event("shutdown-answered")

    def call() -> None:
        result.append(request(port, path="/shutdown"))
        done.set()

    g = rt.go(call, name="prestop-httpget")
    watch.wait(text("does not exist; checking again"), count=3)
    assert not done.is_set(), "answered before the ok file existed"
    ok.touch()
    assert done.wait(WAIT)
    g.join()
    assert result == [(200, b"OK", None)]
    watch.wait(text("detected file"))


def test_shutdown_returns_when_the_caller_goes_away(manager):
    m, port, watch, ok = manager
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /shutdown HTTP/1.1\r\nHost: x\r\n\r\n")
    watch.wait(text("does not exist; checking again"))
    s.close()
    watch.wait(text("client request cancelled"))
    assert not ok.exists()


def test_what_the_manager_logs_is_its_containers_log_as_logrus_writes_it(manager):
    m, port, watch, ok = manager
    m.log = ContainerLog()
    ok.touch()
    assert request(port, path="/shutdown") == (200, b"OK", None)
    assert [re.sub(r'^time="[-\d]+T[:\d]+Z" ', "time=T ", line) for _, line in m.log.lines] == [
        f'time=T level=info msg="detected file {ok}; sending HTTP response" context=shutdown-manager']
    # a value of letters, digits and -._/@^+ only goes unquoted, as logrus's needsQuoting says
    assert logrus_line("info", "stopped", context="shutdown-manager").endswith(" level=info msg=stopped context=shutdown-manager")


# -- `contour envoy shutdown` -----------------------------------------------------------------------


def test_min_open_connections_is_honoured(envoy, tmp_path):
    e, _ = envoy
    conns = [http.client.HTTPConnection("127.0.0.1", e.ports["ingress_http"], timeout=WAIT) for _ in range(3)]
    for c in conns:
        assert request(0, conn=c)[0] == 200  # three idle keep-alive connections stay open
    events = EventStream()
    watch = Watcher(events)
    ok = tmp_path / "ok"
    opts = ShutdownOptions(str(ok), check_interval=0.02, check_delay=0.0, min_open_connections=2)
    result: list = []
    g = rt.go(lambda: result.append(shutdown(opts, EnvoyAdmin("127.0.0.1", e.ports["admin"]), events=events)), name="shutdown")
    try:
        watch.wait(text("polled open connections (open_connections=3 min_connections=2)"), count=2)
        assert not ok.exists()
        conns.pop().close()
        g.join(WAIT)
        assert result == [True] and ok.exists()
        assert watch.seen[-1].get("open_connections") == 2
    finally:
        for c in conns:
            c.close()
        g.join()


class FakeAdmin:
    """Envoy's admin API as ``shutdown`` sees it, on virtual time."""

    def __init__(self, failures: int = 0, open_connections: int = 0):
        self.failures, self.open_connections = failures, open_connections
        self.attempts: list[float] = []
        self.failed_at: Optional[float] = None

    def healthcheck_fail(self) -> None:
        self.attempts.append(rt.now())
        if len(self.attempts) <= self.failures:
            raise RuntimeError("creating healthcheck fail POST request failed: connection refused")
        self.failed_at = rt.now()

    def ready(self) -> bool:
        return self.failed_at is None

    def stats(self) -> str:
        return f'envoy_http_downstream_cx_active{{envoy_http_conn_manager_prefix="ingress_http"}} {self.open_connections}\n'


def test_backoff_schedule_and_jitter():
    b = backoff.Backoff(duration=0.2, factor=5.0, jitter=0.1, steps=4)
    assert backoff.schedule(b, rand=lambda: 0.0) == [0.2, 1.0, 5.0]
    assert [round(w, 6) for w in backoff.schedule(b, rand=lambda: 0.5)] == [0.21, 1.05, 5.25]
    capped = backoff.Backoff(duration=1.0, factor=10.0, steps=5, cap=5.0)
    assert backoff.schedule(capped) == [1.0]  # the cap ends the steps


def test_drain_delay_keeps_envoy_ready_that_long_and_check_delay_waits_before_polling(tmp_path):
    admin = FakeAdmin(open_connections=0)
    ready_at: dict[float, bool] = {}

    def main() -> float:
        opts = ShutdownOptions(str(tmp_path / "ok"), check_interval=1, check_delay=7.0, drain_delay=3.0)
        g = rt.go(lambda: shutdown(opts, admin), name="shutdown")
        for t in (0.0, 2.999, 3.001):
            rt.sleep(t - rt.now())
            ready_at[t] = admin.ready()
        g.join()
        return rt.now()

    end = Simulation().run(main)
    assert ready_at == {0.0: True, 2.999: True, 3.001: False}
    assert admin.failed_at == 3.0
    assert end == 10.0  # the first poll waited the check delay, found nothing open and wrote the file
    assert os.path.exists(tmp_path / "ok")


def test_drain_delay_on_a_real_envoy(envoy, tmp_path):
    e, _ = envoy
    events = EventStream()
    watch = Watcher(events)
    opts = ShutdownOptions(str(tmp_path / "ok"), check_interval=0.02, check_delay=0.0, drain_delay=0.3)
    start = rt.now()
    g = rt.go(lambda: shutdown(opts, EnvoyAdmin("127.0.0.1", e.ports["admin"]), events=events), name="shutdown")
    try:
        watch.wait(text("waiting 0.3s before draining connections"))
        ready = request(e.ports["admin"], path="/ready")
        with watch._cond:
            failed_yet = any("attempting to shutdown" in ev.name for ev in watch.seen)
        if not failed_yet:  # asked before the health check was failed (a slow machine may miss it)
            assert ready == (200, b"LIVE\n", None)
        failing = watch.wait(text("attempting to shutdown"))[0]
        assert failing.at - start >= 0.3
        g.join(WAIT)
        assert request(e.ports["admin"], path="/ready") == (503, b"DRAINING\n", None)
    finally:
        g.join()


def test_the_scaled_clock_scales_the_backoff_too(tmp_path):
    admin = FakeAdmin(failures=9)

    def main() -> None:
        shutdown(ShutdownOptions(str(tmp_path / "ok"), check_delay=0), admin, clock=ClusterClock(0.5), rand=lambda: 0.0)

    Simulation().run(main)
    assert [round(t, 6) for t in admin.attempts] == [0.0, 0.1, 0.6, 3.1]


# -- a read-only root filesystem (projectcontour/contour#3771) --------------------------------------


def test_shutdown_logs_the_failed_create_and_returns_as_if_done(tmp_path):
    events = EventStream()
    opts = ShutdownOptions(str(tmp_path / "ok"), check_interval=1, check_delay=0.0, read_only_root_filesystem=True)

    def main() -> tuple[bool, float]:
        return shutdown(opts, FakeAdmin(open_connections=0), events=events), rt.now()

    done, end = Simulation().run(main)
    assert (done, end) == (False, 0.0)  # no wait: the error is logged and the command ends
    assert not os.path.exists(tmp_path / "ok")
    assert [e.name for e in events.events()][-2:] == [
        "shutdown: min number of open connections found, shutting down (open_connections=0 min_connections=0)",
        "shutdown: open /ok: read-only file system"]


def test_any_failed_create_is_logged_as_gos_path_error(tmp_path):
    # not only the modelled read-only root: a create the OS refuses (here its folder is gone)
    # logs what Go's os.Create returns, the path as the container sees it
    events = EventStream()
    opts = ShutdownOptions(str(tmp_path / "gone" / "ok"), check_interval=1, check_delay=0.0, display_name="/ok")
    assert Simulation().run(lambda: shutdown(opts, FakeAdmin(open_connections=0), events=events)) is False
    assert [e.name for e in events.events()][-1] == "shutdown: open /ok: no such file or directory"


def test_on_a_read_only_root_the_drain_ends_when_the_shutdown_manager_is_stopped():
    from genericserver.cluster.scenario import ScenarioConfig, run_scenario

    # at a quarter of real time: a second of a loaded machine's latency is 4 cluster seconds (at a
    # tenth, two suites at once put SIGTERM at 9.9 s, at the grace's very end)
    r = run_scenario(ScenarioConfig(pre_stop="contour", read_only_root_filesystem=True, check_delay=0.0, grace_period=10,
                                    scale=0.25, workers=2, interval=0.02, warmup=1.0, tail=0.5))
    names = [(row.at, row.component, row.text) for row in r.rows]

    def at(component: str, sub: str) -> float:
        return next(t for t, c, text in names if c == component and sub in text)

    failed_create = at("shutdown-manager", "shutdown: open /ok: read-only file system")
    # the exec hook still succeeds, so the kubelet stops the shutdown-manager at once...
    assert at("kubelet", "web-0/shutdown-manager: PreStop hook completed") >= failed_create
    stopped = at("container", "web-0/shutdown-manager: SIGTERM")
    # ...and Envoy's /shutdown, which never saw the file, fails with it: SIGTERM long before the grace
    assert not any("detected file" in text for _, _, text in names)
    envoy_hook_failed = at("kubelet", 'HTTP lifecycle hook (/shutdown) for Container "envoy"')
    # /shutdown never answered: the connection went with the process
    # (how it shows depends on where the request was when the process went: in the handler,
    # not yet accepted, or not yet connected; two suites at once on two cores saw another
    # than the first)
    hook = next(text for _, c, text in names if c == "kubelet" and 'HTTP lifecycle hook (/shutdown) for Container "envoy"' in text)
    gone = ("Remote end closed connection without response", "Connection reset by peer", "Connection refused")
    assert any(why in hook for why in gone), hook
    assert stopped <= envoy_hook_failed
    # the grace left is 10 s less the hook's whole seconds (about one check of the file: 9 or
    # 10 s, less on a loaded machine); what matters is that SIGTERM comes long before its end
    stop = next(text for _, c, text in names if c == "kubelet" and "web-0/envoy: StopContainer with " in text)
    assert re.fullmatch(r"web-0/envoy: StopContainer with \d+s grace: SIGTERM", stop), stop
    assert at("kubelet", "web-0/envoy: StopContainer with ") < 10.0 / 2

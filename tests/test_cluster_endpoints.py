"""Tests for genericserver.cluster.endpoints and .proxy: the ready set after the lags; established connections survive.

The lag tests run on the simulation runtime (exact virtual times); the connection test on real
loopback sockets with two tiny HTTP servers standing in for pods.
"""

from __future__ import annotations

import http.client
from typing import Any

import pytest

from genericserver import runtime as rt
from genericserver.cluster.endpoints import EndpointsController, describe_changes, endpoint_for, new_service
from genericserver.cluster.proxy import KubeProxy, usable
from genericserver.cluster.store import ENDPOINT_SLICE, POD, DeleteOptions, Store, new_pod
from genericserver.net.http.server import Server, ServerClosed, listen
from genericserver.testing.sim import Simulation


def running_pod(name: str, port: int, ready: bool = True) -> dict:
    pod = new_pod(name, labels={"app": "web"})
    pod["status"] = {"phase": "Running", "podIP": "127.0.0.1", "ports": {"http": port},
                     "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return pod


def world(store: Store, endpoints_lag: float, proxy_lag: float) -> tuple[EndpointsController, KubeProxy]:
    store.create(new_service("web", {"app": "web"}))
    ec = EndpointsController(store, lag=endpoints_lag)
    proxy = KubeProxy(store, "web", lag=proxy_lag)
    ec.run()
    proxy.run()
    return ec, proxy


def two_ready_pods(endpoints_lag: float, proxy_lag: float) -> tuple[Store, EndpointsController, KubeProxy]:
    """web-0 and web-1, both Ready, and the controllers once kube-proxy routes to both."""
    store = Store()
    for i, port in enumerate((1001, 1002)):
        store.create(running_pod(f"web-{i}", port))
    ec, proxy = world(store, endpoints_lag, proxy_lag)
    assert proxy.wait_for(lambda t: {e.pod for e in usable(t)} == {"web-0", "web-1"})
    return store, ec, proxy


def test_a_terminating_pod_leaves_the_ready_set_after_the_lags():
    def main() -> dict[str, Any]:
        store, ec, proxy = two_ready_pods(endpoints_lag=1.0, proxy_lag=2.0)
        t0, seen = rt.now(), len(store.events)
        store.delete(POD, "web-0", DeleteOptions())
        rt.sleep(0.999)
        still = {e.pod for e in usable(proxy.table)}
        rt.sleep(10)
        after = {e.pod for e in usable(proxy.table)}
        conds = {e["targetRef"]["name"]: e["conditions"] for e in store.get(ENDPOINT_SLICE, "web")["endpoints"]}
        times = {e.name: round(e.at - t0, 6) for e in store.events.events()[seen:] if e.kind in ("endpoints", "kube-proxy")}
        ec.stop()
        proxy.stop()
        return {"still": still, "after": after, "conds": conds, "times": times}

    got = Simulation().run(main)
    assert got["still"] == {"web-0", "web-1"}  # nobody knows yet
    assert got["after"] == {"web-1"}
    assert got["conds"]["web-0"] == {"ready": False, "serving": True, "terminating": True}
    assert got["conds"]["web-1"] == {"ready": True, "serving": True, "terminating": False}
    assert got["times"] == {
        "web: web-0 leaves the ready endpoints (ready=false serving=true terminating=true)": 1.0,
        "web: rules synced: new connections go to web-1; not to web-0 (terminating)": 3.0,
    }


def test_controllers_whose_threads_stall_still_act_at_their_lags_when_caught_up(monkeypatch):
    # a host that stalls the controllers' goroutines (each wakes 5 s late here) must not make them
    # later than their lags: the load client calls catch_up before it dials (World.dial), which
    # takes in the pending events and syncs what is due, as of when it was due
    from genericserver.cluster.store import Watch
    from genericserver.cluster.workqueue import DelayingQueue

    def stalled(method):
        def wait(self) -> bool:
            woke = method(self)
            rt.sleep(5.0)
            return woke
        return wait

    monkeypatch.setattr(Watch, "wait_pending", stalled(Watch.wait_pending))
    monkeypatch.setattr(DelayingQueue, "wait_due", stalled(DelayingQueue.wait_due))

    def main() -> dict[str, Any]:
        store, ec, proxy = two_ready_pods(endpoints_lag=1.0, proxy_lag=2.0)
        t0 = rt.now()
        store.delete(POD, "web-0", DeleteOptions())
        seen = []
        for at in (0.999, 2.999, 3.0):
            rt.sleep(t0 + at - rt.now())
            ec.catch_up()
            proxy.catch_up()
            seen.append({e.pod for e in usable(proxy.table)})
        rt.sleep(20)  # the stalled goroutines finish their turns before they stop
        ec.stop()
        proxy.stop()
        return {"seen": seen, "events": [(e.kind, e.name, round(e.at - t0, 6)) for e in store.events.events()
                                         if e.kind in ("endpoints", "kube-proxy") and e.at >= t0]}

    got = Simulation().run(main)
    assert got["seen"] == [{"web-0", "web-1"}, {"web-0", "web-1"}, {"web-1"}]
    # each line is stamped when its sync was due, though the first catch-up to run it came at
    # 2.999; and the stalled worker, when it woke, found the table synced: no second line
    assert got["events"] == [
        ("endpoints", "web: web-0 leaves the ready endpoints (ready=false serving=true terminating=true)", 1.0),
        ("kube-proxy", "web: rules synced: new connections go to web-1; not to web-0 (terminating)", 3.0),
    ]


def test_a_late_proxy_routes_as_of_each_sync_s_due_time_not_by_a_later_slice(monkeypatch):
    # two suites at once once stalled the model's kube-proxy while its endpoints controller kept
    # time: the sync due for web-2's arrival, run late, read the slice as it was by then, web-0
    # already terminating, and stamped "not to web-0" before the slice said so. A sync reads the
    # store as of its due time; the later change gets its own sync, its lag after it.
    from genericserver.cluster.store import Watch
    from genericserver.cluster.workqueue import DelayingQueue

    late: list = []  # the proxy's queue and watch, once it routes to both pods

    def stalled(method):
        def wait(self) -> bool:
            woke = method(self)
            if self in late:
                rt.sleep(10.0)  # this goroutine's host thread is late, every time
            return woke
        return wait

    monkeypatch.setattr(Watch, "wait_pending", stalled(Watch.wait_pending))
    monkeypatch.setattr(DelayingQueue, "wait_due", stalled(DelayingQueue.wait_due))

    def main() -> list[tuple[str, str, float]]:
        store, ec, proxy = two_ready_pods(endpoints_lag=1.0, proxy_lag=2.0)
        late.extend((proxy.queue, proxy._watch))
        t0, seen = rt.now(), len(store.events)
        store.create(running_pod("web-2", 1003))  # its endpoint at 1.0, due at kube-proxy at 3.0
        rt.sleep(2.5)
        store.delete(POD, "web-0", DeleteOptions())  # out of the ready endpoints at 3.5
        rt.sleep(6.0 - 2.5)
        proxy.catch_up()  # the first to act on either, at 6.0: as the load client does before it dials
        rt.sleep(30)
        ec.stop()
        proxy.stop()
        return sorted(((e.kind, e.name, round(e.at - t0, 6)) for e in store.events.events()[seen:]
                       if e.kind in ("endpoints", "kube-proxy")), key=lambda e: e[2])

    assert Simulation().run(main) == [
        ("endpoints", "web: web-2 added (ready=true serving=true terminating=false)", 1.0),
        ("kube-proxy", "web: rules synced: new connections go to web-0, web-1, web-2", 3.0),
        ("endpoints", "web: web-0 leaves the ready endpoints (ready=false serving=true terminating=true)", 3.5),
        ("kube-proxy", "web: rules synced: new connections go to web-1, web-2; not to web-0 (terminating)", 5.5),
    ]


def test_terminating_endpoints_are_the_fallback_and_no_endpoints_is_a_reject():
    def main() -> tuple:
        store = Store()
        store.create(running_pod("web-0", 1001))
        ec, proxy = world(store, 0.0, 0.0)
        assert proxy.wait_for(lambda t: len(t) == 1)
        store.delete(POD, "web-0", DeleteOptions())
        assert proxy.wait_for(lambda t: t and t[0].terminating)
        fallback = proxy.pick()
        store.delete(POD, "web-0", DeleteOptions(grace_period_seconds=0))
        assert proxy.wait_for(lambda t: not t)
        with pytest.raises(ConnectionRefusedError, match="service web has no endpoints"):
            proxy.dial(1.0)
        ec.stop()
        proxy.stop()
        return fallback.pod, fallback.ready

    assert Simulation().run(main) == ("web-0", False)


def test_endpoint_conditions_and_pods_without_an_address():
    pod = running_pod("p", 1001, ready=False)
    pod["metadata"]["uid"] = "u"
    assert endpoint_for(pod, "http")["conditions"] == {"ready": False, "serving": False, "terminating": False}
    pod["status"].pop("podIP")
    assert endpoint_for(pod, "http") is None
    old = [{"targetRef": {"name": "a"}, "conditions": {"ready": True, "serving": True, "terminating": False}}]
    new = [{"targetRef": {"name": "a"}, "conditions": {"ready": False, "serving": True, "terminating": True}}]
    assert describe_changes(old, new) == ["a leaves the ready endpoints (ready=false serving=true terminating=true)"]
    assert describe_changes(new, []) == ["a removed from the slice"]


class Pod:
    """A tiny HTTP server that says which pod it is."""

    def __init__(self, name: str):
        def app(environ: dict, start_response: Any) -> list[bytes]:
            start_response("200 OK", [("Content-Length", str(len(name))), ("X-Pod", name)])
            return [name.encode()]

        self.server = Server(app)
        self.ln = listen("127.0.0.1", 0)
        self.port = self.ln.getsockname()[1]
        self.g = rt.go(self._serve, name=f"pod-{name}")

    def _serve(self) -> None:
        try:
            self.server.serve(self.ln)
        except ServerClosed:
            pass

    def close(self) -> None:
        self.server.close()
        self.g.join()


def get(conn: http.client.HTTPConnection) -> str:
    conn.request("GET", "/")
    resp = conn.getresponse()
    resp.read()
    return resp.getheader("X-Pod")


def test_established_connections_survive_the_routing_change():
    pods = [Pod("web-0"), Pod("web-1")]
    store = Store()
    for i, p in enumerate(pods):
        store.create(running_pod(f"web-{i}", p.port))
    ec, proxy = world(store, endpoints_lag=0.05, proxy_lag=0.05)
    conns = []
    try:
        assert proxy.wait_for(lambda t: len(usable(t)) == 2, 10)
        # conntrack: a connection keeps the pod it was set up with
        pinned = None
        while pinned is None:
            sock, pod = proxy.dial(5)
            conn = http.client.HTTPConnection("web", 80)
            conn.sock = sock
            conns.append(conn)
            if pod == "web-0":
                pinned = conn
        assert get(pinned) == "web-0"
        store.delete(POD, "web-0", DeleteOptions())
        assert proxy.wait_for(lambda t: {e.pod for e in usable(t)} == {"web-1"}, 10)
        # new connections no longer go to web-0...
        assert {proxy.dial(5)[1] for _ in range(6)} == {"web-1"}
        # ...but the established one still reaches it (the server is still running)
        assert get(pinned) == "web-0"
        assert get(pinned) == "web-0"
    finally:
        for c in conns:
            c.close()
        ec.stop()
        proxy.stop()
        for p in pods:
            p.close()

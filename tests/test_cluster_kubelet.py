"""Tests for genericserver.cluster.kubelet on the simulation runtime: preStop, grace, SIGKILL, Terminating (and one readiness probe on real time and a real socket).

Virtual time makes a 30 s grace period cost nothing and every timestamp exact: the kubelet reacts
to the deletion at the instant of the delete, so signal times are relative to it.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import threading
from typing import Any, Iterator, Optional

import pytest

from genericserver import runtime as rt
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.containers import FakeContainer
from genericserver.cluster.handlers import ExecAction, SleepAction
from genericserver.cluster.kubectl import DeleteFlags, delete_pod, pod_status
from genericserver.cluster.kubelet import Kubelet, calculate_effective_grace_period
from genericserver.cluster.store import EVENT, POD, Store, is_not_found, new_pod
from genericserver.sampleapi import StatusError
from genericserver.testing.sim import Simulation

WAIT = 1000.0  # virtual seconds


def simulate(fn: Any) -> Any:
    return Simulation().run(fn)


def takes(seconds: Optional[float], fail: bool = False) -> ExecAction:
    """An exec hook that runs ``seconds`` (forever if None), then fails if ``fail``."""

    def hook(ctx: Any, sandbox: Any) -> None:
        rt.select(ctx.done(), timeout=seconds)
        if fail:
            raise RuntimeError("exit status 1")

    return ExecAction(hook, ["hook", str(seconds)])


def run_deletion(grace: int, pre_stop: Any = None, term_after: Optional[float] = None) -> dict:
    """Delete a one-container pod; report signal times and when it left the API (relative to the delete)."""

    def main() -> dict:
        store = Store()
        kubelet = Kubelet(store)
        kubelet.run()
        spec = {"name": "app", "image": "fake", "termAfter": term_after}
        if pre_stop is not None:
            spec["lifecycle"] = {"preStop": pre_stop}
        store.create(new_pod("p", termination_grace_period_seconds=grace, containers=[spec]))
        w = kubelet.wait_started("p")
        t0 = rt.now()
        delete_pod(store, "p")
        assert w.terminated.wait(WAIT)
        gone = rt.now() - t0
        kubelet.stop()
        c = w.containers["app"]
        return {
            "signals": [(sig, round(t - t0, 6)) for sig, t in c.signals],
            "gone": round(gone, 6),
            "events": [reason for _, _, reason, _ in kubelet.pod_events],
        }

    return simulate(main)


def test_a_failing_prestop_is_recorded_and_the_container_still_stops():
    got = run_deletion(10, takes(1.0, fail=True), term_after=0.0)
    assert got["signals"] == [("SIGTERM", 1)]
    # killContainer records Killing before it runs the hook (it recorded it after: describe showed
    # nothing of a pod sleeping in its preStop)
    assert got["events"] == ["Killing", "FailedPreStopHook"]


@pytest.mark.parametrize(
    "pod,current,want",
    [
        ({"deletionGracePeriodSeconds": 30}, 0, 30),
        ({"deletionGracePeriodSeconds": 10}, 30, 10),
        ({"deletionGracePeriodSeconds": 60}, 30, 30),
        ({"deletionGracePeriodSeconds": 0}, 0, 45),
        ({"deletionGracePeriodSeconds": 0}, 20, 45),
        ({}, 0, 45),
    ],
    ids=["from-the-api", "shrinks", "never-grows", "force-delete-gets-pods-own", "zero-override-resets-to-own", "no-deletion-grace"],
)
def test_calculate_effective_grace_period(pod, current, want):
    p = new_pod("p", termination_grace_period_seconds=45)
    p["metadata"].update(pod)
    assert calculate_effective_grace_period(p, current) == want


@pytest.mark.parametrize("cause", ["container_stuck", "volume_busy", "cgroup_busy"])
def test_each_cause_leaves_the_pod_terminating_and_a_fix_lets_it_go(cause):
    def main() -> list[str]:
        store = Store()
        kubelet = Kubelet(store)
        kubelet.run()
        store.create(new_pod("p", termination_grace_period_seconds=5, containers=[{"name": "app", "image": "fake", "termAfter": 0.0}]))
        w = kubelet.wait_started("p")
        kubelet.break_pod("p", **{cause: True})
        delete_pod(store, "p")
        rt.sleep(600)  # ten virtual minutes later...
        assert pod_status(store.get(POD, "p")) == "Terminating"
        assert not w.terminated.is_set()
        why = [e.name for e in store.events if "cannot delete yet" in e.name]
        kubelet.fix("p", **{c: c == cause for c in ("container_stuck", "volume_busy", "cgroup_busy")})
        assert w.terminated.wait(kubelet.housekeeping_period + 1)
        with pytest.raises(StatusError) as e:
            store.get(POD, "p")
        assert is_not_found(e.value)
        kubelet.stop()
        return why

    why = simulate(main)
    expected = {"container_stuck": "containers still running: app", "volume_busy": "volumes not yet unmounted",
                "cgroup_busy": "pod cgroup not yet removed"}[cause]
    assert any(expected in line for line in why), why


def test_force_delete_keeps_the_workload_running_and_the_uid_precondition_spares_a_new_pod():
    def main() -> None:
        store = Store()
        kubelet = Kubelet(store)
        kubelet.run()
        spec = [{"name": "app", "image": "fake", "termAfter": None}]
        store.create(new_pod("p", termination_grace_period_seconds=30, containers=spec))
        old = kubelet.wait_started("p")
        t0 = rt.now()
        delete_pod(store, "p", DeleteFlags(force=True))
        with pytest.raises(StatusError):
            store.get(POD, "p")  # gone from the API at once...
        rt.sleep(5)
        assert old.containers["app"].running()  # ...while it still runs on the node
        new = store.create(new_pod("p", containers=[{"name": "app", "image": "fake"}]))
        assert old.terminated.wait(WAIT)
        # a force-deleted pod still gets its own grace period on the node (30 s)
        assert old.containers["app"].signals[-1] == ("SIGKILL", t0 + 30)
        # the old pod's final delete carried its uid: the new pod of the same name survives
        assert store.get(POD, "p")["metadata"]["uid"] == new["metadata"]["uid"]
        assert any("final delete: Operation cannot be fulfilled" in e.name for e in store.events)
        kubelet.stop()

    simulate(main)


@contextlib.contextmanager
def probed_pod(handler: type, probe: dict, *, scale: float, threaded: bool = True) -> Iterator[tuple[Store, Kubelet, Any]]:
    """A kubelet on a store at ``scale``, running pod ``p`` whose container's port is a real
    replica answering with ``handler``, probed as ``probe`` says; (store, kubelet, a watch of pods)."""
    server = http.server.ThreadingHTTPServer if threaded else http.server.HTTPServer
    replica = server(("127.0.0.1", 0), handler)
    serving = threading.Thread(target=replica.serve_forever, name="probed-replica")
    serving.start()
    clock = ClusterClock(scale=scale)
    store = Store(clock=clock)

    def factory(pod: dict, spec: dict, sandbox: Any) -> FakeContainer:
        sandbox.ports["http"] = replica.server_address[1]
        return FakeContainer(spec["name"], sandbox.pod_name, clock=clock)

    kubelet = Kubelet(store, factory, clock=clock)
    pods = store.watch(POD)
    try:
        kubelet.run()
        pod = new_pod("p", containers=[{"name": "app", "image": "fake"}])
        pod["spec"]["readinessProbe"] = {"httpGet": {"path": "/readyz", "port": "http"}, **probe}
        store.create(pod)
        yield store, kubelet, pods
    finally:
        pods.stop()
        kubelet.stop()
        kubelet.kill_all()
        replica.shutdown()
        replica.server_close()
        serving.join()


def test_a_probe_at_a_tenth_of_real_time_still_gives_a_replica_a_real_second():
    # Real time and a real socket: a replica that answers its readiness probe in 0.3 s on a busy
    # machine. At --time-scale 0.1 the probe's default 1 s timeout would be 0.1 s, and the pod
    # would go unready for nothing (CI once saw kube-proxy drop a healthy replica that way).
    answered = threading.Event()

    class SlowReady(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            answered.wait(0.3)  # never set: 0.3 s of a slow machine
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    with probed_pod(SlowReady, {"periodSeconds": 1, "timeoutSeconds": 1}, scale=0.1) as (_, kubelet, pods):
        # the pod starts unready; its first probe either makes it ready or records Unhealthy
        ready = "False"
        while ready == "False" and not kubelet.pod_events:
            event = pods.next(timeout=10.0)
            assert event is not None, "no pod update in 10 s"
            conditions = event[1].get("status", {}).get("conditions", [])
            ready = next((c["status"] for c in conditions if c["type"] == "Ready"), "False")
        assert (ready, kubelet.pod_events) == ("True", [])


def test_a_stopped_kubelet_leaves_no_emptydir_folder_of_a_pod_still_running():
    # the folders were left to an exit-time finalizer, which a forked test worker never runs
    def main() -> tuple[bool, bool]:
        store = Store()
        kubelet = Kubelet(store)
        kubelet.run()
        store.create(new_pod("p", containers=[{"name": "app", "image": "fake", "termAfter": None}]))
        folder = kubelet.wait_started("p").sandbox.volume
        there = os.path.isdir(folder)
        kubelet.stop()
        return there, os.path.exists(folder)

    assert simulate(main) == (True, False)


def test_an_accepted_pod_shows_its_containers_creating_until_they_run():
    """The kubelet's first status of a pod: its containers waiting, ContainerCreating (``get pods``
    shows it), until the sandbox is up and they run (the start delay)."""
    from genericserver.cluster.apiview import APIView
    from genericserver.printers.internalversion.printers import POD_TABLE

    def main() -> tuple[list, list]:
        store = Store()
        kubelet = Kubelet(store, start_delay=5.0)
        kubelet.run()
        watch = store.watch(POD)
        store.create(new_pod("p", containers=[{"name": "app", "image": "fake"}, {"name": "sidecar", "image": "fake"}]))
        kubelet.wait_started("p").started.wait(WAIT)
        seen = []
        while (ev := watch.next(timeout=0)) is not None:
            seen.append(ev[1])
        watch.stop()
        kubelet.stop()
        kubelet.kill_all()
        view = APIView(store.clock)
        statuses = [[(c["name"], c["state"]) for c in view.pod(p)["status"].get("containerStatuses", [])] for p in seen]
        conditions = [[(c["type"], c["status"], c.get("reason", "")) for c in p["status"].get("conditions", [])] for p in seen]
        return statuses, [POD_TABLE.cells(view.pod(p), view.now())[1:3] for p in seen], conditions

    statuses, cells, conditions = simulate(main)
    # the kubelet's conditions, in its status manager's order: not ready while creating, then ready
    assert conditions[1] == [("PodReadyToStartContainers", "False", ""), ("Initialized", "True", ""),
                             ("Ready", "False", "ContainersNotReady"), ("ContainersReady", "False", "ContainersNotReady"),
                             ("PodScheduled", "True", "")]
    assert [status for _, status, _ in conditions[-1]] == ["True"] * 5
    creating = {"waiting": {"reason": "ContainerCreating"}}
    assert statuses[:2] == [[], [("app", creating), ("sidecar", creating)]]
    assert [s for s, _ in statuses[-1]] == ["app", "sidecar"] and all("running" in state for _, state in statuses[-1])
    assert cells[:2] == [["0/2", "Pending"], ["0/2", "ContainerCreating"]]


@pytest.mark.parametrize("term_after, phase", [(1.0, "Succeeded"), (None, "Failed")])
def test_a_stopped_pod_gets_its_terminal_phase_before_the_final_delete(term_after, phase):
    # kubelet_pods.go getPhase for a terminal pod: Succeeded when every container exited 0, else
    # Failed. The endpoints controller drops such a pod, so on the real node the endpoint leaves the
    # slice 0.1-0.3 s before the pod leaves the API (tests/parity/real-node.json); the model once
    # deleted the pod still Running, and the endpoint went after it
    def main() -> list[tuple[str, str, float]]:
        store = Store()
        kubelet = Kubelet(store)
        kubelet.run()
        store.create(new_pod("p", termination_grace_period_seconds=10,
                             containers=[{"name": "app", "image": "fake", "termAfter": term_after}]))
        w = kubelet.wait_started("p")
        watch = store.watch(POD)
        t0 = rt.now()
        delete_pod(store, "p")
        assert w.terminated.wait(WAIT)
        seen = []
        while (ev := watch.next(timeout=0)) is not None:
            typ, obj = ev
            seen.append((typ, obj.get("status", {}).get("phase"), round(rt.now() - t0, 6)))
        watch.stop()
        kubelet.stop()
        return seen

    seen = simulate(main)
    assert [typ for typ, _, _ in seen][-1] == "DELETED"
    updates = [p for typ, p, _ in seen if typ == "MODIFIED"]
    assert updates[-1] == phase and "Running" in updates[:-1]


def test_a_readiness_result_that_lands_after_the_terminal_status_leaves_the_container_terminated():
    # The prober looks whether its result is still wanted, then writes it. Two suites on two cores
    # once let the kubelet write the pod's terminal status in between, and the prober's write put
    # the container back to running: kubectl printed the phase, Succeeded, where it prints the
    # container's Completed. As the status manager's SetContainerReadiness, it sets a flag only.
    def main() -> dict:
        store = Store()
        kubelet = Kubelet(store)
        kubelet.run()
        pod = new_pod("p", termination_grace_period_seconds=5, containers=[{"name": "app", "image": "fake", "termAfter": 0.0}])
        pod["metadata"]["finalizers"] = ["example.com/hold"]  # kept after the kubelet's delete
        store.create(pod)
        w = kubelet.wait_started("p")
        delete_pod(store, "p")
        assert w.terminated.wait(WAIT)
        kubelet.set_container_readiness(w, False)  # the prober's late result
        status = store.get(POD, "p")["status"]
        kubelet.stop()
        return status

    status = simulate(main)
    assert status["phase"] == "Succeeded"
    assert [(cs["name"], cs["state"], cs["ready"]) for cs in status["containerStatuses"]] == [("app", "terminated", False)]
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions["Ready"] == "False" and conditions["PodReadyToStartContainers"] == "False"


@pytest.mark.parametrize("thresholds, answers, turns", [
    # the defaults (1 success, 3 failures): two failures in a row leave it ready, the third turns it
    ({}, [200, 500, 500, 200, 500, 500, 500, 200], ["True", "False", "True"]),
    # failureThreshold 1: each failure turns it
    ({"failureThreshold": 1}, [200, 500, 200, 500, 200], ["True", "False", "True", "False", "True"]),
    # successThreshold 2: unready from the start until two successes in a row
    ({"successThreshold": 2}, [200, 500, 200, 200, 500, 500, 500, 200, 200], ["True", "False", "True"]),
])
def test_readiness_turns_after_the_probe_s_thresholds_in_a_row(thresholds, answers, turns):
    # Real time and a real socket, as the prober: the replica answers from a script, one answer a
    # probe, so the turns are the script's whatever the machine's pace. The kubelet's probe loop
    # updates the pod before it sends the next probe: once the replica has answered two probes past
    # the script, every turn the script makes is in the watch.
    script, served, done = list(answers), [0], threading.Event()

    class Scripted(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served[0] += 1
            self.send_response(script.pop(0) if script else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            if served[0] == len(answers) + 2:
                done.set()

        def log_message(self, *args: Any) -> None:
            pass

    # one probe at a time, in order; 5 real seconds to answer: no timeout on a busy machine
    probe = {"periodSeconds": 1, "timeoutSeconds": 100, **thresholds}
    with probed_pod(Scripted, probe, scale=0.05, threaded=False) as (store, kubelet, pods):
        assert done.wait(30.0), f"the replica answered {served[0]} probes in 30 s"
        seen = []
        while (event := pods.next(timeout=0)) is not None:
            conditions = event[1].get("status", {}).get("conditions", [])
            ready = next((c["status"] for c in conditions if c["type"] == "Ready"), None)
            if ready is not None and (not seen or seen[-1] != ready):
                seen.append(ready)
        assert seen[1:] == turns and seen[0] == "False", seen  # unready until the first success counts
        # the timeline prints each turn to unready once, the Events count every failure
        unhealthy = [e for e in store.list(EVENT) if e["reason"] == "Unhealthy"]
        assert len(unhealthy) == 1 and unhealthy[0]["count"] == sum(code >= 400 for code in answers), unhealthy
        printed = [e for e in kubelet.pod_events if e[2] == "Unhealthy"]
        assert len(printed) == turns.count("False"), kubelet.pod_events

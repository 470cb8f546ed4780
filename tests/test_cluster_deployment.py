"""Tests for genericserver.cluster.deployment: the fenceposts, and rolling updates on virtual time.

The rollouts run the Deployment and ReplicaSet controllers with the kubelet and fake containers
on the simulation runtime: a pod takes 1 s to start and is Ready once started (no probe), an old
pod takes 3 s to stop after SIGTERM. A watcher replays every pod change in order and checks the
controller's promises after each one: never more than ``replicas + surge`` pods that are not
terminating, never fewer than ``replicas - unavailable`` available.
"""

from __future__ import annotations

import pytest

from genericserver import runtime as rt
from genericserver.cluster.deployment import (
    REVISION_ANNOTATION,
    DeploymentController,
    FencepostError,
    parse_int_or_percent,
    rank_for_deletion,
    resolve_fenceposts,
    scaled_value,
    validate_strategy,
)
from genericserver.cluster.endpoints import pod_is_ready
from genericserver.cluster.kubelet import Kubelet
from genericserver.cluster.store import DELETED, DEPLOYMENT, POD, REPLICA_SET, Store, is_terminating, new_pod
from genericserver.testing.choosers import SeededRandom
from genericserver.testing.sim import Simulation


@pytest.mark.parametrize(
    "surge, unavailable, desired, want",
    [
        ("25%", "25%", 3, (1, 0)),  # a default Deployment of 3: one extra pod at a time, none missing
        ("25%", "25%", 4, (1, 1)),
        ("25%", "25%", 10, (3, 2)),  # 2.5 rounds up for the surge, down for the unavailability
        ("25%", "25%", 1, (1, 0)),
        (0, "1%", 2, (0, 1)),  # both 0 after rounding: unavailable becomes 1
        ("0%", "0%", 0, (0, 1)),
        (1, 0, 3, (1, 0)),
        (2, 5, 3, (2, 5)),  # absolute numbers are taken as they are (MaxUnavailable caps them)
        ("100%", "0%", 3, (3, 0)),
        ("39%", "39%", 10, (4, 3)),
    ],
)
def test_resolve_fenceposts_rounds_surge_up_and_unavailability_down(surge, unavailable, desired, want):
    assert resolve_fenceposts(surge, unavailable, desired) == want


def test_percentages_scale_and_bad_values_are_refused():
    assert scaled_value("50%", 3, True) == 2 and scaled_value("50%", 3, False) == 1
    assert parse_int_or_percent(3) == 3 and parse_int_or_percent("30%") == "30%"
    for bad in ("1", "oops", "-1%", -1, True, "25 %"):
        with pytest.raises(FencepostError):
            parse_int_or_percent(bad)


def test_validate_strategy_says_what_the_api_would():
    assert validate_strategy("25%", "25%") == []
    assert validate_strategy(0, "0%") == ["spec.strategy.rollingUpdate.maxUnavailable: may not be 0 when `maxSurge` is 0"]
    assert validate_strategy(1, "150%") == ["spec.strategy.rollingUpdate.maxUnavailable: must not be greater than 100%"]
    assert validate_strategy("x", 1)[0].startswith("spec.strategy.rollingUpdate.maxSurge: invalid value 'x'")


def test_the_replicaset_deletes_unready_pods_first_then_the_newest():
    def pod(name: str, created: float, ready: bool) -> dict:
        p = new_pod(name)
        p["metadata"]["creationTimestamp"] = created
        p["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
        return p

    pods = [pod("old", 1, True), pod("new", 3, True), pod("unready", 0, False)]
    assert [p["metadata"]["name"] for p in rank_for_deletion(pods)] == ["unready", "new", "old"]


def roll(replicas: int, surge, unavailable, chooser=None) -> dict:
    """Roll a Deployment on virtual time; the pod changes' history and the controller's figures."""

    def main() -> dict:
        store = Store()
        kubelet = Kubelet(store, start_delay=1.0)
        kubelet.run()

        def template(name: str, labels: dict) -> dict:
            return new_pod(name, labels=labels, containers=[{"name": "app", "image": "fake", "termAfter": 3.0}])

        d = DeploymentController(store, "web", replicas, template, max_surge=surge, max_unavailable=unavailable)
        watch = store.watch(POD)
        history: list[tuple[float, int, int, int]] = []  # (time, active, available, of them new)
        pods: dict[str, dict] = {}

        def watcher() -> None:
            while (ev := watch.next()) is not None:
                typ, pod = ev
                if typ == DELETED:
                    pods.pop(pod["metadata"]["name"], None)
                else:
                    pods[pod["metadata"]["name"]] = pod
                active = [p for p in pods.values() if not is_terminating(p)]
                available = [p for p in active if pod_is_ready(p)]
                new = [p for p in available if p["metadata"]["labels"]["pod-template-hash"] == "web-v2"]
                history.append((rt.now(), len(active), len(available), len(new)))

        g = rt.go(watcher, name="test-pod-watcher")
        d.run()
        assert d.wait_complete(100.0)
        started = rt.now()
        d.roll()
        assert d.wait_complete(1000.0)
        for name in d.deleted_pods():
            assert kubelet.worker(name).terminated.wait(100.0)
        took = rt.now() - started
        d.stop()
        kubelet.stop()
        watch.stop()
        g.join()
        # from the moment the first revision was all up (the watcher may replay it late)
        up = next(i for i, h in enumerate(history) if h[2] == replicas)
        return {"history": history[up:], "took": took, "steps": [e.name for e in store.events.events("deployment")], "deleted": d.deleted_pods(),
                "surge": d.surge, "unavailable": d.unavailable}

    return Simulation(chooser).run(main)


def test_a_restart_makes_one_revision_whatever_the_interleaving():
    # roll() writes the Deployment and adds the revision while the controller's own watch sees
    # the write: a schedule that ran the watch in between once made a second revision (web-v3)
    for seed in range(12):
        steps = roll(3, "25%", "25%", chooser=SeededRandom(seed))["steps"]
        assert [s for s in steps if "new replica set" in s] == [s for s in steps if "new replica set web-v2" in s], (seed, steps)
        assert sum("new replica set" in s for s in steps) == 1, (seed, steps)


@pytest.mark.parametrize("replicas, surge, unavailable", [(3, "25%", "25%"), (3, 0, 1), (4, 2, 0), (10, "30%", "20%"), (2, "50%", "50%")])
def test_a_rollout_keeps_within_surge_and_unavailability(replicas, surge, unavailable):
    r = roll(replicas, surge, unavailable)
    assert sorted(r["deleted"]) == sorted(f"web-{i}" for i in range(replicas))  # every old pod went
    most = replicas + r["surge"]
    least = replicas - r["unavailable"]
    for at, active, available, _ in r["history"]:
        assert active <= most, (at, active)
        assert available >= least, (at, available)
    assert r["history"][-1][1:] == (replicas, replicas, replicas)  # all new, all available


def test_a_default_rollout_of_three_replaces_one_pod_at_a_time():
    r = roll(3, "25%", "25%")
    assert (r["surge"], r["unavailable"]) == (1, 0)
    # 1 s to start each new pod, one after the other; the deletions overlap the next start
    assert 3.0 <= r["took"] <= 3.0 + 3.0 + 0.5
    news = [new for _, _, _, new in r["history"]]
    assert news == sorted(news)  # new pods only come, never go


def test_with_no_surge_an_old_pod_goes_first():
    r = roll(3, 0, 1)
    assert r["steps"][1:4] == ["web: Scaled down replica set web-v1 from 3 to 2",
                               "web: Scaled up replica set web-v2 from 0 to 1",
                               "web: Scaled down replica set web-v1 from 2 to 1"]


def two_replicas(store: Store) -> tuple[Kubelet, DeploymentController]:
    """A running kubelet and a Deployment of two pods that stop 1 s after SIGTERM (under the simulation)."""
    kubelet = Kubelet(store, start_delay=1.0)
    kubelet.run()
    d = DeploymentController(store, "web", 2, lambda name, labels: new_pod(
        name, labels=labels, containers=[{"name": "app", "image": "fake", "termAfter": 1.0}]))
    d.run()
    return kubelet, d


def change_spec(store: Store, mutate) -> None:
    """What a client's update of the Deployment's spec does (the generation goes up)."""
    def update(obj: dict) -> dict:
        mutate(obj["spec"])
        obj["metadata"]["generation"] += 1
        return obj
    store.guaranteed_update(DEPLOYMENT, "web", update)


def test_a_paused_deployment_scales_but_rolls_out_a_new_template_only_once_resumed():
    # kubectl rollout pause, set image, scale, rollout resume: the controller ignored spec.paused
    # and started the new revision at once
    def main() -> dict:
        store = Store()
        kubelet, d = two_replicas(store)
        assert d.wait_complete(100.0)

        def templates() -> set:
            return {p["metadata"]["labels"]["pod-template-hash"] for p in store.list(POD) if not is_terminating(p)}

        change_spec(store, lambda spec: spec.update(paused=True))
        change_spec(store, lambda spec: spec["template"]["spec"]["containers"][0].update(image="fake:2"))
        change_spec(store, lambda spec: spec.update(replicas=3))
        rt.sleep(30.0)  # virtual time: long enough for any rollout to have started
        paused = {"templates": templates(), "status": store.get(DEPLOYMENT, "web")["status"]}
        change_spec(store, lambda spec: spec.pop("paused"))
        rt.sleep(1.0)  # virtual time: the controller sees the resume before completion is asked
        assert d.wait_complete(100.0)
        resumed = templates()
        d.stop()
        kubelet.stop()
        return {"paused": paused, "resumed": resumed}

    r = Simulation().run(main)
    status = r["paused"]["status"]
    assert r["paused"]["templates"] == {"web-v1"} and status["replicas"] == 3  # scaled, not rolled
    assert status["updatedReplicas"] == 0
    (progressing,) = [c for c in status["conditions"] if c["type"] == "Progressing"]
    assert {k: v for k, v in progressing.items() if not k.endswith("Time")} == {
        "type": "Progressing", "status": "Unknown", "reason": "DeploymentPaused", "message": "Deployment is paused"}
    assert r["resumed"] == {"web-v2"}


def test_the_replica_sets_are_stored_owned_and_a_template_brought_back_reuses_its_own():
    def main() -> dict:
        store = Store()
        kubelet, d = two_replicas(store)
        seen = []

        def settle_and_look() -> None:
            rt.sleep(1.0)  # virtual time: the controller sees the change first
            assert d.wait_complete(100.0)
            rt.sleep(1.0)  # and writes the statuses the last pod changes make
            deployment = store.get(DEPLOYMENT, "web")
            seen.append({"revision": deployment["metadata"]["annotations"][REVISION_ANNOTATION],
                         "replica sets": {rs["metadata"]["name"]: (rs["metadata"]["annotations"][REVISION_ANNOTATION], rs["spec"]["replicas"],
                                                                   rs["status"]["readyReplicas"], rs["metadata"]["generation"])
                                          for rs in store.list(REPLICA_SET)},
                         "owners": {(p["metadata"]["ownerReferences"][0]["name"], p["metadata"]["ownerReferences"][0]["uid"])
                                    for p in store.list(POD) if not is_terminating(p)},
                         "uids": {rs["metadata"]["name"]: rs["metadata"]["uid"] for rs in store.list(REPLICA_SET)},
                         "rs owners": {rs["metadata"]["ownerReferences"][0]["uid"] == deployment["metadata"]["uid"] for rs in store.list(REPLICA_SET)}})

        def set_image(image: str) -> None:
            change_spec(store, lambda spec: spec["template"]["spec"]["containers"][0].update(image=image))

        settle_and_look()
        set_image("fake:2")
        settle_and_look()
        set_image("fake")  # rollout undo's template
        settle_and_look()
        d.stop()
        kubelet.stop()
        return seen

    first, second, undone = Simulation().run(main)
    assert first["revision"] == "1" and first["replica sets"] == {"web-v1": ("1", 2, 2, 1)}
    assert second["revision"] == "2" and second["replica sets"] == {"web-v1": ("1", 0, 0, 3), "web-v2": ("2", 2, 2, 3)}
    # web-v1 again, with the next revision; no web-v3
    assert undone["revision"] == "3" and undone["replica sets"] == {"web-v1": ("3", 2, 2, 5), "web-v2": ("2", 0, 0, 5)}
    for look in (first, second, undone):
        assert look["rs owners"] == {True}
        assert look["owners"] == {(name, uid) for name, uid in look["uids"].items()
                                  if look["replica sets"][name][1] > 0}


def test_a_revision_s_pods_are_made_from_its_own_template():
    """With ``revision_template`` (a manifest's Deployment, served to kubectl) each new revision's
    pods are made from that revision's template as a client wrote it, not from the first's."""
    def main() -> list[tuple[str, str]]:
        store = Store()
        kubelet = Kubelet(store, start_delay=1.0)
        kubelet.run()
        made: list[tuple[str, str]] = []

        def from_template(name: str, labels: dict, template: dict) -> dict:
            made.append((name, template["spec"]["containers"][0].get("args", ["-"])[0]))
            return new_pod(name, labels=labels, containers=[{"name": "app", "image": "fake", "termAfter": 1.0}])

        d = DeploymentController(store, "web", 1, lambda name, labels: new_pod(name, labels=labels), revision_template=from_template,
                                 written_spec={"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                                               "template": {"metadata": {"labels": {"app": "web"}},
                                                            "spec": {"containers": [{"name": "app", "image": "fake", "args": ["--v=1"]}]}}})
        d.run()
        change_spec(store, lambda spec: spec["template"]["spec"]["containers"][0].update(args=["--v=2"]))
        assert d.wait_complete(100.0)
        d.stop()
        kubelet.stop()
        kubelet.kill_all()
        return made

    assert Simulation().run(main) == [("web-0", "--v=1"), ("web-v2-0", "--v=2")]

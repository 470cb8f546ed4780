"""Tests for genericserver.cluster.progress: a Deployment's conditions as the deployment controller keeps them (no Go twin of its own tests)."""

from __future__ import annotations

from genericserver.cluster.progress import conditions, deadline_at, new_condition, set_condition


def by_type(conds: list[dict]) -> dict[str, tuple]:
    return {c["type"]: (c["status"], c["reason"], c["lastTransitionTime"], c["lastUpdateTime"]) for c in conds}


def test_a_condition_is_replaced_only_when_its_status_or_reason_changes_and_goes_last():
    a = new_condition("Available", "True", "MinimumReplicasAvailable", "ok", 1.0)
    p = new_condition("Progressing", "True", "ReplicaSetUpdated", "going", 1.0)
    conds = [a, p]
    assert set_condition(conds, new_condition("Available", "True", "MinimumReplicasAvailable", "other words", 5.0)) == conds
    same_status = set_condition(conds, new_condition("Progressing", "True", "NewReplicaSetAvailable", "done", 5.0))
    assert same_status[-1]["reason"] == "NewReplicaSetAvailable" and same_status[-1]["lastTransitionTime"] == 1.0
    lost = set_condition(conds, new_condition("Available", "False", "MinimumReplicasUnavailable", "not ok", 7.0))
    assert [c["type"] for c in lost] == ["Progressing", "Available"] and lost[-1]["lastTransitionTime"] == 7.0


def step(old: dict, *, replicas: int, updated: int, available: int, complete: bool = False, paused: bool = False,
         enough: bool = True, created: str | None = None, now: float) -> dict:
    counts = {"replicas": replicas, "updatedReplicas": updated, "readyReplicas": available, "availableReplicas": available}
    return {**counts, "conditions": conditions(old, counts, enough=enough, complete=complete, paused=paused, new_rs="web-v2",
                                               created=created, now=now)}


def test_a_rollout_moves_progressing_at_each_step_and_a_pause_and_resume_are_said():
    done = step({}, replicas=3, updated=3, available=3, complete=True, now=1.0)
    assert by_type(done["conditions"]) == {"Available": ("True", "MinimumReplicasAvailable", 1.0, 1.0),
                                           "Progressing": ("True", "NewReplicaSetAvailable", 1.0, 1.0)}
    first = step(done, replicas=4, updated=1, available=3, created="web-v2", now=2.0)  # a new revision's first pod
    assert by_type(first["conditions"])["Progressing"] == ("True", "NewReplicaSetCreated", 1.0, 2.0)
    assert step(first, replicas=4, updated=1, available=3, now=3.0)["conditions"] == first["conditions"]  # no progress: no change
    more = step(first, replicas=4, updated=2, available=3, now=4.0)
    assert by_type(more["conditions"])["Progressing"] == ("True", "ReplicaSetUpdated", 1.0, 4.0)
    paused = step(more, replicas=4, updated=2, available=3, paused=True, now=5.0)
    assert by_type(paused["conditions"])["Progressing"] == ("Unknown", "DeploymentPaused", 5.0, 5.0)
    resumed = step(paused, replicas=4, updated=2, available=3, now=6.0)
    assert by_type(resumed["conditions"])["Progressing"] == ("Unknown", "DeploymentResumed", 5.0, 6.0)  # still Unknown: no transition
    again = step(resumed, replicas=4, updated=3, available=3, now=7.0)  # from Unknown: a new transition
    assert by_type(again["conditions"])["Progressing"] == ("True", "ReplicaSetUpdated", 7.0, 7.0)
    short = step(done, replicas=3, updated=3, available=1, enough=False, now=8.0)  # a rolled out Deployment loses pods
    assert [c["type"] for c in short["conditions"]][-1] == "Available"
    assert by_type(short["conditions"])["Available"] == ("False", "MinimumReplicasUnavailable", 8.0, 8.0)


def test_a_rollout_without_progress_for_its_deadline_times_out_and_only_its_completion_ends_that():
    done = step({}, replicas=3, updated=3, available=3, complete=True, now=1.0)
    started = step(done, replicas=4, updated=1, available=3, created="web-v2", now=10.0)
    assert deadline_at(started["conditions"], 600.0) == 610.0  # when the controller looks again
    assert step(started, replicas=4, updated=1, available=3, now=610.0)["conditions"] == started["conditions"]  # not yet
    stuck = step(started, replicas=4, updated=1, available=3, now=610.5)
    progressing = [c for c in stuck["conditions"] if c["type"] == "Progressing"][0]
    assert (progressing["status"], progressing["reason"], progressing["message"]) == (
        "False", "ProgressDeadlineExceeded", 'ReplicaSet "web-v2" has timed out progressing.')
    assert deadline_at(stuck["conditions"], 600.0) is None
    paused = step(stuck, replicas=4, updated=1, available=3, paused=True, now=700.0)
    assert by_type(paused["conditions"])["Progressing"][:2] == ("False", "ProgressDeadlineExceeded")  # not overwritten
    finished = step(stuck, replicas=3, updated=3, available=3, complete=True, now=800.0)
    assert by_type(finished["conditions"])["Progressing"] == ("True", "NewReplicaSetAvailable", 800.0, 800.0)

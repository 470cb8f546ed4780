"""Port of k8s.io/kubernetes/pkg/controller/deployment/progress.go and util/deployment_util.go's conditions (v1.36.0): a Deployment's Available and Progressing conditions.

Each sync the deployment controller computes the Deployment's conditions from the ones it has
(``kubectl get deploy -o yaml`` shows them, ``rollout status`` and ``wait --for=condition``
read them):

* ``Available`` (``calculateStatus``): True ``MinimumReplicasAvailable`` while at least
  replicas - maxUnavailable pods are available, else False ``MinimumReplicasUnavailable``;
* ``Progressing`` (``syncRolloutStatus``): True ``NewReplicaSetAvailable`` once the rollout is
  complete; True ``NewReplicaSetCreated`` as a new template's ReplicaSet is made (not one
  ``rollout undo`` brings back); True ``ReplicaSetUpdated`` while it makes progress (more updated, ready or
  available pods, fewer old ones than last time), its ``lastUpdateTime`` moved at each step;
  while paused (``checkPausedConditions``) Unknown ``DeploymentPaused``, and Unknown
  ``DeploymentResumed`` once resumed, until the rollout moves again.

A condition is replaced only when its status or reason changes (``SetDeploymentCondition``): its
``lastTransitionTime`` is kept while the status stays, and the replaced condition goes to the end
of the list (so a Deployment that lost availability lists Progressing first). Times are cluster
seconds here (the API view writes them as ``metav1.Time``).

A rollout that makes no progress for ``spec.progressDeadlineSeconds`` (600 by default) turns
Progressing False ``ProgressDeadlineExceeded`` (``DeploymentTimedOut``; ``kubectl rollout
status`` then exits with ``deployment "web" exceeded its progress deadline``); the controller syncs
again when that time comes (:func:`deadline_at`, ``requeueStuckDeployment``) even if nothing else
changes. A pause or resume does not overwrite it; the rollout's completion does. Left out:
``ReplicaFailure``.

Two Go files in one module: progress.go computes the conditions with deployment_util.go's helpers
(``NewDeploymentCondition``, ``SetDeploymentCondition``, ``DeploymentTimedOut``), which nothing else
here uses.
"""

from __future__ import annotations

from typing import Optional

AVAILABLE, PROGRESSING = "Available", "Progressing"
PAUSED, RESUMED = "DeploymentPaused", "DeploymentResumed"
TIMED_OUT = "ProgressDeadlineExceeded"
DEFAULT_DEADLINE = 600.0  # spec.progressDeadlineSeconds, as the API defaults it


def new_condition(kind: str, status: str, reason: str, message: str, now: float) -> dict:
    """``NewDeploymentCondition``: both times now."""
    return {"type": kind, "status": status, "lastUpdateTime": now, "lastTransitionTime": now, "reason": reason, "message": message}


def get_condition(conditions: list[dict], kind: str) -> Optional[dict]:
    return next((c for c in conditions if c["type"] == kind), None)


def set_condition(conditions: list[dict], condition: dict) -> list[dict]:
    """``SetDeploymentCondition``: the same status and reason change nothing (not the message
    either); the same status keeps its transition time; the new condition goes last."""
    current = get_condition(conditions, condition["type"])
    if current is not None and current["status"] == condition["status"] and current["reason"] == condition["reason"]:
        return conditions
    if current is not None and current["status"] == condition["status"]:
        condition = {**condition, "lastTransitionTime": current["lastTransitionTime"]}
    return [c for c in conditions if c["type"] != condition["type"]] + [condition]


def made_progress(old: dict, new: dict) -> bool:
    """``DeploymentProgressing``: more pods updated, ready or available, or fewer old ones."""
    def old_ones(s: dict) -> int:
        return s.get("replicas", 0) - s.get("updatedReplicas", 0)
    return (new.get("updatedReplicas", 0) > old.get("updatedReplicas", 0) or old_ones(new) < old_ones(old)
            or new.get("readyReplicas", 0) > old.get("readyReplicas", 0) or new.get("availableReplicas", 0) > old.get("availableReplicas", 0))


def conditions(old: dict, new: dict, *, enough: bool, complete: bool, paused: bool, new_rs: str, now: float,
               created: Optional[str] = None, deadline: float = DEFAULT_DEADLINE) -> list[dict]:
    """The conditions after a sync: ``old`` the status the Deployment has, ``new`` the counts
    just computed; ``enough`` pods available for Available, ``complete`` the rollout, ``created``
    a ReplicaSet this sync made for a new template, ``deadline`` its progressDeadlineSeconds."""
    conds = [dict(c) for c in old.get("conditions") or []]
    progressing = get_condition(conds, PROGRESSING)
    paused_said = progressing is not None and progressing["reason"] == PAUSED
    if progressing is not None and progressing["reason"] == TIMED_OUT:
        pass  # a reported lack of progress is not overwritten by a pause or a resume
    elif paused and not paused_said:
        conds = set_condition(conds, new_condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused", now))
    elif not paused and paused_said:
        conds = set_condition(conds, new_condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed", now))
    if created:  # getNewReplicaSet, as it makes the ReplicaSet (not one rollout undo brings back)
        conds = set_condition(conds, new_condition(PROGRESSING, "True", "NewReplicaSetCreated", f'Created new replica set "{created}"', now))
    if enough:
        conds = set_condition(conds, new_condition(AVAILABLE, "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", now))
    else:
        conds = set_condition(conds, new_condition(AVAILABLE, "False", "MinimumReplicasUnavailable",
                                                   "Deployment does not have minimum availability.", now))
    if paused:
        return conds  # a paused Deployment's sync does not look at its rollout
    current = get_condition(conds, PROGRESSING)
    if new.get("replicas") == new.get("updatedReplicas") and current is not None and current["reason"] == "NewReplicaSetAvailable":
        return conds  # nothing is rolling out
    if complete:
        return set_condition(conds, new_condition(PROGRESSING, "True", "NewReplicaSetAvailable",
                                                  f'ReplicaSet "{new_rs}" has successfully progressed.', now))
    if made_progress(old, new):
        step = new_condition(PROGRESSING, "True", "ReplicaSetUpdated", f'ReplicaSet "{new_rs}" is progressing.', now)
        if current is not None:  # its update time moves, its transition time stays while it was True
            if current["status"] == "True":
                step["lastTransitionTime"] = current["lastTransitionTime"]
            conds = [c for c in conds if c["type"] != PROGRESSING]
        return set_condition(conds, step)
    if timed_out(conds, now, deadline):
        return set_condition(conds, new_condition(PROGRESSING, "False", TIMED_OUT, f'ReplicaSet "{new_rs}" has timed out progressing.', now))
    return conds


def timed_out(conds: list[dict], now: float, deadline: float) -> bool:
    """``DeploymentTimedOut``: no progress reported for ``deadline`` seconds since the
    Progressing condition was last updated (a finished rollout never times out)."""
    current = get_condition(conds, PROGRESSING)
    if current is None or current["reason"] == "NewReplicaSetAvailable":
        return False
    return current["reason"] == TIMED_OUT or current["lastUpdateTime"] + deadline < now


def deadline_at(conds: list[dict], deadline: float) -> Optional[float]:
    """When a rollout still moving times out if nothing changes (``requeueStuckDeployment``):
    the controller syncs again then; None when there is nothing to time out."""
    current = get_condition(conds, PROGRESSING)
    if current is None or current["reason"] in ("NewReplicaSetAvailable", TIMED_OUT, PAUSED):
        return None
    return current["lastUpdateTime"] + deadline

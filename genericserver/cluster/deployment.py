"""A Deployment's rolling update: new pods first, old ones only while enough pods stay available (no Go twin: models k8s.io/kubernetes pkg/controller/deployment).

What it follows, from Kubernetes v1.36.0 (links in walkthrough.md section 6.5):

* ``util/deployment_util.go`` ``ResolveFenceposts``: ``maxSurge`` and ``maxUnavailable`` are each
  an absolute number or a percentage of the desired replicas. A percentage of the surge rounds
  *up*, of the unavailability *down* (``intstr.GetScaledValueFromIntOrPercent``); when both come
  to 0 the unavailability becomes 1, so a rollout can always move. The defaults are 25 % each:
  with 3 replicas, surge 1 and unavailable 0 - one new pod at a time, and never fewer than 3
  available.
* ``rolling.go`` ``rolloutRolling``: each sync first tries to scale the new ReplicaSet up
  (``NewRSNewReplicas``: up to ``replicas + surge`` pods, counted by the ReplicaSets'
  ``spec.replicas``, so a terminating pod no longer counts); only when nothing was scaled up
  does it scale old ReplicaSets down (``reconcileOldReplicaSets``): first old pods that are not
  available (``cleanupUnhealthyReplicas``), then available ones as long as at least
  ``replicas - unavailable`` pods stay available (``scaleDownOldReplicaSetsForRollingUpdate``).
* availability as the controller counts it: a pod is available once it is Ready and not
  terminating (``minReadySeconds`` is 0 here, so Ready is enough).
* ``deployment_controller.go`` ``syncDeployment``: a paused Deployment (``kubectl rollout
  pause``) is only scaled; a template changed meanwhile starts its ReplicaSet once resumed, and
  until then the status says ``DeploymentPaused`` (``progress.go`` ``checkPausedConditions``).
* the status's conditions, ``Available`` and ``Progressing``, with their times, as
  ``syncRolloutStatus`` keeps them: :mod:`.progress`.
* the ReplicaSet controller (``replica_set.go`` ``manageReplicas``) creates or deletes pods until
  the non-terminating ones match ``spec.replicas``; it deletes pods that are not Ready first,
  then the newest (``getPodsToDelete``'s ranking, simplified). Its pods
  are deleted like ``kubectl delete`` without flags: with the pod's own grace period.

What neither controller waits for: the endpoints controller and kube-proxy. A new pod counts as
available the moment it is Ready, and an old pod is deleted then, while kube-proxy may still
route to the old one for E + P seconds - the preStop hook and ``ShutdownDelayDuration`` have to
cover that, exactly as for a single ``kubectl delete``.

Simpler than the real thing: the two controllers are one loop here (the Deployment's step,
then the ReplicaSets'), ReplicaSets are records of this controller that it also writes to the
store for the API (owned by the Deployment, their revision in the annotation ``rollout history``
reads; a template brought back by ``rollout undo`` reuses its old ReplicaSet, as
``FindNewReplicaSet`` does), and their status is read straight from the pods instead of from
the ReplicaSet controller's status updates (which lag a little in a cluster).
"""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from dataclasses import dataclass, field
from typing import Callable, Optional, Union

from genericserver import runtime as rt
from genericserver.cluster import progress
from genericserver.cluster.apiview import handler_json
from genericserver.cluster.endpoints import pod_is_ready
from genericserver.cluster.store import (
    DEPLOYMENT,
    POD,
    REPLICA_SET,
    DeleteOptions,
    Store,
    is_conflict,
    is_not_found,
    is_terminating,
)
from genericserver.apimachinery.api.errors import StatusError

IntOrPercent = Union[int, str]
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"  # the annotation kubectl rollout restart sets
DEFAULT_MAX_SURGE = "25%"
DEFAULT_MAX_UNAVAILABLE = "25%"
TEMPLATE_HASH_LABEL = "pod-template-hash"
# the annotations the deployment controller keeps on its ReplicaSets (kubectl rollout history
# reads the revision)
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"


class FencepostError(ValueError):
    """A ``maxSurge``/``maxUnavailable`` value that is neither a count nor a percentage."""


def parse_int_or_percent(value: IntOrPercent) -> IntOrPercent:
    """Check ``3`` or ``"25%"`` as the API checks an IntOrString; a string must be a percentage
    (``"3"`` is refused, as the API refuses it: a count is written as a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FencepostError(f"invalid value {value!r}: must be an integer or a percentage such as 25%")
    if isinstance(value, int):
        if value < 0:
            raise FencepostError(f"invalid value {value}: must be greater than or equal to 0")
        return value
    if not (value.endswith("%") and value[:-1].isdigit()):
        raise FencepostError(f"invalid value {value!r}: must be an integer or a percentage such as 25%")
    return value


def scaled_value(value: IntOrPercent, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``: a count as is; a percentage of ``total``,
    rounded up or down."""
    value = parse_int_or_percent(value)
    if isinstance(value, int):
        return value
    percent = int(value[:-1])
    if round_up:
        return -(-percent * total // 100)
    return percent * total // 100


def resolve_fenceposts(max_surge: IntOrPercent, max_unavailable: IntOrPercent, desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: (surge, unavailable) for ``desired`` replicas.

    The surge rounds up and the unavailability down, so a small Deployment errs on the side of
    an extra pod rather than a missing one. Both resolving to 0 (say 25 % of 3 pods unavailable
    with ``maxSurge: 0``) would deadlock the rollout, so unavailable becomes 1 then."""
    surge = scaled_value(max_surge, desired, True)
    unavailable = scaled_value(max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def validate_strategy(max_surge: IntOrPercent, max_unavail: IntOrPercent) -> list[str]:
    """The API's checks of ``spec.strategy.rollingUpdate`` (apps validation), as messages."""
    errs = []
    for name, value in (("maxSurge", max_surge), ("maxUnavailable", max_unavail)):
        try:
            parse_int_or_percent(value)
        except FencepostError as err:
            errs.append(f"spec.strategy.rollingUpdate.{name}: {err}")
    if errs:
        return errs
    if isinstance(max_unavail, str) and int(max_unavail.rstrip("%")) > 100 and max_unavail.endswith("%"):
        errs.append("spec.strategy.rollingUpdate.maxUnavailable: must not be greater than 100%")
    if scaled_value(max_surge, 100, True) == 0 and scaled_value(max_unavail, 100, True) == 0:
        errs.append("spec.strategy.rollingUpdate.maxUnavailable: may not be 0 when `maxSurge` is 0")
    return errs


@dataclass
class ReplicaSet:
    """One revision of the pod template and how many pods of it are wanted."""

    name: str
    revision: int
    replicas: int = 0  # spec.replicas
    made: int = 0  # pods created so far (their names count up)
    deleted: list[str] = field(default_factory=list)  # pods this ReplicaSet deleted
    template: dict = field(default_factory=dict)  # the Deployment's spec.template of this revision
    uid: str = ""  # the stored ReplicaSet's: its pods' owner reference names it


@dataclass
class Tally:
    """What a ReplicaSet's pods look like right now (the status it would report)."""

    active: list[dict] = field(default_factory=list)  # not terminating
    available: int = 0  # active and Ready
    terminating: int = 0


PodTemplate = Callable[[str, dict], dict]  # (pod name, labels) -> pod object


class DeploymentController:
    """Deployment ``name`` with ``replicas`` pods made by ``template``; ``run()``, ``roll()``,
    ``stop()``. ``roll()`` is ``kubectl rollout restart``: a new revision of the template."""

    def __init__(self, store: Store, name: str, replicas: int, template: PodTemplate, *,
                 max_surge: IntOrPercent = DEFAULT_MAX_SURGE, max_unavailable: IntOrPercent = DEFAULT_MAX_UNAVAILABLE,
                 namespace: str = "default", written_spec: Optional[dict] = None,
                 revision_template: Optional[Callable[[str, dict, dict], dict]] = None):
        self.store, self.name, self.replicas, self.template = store, name, replicas, template
        self.written_spec = written_spec  # a manifest's Deployment spec: stored as written
        # (pod name, labels, the revision's template) -> the pod the simulation runs for it; by
        # default the same pod for every revision, but for the images and annotations it changes
        self.revision_template = revision_template
        # a new pod's node, decided as it is made (the served cluster's scheduler; "" leaves it
        # Pending for the scheduler to say why); None: no scheduler, pods have no node
        self.place: Optional[Callable[[dict], str]] = None
        self.namespace = namespace
        self.max_surge, self.max_unavailable = parse_int_or_percent(max_surge), parse_int_or_percent(max_unavailable)
        self.surge, self.unavailable = resolve_fenceposts(self.max_surge, self.max_unavailable, replicas)
        self.unavailable = min(self.unavailable, replicas)
        self.replica_sets: list[ReplicaSet] = []
        self.uid = ""  # the stored Deployment's: its ReplicaSets' owner reference names it
        # spec.paused (kubectl rollout pause): the controller still scales, but a template
        # changed meanwhile waits for the resume (pending) instead of starting a revision
        self.paused = self.pending = False
        self._created: Optional[str] = None  # a ReplicaSet made since the last status was written
        # when to sync again if nothing happens: a moving rollout's progress deadline, plus a second
        # (requeueStuckDeployment's margin); None when nothing can time out
        self._wake_at: Optional[float] = None
        self._lock = rt.lock()
        # a template change and the revision it makes happen as one step: roll() writes the
        # Deployment and adds the revision while its own watch sees the write; without this the
        # watch could count the same change as a second revision
        self._revising = rt.lock()
        self._changed = rt.condition(self._lock)
        self._watch = store.watch()
        self._loop: Optional[rt.Goroutine] = None

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> None:
        """Store the Deployment, create revision 1 with every replica and start reacting to
        changes of its pods and of the Deployment itself."""
        stored = self.store.create(self._deployment_object())
        self.uid = stored["metadata"]["uid"]
        with self._lock:
            self._add_replica_set(ReplicaSet(self._rs_name(1), 1, self.replicas, template=copy.deepcopy(stored["spec"]["template"])))
        self._loop = rt.go(self._sync_loop, name="deployment-controller")
        self.sync()

    def stop(self) -> None:
        self._watch.stop()
        if self._loop is not None:
            self._loop.join()

    def roll(self) -> None:
        """``kubectl rollout restart``: the template gets a ``restartedAt`` annotation, so a new
        ReplicaSet at 0 replicas, then the rolling update."""
        def restart(d: dict) -> dict:
            annotations = d["spec"]["template"].setdefault("metadata", {}).setdefault("annotations", {})
            annotations[RESTARTED_AT] = datetime.fromtimestamp(rt.wall(), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            d["metadata"]["generation"] = d["metadata"].get("generation", 1) + 1
            return d

        with self._revising:
            stored = self.store.guaranteed_update(DEPLOYMENT, self.name, restart, self.namespace)
            self._new_revision(stored["spec"]["template"])

    def _new_revision(self, template: dict) -> None:
        """A new template: a new ReplicaSet, or the old one of that template again
        (``FindNewReplicaSet``: ``rollout undo`` brings a template back), with the next revision."""
        with self._lock:
            rev = max(rs.revision for rs in self.replica_sets) + 1
            old = next((rs for rs in self.replica_sets[:-1] if rs.template == template), None)
            if old is None:
                rs = self._add_replica_set(ReplicaSet(self._rs_name(rev), rev, 0, template=copy.deepcopy(template)))
                what = f"new replica set {rs.name}"
                self._created = rs.name  # said by the next status (getNewReplicaSet's NewReplicaSetCreated)
            else:
                self.replica_sets.remove(old)
                self.replica_sets.append(old)
                old.revision = rev
                rs, what = old, f"back to replica set {old.name} (revision {rev})"
        self._record(f"pod template changed: {what} "
                     f"(maxSurge {self.max_surge} = {self.surge}, maxUnavailable {self.max_unavailable} = {self.unavailable} "
                     f"of {self.replicas})", what="rollout-started")
        self.sync()

    def _add_replica_set(self, rs: ReplicaSet) -> ReplicaSet:
        """Store the ReplicaSet as the API shows it (``kubectl get rs``): owned by the Deployment,
        its pods told apart by the template hash label."""
        labels = {"app": self.name, TEMPLATE_HASH_LABEL: rs.name}
        template = copy.deepcopy(rs.template)
        meta = template.setdefault("metadata", {})
        meta["labels"] = {**(meta.get("labels") or {}), TEMPLATE_HASH_LABEL: rs.name}
        stored = self.store.create({
            "kind": REPLICA_SET,
            "metadata": {"name": rs.name, "namespace": self.namespace, "labels": labels, "generation": 1,
                         "annotations": self._rs_annotations(rs), "ownerReferences": [self._owner("apps/v1", DEPLOYMENT, self.name, self.uid)]},
            "spec": {"replicas": rs.replicas, "selector": {"matchLabels": dict(labels)}, "template": template},
            "status": {"replicas": 0}}, record=False)
        rs.uid = stored["metadata"]["uid"]
        self.replica_sets.append(rs)
        return rs

    def _rs_annotations(self, rs: ReplicaSet) -> dict:
        return {DESIRED_REPLICAS_ANNOTATION: str(self.replicas), MAX_REPLICAS_ANNOTATION: str(self.replicas + self.surge),
                REVISION_ANNOTATION: str(rs.revision)}

    @staticmethod
    def _owner(api_version: str, kind: str, name: str, uid: str) -> dict:
        """An owner reference of the object's controller (``metav1.NewControllerRef``)."""
        return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True, "blockOwnerDeletion": True}

    def _sync_loop(self) -> None:
        while True:
            wake, clock = self._wake_at, self.store.clock
            ev = self._watch.next(None if wake is None else max(0.0, clock.to_runtime(wake - clock.now())))
            if ev is None:
                if self._watch.stopped:
                    return
                self.sync()  # a rollout's progress deadline came with nothing else happening
                continue
            typ, obj = ev
            if obj["kind"] == DEPLOYMENT and obj["metadata"]["name"] == self.name and typ != "DELETED":
                self._observe(obj)
            elif obj["kind"] == POD and obj["metadata"].get("labels", {}).get("app") == self.name:
                self.sync()

    def _observe(self, deployment: dict) -> None:
        """A change of the Deployment (``kubectl scale``, ``set image``, ``rollout restart``):
        a new number of replicas is scaled to; a new template is a new revision.

        Level-triggered, as Go's controllers read their lister: what counts is the Deployment
        as stored now, not the event's copy, which may predate a restart already made (a late
        status event would otherwise look like a template change back to the old one)."""
        with self._revising:
            try:
                deployment = self.store.get(DEPLOYMENT, self.name, self.namespace)
            except StatusError as err:
                if is_not_found(err):
                    return  # deleted meanwhile: nothing to observe
                raise
            spec = deployment["spec"]
            with self._lock:
                replicas = spec.get("replicas", 1)
                if replicas != self.replicas:
                    self._record(f"replicas {self.replicas} -> {replicas}", what="scaled")
                    self.replicas = replicas
                    self.surge, self.unavailable = resolve_fenceposts(self.max_surge, self.max_unavailable, max(replicas, 1))
                    self.unavailable = min(self.unavailable, replicas)
                changed = spec.get("template") != self.replica_sets[-1].template
                # syncDeployment: a paused Deployment goes through sync() (scaling) and returns
                # before the rollout, so no new ReplicaSet until it is resumed
                self.paused = bool(spec.get("paused"))
                self.pending, changed = changed and self.paused, changed and not self.paused
            if changed:
                self._new_revision(spec["template"])
        if not changed:
            self.sync()

    def _rs_name(self, revision: int) -> str:
        return f"{self.name}-v{revision}"

    def _deployment_object(self) -> dict:
        """The Deployment as the API stores it: a manifest's spec as written (with the API's
        defaults), else one whose template is that of the pods this controller makes."""
        labels = {"app": self.name}
        if self.written_spec is not None:
            spec = copy.deepcopy(self.written_spec)
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault("progressDeadlineSeconds", 600)
            return {"kind": DEPLOYMENT, "metadata": {"name": self.name, "namespace": self.namespace, "generation": 1,
                                                     "labels": dict(labels)}, "spec": spec, "status": {}}
        pod = self.template("template", dict(labels))
        containers = []
        for c in pod["spec"]["containers"]:
            container = {"name": c["name"], "image": c.get("image", "")}
            pre_stop = (c.get("lifecycle") or {}).get("preStop")
            if pre_stop is not None:
                container["lifecycle"] = {"preStop": handler_json(pre_stop)}
            containers.append(container)
        return {"kind": DEPLOYMENT, "metadata": {"name": self.name, "namespace": self.namespace, "generation": 1, "labels": dict(labels)},
                "spec": {"replicas": self.replicas, "selector": {"matchLabels": dict(labels)},
                         "template": {"metadata": {"labels": dict(labels)},
                                      "spec": {"containers": containers,
                                               "terminationGracePeriodSeconds": pod["spec"].get("terminationGracePeriodSeconds")}},
                         "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": self.max_unavailable, "maxSurge": self.max_surge}},
                         "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
                "status": {}}

    def _record(self, text: str, **fields: object) -> None:
        self.store.events.record("deployment", f"{self.name}: {text}", **fields)

    # -- one sync: the Deployment's step, then the ReplicaSets' --------------------------------
    def sync(self) -> None:
        with self._lock:
            tallies = self._tallies()
            new, olds = self.replica_sets[-1], self.replica_sets[:-1]
            if not self._reconcile_new(new, tallies):
                self._reconcile_old(new, [rs for rs in olds if rs.replicas > 0], tallies)
            for rs in self.replica_sets:
                self._manage_replicas(rs, tallies[rs.name])
            tallies = self._tallies()
            status = self._status(tallies)
            revision = str(self.replica_sets[-1].revision)
            replica_sets = [(rs, rs.replicas, self._rs_annotations(rs), self._rs_status(tallies[rs.name])) for rs in self.replica_sets]
            self._changed.notify_all()
        self._write_status(status, revision)
        for rs, replicas, annotations, rs_status in replica_sets:
            self._write_replica_set(rs, replicas, annotations, rs_status)

    @staticmethod
    def _rs_status(t: Tally) -> dict:
        """The ReplicaSet controller's status: its pods that are not terminating, ready, available."""
        active = len(t.active)
        return {"replicas": active, "fullyLabeledReplicas": active, "readyReplicas": t.available,
                "availableReplicas": t.available, "terminatingReplicas": t.terminating}

    def _write_replica_set(self, rs: ReplicaSet, replicas: int, annotations: dict, status: dict) -> None:
        """The scale, annotations and status of one ReplicaSet; a new scale is a new generation
        (the ReplicaSet strategy's ``PrepareForUpdate``); no write when nothing changed."""
        def update(obj: dict) -> Optional[dict]:
            meta = obj["metadata"]
            scaled = obj["spec"].get("replicas") != replicas
            if scaled:
                obj["spec"]["replicas"] = replicas
                meta["generation"] = meta.get("generation", 1) + 1
            want = {**status, "observedGeneration": meta.get("generation", 1)}
            if not scaled and obj.get("status") == want and meta.get("annotations") == annotations:
                return None
            obj["status"], meta["annotations"] = want, dict(annotations)
            return obj

        try:
            self.store.guaranteed_update(REPLICA_SET, rs.name, update, self.namespace)
        except StatusError as err:
            if not is_not_found(err):
                raise

    def _status(self, tallies: dict[str, Tally]) -> dict:
        """``calculateStatus``'s counts, as ``kubectl rollout status`` reads them, and what the
        conditions are made of (:mod:`.progress`, once the stored status is at hand)."""
        new = self.replica_sets[-1]
        active = sum(len(t.active) for t in tallies.values())
        available = sum(t.available for t in tallies.values())
        # a template change that waits for the resume has no pods yet
        updated = 0 if self.pending else len(tallies[new.name].active)
        counts = {"replicas": active, "updatedReplicas": updated, "readyReplicas": available,
                  "availableReplicas": available, "unavailableReplicas": max(0, self.replicas - available),
                  "terminatingReplicas": sum(t.terminating for t in tallies.values())}
        created, self._created = self._created, None
        return {"counts": counts, "enough": available >= self.replicas - self.unavailable, "complete": self._complete_locked(),
                "paused": self.paused, "new_rs": new.name, "created": created}

    def _write_status(self, status: dict, revision: str) -> None:
        """The status with the generation it was computed for, its conditions from the ones
        stored (:func:`.progress.conditions`), and the newest ReplicaSet's revision in the
        Deployment's annotations (``SetDeploymentRevision``; kubectl rollout undo replaces the
        annotations, and a JSON patch cannot replace what is not there); no write when nothing
        changed."""
        def update(d: dict) -> Optional[dict]:
            old = d.get("status") or {}
            counts = status["counts"]
            deadline = float(d["spec"].get("progressDeadlineSeconds", progress.DEFAULT_DEADLINE))
            conds = progress.conditions(old, counts, enough=status["enough"], complete=status["complete"], paused=status["paused"],
                                        new_rs=status["new_rs"], created=status["created"], deadline=deadline, now=self.store.clock.now())
            at = progress.deadline_at(conds, deadline)
            self._wake_at = None if at is None else at + 1.0
            want = {"observedGeneration": d["metadata"].get("generation", 1), **counts, "conditions": conds}
            annotations = d["metadata"].get("annotations") or {}
            if old == want and annotations.get(REVISION_ANNOTATION) == revision:
                return None
            d["status"] = want
            d["metadata"]["annotations"] = {**annotations, REVISION_ANNOTATION: revision}
            return d

        try:
            self.store.guaranteed_update(DEPLOYMENT, self.name, update, self.namespace)
        except StatusError as err:
            if not is_not_found(err):
                raise

    def _tallies(self) -> dict[str, Tally]:
        out = {rs.name: Tally() for rs in self.replica_sets}
        for pod in self.store.list(POD, self.namespace):
            t = out.get(pod["metadata"].get("labels", {}).get(TEMPLATE_HASH_LABEL, ""))
            if t is None:
                continue
            if is_terminating(pod):
                t.terminating += 1
                continue
            t.active.append(pod)
            if pod_is_ready(pod):
                t.available += 1
        return out

    def _scale(self, rs: ReplicaSet, to: int) -> None:
        verb = "up" if to > rs.replicas else "down"
        message = f"Scaled {verb} replica set {rs.name} from {rs.replicas} to {to}"
        self._record(message, what=f"scaled-{verb}", rs=rs.name)
        # the event describe deployment lists
        self.store.record_event({"kind": DEPLOYMENT, "namespace": self.namespace, "name": self.name, "uid": self.uid,
                                 "apiVersion": "apps/v1"}, "Normal", "ScalingReplicaSet", message, component="deployment-controller")
        rs.replicas = to

    def _reconcile_new(self, new: ReplicaSet, tallies: dict[str, Tally]) -> bool:
        """``reconcileNewReplicaSet`` with ``NewRSNewReplicas``: True if it scaled."""
        if new.replicas == self.replicas:
            return False
        if new.replicas > self.replicas:
            self._scale(new, self.replicas)
            return True
        current = sum(rs.replicas for rs in self.replica_sets)
        most = self.replicas + self.surge
        if current >= most:
            return False
        self._scale(new, new.replicas + min(most - current, self.replicas - new.replicas))
        return True

    def _reconcile_old(self, new: ReplicaSet, olds: list[ReplicaSet], tallies: dict[str, Tally]) -> None:
        """``reconcileOldReplicaSets``: never below ``replicas - unavailable`` available pods."""
        if not olds:
            return
        all_pods = sum(rs.replicas for rs in self.replica_sets)
        min_available = self.replicas - self.unavailable
        # new pods not available yet must not let old available ones go
        new_unavailable = new.replicas - tallies[new.name].available
        budget = all_pods - min_available - new_unavailable
        if budget <= 0:
            return
        # old pods that are not available can go at once: that costs no availability
        for rs in olds:
            unhealthy = rs.replicas - tallies[rs.name].available
            if budget <= 0:
                break
            if unhealthy > 0:
                n = min(budget, unhealthy)
                self._scale(rs, rs.replicas - n)
                budget -= n
        available = sum(t.available for t in tallies.values())
        if available <= min_available:
            return
        to_go = available - min_available
        for rs in olds:  # oldest first
            if to_go <= 0:
                break
            if rs.replicas == 0:
                continue
            n = min(rs.replicas, to_go)
            self._scale(rs, rs.replicas - n)
            to_go -= n

    def _manage_replicas(self, rs: ReplicaSet, tally: Tally) -> None:
        """The ReplicaSet controller: create or delete pods until the active ones match."""
        diff = len(tally.active) - rs.replicas
        for _ in range(-diff):
            name = f"{self.name}-{rs.made}" if rs.revision == 1 else f"{rs.name}-{rs.made}"
            rs.made += 1
            labels = {"app": self.name, TEMPLATE_HASH_LABEL: rs.name}
            made = self.revision_template(name, labels, rs.template) if self.revision_template else self.template(name, labels)
            pod = with_template(made, rs.template)
            if self.place is not None:
                pod["spec"]["nodeName"] = self.place(pod)  # as the template asks (its requests), bound as made
            pod["metadata"]["ownerReferences"] = [self._owner("apps/v1", REPLICA_SET, rs.name, rs.uid)]
            self.store.events.record("replicaset", f"{rs.name}: creating pod {name}", pod=name, what="create")
            self.store.create(pod)
            self._rs_event(rs, "SuccessfulCreate", f"Created pod: {name}")
        for pod in rank_for_deletion(tally.active)[:max(0, diff)]:
            name = pod["metadata"]["name"]
            self.store.events.record("replicaset", f"{rs.name}: deleting pod {name}", pod=name, what="delete")
            rs.deleted.append(name)
            try:
                self.store.delete(POD, name, DeleteOptions(), self.namespace)
            except StatusError as err:
                if not (is_not_found(err) or is_conflict(err)):
                    raise
            else:
                self._rs_event(rs, "SuccessfulDelete", f"Deleted pod: {name}")

    def _rs_event(self, rs: ReplicaSet, reason: str, message: str) -> None:
        """The ReplicaSet controller's event about one of its pods (describe rs lists them)."""
        self.store.record_event({"kind": REPLICA_SET, "namespace": self.namespace, "name": rs.name, "uid": rs.uid,
                                 "apiVersion": "apps/v1"}, "Normal", reason, message, component="replicaset-controller")

    # -- for callers that wait on the rollout --------------------------------------------------
    def complete(self) -> bool:
        """Every replica is of the newest revision and available; no old pod is left active."""
        with self._lock:
            return self._complete_locked()

    def _complete_locked(self) -> bool:
        tallies = self._tallies()
        new = self.replica_sets[-1]
        return (new.replicas == self.replicas and tallies[new.name].available == self.replicas
                and all(rs.replicas == 0 and not tallies[rs.name].active for rs in self.replica_sets[:-1]))

    def wait_complete(self, timeout: float) -> bool:
        """Wait (runtime seconds) until :meth:`complete`; every sync wakes the waiter."""
        deadline = rt.now() + timeout
        with self._changed:
            while not self._complete_locked():
                left = deadline - rt.now()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def deleted_pods(self) -> list[str]:
        with self._lock:
            return [name for rs in self.replica_sets for name in rs.deleted]


def with_template(pod: dict, template: dict) -> dict:
    """A new pod with what of the revision's template a client may have changed: its
    annotations (``rollout restart``'s ``restartedAt``) and its containers' images. The template's
    containers and pod security context as written go along (``written``), for the API to show
    the pod as its template says (a manifest's ports, probes, resources), beside what the
    simulation runs."""
    annotations = (template.get("metadata") or {}).get("annotations")
    if annotations:
        pod["metadata"]["annotations"] = dict(annotations)
    spec = template.get("spec") or {}
    written = {c["name"]: c for c in spec.get("containers") or []}
    for c in pod["spec"]["containers"]:
        if c["name"] in written:
            c["image"] = written[c["name"]].get("image", "")
            c["written"] = copy.deepcopy(written[c["name"]])
    if spec.get("securityContext"):
        pod["spec"]["writtenSecurityContext"] = copy.deepcopy(spec["securityContext"])
    return pod


def rank_for_deletion(pods: list[dict]) -> list[dict]:
    """``getPodsToDelete``'s order for pods that are all scheduled and running: not Ready first,
    then the newest (pods here become Ready in the order they were made, so the newest is also
    the one Ready for the shortest time, which the real ranking looks at first)."""
    return sorted(pods, key=lambda pod: (pod_is_ready(pod), -pod["metadata"].get("creationTimestamp", 0.0)))

"""A kubelet: start pods, run preStop hooks, stop containers within the grace period, delete the pod (no Go twin: models k8s.io/kubernetes pkg/kubelet).

What it follows (kuberuntime_container.go, pod_workers.go and status/status_manager.go):

* it watches the store; a pod of its node is started (sandbox, emptyDir volume, cgroup,
  containers in order; ``start_delay`` stands for the time that takes, its containers meanwhile
  waiting as ``ContainerCreating``) and, with a readiness probe, probed every period (ready or
  not once ``successThreshold`` or ``failureThreshold`` results came in a row); the pod's
  conditions are the five its status manager writes (``kubelet_conditions``);
* a pod whose ``deletionTimestamp`` is set (or that vanished: a force delete) is killed with the
  effective grace period: the pod's ``deletionGracePeriodSeconds``, else its own, and never
  below 1 (``calculate_effective_grace_period``). Each container is stopped in its own goroutine:
* ``kill_container``: a preStop hook runs in a goroutine of its own and is waited for at most
  the grace period; what it took, truncated to whole seconds, is subtracted from the grace, with
  a floor of 2 s (``MINIMUM_GRACE_PERIOD_SECONDS``), so a container always gets a moment to
  stop on SIGTERM before it is killed. Then
  SIGTERM, and SIGKILL once that remaining grace has passed. A hook that fails records a
  ``FailedPreStopHook`` event; one still running when its container stops fails then (its
  context is cancelled), as an exec hook dies with its container;
* afterwards the pod's status gets its terminal phase (``getPhase``: Succeeded if every container
  exited 0, else Failed), which takes it out of the EndpointSlice; one loop of the volume manager
  (100 ms) later the cleanup begins (``canBeDeleted``): no container running, volumes unmounted, the pod cgroup gone -
  then a delete with grace 0 and the pod's uid as precondition, so a new pod with the same name
  is never deleted by mistake. :class:`PodProblems` breaks each of those three on purpose, which
  leaves the pod Terminating until :meth:`Kubelet.fix`; cleanup is retried every
  ``housekeeping_period`` (2 s, as the kubelet's housekeeping).

Differences: a delete that shortens the grace of a pod already being killed does not restart
the kill with the shorter grace here (the real pod worker does); no restarts, no liveness probes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.api.errors import StatusError, is_already_exists
from genericserver.cluster import handlers
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.containers import SIGKILL, SIGTERM, Container, FakeContainer, Sandbox
from genericserver.cluster.logs import ContainerLog
from genericserver.cluster.nodelease import NodeLease
from genericserver.cluster.store import DELETED, NODE, POD, DeleteOptions, Preconditions, Store, is_conflict, is_not_found
from genericserver.context import context as gocontext

MINIMUM_GRACE_PERIOD_SECONDS = 2  # the stop window a container always gets after its preStop hook
HOUSEKEEPING_PERIOD = 2.0
VOLUME_RECONCILE_PERIOD = 0.1  # the volume manager's reconcilerLoopSleepPeriod (volume_manager.go)
# A probe's timeout runs on the cluster's clock like every other duration, but never below one
# real second: at a tenth of real time the default 1 s is 0.1 s, which a healthy replica on a
# busy machine can miss, and a pod would go unready for nothing. No scenario relies on a probe
# timing out (a hung replica is not simulated), so only the starved case changes.
PROBE_TIMEOUT_FLOOR = 1.0

ContainerFactory = Callable[[dict, dict, Sandbox], Container]


@dataclass
class PodProblems:
    """Why a pod can hang in Terminating (seed 003): each one blocks the final delete."""

    container_stuck: bool = False  # a process in D state ignores even SIGKILL: still running
    volume_busy: bool = False  # unmounting the volume fails (e.g. a CSI driver not answering)
    cgroup_busy: bool = False  # the pod cgroup cannot be removed


def calculate_effective_grace_period(pod: dict, current: int = 0) -> int:
    """The pod worker's grace: only ever shrinks, defaults to the pod's own, at least 1."""
    grace = current
    override = pod["metadata"].get("deletionGracePeriodSeconds")
    if override is not None and (grace == 0 or override < grace):
        grace = override
    if grace == 0 and pod["spec"].get("terminationGracePeriodSeconds") is not None:
        grace = pod["spec"]["terminationGracePeriodSeconds"]
    return max(grace, 1)


class PodWorker:
    """One pod on this node: its sandbox, containers and termination state."""

    def __init__(self, pod: dict):
        self.pod = pod
        self.name, self.uid = pod["metadata"]["name"], pod["metadata"]["uid"]
        self.sandbox = Sandbox(self.name, self.uid)
        self.containers: dict[str, Container] = {}
        self.problems = PodProblems()
        self.started = rt.event(f"{self.name}-started")
        self.terminating = False
        self.terminated = rt.event(f"{self.name}-terminated")  # the final delete went through
        self.stop_ctx, self.stop = gocontext.with_cancel(gocontext.background())
        # probes end with the containers (or with the kubelet)
        self.probe_ctx, self.stop_probes = gocontext.with_cancel(self.stop_ctx)
        self.grace = 0
        # cluster times the status reports: the kubelet took the pod on (startTime), its
        # containers started
        self.accepted_at: Optional[float] = None
        self.started_at: Optional[float] = None
        self.goroutines: list[rt.Goroutine] = []


def kubelet_conditions(current: list[dict], *, sandbox_ready: bool, unready: list[str], now: float) -> list[dict]:
    """The conditions the kubelet owns, in the order its status manager writes them
    (``generateAPIPodStatus``): the sandbox's (``PodReadyToStartContainers``), ``Initialized``
    (no init containers here), ``Ready`` and ``ContainersReady`` (with Go's reason and message
    while a container is not ready), ``PodScheduled``; then the others as they were (an
    eviction's ``DisruptionTarget``). A condition's transition time moves only with its status."""
    why = {"reason": "ContainersNotReady", "message": f"containers with unready status: [{' '.join(unready)}]"} if unready else {}
    wanted = (("PodReadyToStartContainers", sandbox_ready, {}), ("Initialized", True, {}), ("Ready", not unready, why),
              ("ContainersReady", not unready, why), ("PodScheduled", True, {}))
    old = {c["type"]: c for c in current}
    out = []
    for typ, ok, detail in wanted:
        status = "True" if ok else "False"
        prev = old.get(typ)
        since = prev.get("lastTransitionTime", now) if prev is not None and prev.get("status") == status else now
        out.append({"type": typ, "status": status, "lastTransitionTime": since, **detail})
    owned = {typ for typ, _, _ in wanted}
    return out + [c for c in current if c["type"] not in owned]


class Kubelet:
    """``run()`` starts the sync loop; ``stop()`` ends it (pods keep running: see ``kill_all``)."""

    def __init__(self, store: Store, factory: Optional[ContainerFactory] = None, *, node_name: str = "node-1",
                 clock: Optional[ClusterClock] = None, housekeeping_period: float = HOUSEKEEPING_PERIOD,
                 start_delay: float = 0.0):
        self.store, self.node_name = store, node_name
        # the node's pod range, as the node IPAM controller hands them out: node-N's is 10.244.N-1.0/24
        tail = node_name.rpartition("-")[2]
        self.pod_cidr = f"10.244.{int(tail) - 1 if tail.isdigit() else 0}.0/24"
        self.clock = clock if clock is not None else store.clock
        self.events = store.events
        self.factory = factory if factory is not None else self._fake_factory
        self.housekeeping_period = housekeeping_period
        self.start_delay = start_delay  # cluster seconds to create the sandbox and start the containers
        self.pods: dict[str, PodWorker] = {}  # by uid
        self.pod_events: list[tuple[str, str, str, str]] = []  # (pod, type, reason, message)
        self._lock = rt.lock()
        self._new_worker = rt.condition(self._lock)
        self._watch = store.watch(POD)
        self._loop: Optional[rt.Goroutine] = None
        self.lease: Optional[NodeLease] = None  # the node's heartbeat, where an API shows it (start_node_lease)

    def _fake_factory(self, pod: dict, spec: dict, sandbox: Sandbox) -> Container:
        return FakeContainer(spec["name"], sandbox.pod_name, term_after=spec.get("termAfter", 0.0),
                             clock=self.clock, events=self.events)

    def record(self, w: PodWorker, typ: str, reason: str, message: str, container: str = "", timeline: bool = True) -> None:
        """The kubelet's event recorder: a line of the timeline (unless not ``timeline``), and an
        Event in the store (``kubectl get events``), as client-go's recorder writes one to the API:
        about the pod (its uid too: ``kubectl describe pod`` selects its events by it), or one of its containers."""
        pod = w.name
        if timeline:
            with self._lock:
                self.pod_events.append((pod, typ, reason, message))
            self.events.record("kubelet", f"{pod}: {typ} {reason}: {message}", reason=reason, pod=pod)
        ref = {"kind": "Pod", "namespace": "default", "name": pod, "uid": w.uid, "apiVersion": "v1"}
        if container:
            ref["fieldPath"] = f"spec.containers{{{container}}}"
        self.store.record_event(ref, typ, reason, message, component="kubelet", host=self.node_name, at=self.clock.now())

    def worker(self, name: str) -> PodWorker:
        """The newest worker of the pod called ``name``."""
        with self._lock:
            found = [w for w in self.pods.values() if w.name == name]
        if not found:
            raise KeyError(name)
        return found[-1]

    def wait_started(self, name: str, timeout: Optional[float] = None) -> PodWorker:
        """Wait until the newest pod called ``name`` has its containers started."""
        with self._new_worker:
            while not any(w.name == name for w in self.pods.values()):
                if not self._new_worker.wait(timeout):
                    raise TimeoutError(f"pod {name} was never started on {self.node_name}")
        w = self.worker(name)
        if not w.started.wait(timeout):
            raise TimeoutError(f"pod {name} did not finish starting")
        return w

    # -- the sync loop ---------------------------------------------------------------------
    def run(self) -> None:
        self._register_node()
        for pod in self.store.list(POD):
            self._handle("ADDED", pod)
        self._loop = rt.go(self._sync_loop, name="kubelet-sync-loop")

    def _register_node(self) -> None:
        """``registerWithAPIServer``: the Node object the kubelet runs as (``kubectl get nodes``,
        ``describe node``), cluster-scoped; the API's view fills in its status."""
        try:
            self.store.create({"kind": NODE, "metadata": {"name": self.node_name, "namespace": "", "labels": {
                "kubernetes.io/hostname": self.node_name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
                "spec": {"podCIDR": self.pod_cidr, "podCIDRs": [self.pod_cidr]}}, record=False)
        except StatusError as err:
            if not is_already_exists(err):  # a kubelet started again on the same node
                raise

    def stop(self) -> None:
        self._watch.stop()
        if self._loop is not None:
            self._loop.join()
        if self.lease is not None:
            self.lease.stop()
        with self._lock:
            workers = list(self.pods.values())
        for w in workers:
            w.stop()
        for w in workers:
            for g in list(w.goroutines):
                g.join()
            # the node goes with the run: so do the emptyDir folders of the pods it still had (left
            # to the exit-time finalizer, they stayed behind every forked test worker, which ends
            # without running it: a hundred folders in /tmp a suite)
            w.sandbox.unmount_volume()

    def _sync_loop(self) -> None:
        while True:
            ev = self._watch.next()
            if ev is None:
                return
            self._handle(*ev)

    def _handle(self, typ: str, pod: dict) -> None:
        if pod["spec"].get("nodeName") != self.node_name:
            return
        uid = pod["metadata"]["uid"]
        with self._lock:
            w = self.pods.get(uid)
            if w is None:
                if typ == DELETED or pod["metadata"].get("deletionTimestamp") is not None:
                    return  # never ran here
                w = self.pods[uid] = PodWorker(pod)
                w.accepted_at = self.clock.now()
                self._new_worker.notify_all()
                self._go(w, self._start_pod, w, name=f"kubelet-start-{w.name}")
                return
            w.pod = pod
            if w.terminating:
                return
            if typ != DELETED and pod["metadata"].get("deletionTimestamp") is None:
                return
            w.terminating = True
            w.grace = calculate_effective_grace_period(pod, w.grace)
        how = "removed from the API (force deleted)" if typ == DELETED else "deletionTimestamp set"
        self.events.record("kubelet", f"{w.name}: {how}; killing pod with grace period {w.grace}s", pod=w.name)
        self._go(w, self._terminate, w, name=f"kubelet-kill-{w.name}")

    def _go(self, w: PodWorker, fn: Callable, *args: object, name: str) -> None:
        w.goroutines.append(rt.go(fn, *args, name=name))

    # -- starting ---------------------------------------------------------------------------
    def _start_pod(self, w: PodWorker) -> None:
        try:
            self._set_creating(w)
            # the sandbox, the image and the processes take a while; a pod deleted meanwhile
            # still starts (the kill waits for it), as a real pod worker finishes its sync first
            self.clock.select(w.stop_ctx.done(), timeout=self.start_delay)
            w.sandbox.mount_volume()
            w.sandbox.cgroup = True
            for spec in w.pod["spec"]["containers"]:
                c = self.factory(w.pod, spec, w.sandbox)
                w.containers[spec["name"]] = c
                # startContainer's events (the image is on the node already: nothing is pulled)
                self.record(w, "Normal", "Pulled", f'Container image "{spec.get("image", "")}" already present on machine and '
                            "can be accessed by the pod", container=spec["name"], timeline=False)
                self.record(w, "Normal", "Created", "Container created", container=spec["name"], timeline=False)
                c.start()
                self.record(w, "Normal", "Started", "Container started", container=spec["name"], timeline=False)
            w.started_at = self.clock.now()
            probe = w.pod["spec"].get("readinessProbe")
            self._set_status(w, phase="Running", ready=probe is None)
            self.events.record("kubelet", f"{w.name}: started {len(w.containers)} container(s)", pod=w.name)
            if probe is not None:
                self._go(w, self._probe_loop, w, probe, name=f"kubelet-probe-{w.name}")
        finally:
            w.started.set()

    def _update_status(self, w: PodWorker, mutate: Callable[[dict], dict]) -> None:
        """Write the pod's status as ``mutate`` makes it, if the pod is still this worker's (its
        uid) and still there (a force delete may have removed it)."""
        try:
            self.store.guaranteed_update(POD, w.name, lambda p: mutate(p) if p["metadata"]["uid"] == w.uid else None)
        except StatusError as err:
            if not is_not_found(err):
                raise

    def _set_creating(self, w: PodWorker) -> None:
        """The first status of an accepted pod: its containers waiting, ``ContainerCreating``
        (what ``get pods`` shows while the sandbox and the images come up)."""
        def mutate(pod: dict) -> dict:
            st = pod.setdefault("status", {})
            st.setdefault("startTime", w.accepted_at)
            names = [c["name"] for c in pod["spec"]["containers"]]
            st["containerStatuses"] = [{"name": n, "ready": False, "state": "waiting", "reason": "ContainerCreating"} for n in names]
            st["conditions"] = kubelet_conditions(st.get("conditions", []), sandbox_ready=False, unready=names, now=self.clock.now())
            return pod

        self._update_status(w, mutate)

    def _set_status(self, w: PodWorker, *, phase: Optional[str] = None, ready: bool, state: str = "running") -> None:
        def mutate(pod: dict) -> dict:
            st = pod.setdefault("status", {})
            if phase is not None:
                st["phase"] = phase
            st["podIP"] = "127.0.0.1"
            st["ports"] = dict(w.sandbox.ports)
            st.setdefault("startTime", w.accepted_at)
            times = {"startedAt": w.started_at, **({"finishedAt": self.clock.now()} if state == "terminated" else {})}
            st["containerStatuses"] = [{"name": n, "ready": ready, "state": state, **times} for n in w.containers]
            st["conditions"] = kubelet_conditions(st.get("conditions", []), sandbox_ready=state != "terminated",
                                                  unready=[] if ready else list(w.containers), now=self.clock.now())
            return pod

        self._update_status(w, mutate)

    def set_container_readiness(self, w: PodWorker, ready: bool) -> None:
        """The status manager's ``SetContainerReadiness``, which the prober calls: the containers'
        ready flags and the pod's conditions change, and nothing else. The prober looks whether
        its result is still wanted just before; one that lands after the kubelet wrote the pod's
        terminal status all the same (a busy machine lets the kubelet run in between) leaves the
        containers terminated and the phase as it was, as in Go, where the readiness is a flag of
        the container's status and not its state."""
        def mutate(pod: dict) -> dict:
            st = pod.setdefault("status", {})
            statuses = st.get("containerStatuses", [])
            for cs in statuses:
                cs["ready"] = ready
            terminated = any(cs.get("state") == "terminated" for cs in statuses)
            st["conditions"] = kubelet_conditions(st.get("conditions", []), sandbox_ready=not terminated,
                                                  unready=[] if ready else [cs["name"] for cs in statuses],
                                                  now=self.clock.now())
            return pod

        self._update_status(w, mutate)

    def _probe_loop(self, w: PodWorker, probe: dict) -> None:
        """Readiness probe: ``GET`` the port's path every period; 200-399 is a success. As the
        kubelet's prober worker, the container turns ready after ``successThreshold`` successes in
        a row (default 1) and unready after ``failureThreshold`` failures in a row (default 3);
        until its first success it is unready. Every failed probe is an Unhealthy event (the
        recorder counts the repeats); the timeline prints the turn."""
        http, ready = probe["httpGet"], None
        last, run = None, 0  # the last probe's result, and how many in a row had it
        thresholds = {True: probe.get("successThreshold", 1), False: probe.get("failureThreshold", 3)}
        while True:
            try:
                timeout = max(self.clock.to_runtime(probe.get("timeoutSeconds", 1)), PROBE_TIMEOUT_FLOOR)
                ctx, cancel = gocontext.with_timeout(w.probe_ctx, timeout)
                try:
                    code, _ = handlers.http_get("127.0.0.1", w.sandbox.ports[http["port"]], http["path"], ctx)
                finally:
                    cancel()
                ok, why = 200 <= code < 400, f"HTTP probe failed with statuscode: {code}"
            except (OSError, gocontext.ContextError, KeyError) as err:
                ok, why = False, f"Get {http['path']}: {err}"
            if w.probe_ctx.err() is not None:
                return
            run = run + 1 if ok == last else 1
            last = ok
            if run >= thresholds[ok]:
                turn = ok  # the result came threshold times in a row: it counts
            else:
                turn = False if ready is None else ready  # it does not yet; unready until a success counts
            if not ok:  # the timeline prints the failure that turns it unready (or finds it so at first)
                self.record(w, "Warning", "Unhealthy", f"Readiness probe failed: {why}",
                            timeline=turn is False and ready is not False)
            if turn != ready:
                ready = turn
                self.set_container_readiness(w, turn)
            if self.clock.select(w.probe_ctx.done(), timeout=probe.get("periodSeconds", 10)) is not None:
                return

    # -- killing ------------------------------------------------------------------------------
    def _terminate(self, w: PodWorker) -> None:
        w.started.wait()
        grace = w.grace
        kills = [rt.go(self.kill_container, w, c, grace, name=f"kubelet-kill-{w.name}-{n}") for n, c in w.containers.items()]
        rt.wait_all([g.done for g in kills])
        w.stop_probes()
        if w.stop_ctx.err() is not None:
            return
        # getPhase for a terminal pod: Succeeded when every container exited 0, else Failed. The
        # endpoints controller drops a pod in a terminal phase, so the endpoint leaves the slice
        # before the final delete (on the real node by 0.1-0.3 s of 0.5-1.4 s, tests/parity/real-node.json)
        codes = [c.exit_code for c in w.containers.values()]
        self._set_status(w, phase="Succeeded" if all(code == 0 for code in codes) else "Failed", ready=False,
                         state="terminated")
        # the volume manager's reconciler sees the volumes to unmount on its next loop
        if self.clock.select(w.stop_ctx.done(), timeout=VOLUME_RECONCILE_PERIOD) is not None:
            return
        self._cleanup_until_deleted(w)

    def kill_container(self, w: PodWorker, c: Container, grace: int) -> None:
        """``killContainer``: preStop within the grace, then SIGTERM, SIGKILL at the deadline."""
        spec = next(s for s in w.pod["spec"]["containers"] if s["name"] == c.name)
        pre_stop = (spec.get("lifecycle") or {}).get("preStop")
        # the event comes first, before the preStop hook runs (kubectl describe shows it while it sleeps)
        self.record(w, "Normal", "Killing", f"Stopping container {c.name}", container=c.name)
        if pre_stop is not None and grace > 0:
            grace -= self.execute_pre_stop_hook(w, c, pre_stop, grace)
        if grace < MINIMUM_GRACE_PERIOD_SECONDS:
            grace = MINIMUM_GRACE_PERIOD_SECONDS
        self.events.record("kubelet", f"{w.name}/{c.name}: StopContainer with {grace}s grace: SIGTERM", pod=w.name, what="SIGTERM")
        c.signal(SIGTERM)
        if self.clock.select(c.exited, w.stop_ctx.done(), timeout=grace) is None:
            self.events.record("kubelet", f"{w.name}/{c.name}: grace period over: SIGKILL", pod=w.name, what="SIGKILL")
            c.signal(SIGKILL)

    def execute_pre_stop_hook(self, w: PodWorker, c: Container, hook: handlers.Handler, grace: int) -> int:
        """Run the hook in its own goroutine, wait at most ``grace``; whole seconds it took."""
        start = self.clock.now()
        done = rt.event(f"{w.name}-{c.name}-prestop-done")
        ctx, cancel = gocontext.with_cancel(w.stop_ctx)
        self.events.record("kubelet", f"{w.name}/{c.name}: Running preStop hook ({handlers.describe(hook)})", pod=w.name, what="preStop-start")

        def run() -> None:
            try:
                handlers.run_handler(hook, w.pod, c.name, w.sandbox, ctx, self.clock)
            except handlers.HookError as err:
                # the message stays out of the event: it could carry secrets (as in Go)
                self.events.record("kubelet", f"{w.name}/{c.name}: {err}", pod=w.name)
                self.record(w, "Warning", "FailedPreStopHook", "PreStopHook failed", container=c.name)
            finally:
                done.set()

        def cancel_when_gone() -> None:
            # a hook still running when its container is gone fails with it
            if rt.select(done, c.exited, w.stop_ctx.done()) is not done:
                cancel()
            done.wait()
            cancel()

        self._go(w, run, name=f"kubelet-prestop-{w.name}-{c.name}")
        self._go(w, cancel_when_gone, name=f"kubelet-prestop-watch-{w.name}-{c.name}")
        if self.clock.select(done, w.stop_ctx.done(), timeout=grace) is not done:
            self.events.record("kubelet", f"{w.name}/{c.name}: PreStop hook not completed in grace period ({grace}s)", pod=w.name, what="preStop-end")
        else:
            self.events.record("kubelet", f"{w.name}/{c.name}: PreStop hook completed", pod=w.name, what="preStop-end")
        return int(self.clock.now() - start)

    # -- after the containers: the checks before the final delete ---------------------------
    def can_be_deleted(self, w: PodWorker) -> tuple[bool, str]:
        """``canBeDeleted``: (ok, what still holds the pod)."""
        running = [n for n, c in w.containers.items() if c.running()]
        if running:
            return False, f"containers still running: {', '.join(running)}"
        if w.sandbox.volume is not None:
            return False, "volumes not yet unmounted"
        if w.sandbox.cgroup:
            return False, "pod cgroup not yet removed"
        return True, ""

    def _housekeeping(self, w: PodWorker) -> None:
        if w.sandbox.volume is not None and not w.problems.volume_busy:
            w.sandbox.unmount_volume()
            self.events.record("kubelet", f"{w.name}: volumes unmounted", pod=w.name)
        if w.sandbox.cgroup and not w.problems.cgroup_busy and not any(c.running() for c in w.containers.values()):
            w.sandbox.cgroup = False
            self.events.record("kubelet", f"{w.name}: pod cgroup removed", pod=w.name)

    def _cleanup_until_deleted(self, w: PodWorker) -> None:
        last = ""
        while True:
            self._housekeeping(w)
            ok, why = self.can_be_deleted(w)
            if ok:
                break
            if why != last:
                last = why
                self.events.record("kubelet", f"{w.name}: cannot delete yet: {why} (stays Terminating)", pod=w.name)
            if self.clock.select(w.stop_ctx.done(), timeout=self.housekeeping_period) is not None:
                return
        options = DeleteOptions(grace_period_seconds=0, preconditions=Preconditions(uid=w.uid))
        try:
            self.store.delete(POD, w.name, options, w.pod["metadata"].get("namespace", "default"))
            self.events.record("kubelet", f"{w.name}: pod fully terminated and removed from the API", pod=w.name)
        except StatusError as err:
            if not (is_not_found(err) or is_conflict(err)):
                raise
            self.events.record("kubelet", f"{w.name}: final delete: {err}", pod=w.name)
        w.terminated.set()

    def break_pod(self, name: str, *, container_stuck: bool = False, volume_busy: bool = False, cgroup_busy: bool = False) -> None:
        """Make pod ``name`` hang in Terminating for the given reasons (seed 003's three causes)."""
        w = self.worker(name)
        w.started.wait()
        w.problems = PodProblems(container_stuck, volume_busy, cgroup_busy)
        for c in w.containers.values():
            c.uninterruptible = container_stuck

    def fix(self, name: str, container_stuck: bool = True, volume_busy: bool = True, cgroup_busy: bool = True) -> None:
        """Clear the given problems of pod ``name``; the next housekeeping pass finishes the job."""
        w = self.worker(name)
        if container_stuck:
            w.problems.container_stuck = False
            for c in w.containers.values():
                c.fix()
        if volume_busy:
            w.problems.volume_busy = False
        if cgroup_busy:
            w.problems.cgroup_busy = False

    def kill_all(self) -> None:
        """Teardown: SIGKILL every container still running and wait for them to unwind."""
        with self._lock:
            workers = list(self.pods.values())
        for w in workers:
            w.started.wait()
            for c in w.containers.values():
                c.uninterruptible = False
                if c.running():
                    c.signal(SIGKILL)
        for w in workers:
            for c in w.containers.values():
                c.join()
            w.sandbox.unmount_volume()

    def container_log(self, namespace: str, pod: str, container: str, previous: bool = False) -> ContainerLog:
        """The kubelet's ``containerLogs``: the log of a container of the newest pod called
        ``pod``, or the kubelet's 400 (not started yet; no earlier instance: nothing here restarts)."""
        with self._lock:
            found = [w for w in self.pods.values() if w.name == pod]
        c = found[-1].containers.get(container) if found else None
        if previous:
            raise errors.new_bad_request(f'previous terminated container "{container}" in pod "{pod}" not found')
        if c is None or not c.started:
            raise errors.new_bad_request(f'container "{container}" in pod "{pod}" is waiting to start: ContainerCreating')
        return c.log

    def start_node_lease(self) -> None:
        """Hold and renew the node's Lease (:mod:`.nodelease`): the served cluster's, which
        ``describe node`` reads; the printed runs have no API to show it and leave it out."""
        self.lease = NodeLease(self.store, self.node_name, self.clock)
        self.lease.start()

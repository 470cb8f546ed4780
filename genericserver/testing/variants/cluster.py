"""Variants of the world around the server: bugs the kubelet, kubectl and Contour really had, switched back in for the labs (no Go twin).

Each puts back what the component did before an upstream fix, through an attribute the cluster
world already looks up when it runs:

* ``kubelet-prestop-full-grace`` (kubernetes/kubernetes#115817, fixed by #115835): the kubelet
  gives SIGTERM the whole grace period again after a preStop hook, instead of what is left of
  it, so a pod with a hanging hook lives up to twice its grace period;
* ``kubectl-grace-zero-forces`` (before kubernetes/kubernetes#35484 and #37263):
  ``kubectl delete --grace-period=0`` without ``--force`` removes the pod from the API at once,
  while its containers may still run;
* ``contour-healthcheck-fail-no-retry`` (projectcontour/contour#2262, fixed by #3136): the
  shutdown-manager tries ``POST /healthcheck/fail`` once; if that one call fails, Envoy never
  drains and the pod waits out its grace period.

``kind = "cluster"``: the lifecycle invariants and lincheck do not see these (``genericserver
fuzz`` refuses them); the cluster world's own tests, on virtual time, and ``genericserver
cluster`` do.
"""

from __future__ import annotations

from typing import Any

from genericserver.cluster import backoff, kubectl, shutdownmanager
from genericserver.cluster.containers import SIGKILL, SIGTERM, Container
from genericserver.cluster.kubelet import MINIMUM_GRACE_PERIOD_SECONDS, Kubelet, PodWorker
from genericserver.testing.variants import Variant


class KubeletPreStopFullGrace(Variant):
    """``kill_container`` runs the preStop hook but does not subtract what it took: SIGTERM gets
    the full grace period again."""

    name = "kubelet-prestop-full-grace"
    story = "the kubelet gives SIGTERM the full grace period again after the preStop hook, so a pod can live twice its grace"
    breaks = "cluster.kubelet.Kubelet.kill_container"
    bug_class = "a budget spent twice"
    kind = "cluster"

    @staticmethod
    def kill_container(self: Kubelet, w: PodWorker, c: Container, grace: int) -> None:
        spec = next(s for s in w.pod["spec"]["containers"] if s["name"] == c.name)
        pre_stop = (spec.get("lifecycle") or {}).get("preStop")
        self.record(w, "Normal", "Killing", f"Stopping container {c.name}", container=c.name)
        if pre_stop is not None and grace > 0:
            self.execute_pre_stop_hook(w, c, pre_stop, grace)  # the bug: what it took is not subtracted
        if grace < MINIMUM_GRACE_PERIOD_SECONDS:
            grace = MINIMUM_GRACE_PERIOD_SECONDS
        self.events.record("kubelet", f"{w.name}/{c.name}: StopContainer with {grace}s grace: SIGTERM", pod=w.name, what="SIGTERM")
        c.signal(SIGTERM)
        if self.clock.select(c.exited, w.stop_ctx.done(), timeout=grace) is None:
            self.events.record("kubelet", f"{w.name}/{c.name}: grace period over: SIGKILL", pod=w.name, what="SIGKILL")
            c.signal(SIGKILL)

    def patches(self) -> list[tuple[Any, str, Any]]:
        return [(Kubelet, "kill_container", self.kill_container)]


def _complete_delete_flags_without_the_safety_net(flags: kubectl.DeleteFlags) -> tuple[int, list[str]]:
    """kubectl's flag rules without "--grace-period=0 needs --force" (the rule #35484 added)."""
    grace = flags.grace_period
    if flags.now:
        if grace != -1:
            raise kubectl.KubectlError("--now and --grace-period cannot be specified together")
        grace = 1
    # the bug: no "grace 0 without --force becomes 1" here
    if flags.force and grace < 0:
        grace = 0
    warnings = []
    if grace == 0 and flags.force:
        warnings.append(kubectl.FORCE_WARNING)
    elif grace > 0 and flags.force:
        raise kubectl.KubectlError("--force and --grace-period greater than 0 cannot be specified together")
    return grace, warnings


class KubectlGraceZeroForces(Variant):
    """``kubectl delete --grace-period=0`` sends grace 0 without ``--force``: the pod leaves the
    API at once, without a warning, while the kubelet may still be stopping its containers."""

    name = "kubectl-grace-zero-forces"
    story = "kubectl delete --grace-period=0 force-deletes without --force: the pod leaves the API while it may still run"
    breaks = "cluster.kubectl.complete_delete_flags"
    bug_class = "a dangerous default without a safety net"
    kind = "cluster"

    def patches(self) -> list[tuple[Any, str, Any]]:
        return [(kubectl, "complete_delete_flags", _complete_delete_flags_without_the_safety_net)]


class ContourHealthcheckFailNoRetry(Variant):
    """The shutdown-manager's ``POST /healthcheck/fail`` is tried once, with no backoff: one
    failed call and Envoy never starts draining."""

    name = "contour-healthcheck-fail-no-retry"
    story = "Contour's shutdown-manager tries POST /healthcheck/fail once: if it fails, Envoy never drains"
    breaks = "cluster.shutdownmanager.HEALTHCHECK_FAIL_BACKOFF"
    bug_class = "a one-shot call where a retry was needed"
    kind = "cluster"

    def patches(self) -> list[tuple[Any, str, Any]]:
        once = backoff.Backoff(duration=0.2, factor=5.0, jitter=0.1, steps=1)  # the bug: one try only
        return [(shutdownmanager, "HEALTHCHECK_FAIL_BACKOFF", once)]


CLUSTER_VARIANTS: tuple[type[Variant], ...] = (KubeletPreStopFullGrace, KubectlGraceZeroForces, ContourHealthcheckFailNoRetry)

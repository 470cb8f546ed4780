"""``kubectl delete`` and ``kubectl get pods`` against the cluster store (no Go twin: models k8s.io/kubectl pkg/cmd/delete and the pod printer).

The flag rules of ``kubectl delete`` (its ``Complete`` and ``Validate``):

* ``--grace-period`` defaults to -1, which sends no grace period: the pod's own applies;
* ``--now`` is ``--grace-period=1`` (and may not be combined with ``--grace-period``);
* ``--grace-period=0`` without ``--force`` becomes 1, so nobody force-deletes by accident;
* ``--force`` without a grace period means 0; ``--force`` with a positive grace is an error;
* grace 0 with ``--force`` prints the warning that the workload may keep running, and the pod
  is "force deleted": removed from the API at once while the kubelet still stops it.

``kubectl get``'s STATUS column says ``Terminating`` for any pod with a deletion timestamp: the
API has no such phase, the printer derives it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from genericserver.cluster.store import POD, DeleteOptions, Store, is_terminating

FORCE_WARNING = ("Warning: Immediate deletion does not wait for confirmation that the running resource has been "
                 "terminated. The resource may continue to run on the cluster indefinitely.")


class KubectlError(Exception):
    """A usage error kubectl prints as ``error: <message>``."""


@dataclass
class DeleteFlags:
    grace_period: int = -1
    now: bool = False
    force: bool = False


def complete_delete_flags(flags: DeleteFlags) -> tuple[int, list[str]]:
    """Apply kubectl's rules; return the effective grace period (-1: none sent) and warnings."""
    grace = flags.grace_period
    if flags.now:
        if grace != -1:
            raise KubectlError("--now and --grace-period cannot be specified together")
        grace = 1
    if grace == 0 and not flags.force:
        # kept for compatibility, but nobody loses data by typing 0: 1 s is the minimum
        grace = 1
    if flags.force and grace < 0:
        grace = 0
    warnings = []
    if grace == 0 and flags.force:
        warnings.append(FORCE_WARNING)
    elif grace > 0 and flags.force:
        raise KubectlError("--force and --grace-period greater than 0 cannot be specified together")
    return grace, warnings


def delete_options(grace: int) -> DeleteOptions:
    """What goes to the API: no grace period at all when kubectl's is negative."""
    return DeleteOptions(grace_period_seconds=grace if grace >= 0 else None)


def delete_pod(store: Store, name: str, flags: Optional[DeleteFlags] = None, *,
               namespace: str = "default", out: Optional[Callable[[str], None]] = None) -> list[str]:
    """``kubectl delete pod NAME [flags]``: returns (and passes to ``out``) the lines it prints."""
    flags = flags if flags is not None else DeleteFlags()
    grace, lines = complete_delete_flags(flags)
    store.events.record("kubectl", f"kubectl delete pod {name}{_describe(flags)}", grace=grace)
    store.delete(POD, name, delete_options(grace), namespace)
    lines.append(f'pod "{name}" {"force deleted" if grace == 0 else "deleted"}')
    for line in lines:
        store.events.record("kubectl", line)
        if out is not None:
            out(line)
    return lines


def _describe(flags: DeleteFlags) -> str:
    parts = []
    if flags.grace_period != -1:
        parts.append(f"--grace-period={flags.grace_period}")
    if flags.now:
        parts.append("--now")
    if flags.force:
        parts.append("--force")
    return (" " + " ".join(parts)) if parts else ""


def pod_status(pod: dict) -> str:
    """The STATUS column: ``Terminating`` once a deletion timestamp is set, else the phase."""
    if is_terminating(pod):
        return "Terminating"
    return pod.get("status", {}).get("phase") or "Pending"


def pod_ready(pod: dict) -> str:
    containers = pod["spec"].get("containers", [])
    statuses = pod.get("status", {}).get("containerStatuses", [])
    return f"{sum(1 for s in statuses if s.get('ready'))}/{len(containers)}"


def get_pods(store: Store, namespace: str = "default") -> list[tuple[str, str, str]]:
    """``kubectl get pods``: (NAME, READY, STATUS) rows."""
    return [(p["metadata"]["name"], pod_ready(p), pod_status(p)) for p in store.list(POD, namespace)]

"""Port of k8s.io/kubernetes/pkg/apis/core/v1/helper/qos/qos.go (v1.36.0): a pod's quality-of-service class.

The API server sets ``status.qosClass`` as it creates a pod (the pod strategy's
``PrepareForCreate``), from what its containers request and are limited to, CPU and memory only
(``ComputePodQOS``):

* nothing requested or limited by any container: ``BestEffort``;
* every container limited in both CPU and memory, and the requests adding up to the limits:
  ``Guaranteed`` (the last to be evicted when a node runs short);
* anything else: ``Burstable``.

A zero amount counts as not written. Pod-level resources (``spec.resources``, a newer field)
are left out: the pods here have none.
"""

from __future__ import annotations

from fractions import Fraction

from genericserver.apimachinery.api.quantity import parse_quantity

QOS_RESOURCES = ("cpu", "memory")  # isSupportedQoSComputeResource


def compute_pod_qos(pod: dict) -> str:
    """The QoS class of ``pod`` (an API object: its containers' ``resources`` as defaulted)."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    spec = pod.get("spec") or {}
    for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        resources = c.get("resources") or {}
        for total, written in ((requests, resources.get("requests") or {}), (limits, resources.get("limits") or {})):
            for name, amount in written.items():
                q = parse_quantity(str(amount))
                if name in QOS_RESOURCES and q > 0:
                    total[name] = total.get(name, Fraction(0)) + q
        limited = {n for n, a in (resources.get("limits") or {}).items() if n in QOS_RESOURCES and parse_quantity(str(a)) > 0}
        if not limited >= set(QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(n) == q for n, q in requests.items()) and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"

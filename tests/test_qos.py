"""Tests for genericserver.api.core.v1.qos: the class the API gives a pod, as ComputePodQOS computes it."""

from __future__ import annotations

import pytest

from genericserver.api.core.v1.qos import compute_pod_qos


def pod(*resources: dict, init: tuple[dict, ...] = ()) -> dict:
    return {"spec": {"containers": [{"name": f"c{i}", "resources": r} for i, r in enumerate(resources)],
                     "initContainers": [{"name": f"i{i}", "resources": r} for i, r in enumerate(init)]}}


@pytest.mark.parametrize("p, qos", [
    (pod({}), "BestEffort"),
    (pod({"requests": {"cpu": "0"}, "limits": {"ephemeral-storage": "1Gi"}}), "BestEffort"),  # zero, and not CPU or memory
    (pod({"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}), "Burstable"),  # deploy/deployment.yaml's
    (pod({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}), "Guaranteed"),
    (pod({"requests": {"cpu": "1000m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1024Mi"}}), "Guaranteed"),  # amounts, not texts
    (pod({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}, {}), "Burstable"),  # a container unlimited
    (pod({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
         init=({"limits": {"cpu": "1"}},)), "Burstable"),  # an init container counts too
    (pod({"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}), "Burstable"),
])
def test_the_qos_class(p, qos):
    assert compute_pod_qos(p) == qos

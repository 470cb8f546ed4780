"""Port of k8s.io/kubernetes/pkg/registry/core/pod/strategy.go (v1.36.0): the fields a pod can be selected by.

``kubectl get pods --field-selector status.phase=Running`` and the kubelet's own watch
(``spec.nodeName=NODE``) filter on these. They are the labels the v1 Pod's field label
conversion accepts (pkg/apis/core/v1/conversion.go), so a label not among them is a 400 before
any pod is looked at. The rest of the pod strategy (graceful deletion, what an update may
change) is the simulated cluster's store: ``genericserver.cluster.store``.
"""

from __future__ import annotations


def to_selectable_fields(pod: dict) -> dict[str, str]:
    """Go's ``ToSelectableFields`` without the metadata's two (the handlers add those): an empty
    pod gives every label with its zero value."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    ips = status.get("podIPs") or []
    return {
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.restartPolicy": spec.get("restartPolicy", ""),
        "spec.schedulerName": spec.get("schedulerName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        # strconv.FormatBool: the selector compares text
        "spec.hostNetwork": "true" if spec.get("hostNetwork") else "false",
        "status.phase": status.get("phase", ""),
        "status.podIP": ips[0].get("ip", "") if ips else "",  # the first of the pod's IPs
        "status.nominatedNodeName": status.get("nominatedNodeName", ""),
    }

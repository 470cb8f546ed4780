"""Port of k8s.io/kubernetes/pkg/printers/internalversion/printers.go (v1.36.0): kube's columns, for the kinds served here.

kube-apiserver fills ``kubectl get``'s table itself, with the columns these printers define;
kubectl prints them as they come (the server always fills the wide columns too; kubectl shows
the ones of priority 1 only with ``-o wide``). A ConfigMap's are NAME, DATA (how many keys: ``data`` and
``binaryData`` together) and AGE (``HumanDuration`` of the time since its creation; a missing
timestamp reads ``<unknown>``). A Namespace's are NAME, STATUS (its phase) and AGE; a Lease's NAME, HOLDER
and AGE (``printLease``); a PodDisruptionBudget's NAME, MIN AVAILABLE, MAX UNAVAILABLE,
ALLOWED DISRUPTIONS and AGE (``printPodDisruptionBudget``). A Pod's, a Node's, a Deployment's, a ReplicaSet's, a Service's
and an EndpointSlice's follow ``printPod``, ``printNode``, ``printDeployment``,
``printReplicaSet``, ``printService`` and ``printEndpointSlice``. Column descriptions are our field
docs, or our words.
"""

from __future__ import annotations

from datetime import datetime, timezone

from genericserver.api.apps.v1.types import DEPLOYMENT_SPEC, DEPLOYMENT_STATUS, REPLICA_SET_SPEC, REPLICA_SET_STATUS
from genericserver.api.core.v1.types import (
    CONFIG_MAP,
    ENDPOINTS,
    EVENT,
    NODE_STATUS,
    NODE_SYSTEM_INFO,
    POD_SPEC,
    POD_STATUS,
    SERVICE_SPEC,
)
from genericserver.api.discovery.v1.types import ENDPOINT_SLICE
from genericserver.api.policy.v1.types import POD_DISRUPTION_BUDGET_SPEC, POD_DISRUPTION_BUDGET_STATUS
from genericserver.apimachinery.apis.meta.v1.helpers import format_label_selector
from genericserver.apimachinery.apis.meta.v1.types import OBJECT_META
from genericserver.apimachinery.duration import human_duration
from genericserver.registry.rest.table import NAME_COLUMN, TableConvertor, column


def translate_timestamp_since(timestamp: str, now: float) -> str:
    """``translateTimestampSince``: the age of an RFC 3339 time at ``now`` (Unix seconds)."""
    if not timestamp:
        return "<unknown>"
    when = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
    return human_duration(now - when)


AGE_COLUMN = column("Age", "string", OBJECT_META.field("creationTimestamp").doc)


def _config_map_cells(obj: dict, now: float) -> list:
    return [obj["metadata"].get("name", ""), len(obj.get("data") or {}) + len(obj.get("binaryData") or {}),
            translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now)]


CONFIG_MAP_TABLE = TableConvertor((NAME_COLUMN, column("Data", "string", CONFIG_MAP.field("data").doc), AGE_COLUMN),
                                  _config_map_cells)


# -- pods -----------------------------------------------------------------------------------------


def _has_ready_condition(conditions: list) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions or [])


def _restarts(restarts: int, last: str, now: float) -> str:
    if restarts and last:
        return f"{restarts} ({translate_timestamp_since(last, now)} ago)"
    return str(restarts)


def _pod_cells(pod: dict, now: float) -> list:
    """``printPod``: READY counts the containers ready and running; STATUS is the phase, or the
    reason the pod or a container gives, or ``Terminating`` for a pod with a deletion timestamp
    whose phase is not terminal (no phase of that name exists: the printer derives it)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    total, ready, restarts, last_restart = len(spec.get("containers") or []), 0, 0, ""
    phase = status.get("phase", "")
    reason = status.get("reason") or phase
    has_running = False
    # the last container with something to say wins, as in Go's backwards loop
    for cs in reversed(status.get("containerStatuses") or []):
        restarts += cs.get("restartCount", 0)
        finished = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt", "")
        last_restart = max(last_restart, finished)
        state = cs.get("state") or {}
        waiting, terminated = state.get("waiting"), state.get("terminated")
        if waiting and waiting.get("reason"):
            reason = waiting["reason"]
        elif terminated and terminated.get("reason"):
            reason = terminated["reason"]
        elif terminated:
            reason = f"Signal:{terminated['signal']}" if terminated.get("signal") else f"ExitCode:{terminated.get('exitCode', 0)}"
        elif cs.get("ready") and state.get("running") is not None:
            has_running = True
            ready += 1
    if reason == "Completed" and has_running:
        reason = "Running" if _has_ready_condition(status.get("conditions")) else "NotReady"
    deleting = (pod.get("metadata") or {}).get("deletionTimestamp")
    if deleting and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    ips = status.get("podIPs") or []
    return [pod["metadata"].get("name", ""), f"{ready}/{total}", reason, _restarts(restarts, last_restart, now),
            translate_timestamp_since(pod["metadata"].get("creationTimestamp", ""), now),
            (ips[0].get("ip") if ips else "") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", "<none>"]


POD_TABLE = TableConvertor((
    NAME_COLUMN,
    column("Ready", "string", "How many of the pod's containers are ready."),
    column("Status", "string", "What the pod is doing, summed up from its phase, its containers and its deletion."),
    column("Restarts", "string", "How often the pod's containers were restarted, and when last."),
    AGE_COLUMN,
    column("IP", "string", POD_STATUS.field("podIP").doc, priority=1),
    column("Node", "string", POD_SPEC.field("nodeName").doc, priority=1),
    column("Nominated Node", "string", "The node the scheduler would preempt pods on for this one.", priority=1),
    column("Readiness Gates", "string", "Extra conditions that must be true for the pod to be ready.", priority=1),
), _pod_cells)


# -- deployments ----------------------------------------------------------------------------------


def _container_cells(containers: list) -> tuple[str, str]:
    return ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)


def _template_columns(selector_doc: str) -> tuple[dict, ...]:
    """The wide columns of a kind that runs a pod template: its containers, images, selector."""
    return (column("Containers", "string", "The names of the template's containers.", priority=1),
            column("Images", "string", "The images of the template's containers.", priority=1),
            column("Selector", "string", selector_doc, priority=1))


def _template_cells(spec: dict) -> list:
    names, images = _container_cells(((spec.get("template") or {}).get("spec") or {}).get("containers") or [])
    return [names, images, format_label_selector(spec.get("selector") or {})]


def _deployment_cells(obj: dict, now: float) -> list:
    """``printDeployment``: READY as ready/desired, then updated and available counts."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [obj["metadata"].get("name", ""), f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
            status.get("updatedReplicas", 0), status.get("availableReplicas", 0),
            translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now), *_template_cells(spec)]


DEPLOYMENT_TABLE = TableConvertor((
    NAME_COLUMN,
    column("Ready", "string", "Ready pods of the desired number."),
    column("Up-to-date", "string", DEPLOYMENT_STATUS.field("updatedReplicas").doc),
    column("Available", "string", DEPLOYMENT_STATUS.field("availableReplicas").doc),
    AGE_COLUMN,
    *_template_columns(DEPLOYMENT_SPEC.field("selector").doc),
), _deployment_cells)


def _replica_set_cells(obj: dict, now: float) -> list:
    """``printReplicaSet``: desired (the spec), current and ready (the status), as integers."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [obj["metadata"].get("name", ""), spec.get("replicas", 0), status.get("replicas", 0), status.get("readyReplicas", 0),
            translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now), *_template_cells(spec)]


REPLICA_SET_TABLE = TableConvertor((
    NAME_COLUMN,
    column("Desired", "integer", REPLICA_SET_SPEC.field("replicas").doc),
    column("Current", "integer", REPLICA_SET_STATUS.field("replicas").doc),
    column("Ready", "integer", REPLICA_SET_STATUS.field("readyReplicas").doc),
    AGE_COLUMN,
    *_template_columns(REPLICA_SET_SPEC.field("selector").doc),
), _replica_set_cells)


def _service_cells(obj: dict, now: float) -> list:
    """``printService``: the first cluster IP, the external IPs (``<none>``), the ports as
    ``port/protocol`` (``port:nodePort/protocol`` with a node port), the selector when wide."""
    spec = obj.get("spec") or {}
    ports = ",".join(f"{p.get('port', 0)}:{p['nodePort']}/{p.get('protocol', 'TCP')}" if p.get("nodePort")
                     else f"{p.get('port', 0)}/{p.get('protocol', 'TCP')}" for p in spec.get("ports") or [])
    selector = spec.get("selector") or {}
    return [obj["metadata"].get("name", ""), spec.get("type", ""), (spec.get("clusterIPs") or ["<none>"])[0],
            ",".join(spec.get("externalIPs") or []) or "<none>", ports or "<none>",
            translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now),
            ",".join(f"{k}={selector[k]}" for k in sorted(selector)) or "<none>"]


SERVICE_TABLE = TableConvertor((
    NAME_COLUMN,
    column("Type", "string", SERVICE_SPEC.field("type").doc),
    column("Cluster-IP", "string", SERVICE_SPEC.field("clusterIP").doc),
    column("External-IP", "string", "Addresses outside the cluster that also reach the service."),
    column("Port(s)", "string", SERVICE_SPEC.field("ports").doc),
    AGE_COLUMN,
    column("Selector", "string", SERVICE_SPEC.field("selector").doc, priority=1),
), _service_cells)


_ROLE_PREFIX = "node-role.kubernetes.io/"


def _node_cells(obj: dict, now: float) -> list:
    """``printNode``: Ready or NotReady by the Ready condition (Unknown without conditions,
    ``SchedulingDisabled`` added when cordoned), the roles from the node-role labels, the
    kubelet's version; wide, the addresses and what runs on the node."""
    status, labels = obj.get("status") or {}, obj["metadata"].get("labels") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    states = [] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    if not status.get("conditions"):
        states = ["Unknown"]
    if (obj.get("spec") or {}).get("unschedulable"):
        states.append("SchedulingDisabled")
    roles = sorted({k[len(_ROLE_PREFIX):] for k in labels if k.startswith(_ROLE_PREFIX) and k != _ROLE_PREFIX}
                   | ({labels["kubernetes.io/role"]} if labels.get("kubernetes.io/role") else set()))
    info = status.get("nodeInfo") or {}

    def address(kind: str) -> str:
        return next((a["address"] for a in status.get("addresses") or [] if a.get("type") == kind), "<none>")

    return [obj["metadata"].get("name", ""), ",".join(states), ",".join(roles) or "<none>",
            translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now), info.get("kubeletVersion", ""),
            address("InternalIP"), address("ExternalIP"), info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>"]


NODE_TABLE = TableConvertor((
    NAME_COLUMN,
    column("Status", "string", "The status of the node"),
    column("Roles", "string", "The roles of the node"),
    AGE_COLUMN,
    column("Version", "string", NODE_SYSTEM_INFO.field("kubeletVersion").doc),
    column("Internal-IP", "string", NODE_STATUS.field("addresses").doc, priority=1),
    column("External-IP", "string", NODE_STATUS.field("addresses").doc, priority=1),
    column("OS-Image", "string", NODE_SYSTEM_INFO.field("osImage").doc, priority=1),
    column("Kernel-Version", "string", NODE_SYSTEM_INFO.field("kernelVersion").doc, priority=1),
    column("Container-Runtime", "string", NODE_SYSTEM_INFO.field("containerRuntimeVersion").doc, priority=1),
), _node_cells)


NAMESPACE_TABLE = TableConvertor((NAME_COLUMN, column("Status", "string", "The status of the namespace"), AGE_COLUMN),
                                 lambda obj, now: [obj["metadata"].get("name", ""), (obj.get("status") or {}).get("phase", ""),
                                                   translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now)])


# ``printLease``: the holder (empty when nobody holds it)
LEASE_TABLE = TableConvertor((NAME_COLUMN, column("Holder", "string", "The current holder."), AGE_COLUMN),
                             lambda obj, now: [obj["metadata"].get("name", ""), (obj.get("spec") or {}).get("holderIdentity", ""),
                                               translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now)])


def _pdb_cells(obj: dict, now: float) -> list:
    """``printPodDisruptionBudget``: each bound as written (a count or a percentage), ``N/A``
    where unset, and how many evictions the status allows now."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    bound = lambda key: "N/A" if spec.get(key) is None else str(spec[key])  # noqa: E731
    return [obj["metadata"].get("name", ""), bound("minAvailable"), bound("maxUnavailable"), status.get("disruptionsAllowed", 0),
            translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now)]


POD_DISRUPTION_BUDGET_TABLE = TableConvertor((
    NAME_COLUMN,
    column("Min Available", "string", POD_DISRUPTION_BUDGET_SPEC.field("minAvailable").doc),
    column("Max Unavailable", "string", POD_DISRUPTION_BUDGET_SPEC.field("maxUnavailable").doc),
    column("Allowed Disruptions", "integer", POD_DISRUPTION_BUDGET_STATUS.field("disruptionsAllowed").doc),
    AGE_COLUMN,
), _pdb_cells)


# -- endpoints and events ------------------------------------------------------------------------


def format_endpoints(obj: dict) -> str:
    """``formatEndpoints``: the ready addresses as ``ip:port``, three at most and then how many
    more; ``<none>`` when there are no subsets at all."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return "<none>"
    shown, count, more = [], 0, False
    for ss in subsets:
        addresses = ss.get("addresses") or []
        for port in ss.get("ports") or [None]:  # a headless service's subsets have no ports
            count += len(addresses)
            for a in addresses:
                if len(shown) == _MAX_SHOWN:
                    more = True
                    break
                shown.append(a["ip"] if port is None else f"{a['ip']}:{port.get('port', 0)}")
    text = ",".join(shown)
    return f"{text} + {count - _MAX_SHOWN} more..." if more else text


def _endpoints_cells(obj: dict, now: float) -> list:
    return [obj["metadata"].get("name", ""), format_endpoints(obj),
            translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now)]


ENDPOINTS_TABLE = TableConvertor((
    NAME_COLUMN, column("Endpoints", "string", ENDPOINTS.field("subsets").doc), AGE_COLUMN), _endpoints_cells)


def _event_cells(obj: dict, now: float) -> list:
    """``printEvent`` (wide, as the server fills it): the object as ``kind/name`` in lower case,
    the source as ``component, host``, the last time falling back to the first."""
    first = translate_timestamp_since(obj.get("firstTimestamp") or "", now)
    last = translate_timestamp_since(obj["lastTimestamp"], now) if obj.get("lastTimestamp") else first
    involved = obj.get("involvedObject") or {}
    kind = (involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = obj.get("source") or {}
    who = ", ".join(x for x in (source.get("component") or obj.get("reportingComponent", ""),
                                source.get("host") or obj.get("reportingInstance", "")) if x)
    return [last, obj.get("type", ""), obj.get("reason", ""), target, involved.get("fieldPath", ""), who,
            (obj.get("message") or "").strip(), first, obj.get("count", 0), obj["metadata"].get("name", "")]


EVENT_TABLE = TableConvertor((
    column("Last Seen", "string", EVENT.field("lastTimestamp").doc),
    column("Type", "string", EVENT.field("type").doc),
    column("Reason", "string", EVENT.field("reason").doc),
    column("Object", "string", EVENT.field("involvedObject").doc),
    column("Subobject", "string", "The part of the object the event is about, e.g. a container.", priority=1),
    column("Source", "string", EVENT.field("source").doc, priority=1),
    column("Message", "string", EVENT.field("message").doc),
    column("First Seen", "string", EVENT.field("firstTimestamp").doc, priority=1),
    column("Count", "string", EVENT.field("count").doc, priority=1),
    column("Name", "string", OBJECT_META.field("name").doc, format="name", priority=1),
), _event_cells)


# -- endpoint slices ------------------------------------------------------------------------------

_MAX_SHOWN = 3  # how many ports or addresses a cell lists before "+ N more..."


def _list_with_more(items: list[str]) -> str:
    """``listWithMoreString``: the first three, then how many more; ``<unset>`` for none."""
    if len(items) > _MAX_SHOWN:
        return f"{','.join(items[:_MAX_SHOWN])} + {len(items) - _MAX_SHOWN} more..."
    return ",".join(items) or "<unset>"


def _endpoint_slice_cells(obj: dict, now: float) -> list:
    """``printEndpointSlice``: the address type, the ports (a number, else the name, else
    ``*``) and every address of every endpoint, ready or not."""
    ports = [str(p["port"]) if p.get("port") is not None else (p.get("name") or "*") for p in obj.get("ports") or []]
    addresses = [a for ep in obj.get("endpoints") or [] for a in ep.get("addresses") or []]
    return [obj["metadata"].get("name", ""), obj.get("addressType", ""), _list_with_more(ports), _list_with_more(addresses),
            translate_timestamp_since(obj["metadata"].get("creationTimestamp", ""), now)]


ENDPOINT_SLICE_TABLE = TableConvertor((
    NAME_COLUMN,
    column("AddressType", "string", ENDPOINT_SLICE.field("addressType").doc),
    column("Ports", "string", ENDPOINT_SLICE.field("ports").doc),
    column("Endpoints", "string", ENDPOINT_SLICE.field("endpoints").doc),
    AGE_COLUMN,
), _endpoint_slice_cells)

"""The cluster's objects as the API shows them, and a kubectl change taken back (no Go twin).

The simulation keeps its objects in the shapes its components need: times in cluster seconds,
a preStop hook as a Python object, each replica's real loopback port in the pod's status. The
API serves them as kube-apiserver would (:mod:`.apiserver`), so :class:`APIView` turns each
stored object into its API JSON, in Go's field order, on every read:

* times become RFC 3339 strings, to the second, on the wall clock at the cluster's start plus
  the cluster seconds (``--time-scale`` 1, the default with ``--serve-api``, keeps them true);
* a pod gets an IP of its own (``10.244.0.N`` on node-1, ``10.244.1.N`` on node-2..., in the order
  its node's pods were first seen), its node an address (``192.168.49.2``, ``.3``...), and its
  containers their nominal ports (the server ``http`` 8080): every replica really listens on
  127.0.0.1 on a port of its own, which kube-proxy's table maps, as a node's NAT would;
* a container's preStop hook, readiness probe and the server's flags (as ``args``) appear
  where a pod spec has them, and what the pod's template wrote (a manifest's args, ports,
  probes, resources, security contexts) overrides them, defaulted as the API defaults it; the
  kubelet's container states become ``waiting`` (``ContainerCreating``), ``running`` or
  ``terminated`` (``exitCode``, ``Completed``/``Error``), which the pod printer reads;
* an EndpointSlice lists its endpoints with their conditions, the pods' IPs and one port.

The way back is narrow, as the pod's update validation is: a kubectl change to a pod may touch
its labels, annotations and finalizers and its containers' images (:meth:`APIView.pod_update`);
anything else in its spec is kube's 422. A Deployment is stored as its API JSON already.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from typing import Any, Optional

from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.field import errors as field
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.handlers import ExecAction, HTTPGetAction, SleepAction
from genericserver.cluster.scheduler import ALLOCATABLE
from genericserver.api.core.v1.qos import compute_pod_qos
from genericserver.api.core.v1.types import CONTAINER
from genericserver.godur import format_go_duration
from genericserver.registry.rest.update import take_client_metadata

# a Container's fields in Go's order (the API's JSON keeps it)
CONTAINER_FIELDS = tuple(f.json for f in CONTAINER.fields)
# ObjectMeta's fields in Go's order
META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
              "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers")
# the service's nominal virtual IP and port (kube-proxy listens on a port of its own on 127.0.0.1)
CLUSTER_IP, SERVICE_PORT = "10.96.0.10", 80
# the nominal container ports of each image's named ports
NOMINAL_PORTS = {"http": 8080, "app-http": 8081, "admin": 9001, "shutdown-manager": 8090}
# the conditions a healthy node reports False, with the kubelet's reasons and messages
NODE_PRESSURES = (("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                  ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                  ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"))
POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


class APIView:
    """Conversions for one cluster: its clock's origin on the wall clock, and its pods' IPs."""

    def __init__(self, clock: ClusterClock):
        self.clock = clock
        self.wall_origin = rt.wall() - clock.now() * clock.scale
        self._ips: dict[str, str] = {}
        self._lock = rt.lock()

    # -- small pieces --------------------------------------------------------------------------
    def time(self, at: Optional[float]) -> Optional[str]:
        """Cluster seconds as a ``metav1.Time``: the wall time they stand for, to the second."""
        if at is None:
            return None
        return datetime.fromtimestamp(int(self.wall_origin + at * self.clock.scale), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def micro_time(self, at: Optional[float]) -> Optional[str]:
        """Cluster seconds as a ``metav1.MicroTime``: to the microsecond."""
        if at is None:
            return None
        return datetime.fromtimestamp(self.wall_origin + at * self.clock.scale, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def now(self) -> float:
        """The wall clock the printers' AGE is computed against."""
        return self.wall_origin + self.clock.now() * self.clock.scale

    def pod_ip(self, uid: str, node: str = "node-1") -> str:
        """The pod's IP: the next of its node's range, in the order the node's pods were first seen."""
        with self._lock:
            if uid not in self._ips:
                n = node_number(node)
                taken = sum(1 for ip in self._ips.values() if ip.startswith(f"10.244.{n - 1}."))
                self._ips[uid] = f"10.244.{n - 1}.{taken + 2}"
            return self._ips[uid]

    def condition(self, c: dict, order: tuple[str, ...]) -> dict:
        """A stored condition in its type's field order, its times as the API writes them."""
        out = {k: c[k] for k in order if k in c}
        for k in ("lastProbeTime", "lastTransitionTime"):
            if isinstance(out.get(k), (int, float)):
                out[k] = self.time(out[k])
        return out

    def meta(self, m: dict) -> dict:
        out = dict(m)
        for k in ("creationTimestamp", "deletionTimestamp"):
            if isinstance(out.get(k), (int, float)):
                out[k] = self.time(out[k])
        return {k: out[k] for k in META_ORDER if out.get(k) not in (None, "", {}, [])
                or (k == "deletionGracePeriodSeconds" and out.get(k) == 0)}

    # -- pods ----------------------------------------------------------------------------------
    def pod(self, pod: dict) -> dict:
        spec, st = pod["spec"], pod.get("status") or {}
        probe = spec.get("readinessProbe")
        containers = [self._container(c, probe) for c in spec.get("containers", [])]
        if probe is not None and not any("readinessProbe" in c for c in containers) and containers:
            containers[0]["readinessProbe"] = self._probe(probe)
        api_spec = {"containers": containers, "restartPolicy": "Always",
                    "terminationGracePeriodSeconds": spec.get("terminationGracePeriodSeconds"),
                    "dnsPolicy": "ClusterFirst", "serviceAccountName": "default",
                    "nodeName": spec.get("nodeName", ""), "securityContext": copy.deepcopy(spec.get("writtenSecurityContext")),
                    "schedulerName": "default-scheduler"}
        api_spec = {k: v for k, v in api_spec.items() if v not in (None, "")}
        status = self._pod_status(pod, st)
        status["qosClass"] = compute_pod_qos({"spec": api_spec})  # as PrepareForCreate sets it
        return {"kind": "Pod", "apiVersion": "v1", "metadata": self.meta(pod["metadata"]), "spec": api_spec, "status": status}

    def _container(self, c: dict, probe: Optional[dict]) -> dict:
        out: dict[str, Any] = {"name": c["name"], "image": c.get("image", "")}
        opts = c.get("options")
        if opts is not None:
            out["args"] = ["serve", f"--shutdown-delay-duration={format_go_duration(opts.shutdown_delay)}",
                           f"--request-timeout={format_go_duration(opts.request_timeout)}", f"--v={opts.verbosity}"]
            if opts.retry_after:
                out["args"].append("--shutdown-send-retry-after=true")
        names = [c["portName"]] if c.get("portName") else {"envoy": ["http", "admin"], "shutdown-manager": ["shutdown-manager"]}.get(c.get("image", "").partition(":")[0], [])
        if names:
            out["ports"] = [{"name": n, "containerPort": NOMINAL_PORTS.get(n, 8080), "protocol": "TCP"} for n in names]
        if probe is not None and probe["httpGet"]["port"] in names:
            out["readinessProbe"] = self._probe(probe)
        pre_stop = (c.get("lifecycle") or {}).get("preStop")
        if pre_stop is not None:
            out["lifecycle"] = {"preStop": handler_json(pre_stop)}
        out.update(terminationMessagePath="/dev/termination-log", terminationMessagePolicy="File", imagePullPolicy="IfNotPresent")
        if c.get("securityContext"):
            out["securityContext"] = copy.deepcopy(c["securityContext"])
        # what the template wrote (a manifest's args, ports, probes, resources) is what the API
        # shows, defaulted as the API defaults it; the simulation's own values fill in the rest
        for k, v in (c.get("written") or {}).items():
            if k not in ("name", "image"):
                out[k] = self._probe(v) if k.endswith("Probe") and "httpGet" in v else copy.deepcopy(v)
        resources = out.get("resources") or {}
        if resources.get("limits"):  # SetDefaults_Pod: a limit with no request is requested in full
            resources["requests"] = dict(sorted({**resources["limits"], **(resources.get("requests") or {})}.items()))
        return {k: out[k] for k in CONTAINER_FIELDS if k in out}

    @staticmethod
    def _probe(probe: dict) -> dict:
        """An HTTP probe as the API defaults it (``SetDefaults_Probe``, ``SetDefaults_HTTPGetAction``)."""
        out = {"httpGet": {"path": probe["httpGet"]["path"], "port": probe["httpGet"]["port"],
                           "scheme": probe["httpGet"].get("scheme", "HTTP")}}
        if probe.get("initialDelaySeconds"):
            out["initialDelaySeconds"] = probe["initialDelaySeconds"]
        out.update(timeoutSeconds=probe.get("timeoutSeconds", 1), periodSeconds=probe.get("periodSeconds", 10),
                   successThreshold=probe.get("successThreshold", 1), failureThreshold=probe.get("failureThreshold", 3))
        return out

    def _pod_status(self, pod: dict, st: dict) -> dict:
        out: dict[str, Any] = {"phase": st.get("phase", "Pending")}
        conditions = [self.condition(c, ("type", "status", "lastProbeTime", "lastTransitionTime", "reason", "message"))
                      for c in st.get("conditions", [])]
        if conditions:
            out["conditions"] = conditions
        for k in ("message", "reason"):
            if st.get(k):
                out[k] = st[k]
        if st.get("podIP"):
            node = pod["spec"].get("nodeName") or "node-1"
            ip, host = self.pod_ip(pod["metadata"]["uid"], node), node_ip(node)
            out.update(hostIP=host, hostIPs=[{"ip": host}], podIP=ip, podIPs=[{"ip": ip}])
        if st.get("startTime") is not None:
            out["startTime"] = self.time(st["startTime"])
        images = {c["name"]: c.get("image", "") for c in pod["spec"].get("containers", [])}
        statuses = []
        for cs in st.get("containerStatuses", []):
            running = cs.get("state") == "running"
            started = {"startedAt": self.time(cs["startedAt"])} if cs.get("startedAt") is not None else {}
            if running:
                state: dict = {"running": started}
            elif cs.get("state") == "waiting":
                state = {"waiting": {"reason": cs.get("reason", "ContainerCreating")}}
            else:
                code = cs.get("exitCode", 0) or 0
                state = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error", **started,
                                        **({"finishedAt": self.time(cs["finishedAt"])} if cs.get("finishedAt") is not None else {})}}
            statuses.append({"name": cs["name"], "state": state, "ready": bool(cs.get("ready")), "restartCount": 0,
                             "image": images.get(cs["name"], ""), "imageID": "", "started": running})
        if statuses:
            out["containerStatuses"] = statuses
        return out

    def pod_update(self, current: dict, new_api: dict, old_api: dict) -> dict:
        """The stored pod with a client's change (``ValidatePodUpdate``'s rule: only the
        metadata a client owns and the containers' images may change; else 422)."""
        name = current["metadata"]["name"]
        old_spec, new_spec = _without_images(old_api.get("spec")), _without_images(new_api.get("spec"))
        if old_spec != new_spec:
            raise errors.new_invalid("Pod", name, field.to_causes([field.forbidden("spec", POD_UPDATE_FORBIDDEN + "\n" + spec_diff(old_spec, new_spec))]))
        out = take_client_metadata(current, new_api)
        images = {c.get("name"): c.get("image", "") for c in (new_api.get("spec") or {}).get("containers") or []}
        for c in out["spec"].get("containers", []):
            if c["name"] in images:
                c["image"] = images[c["name"]]
        return out

    def pod_status_update(self, current: dict, new_api: dict) -> dict:
        """``pods/status``: the phase, reason, message and conditions a client wrote; the rest
        of the status is the kubelet's."""
        out = copy.deepcopy(current)
        st = out.setdefault("status", {})
        new = new_api.get("status") or {}
        for k in ("phase", "reason", "message"):
            if new.get(k):
                st[k] = new[k]
            else:
                st.pop(k, None)
        st["conditions"] = [{"type": c.get("type", ""), "status": c.get("status", "")} for c in new.get("conditions") or []]
        return out

    # -- endpoint slices and deployments ---------------------------------------------------------
    def endpoint_slice(self, s: dict) -> dict:
        endpoints = []
        for ep in s.get("endpoints", []):
            ref = ep["targetRef"]
            node = ep.get("nodeName", "node-1")
            endpoints.append({"addresses": [self.pod_ip(ref["uid"], node)], "conditions": dict(ep["conditions"]),
                              "targetRef": {"kind": "Pod", "namespace": s["metadata"].get("namespace", "default"),
                                            "name": ref["name"], "uid": ref["uid"]},
                              "nodeName": node})
        return {"kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1", "metadata": self.meta(s["metadata"]),
                "addressType": "IPv4", "endpoints": endpoints,
                "ports": [{"name": "http", "protocol": "TCP", "port": self._slice_port(s)}]}

    @staticmethod
    def _slice_port(s: dict) -> int:
        """The pods' port as their spec declares it (a manifest's ``containerPort``), else nominal."""
        return next((ep["declaredPort"] for ep in s.get("endpoints", []) if "declaredPort" in ep), NOMINAL_PORTS["http"])

    def endpoints(self, s: dict) -> dict:
        """The service's ``Endpoints`` from its slice, as the endpoints controller writes them:
        ready pods as addresses, pods not ready as notReadyAddresses, terminating pods left out."""
        ready, not_ready = [], []
        for ep in s.get("endpoints", []):
            if ep["conditions"]["terminating"]:
                continue
            ref = ep["targetRef"]
            node = ep.get("nodeName", "node-1")
            address = {"ip": self.pod_ip(ref["uid"], node), "nodeName": node,
                       "targetRef": {"kind": "Pod", "namespace": s["metadata"].get("namespace", "default"),
                                     "name": ref["name"], "uid": ref["uid"]}}
            (ready if ep["conditions"]["ready"] else not_ready).append(address)
        subset = {k: v for k, v in (("addresses", ready), ("notReadyAddresses", not_ready)) if v}
        # the Endpoints has the service's name and no labels of the slice's
        meta = {k: v for k, v in self.meta(s["metadata"]).items() if k != "labels"}
        out = {"kind": "Endpoints", "apiVersion": "v1", "metadata": meta}
        if subset:
            subset["ports"] = [{"name": "http", "port": self._slice_port(s), "protocol": "TCP"}]
            out["subsets"] = [subset]
        return out

    def event(self, e: dict) -> dict:
        out = {"kind": "Event", "apiVersion": "v1", **copy.deepcopy(e)}
        out["metadata"] = self.meta(e["metadata"])
        for k in ("firstTimestamp", "lastTimestamp"):
            out[k] = self.time(e.get(k))
        return out

    def deployment(self, d: dict) -> dict:
        status = copy.deepcopy(d.get("status") or {})
        for c in status.get("conditions") or []:  # their times in cluster seconds (cluster/progress.py)
            for k in ("lastUpdateTime", "lastTransitionTime"):
                if isinstance(c.get(k), (int, float)):
                    c[k] = self.time(c[k])
        return {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": self.meta(d["metadata"]),
                "spec": copy.deepcopy(d["spec"]), "status": status}

    def namespace(self, ns: dict) -> dict:
        meta = self.meta(ns["metadata"])
        meta["labels"] = {"kubernetes.io/metadata.name": meta["name"]}  # the label the API sets on every namespace
        return {"kind": "Namespace", "apiVersion": "v1", "metadata": meta, "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"}}

    def node(self, n: dict) -> dict:
        """The node as its kubelet would report it: Ready, its one address, what runs on it
        (this simulation, named as such)."""
        meta = self.meta(n["metadata"])
        since = meta.get("creationTimestamp")
        conditions = [{"type": t, "status": "False", "lastHeartbeatTime": since, "lastTransitionTime": since, "reason": reason,
                       "message": message} for t, reason, message in NODE_PRESSURES]
        conditions.append({"type": "Ready", "status": "True", "lastHeartbeatTime": since, "lastTransitionTime": since,
                           "reason": "KubeletReady", "message": "kubelet is posting ready status"})
        resources = ALLOCATABLE  # what the scheduler fits pods into
        spec = copy.deepcopy(n.get("spec") or {})
        for taint in spec.get("taints") or []:
            if isinstance(taint.get("timeAdded"), (int, float)):
                taint["timeAdded"] = self.time(taint["timeAdded"])
        return {"kind": "Node", "apiVersion": "v1", "metadata": meta, "spec": spec,
                "status": {"capacity": dict(resources), "allocatable": dict(resources), "conditions": conditions,
                           "addresses": [{"type": "InternalIP", "address": node_ip(n["metadata"]["name"])},
                                         {"type": "Hostname", "address": n["metadata"]["name"]}],
                           "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "simulated",
                                        "osImage": "genericserver's simulated node", "containerRuntimeVersion": "simulated://genericserver",
                                        "kubeletVersion": "v1.36.0", "kubeProxyVersion": "", "operatingSystem": "linux",
                                        "architecture": "amd64"}}}

    def lease(self, lease: dict) -> dict:
        """The node's lease (:mod:`.nodelease`), its renewal to the microsecond."""
        spec = dict(lease["spec"])
        spec["renewTime"] = self.micro_time(spec.get("renewTime"))
        return {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "metadata": self.meta(lease["metadata"]), "spec": spec}

    def service(self, svc: dict) -> dict:
        """The simulation's Service as the API would have defaulted it: a ClusterIP service on a
        nominal virtual IP and port 80 (kube-proxy's real port is its own on 127.0.0.1)."""
        spec = svc["spec"]
        ports = [{"name": p["name"], "protocol": "TCP", "port": SERVICE_PORT, "targetPort": p.get("targetPort", p["name"])}
                 for p in spec.get("ports", [])]
        return {"kind": "Service", "apiVersion": "v1", "metadata": self.meta(svc["metadata"]),
                "spec": {"ports": ports, "selector": dict(spec.get("selector") or {}), "clusterIP": CLUSTER_IP,
                         "clusterIPs": [CLUSTER_IP], "type": "ClusterIP", "sessionAffinity": "None", "ipFamilies": ["IPv4"],
                         "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"},
                "status": {"loadBalancer": {}}}

    def pod_disruption_budget(self, pdb: dict) -> dict:
        """A budget as stored (its client's spec, its controller's status), times as the API's."""
        st = copy.deepcopy(pdb.get("status") or {})
        if st.get("disruptedPods"):
            st["disruptedPods"] = {k: self.time(v) for k, v in st["disruptedPods"].items()}
        if st.get("conditions"):
            st["conditions"] = [self.condition(c, ("type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"))
                                for c in st["conditions"]]
        order = ("observedGeneration", "disruptedPods", "disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods", "conditions")
        status = {k: st.get(k, 0) for k in order if k in st or k in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")}
        return {"kind": "PodDisruptionBudget", "apiVersion": "policy/v1", "metadata": self.meta(pdb["metadata"]),
                "spec": copy.deepcopy(pdb.get("spec") or {}), "status": status}

    def replica_set(self, rs: dict) -> dict:
        return {"kind": "ReplicaSet", "apiVersion": "apps/v1", "metadata": self.meta(rs["metadata"]),
                "spec": copy.deepcopy(rs["spec"]), "status": copy.deepcopy(rs.get("status") or {})}


# A node's address is 192.168.49.N+1 (the network minikube and kind give their nodes; .1 is the
# gateway, .255 the broadcast) and its pods' range 10.244.N-1.0/24 (a /24 of the cluster's 10.244.0.0/16):
# the addresses run out after 253 nodes
MAX_NODES = 253
NODE_ADDRESSES = "a node's address is 192.168.49.N+1"


def node_number(node: str) -> int:
    """N of ``node-N`` (1 for a name of another shape)."""
    tail = node.rpartition("-")[2]
    return int(tail) if tail.isdigit() else 1


def node_ip(node: str) -> str:
    return f"192.168.49.{node_number(node) + 1}"


def handler_json(h: Any) -> dict:
    """A lifecycle handler as a pod spec writes it."""
    if isinstance(h, SleepAction):
        return {"sleep": {"seconds": h.seconds}}
    if isinstance(h, HTTPGetAction):
        return {"httpGet": {"path": h.path, "port": h.port, "scheme": "HTTP"}}
    if isinstance(h, ExecAction):
        return {"exec": {"command": list(h.command)}}
    raise TypeError(f"not a lifecycle handler: {h!r}")


def _without_images(spec: Optional[dict]) -> dict:
    spec = copy.deepcopy(spec or {})
    for c in spec.get("containers") or []:
        c.pop("image", None)
    return spec


def spec_diff(old: dict, new: dict, path: str = "spec") -> str:
    """The fields that differ, one ``path: old -> new`` line each (Go prints a go-cmp diff of
    the internal PodSpec here; ours names the same fields in the API's JSON)."""
    lines = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            lines.append(spec_diff(a, b, f"{path}.{k}"))
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            lines.extend(spec_diff(x, y, f"{path}.{k}[{i}]") if isinstance(x, dict) and isinstance(y, dict)
                         else f"  {path}.{k}[{i}]: {json.dumps(x)} -> {json.dumps(y)}"
                         for i, (x, y) in enumerate(zip(a, b)) if x != y)
        else:
            lines.append(f"  {path}.{k}: {json.dumps(a)} -> {json.dumps(b)}")
    return "\n".join(line for line in lines if line)

"""Port of k8s.io/api/core/v1/types.go (v1.36.0): the core/v1 kinds this server serves, as data.

Each kind is a :class:`~genericserver.apimachinery.structs.Struct` with the Go struct's JSON
names and order, the field numbers of core/v1's generated.proto and descriptions in our words,
registered under its group-version-kind so the serializers can find it.
"""

from __future__ import annotations

from genericserver.apimachinery.api.quantity import QUANTITY
from genericserver.apimachinery.apis.meta.v1.types import LIST_META, MICRO_TIME, OBJECT_META, TIME
from genericserver.apimachinery.intstr import INT_OR_STRING
from genericserver.apimachinery.structs import Field, ListOf, MapOf, Struct, register

API = "io.k8s.api.core.v1."
PROTO = "k8s.io.api.core.v1."

CONFIG_MAP = register(Struct(
    API + "ConfigMap", PROTO + "ConfigMap",
    "Configuration data, as keys and values, for pods to read as files or environment variables.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("immutable", 4, "bool", "True keeps data and binaryData from ever changing (only the metadata may).", pointer=True),
        Field("data", 2, MapOf("string"), "The configuration data. Keys are letters, digits, '-', '_' or '.'; values are UTF-8 text."),
        Field("binaryData", 3, MapOf("bytes"), "Configuration data that need not be UTF-8, base64 in JSON. Its keys may not repeat data's."),
    ),
    type_meta=True, gvks=(("", "v1", "ConfigMap"),),
))

CONFIG_MAP_LIST = register(Struct(
    API + "ConfigMapList", PROTO + "ConfigMapList", "A list of ConfigMaps.",
    (
        Field("metadata", 1, LIST_META, "Standard list metadata."),
        Field("items", 2, ListOf(CONFIG_MAP), "The ConfigMaps.", required=True),
    ),
    type_meta=True, gvks=(("", "v1", "ConfigMapList"),),
))


# -- pods (the fields the cluster simulation fills; the rest of PodSpec is left out) ---------------

OBJECT_REFERENCE = register(Struct(
    API + "ObjectReference", PROTO + "ObjectReference", "Points at one object, and optionally a field within it.",
    (
        Field("kind", 1, "string", "The object's kind."),
        Field("namespace", 2, "string", "The object's namespace."),
        Field("name", 3, "string", "The object's name."),
        Field("uid", 4, "string", "The object's UID."),
        Field("apiVersion", 5, "string", "The object's API version."),
        Field("resourceVersion", 6, "string", "The version of the object this reference was made from."),
        Field("fieldPath", 7, "string", "A field of the object, e.g. spec.containers{app}."),
    ),
))

CONTAINER_PORT = Struct(
    API + "ContainerPort", PROTO + "ContainerPort", "A port the container listens on.",
    (
        Field("name", 1, "string", "A name for the port that services and probes can refer to."),
        Field("hostPort", 2, "int32", "The node's port to expose it on; rarely needed."),
        Field("containerPort", 3, "int32", "The port number in the pod's network namespace.", required=True),
        Field("protocol", 4, "string", "TCP, UDP or SCTP; TCP by default.", default="TCP"),
        Field("hostIP", 5, "string", "The node's IP to bind the host port to."),
    ),
)

EXEC_ACTION = Struct(API + "ExecAction", PROTO + "ExecAction", "Runs a command in the container.",
                     (Field("command", 1, ListOf("string"), "The command and its arguments; no shell.", list_type="atomic"),))

HTTP_GET_ACTION = Struct(
    API + "HTTPGetAction", PROTO + "HTTPGetAction", "An HTTP GET to the container; a status from 200 to 399 is success.",
    (
        Field("path", 1, "string", "The path to request."),
        Field("port", 2, INT_OR_STRING, "The port, by number or by the container port's name.", required=True),
        Field("host", 3, "string", "The host to connect to; the pod's IP by default."),
        Field("scheme", 4, "string", "HTTP or HTTPS; HTTP by default."),
    ),
)

SLEEP_ACTION = Struct(API + "SleepAction", PROTO + "SleepAction", "Waits, doing nothing.",
                      (Field("seconds", 1, "int64", "How long to sleep, in seconds.", required=True),))

LIFECYCLE_HANDLER = Struct(
    API + "LifecycleHandler", PROTO + "LifecycleHandler", "What to do at a point of the container's life: exactly one action.",
    (
        Field("exec", 1, EXEC_ACTION, "Run a command.", pointer=True),
        Field("httpGet", 2, HTTP_GET_ACTION, "Send an HTTP GET.", pointer=True),
        Field("sleep", 4, SLEEP_ACTION, "Sleep.", pointer=True),
    ),
)

LIFECYCLE = Struct(
    API + "Lifecycle", PROTO + "Lifecycle", "Actions the kubelet takes at the container's start and stop.",
    (
        Field("postStart", 1, LIFECYCLE_HANDLER, "Run right after the container is created.", pointer=True),
        Field("preStop", 2, LIFECYCLE_HANDLER, "Run before the container is sent its stop signal, within the grace period.", pointer=True),
        Field("stopSignal", 3, "string", "The signal that stops the container; the image's (SIGTERM) by default.", pointer=True),
    ),
)

PROBE_HANDLER = Struct(
    API + "ProbeHandler", PROTO + "ProbeHandler", "How a probe checks the container: exactly one action.",
    (
        Field("exec", 1, EXEC_ACTION, "Run a command; exit 0 is success.", pointer=True),
        Field("httpGet", 2, HTTP_GET_ACTION, "Send an HTTP GET.", pointer=True),
    ),
)

# The handler is embedded: its fields sit beside the delays in JSON, and are message 1 in protobuf
# (kubectl describe reads a pod as protobuf)
PROBE = Struct(
    API + "Probe", PROTO + "Probe", "A check the kubelet runs on the container periodically.",
    (
        Field("handler", 1, PROBE_HANDLER, "The action that checks the container.", inline=True),
        Field("initialDelaySeconds", 2, "int32", "Seconds after the start before the first check."),
        Field("timeoutSeconds", 3, "int32", "Seconds after which a check fails; 1 by default."),
        Field("periodSeconds", 4, "int32", "Seconds between checks; 10 by default."),
        Field("successThreshold", 5, "int32", "Successes in a row that make a failed probe pass; 1 by default."),
        Field("failureThreshold", 6, "int32", "Failures in a row that make a passing probe fail; 3 by default."),
    ),
)

RESOURCE_REQUIREMENTS = Struct(
    API + "ResourceRequirements", PROTO + "ResourceRequirements", "What a container asks for and may use (cpu, memory).",
    (
        Field("limits", 1, MapOf(QUANTITY), "The most it may use."),
        Field("requests", 2, MapOf(QUANTITY), "What it asks for; the scheduler finds room for that."),
    ),
)

ENV_VAR = Struct(
    API + "EnvVar", PROTO + "EnvVar", "One environment variable of a container.",
    (
        Field("name", 1, "string", "The variable's name.", required=True),
        Field("value", 2, "string", "Its value; $(VAR) names another variable."),
    ),
)

CAPABILITIES = Struct(
    API + "Capabilities", PROTO + "Capabilities", "Linux capabilities added to or dropped from the container's default set.",
    (
        Field("add", 1, ListOf("string"), "Capabilities to add.", list_type="atomic"),
        Field("drop", 2, ListOf("string"), "Capabilities to drop (ALL for every one).", list_type="atomic"),
    ),
)

SECCOMP_PROFILE = Struct(
    API + "SeccompProfile", PROTO + "SeccompProfile", "The system calls the container may make.",
    (
        Field("type", 1, "string", "RuntimeDefault, Localhost or Unconfined.", required=True),
        Field("localhostProfile", 2, "string", "The profile's file on the node, for Localhost.", pointer=True),
    ),
)

SECURITY_CONTEXT = Struct(
    API + "SecurityContext", PROTO + "SecurityContext", "Security settings of one container.",
    (
        Field("capabilities", 1, CAPABILITIES, "Capabilities added or dropped.", pointer=True),
        Field("runAsUser", 4, "int64", "The user the process runs as.", pointer=True),
        Field("runAsNonRoot", 5, "bool", "True refuses to start a process that would run as root.", pointer=True),
        Field("readOnlyRootFilesystem", 6, "bool", "True mounts the container's root filesystem read-only.", pointer=True),
        Field("allowPrivilegeEscalation", 7, "bool", "Whether a process may gain more privileges than its parent.", pointer=True),
        Field("seccompProfile", 11, SECCOMP_PROFILE, "The container's seccomp profile.", pointer=True),
    ),
)

POD_SECURITY_CONTEXT = Struct(
    API + "PodSecurityContext", PROTO + "PodSecurityContext", "Security settings every container of the pod starts from.",
    (
        Field("runAsUser", 2, "int64", "The user the processes run as.", pointer=True),
        Field("runAsNonRoot", 3, "bool", "True refuses to start a process that would run as root.", pointer=True),
        Field("fsGroup", 5, "int64", "A group that owns the pod's volumes.", pointer=True),
        Field("seccompProfile", 10, SECCOMP_PROFILE, "The pod's seccomp profile.", pointer=True),
    ),
)

CONTAINER = Struct(
    API + "Container", PROTO + "Container", "One container of a pod.",
    (
        Field("name", 1, "string", "Unique within the pod; cannot be changed.", required=True),
        Field("image", 2, "string", "The container image."),
        Field("command", 3, ListOf("string"), "The entrypoint; the image's by default.", list_type="atomic"),
        Field("args", 4, ListOf("string"), "Arguments to the entrypoint.", list_type="atomic"),
        Field("ports", 6, ListOf(CONTAINER_PORT), "The ports the container listens on (informational).",
              patch_strategy="merge", patch_merge_key="containerPort", list_type="map", list_map_keys=("containerPort", "protocol")),
        Field("env", 7, ListOf(ENV_VAR), "Environment variables of the container.",
              patch_strategy="merge", patch_merge_key="name", list_type="map", list_map_keys=("name",)),
        Field("resources", 8, RESOURCE_REQUIREMENTS, "The CPU and memory it asks for and may use."),
        Field("livenessProbe", 10, PROBE, "Whether the container is alive; a failing one gets it restarted.", pointer=True),
        Field("readinessProbe", 11, PROBE, "Whether the container is ready for traffic; a failing one takes the pod out of its services' endpoints.", pointer=True),
        Field("lifecycle", 12, LIFECYCLE, "Actions at the container's start and stop.", pointer=True),
        Field("terminationMessagePath", 13, "string", "Where the container may write why it ended."),
        Field("terminationMessagePolicy", 20, "string", "File, or FallbackToLogsOnError."),
        Field("imagePullPolicy", 14, "string", "Always, Never or IfNotPresent."),
        Field("securityContext", 15, SECURITY_CONTEXT, "Security settings of the container.", pointer=True),
    ),
)

POD_SPEC = Struct(
    API + "PodSpec", PROTO + "PodSpec", "What the pod should run, and how.",
    (
        Field("containers", 2, ListOf(CONTAINER), "The pod's containers; at least one.", required=True,
              patch_strategy="merge", patch_merge_key="name", list_type="map", list_map_keys=("name",)),
        Field("restartPolicy", 3, "string", "Always, OnFailure or Never; Always by default."),
        Field("terminationGracePeriodSeconds", 4, "int64", "Seconds the pod gets to stop after a graceful delete: preStop hooks and SIGTERM, then SIGKILL. 30 by default.", pointer=True),
        Field("dnsPolicy", 6, "string", "How the pod's DNS is set up; ClusterFirst by default."),
        Field("serviceAccountName", 8, "string", "The service account the pod runs as."),
        Field("nodeName", 10, "string", "The node the pod is bound to; set by the scheduler."),
        Field("securityContext", 14, POD_SECURITY_CONTEXT, "Security settings of the pod.", pointer=True),
        Field("schedulerName", 19, "string", "The scheduler that places the pod."),
    ),
)

POD_CONDITION = Struct(
    API + "PodCondition", PROTO + "PodCondition", "One aspect of the pod's state, true or false.",
    (
        Field("type", 1, "string", "PodScheduled, Initialized, ContainersReady or Ready.", required=True),
        Field("status", 2, "string", "True, False or Unknown.", required=True),
        Field("lastProbeTime", 3, TIME, "When the condition was last probed."),
        Field("lastTransitionTime", 4, TIME, "When the condition last changed."),
        Field("reason", 5, "string", "Why it last changed, as one word."),
        Field("message", 6, "string", "Why it last changed, for people."),
    ),
)

POD_IP = Struct(API + "PodIP", PROTO + "PodIP", "One IP address of the pod.", (Field("ip", 1, "string", "The address.", required=True),))
HOST_IP = Struct(API + "HostIP", PROTO + "HostIP", "One IP address of the pod's node.", (Field("ip", 1, "string", "The address.", required=True),))

CONTAINER_STATE_WAITING = Struct(
    API + "ContainerStateWaiting", PROTO + "ContainerStateWaiting", "The container has not started yet.",
    (Field("reason", 1, "string", "Why, as one word (ContainerCreating, CrashLoopBackOff...)."), Field("message", 2, "string", "Why, for people.")),
)
CONTAINER_STATE_RUNNING = Struct(
    API + "ContainerStateRunning", PROTO + "ContainerStateRunning", "The container is running.",
    (Field("startedAt", 1, TIME, "When it (last) started."),),
)
CONTAINER_STATE_TERMINATED = Struct(
    API + "ContainerStateTerminated", PROTO + "ContainerStateTerminated", "The container has ended.",
    (
        Field("exitCode", 1, "int32", "Its exit code; 137 after SIGKILL.", required=True),
        Field("signal", 2, "int32", "The signal that ended it, if any."),
        Field("reason", 3, "string", "Why, as one word (Completed, Error, OOMKilled...)."),
        Field("message", 4, "string", "Why, for people."),
        Field("startedAt", 5, TIME, "When it started."),
        Field("finishedAt", 6, TIME, "When it ended."),
    ),
)
CONTAINER_STATE = Struct(
    API + "ContainerState", PROTO + "ContainerState", "The container's state: exactly one of waiting, running and terminated.",
    (
        Field("waiting", 1, CONTAINER_STATE_WAITING, "Not started yet.", pointer=True),
        Field("running", 2, CONTAINER_STATE_RUNNING, "Running.", pointer=True),
        Field("terminated", 3, CONTAINER_STATE_TERMINATED, "Ended.", pointer=True),
    ),
)

CONTAINER_STATUS = Struct(
    API + "ContainerStatus", PROTO + "ContainerStatus", "What the kubelet last saw of one container.",
    (
        Field("name", 1, "string", "The container's name.", required=True),
        Field("state", 2, CONTAINER_STATE, "Its state now."),
        Field("lastState", 3, CONTAINER_STATE, "Its state before its last restart."),
        Field("ready", 4, "bool", "Whether its readiness probe passes.", required=True),
        Field("restartCount", 5, "int32", "How many times it has been restarted.", required=True),
        Field("image", 6, "string", "The image it runs.", required=True),
        Field("imageID", 7, "string", "The image's ID.", required=True),
        Field("containerID", 8, "string", "The runtime's ID of the container."),
        Field("started", 9, "bool", "Whether it has started and passed its startup probe.", pointer=True),
    ),
)

POD_STATUS = Struct(
    API + "PodStatus", PROTO + "PodStatus", "What the kubelet last reported of the pod.",
    (
        Field("phase", 1, "string", "Pending, Running, Succeeded, Failed or Unknown. Terminating is not a phase: kubectl shows it for a pod with a deletionTimestamp."),
        Field("conditions", 2, ListOf(POD_CONDITION), "The pod's conditions.",
              patch_strategy="merge", patch_merge_key="type", list_type="map", list_map_keys=("type",)),
        Field("message", 3, "string", "Why the pod is in this phase, for people."),
        Field("reason", 4, "string", "Why the pod is in this phase, as one word."),
        Field("hostIP", 5, "string", "The IP of the pod's node."),
        Field("hostIPs", 16, ListOf(HOST_IP), "The IPs of the pod's node.", list_type="atomic"),
        Field("podIP", 6, "string", "The pod's IP."),
        Field("podIPs", 12, ListOf(POD_IP), "The pod's IPs.", patch_strategy="merge", patch_merge_key="ip", list_type="map", list_map_keys=("ip",)),
        Field("startTime", 7, TIME, "When the kubelet accepted the pod.", pointer=True),
        Field("containerStatuses", 8, ListOf(CONTAINER_STATUS), "One per container.", list_type="atomic"),
        Field("qosClass", 9, "string", "Guaranteed, Burstable or BestEffort."),
    ),
)

POD = register(Struct(
    API + "Pod", PROTO + "Pod", "A group of containers that run together on one node.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("spec", 2, POD_SPEC, "What the pod should run."),
        Field("status", 3, POD_STATUS, "What the pod is doing; written by the kubelet."),
    ),
    type_meta=True, gvks=(("", "v1", "Pod"),),
))

POD_LIST = register(Struct(
    API + "PodList", PROTO + "PodList", "A list of Pods.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."), Field("items", 2, ListOf(POD), "The Pods.", required=True)),
    type_meta=True, gvks=(("", "v1", "PodList"),),
))

POD_TEMPLATE_SPEC = Struct(
    API + "PodTemplateSpec", PROTO + "PodTemplateSpec", "The pods a controller makes: their metadata and spec.",
    (Field("metadata", 1, OBJECT_META, "The pods' metadata (labels, annotations)."), Field("spec", 2, POD_SPEC, "The pods' spec.")),
)


# -- endpoints (the endpoints controller's older API, deprecated since v1.33) -----------------------

ENDPOINT_ADDRESS = Struct(
    API + "EndpointAddress", PROTO + "EndpointAddress", "One address of an endpoint.",
    (
        Field("ip", 1, "string", "The address.", required=True),
        Field("hostname", 3, "string", "The endpoint's hostname."),
        Field("nodeName", 4, "string", "The node the endpoint runs on.", pointer=True),
        Field("targetRef", 2, OBJECT_REFERENCE, "The pod behind the address.", pointer=True),
    ),
)

ENDPOINT_PORT = Struct(
    API + "EndpointPort", PROTO + "EndpointPort", "A port the addresses serve on.",
    (
        Field("name", 1, "string", "The service port's name."),
        Field("port", 2, "int32", "The port number.", required=True),
        Field("protocol", 3, "string", "TCP, UDP or SCTP."),
        Field("appProtocol", 4, "string", "The application protocol.", pointer=True),
    ),
)

ENDPOINT_SUBSET = Struct(
    API + "EndpointSubset", PROTO + "EndpointSubset", "Addresses that share the same ports.",
    (
        Field("addresses", 1, ListOf(ENDPOINT_ADDRESS), "Addresses that are ready for traffic.", list_type="atomic"),
        Field("notReadyAddresses", 2, ListOf(ENDPOINT_ADDRESS), "Addresses that are not ready yet (or not any more).", list_type="atomic"),
        Field("ports", 3, ListOf(ENDPOINT_PORT), "The ports.", list_type="atomic"),
    ),
)

ENDPOINTS = register(Struct(
    API + "Endpoints", PROTO + "Endpoints", "A service's endpoints, as the endpoints controller writes them (deprecated: use EndpointSlices).",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("subsets", 2, ListOf(ENDPOINT_SUBSET), "The endpoints, grouped by their ports.", list_type="atomic"),
    ),
    type_meta=True, gvks=(("", "v1", "Endpoints"),),
))

ENDPOINTS_LIST = register(Struct(
    API + "EndpointsList", PROTO + "EndpointsList", "A list of Endpoints.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."), Field("items", 2, ListOf(ENDPOINTS), "The Endpoints.", required=True)),
    type_meta=True, gvks=(("", "v1", "EndpointsList"),),
))


# -- events ------------------------------------------------------------------------------------------

EVENT_SOURCE = Struct(
    API + "EventSource", PROTO + "EventSource", "Who reported an event.",
    (Field("component", 1, "string", "The reporting component, e.g. kubelet."), Field("host", 2, "string", "The node it runs on.")),
)

EVENT = register(Struct(
    API + "Event", PROTO + "Event", "Something that happened to an object, reported by a component (kubectl get events).",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata.", required=True),
        Field("involvedObject", 2, OBJECT_REFERENCE, "The object the event is about.", required=True),
        Field("reason", 3, "string", "Why, as one word in CamelCase (Killing, Unhealthy...)."),
        Field("message", 4, "string", "What happened, for people."),
        Field("source", 5, EVENT_SOURCE, "Who reported it."),
        Field("firstTimestamp", 6, TIME, "When it was first seen."),
        Field("lastTimestamp", 7, TIME, "When it was last seen."),
        Field("count", 8, "int32", "How many times it was seen."),
        Field("type", 9, "string", "Normal or Warning."),
        Field("eventTime", 10, MICRO_TIME, "When it was first seen, to the microsecond."),
        Field("action", 12, "string", "What was done about it."),
        Field("reportingComponent", 14, "string", "The controller that reported it."),
        Field("reportingInstance", 15, "string", "Which instance of it."),
    ),
    type_meta=True, gvks=(("", "v1", "Event"),),
))

EVENT_LIST = register(Struct(
    API + "EventList", PROTO + "EventList", "A list of Events.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."), Field("items", 2, ListOf(EVENT), "The Events.", required=True)),
    type_meta=True, gvks=(("", "v1", "EventList"),),
))


# -- services (what kube-proxy routes the load by; the simulation's one Service, read-only) ------------

SERVICE_PORT = Struct(
    API + "ServicePort", PROTO + "ServicePort", "One port the service offers and where it sends its traffic.",
    (
        Field("name", 1, "string", "The port's name; the endpoints' ports carry the same name."),
        Field("protocol", 2, "string", "TCP, UDP or SCTP; TCP by default.", default="TCP"),
        Field("port", 3, "int32", "The port the service listens on.", required=True),
        Field("targetPort", 4, INT_OR_STRING, "The pods' port: a number, or the name of a container port."),
    ),
)

SERVICE_SPEC = Struct(
    API + "ServiceSpec", PROTO + "ServiceSpec", "Which pods a service sends its traffic to, and on which ports.",
    (
        Field("ports", 1, ListOf(SERVICE_PORT), "The ports the service offers.",
              patch_strategy="merge", patch_merge_key="port", list_type="map", list_map_keys=("port", "protocol")),
        Field("selector", 2, MapOf("string"), "The labels of the pods that receive the traffic.", map_type="atomic"),
        Field("clusterIP", 3, "string", "The virtual IP kube-proxy routes, inside the cluster."),
        Field("clusterIPs", 18, ListOf("string"), "The virtual IPs, one per IP family.", list_type="atomic"),
        Field("type", 4, "string", "ClusterIP (the default), NodePort, LoadBalancer or ExternalName."),
        Field("sessionAffinity", 7, "string", "None, or ClientIP to keep a client on one pod."),
        Field("ipFamilies", 19, ListOf("string"), "IPv4, IPv6 or both.", list_type="atomic"),
        Field("ipFamilyPolicy", 17, "string", "SingleStack, PreferDualStack or RequireDualStack.", pointer=True),
        Field("internalTrafficPolicy", 22, "string", "Cluster (any ready pod) or Local (the node's own).", pointer=True),
    ),
)

LOAD_BALANCER_INGRESS = Struct(
    API + "LoadBalancerIngress", PROTO + "LoadBalancerIngress", "One address of the service's load balancer.",
    (Field("ip", 1, "string", "An IP address."), Field("hostname", 2, "string", "A DNS name.")),
)

SERVICE_STATUS = Struct(
    API + "ServiceStatus", PROTO + "ServiceStatus", "What the cluster set up for the service.",
    (Field("loadBalancer", 1, Struct(API + "LoadBalancerStatus", PROTO + "LoadBalancerStatus", "The service's load balancer, if it has one.",
                                     (Field("ingress", 1, ListOf(LOAD_BALANCER_INGRESS), "Its addresses.", list_type="atomic"),)),
           "The service's load balancer, if it has one."),),
)

SERVICE = register(Struct(
    API + "Service", PROTO + "Service", "A stable address for a changing set of pods: kube-proxy spreads its traffic over their endpoints.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("spec", 2, SERVICE_SPEC, "What the service offers, and to which pods."),
        Field("status", 3, SERVICE_STATUS, "What the cluster set up for it."),
    ),
    type_meta=True, gvks=(("", "v1", "Service"),),
))

SERVICE_LIST = register(Struct(
    API + "ServiceList", PROTO + "ServiceList", "A list of Services.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."), Field("items", 2, ListOf(SERVICE), "The Services.", required=True)),
    type_meta=True, gvks=(("", "v1", "ServiceList"),),
))


# -- nodes (the simulated kubelet's one node, as it registers itself) -----------------------------------

NODE_CONDITION = Struct(
    API + "NodeCondition", PROTO + "NodeCondition", "One aspect of the node's health, true or false.",
    (
        Field("type", 1, "string", "Ready, MemoryPressure, DiskPressure, PIDPressure or NetworkUnavailable.", required=True),
        Field("status", 2, "string", "True, False or Unknown.", required=True),
        Field("lastHeartbeatTime", 3, TIME, "When the kubelet last reported it."),
        Field("lastTransitionTime", 4, TIME, "When it last changed."),
        Field("reason", 5, "string", "Why, as one word."),
        Field("message", 6, "string", "Why, for people."),
    ),
)

NODE_ADDRESS = Struct(API + "NodeAddress", PROTO + "NodeAddress", "One address of the node.", (
    Field("type", 1, "string", "Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.", required=True),
    Field("address", 2, "string", "The address.", required=True),
))

NODE_SYSTEM_INFO = Struct(API + "NodeSystemInfo", PROTO + "NodeSystemInfo", "What runs on the node.", (
    Field("machineID", 1, "string", "The machine's ID.", required=True),
    Field("systemUUID", 2, "string", "The system's UUID.", required=True),
    Field("bootID", 3, "string", "The boot's ID.", required=True),
    Field("kernelVersion", 4, "string", "The kernel's version.", required=True),
    Field("osImage", 5, "string", "The operating system's name and version.", required=True),
    Field("containerRuntimeVersion", 6, "string", "The container runtime, as runtime://version.", required=True),
    Field("kubeletVersion", 7, "string", "The kubelet's version.", required=True),
    Field("kubeProxyVersion", 8, "string", "Deprecated: the kubelet cannot know it.", required=True),
    Field("operatingSystem", 9, "string", "linux or windows.", required=True),
    Field("architecture", 10, "string", "The CPU architecture, as Go names it (amd64, arm64).", required=True),
))

TAINT = Struct(API + "Taint", PROTO + "Taint", "Keeps pods that do not tolerate it off the node.", (
    Field("key", 1, "string", "The taint's key.", required=True),
    Field("value", 2, "string", "Its value."),
    Field("effect", 3, "string", "NoSchedule, PreferNoSchedule or NoExecute.", required=True),
    Field("timeAdded", 4, TIME, "When it was added (NoExecute taints; the node controller sets it on every one).", pointer=True),
))

NODE_SPEC = Struct(API + "NodeSpec", PROTO + "NodeSpec", "How the node may be used.", (
    Field("podCIDR", 1, "string", "The range the node's pods get their IPs from."),
    Field("podCIDRs", 7, ListOf("string"), "The ranges, one per IP family.", patch_strategy="merge", list_type="set"),
    Field("unschedulable", 4, "bool", "True keeps new pods off the node (kubectl cordon)."),
    Field("taints", 5, ListOf(TAINT), "The node's taints (a cordoned node's node.kubernetes.io/unschedulable among them).",
          list_type="atomic"),
))

NODE_STATUS = Struct(API + "NodeStatus", PROTO + "NodeStatus", "What the kubelet last reported of the node.", (
    Field("capacity", 1, MapOf(QUANTITY), "The node's resources."),
    Field("allocatable", 2, MapOf(QUANTITY), "What of them pods may use."),
    Field("conditions", 4, ListOf(NODE_CONDITION), "The node's conditions.",
          patch_strategy="merge", patch_merge_key="type", list_type="map", list_map_keys=("type",)),
    Field("addresses", 5, ListOf(NODE_ADDRESS), "The node's addresses.",
          patch_strategy="merge", patch_merge_key="type", list_type="map", list_map_keys=("type",)),
    Field("nodeInfo", 7, NODE_SYSTEM_INFO, "What runs on the node."),
))

NODE = register(Struct(
    API + "Node", PROTO + "Node", "A machine that runs pods; its kubelet registers it and reports its status.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("spec", 2, NODE_SPEC, "How the node may be used."),
        Field("status", 3, NODE_STATUS, "What the kubelet last reported."),
    ),
    type_meta=True, gvks=(("", "v1", "Node"),),
))

NODE_LIST = register(Struct(
    API + "NodeList", PROTO + "NodeList", "A list of Nodes.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."), Field("items", 2, ListOf(NODE), "The Nodes.", required=True)),
    type_meta=True, gvks=(("", "v1", "NodeList"),),
))


# -- namespaces (the four kube-apiserver makes at its start) ------------------------------------------

NAMESPACE = register(Struct(
    API + "Namespace", PROTO + "Namespace", "A scope for names: objects in different namespaces may share a name.",
    (
        Field("metadata", 1, OBJECT_META, "Standard object metadata."),
        Field("spec", 2, Struct(API + "NamespaceSpec", PROTO + "NamespaceSpec", "What must happen before the namespace is removed.",
                                (Field("finalizers", 1, ListOf("string"), "Who must finish first (kubernetes: its objects are deleted).",
                                       list_type="atomic"),)),
              "What must happen before the namespace is removed."),
        Field("status", 3, Struct(API + "NamespaceStatus", PROTO + "NamespaceStatus", "Whether the namespace is in use or going away.",
                                  (Field("phase", 1, "string", "Active, or Terminating while its objects are deleted."),)),
              "Whether the namespace is in use or going away."),
    ),
    type_meta=True, gvks=(("", "v1", "Namespace"),),
))

NAMESPACE_LIST = register(Struct(
    API + "NamespaceList", PROTO + "NamespaceList", "A list of Namespaces.",
    (Field("metadata", 1, LIST_META, "Standard list metadata."), Field("items", 2, ListOf(NAMESPACE), "The Namespaces.", required=True)),
    type_meta=True, gvks=(("", "v1", "NamespaceList"),),
))

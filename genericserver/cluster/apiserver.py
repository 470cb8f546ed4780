"""``genericserver cluster --serve-api``: the simulated cluster's store served to a real kubectl (no Go twin).

kube-apiserver is the only door to a cluster's state: kubectl, the kubelet and the controllers
all read and write through it. Here the simulated kubelet and controllers share the store in
process, and this module opens the door for everyone else: a genericserver apiserver (the same
chain, flags and graceful shutdown as ``genericserver serve``) whose REST handlers read and
write that store (:mod:`.apistorage`), so ``kubectl get pods -w`` shows a deleted pod go
Terminating at the moment the timeline prints the store's update, and ``kubectl delete``
drives the kubelet's kill sequence.

Served, with discovery, OpenAPI, Tables (kube's printer columns), watch and PATCH:

* ``v1`` ``pods`` (get, list, watch, patch, update, delete, deletecollection; the pod
  registry's graceful delete), ``pods/status`` and ``pods/log`` (``kubectl logs [-f]``: what the
  replica's klog printed, :mod:`.logs`; a followed log is long-running, as kube-apiserver's
  ``LongRunningFunc`` says); ``endpoints`` (get, list, watch: the
  service's slice as the older API shows it, with v1.33's deprecation warning), ``services``
  (get, list, watch, patch, update: the Service kube-proxy routes by, on a nominal cluster IP; a
  client may change its metadata and selector, nothing else of its spec), ``nodes`` (get,
  list, watch: the node the kubelet registered; patch and update below), ``namespaces`` (get, list, watch: the four
  kube-apiserver makes) and ``events``
  (get, list, watch: what the kubelet's recorder reported, ``kubectl get events``, and by the
  involved object's fields, as ``kubectl describe pod`` asks); pods and events are selected by
  their own fields (``registry/core``'s ``to_selectable_fields``); ``nodes`` take a patch or an
  update too (``kubectl cordon``, ``uncordon``: the scheduler stops and starts binding, :mod:`.scheduler`),
  and ``pods/eviction`` evicts (``kubectl drain``; ``registry/core/eviction``);
* ``apps/v1`` ``deployments`` (get, list, watch, patch, update) and ``deployments/scale``:
  ``kubectl scale``, ``set image`` and ``rollout restart`` drive the simulated rollout, and
  ``rollout status`` follows the controller's status; ``replicasets`` (get, list, watch), one
  per revision as the controller writes them (``get rs -w``, ``rollout history``, ``rollout undo``);
* ``discovery.k8s.io/v1`` ``endpointslices`` (get, list, watch), as the endpoints controller
  writes them;
* ``coordination.k8s.io/v1`` ``leases`` (get, list, watch): the node's lease in
  ``kube-node-lease``, which the kubelet renews (:mod:`.nodelease`) and ``describe node`` reads;
* ``policy/v1`` ``poddisruptionbudgets`` (every verb): the one kind a client creates here
  (``kubectl create pdb``, ``kubectl apply -f deploy/pdb.yaml``), its status kept by the
  disruption controller (:mod:`.disruption`), and spent by evictions.

Nothing else is created through the API: the Deployment makes the pods, the endpoints controller
the slices. :func:`run` builds the server from serve's flags (a flag, certificate, token file or port
it refuses ends the command before any pod runs), starts the world, serves it until SIGTERM or
SIGINT, writes a kubeconfig once the server answers, and prints the timeline as it happens.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import sys
import textwrap
from dataclasses import replace
from typing import Any, Callable, Optional

from rich.console import Console

from genericserver import klog
from genericserver import runtime as rt
from genericserver.api.apps.v1.types import DEPLOYMENT, DEPLOYMENT_LIST, REPLICA_SET, REPLICA_SET_LIST
from genericserver.api.autoscaling.v1.types import SCALE
from genericserver.api.coordination.v1.types import LEASE, LEASE_LIST
from genericserver.api.core.v1.types import ENDPOINTS as ENDPOINTS_STRUCT
from genericserver.api.core.v1.types import (
    ENDPOINTS_LIST,
    EVENT,
    EVENT_LIST,
    NAMESPACE,
    NAMESPACE_LIST,
    NODE,
    NODE_LIST,
    POD,
    POD_LIST,
    SERVICE,
    SERVICE_LIST,
)
from genericserver.api.discovery.v1.types import ENDPOINT_SLICE, ENDPOINT_SLICE_LIST
from genericserver.api.policy.v1.types import EVICTION, POD_DISRUPTION_BUDGET, POD_DISRUPTION_BUDGET_LIST
from genericserver.apigroups import APIGroups
from genericserver.cluster import apistorage, logs, manifest, store as cluster_store
from genericserver.cluster.apistorage import ClusterStorage
from genericserver.cluster.apiview import APIView
from genericserver.cluster.containers import ServerOptions
from genericserver.cluster.losses import format_loss, tally
from genericserver.cluster.scenario import STARTUP_SIGNALS, ScenarioConfig, World
from genericserver.endpoints.handlers.rest import RequestScope
from genericserver.events import Event
from genericserver.filters.longrunning import basic_long_running_request_check
from genericserver.printers.internalversion.printers import (
    DEPLOYMENT_TABLE,
    ENDPOINT_SLICE_TABLE,
    ENDPOINTS_TABLE,
    EVENT_TABLE,
    LEASE_TABLE,
    NAMESPACE_TABLE,
    NODE_TABLE,
    POD_DISRUPTION_BUDGET_TABLE,
    POD_TABLE,
    REPLICA_SET_TABLE,
    SERVICE_TABLE,
)
from genericserver.registry import reviews
from genericserver.registry.core import event_strategy, pod_strategy, rest_log
from genericserver.registry.core.eviction import EvictionREST
from genericserver.registry.policy import poddisruptionbudget
from genericserver.registry.rest.rest import Resource

READ = ("get", "list", "watch")
# kube-apiserver answers every request to v1 Endpoints with this warning since v1.33 (KEP-4974)
ENDPOINTS_DEPRECATION = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
ITEM = ("get", "patch", "update")
PODS = Resource("", "v1", "pods", "Pod", POD, POD_LIST, short_names=("po",), categories=("all",), table=POD_TABLE,
                verbs=("delete", "deletecollection", "get", "list", "patch", "update", "watch"),
                field_labels=pod_strategy.to_selectable_fields)
POD_STATUS = Resource("", "v1", "pods/status", "Pod", POD, verbs=ITEM)
POD_LOG = Resource("", "v1", "pods/log", "Pod", POD, verbs=("get",))
# kube-apiserver's long-running requests (pkg/controlplane/apiserver/config.go): besides watches,
# a followed log, exec, attach and port-forward hold their connection as long as they like
LONG_RUNNING_VERBS, LONG_RUNNING_SUBRESOURCES = {"watch", "proxy"}, {"attach", "exec", "proxy", "log", "portforward"}
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", DEPLOYMENT, DEPLOYMENT_LIST, short_names=("deploy",),
                       categories=("all",), table=DEPLOYMENT_TABLE, verbs=("get", "list", "patch", "update", "watch"))
REPLICA_SETS = Resource("apps", "v1", "replicasets", "ReplicaSet", REPLICA_SET, REPLICA_SET_LIST, short_names=("rs",),
                        categories=("all",), table=REPLICA_SET_TABLE, verbs=READ)
DEPLOYMENT_SCALE = Resource("apps", "v1", "deployments/scale", "Scale", SCALE, verbs=ITEM, kind_group_version="autoscaling/v1")
ENDPOINTS = Resource("", "v1", "endpoints", "Endpoints", ENDPOINTS_STRUCT, ENDPOINTS_LIST, short_names=("ep",), table=ENDPOINTS_TABLE,
                     verbs=READ, singular="endpoints", deprecation=ENDPOINTS_DEPRECATION)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", NAMESPACE, NAMESPACE_LIST, namespaced=False, short_names=("ns",),
                      table=NAMESPACE_TABLE, verbs=READ)
# the namespaces kube-apiserver's system namespaces controller makes at its start
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
NODES = Resource("", "v1", "nodes", "Node", NODE, NODE_LIST, namespaced=False, short_names=("no",), table=NODE_TABLE,
                 verbs=("get", "list", "patch", "update", "watch"))
POD_EVICTION = Resource("", "v1", "pods/eviction", "Eviction", EVICTION, verbs=("create",), kind_group_version="policy/v1")
PDBS = Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", POD_DISRUPTION_BUDGET, POD_DISRUPTION_BUDGET_LIST,
                short_names=("pdb",), table=POD_DISRUPTION_BUDGET_TABLE)
SERVICES = Resource("", "v1", "services", "Service", SERVICE, SERVICE_LIST, short_names=("svc",), categories=("all",),
                    table=SERVICE_TABLE, verbs=("get", "list", "patch", "update", "watch"))
EVENTS = Resource("", "v1", "events", "Event", EVENT, EVENT_LIST, short_names=("ev",), table=EVENT_TABLE, verbs=READ,
                  field_labels=event_strategy.to_selectable_fields)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", LEASE, LEASE_LIST, table=LEASE_TABLE, verbs=READ)
ENDPOINT_SLICES = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", ENDPOINT_SLICE, ENDPOINT_SLICE_LIST,
                           table=ENDPOINT_SLICE_TABLE, verbs=READ)


def kube_apiserver_config(config: Any) -> None:
    """What kube-apiserver sets on the generic config besides the flags: its long-running requests."""
    config.long_running_func = basic_long_running_request_check(LONG_RUNNING_VERBS, LONG_RUNNING_SUBRESOURCES)


def install(mux: Any, store: cluster_store.Store, view: APIView, *, min_request_timeout: float = 1800, metrics: Any = None,
            external_address: str = "", authorizer: Any = None, logs: Optional[rest_log.Locate] = None) -> APIGroups:
    """Serve the cluster's resources on ``mux`` (with discovery), as listed in the module's
    docstring and made here (the system namespaces), and the review APIs (``auth whoami``;
    ``auth can-i`` with the server's ``authorizer``); ``pods/log`` too given the kubelet's
    ``logs`` (:meth:`Kubelet.container_log`)."""
    groups = APIGroups(mux, external_address=external_address)

    def scope(resource: Resource, storage: ClusterStorage, **extra: Any) -> RequestScope:
        return RequestScope(resource, storage, min_request_timeout=min_request_timeout, metrics=metrics, extra=extra)

    pods = ClusterStorage(store, cluster_store.POD, PODS, view.pod, merge=apistorage.pod_merge(view))
    pod_status = ClusterStorage(store, cluster_store.POD, POD_STATUS, view.pod, merge=apistorage.pod_status_merge(view))
    endpoints = ClusterStorage(store, cluster_store.ENDPOINT_SLICE, ENDPOINTS, view.endpoints)
    events = ClusterStorage(store, cluster_store.EVENT, EVENTS, view.event)
    services = ClusterStorage(store, cluster_store.SERVICE, SERVICES, view.service, merge=apistorage.service_merge)
    nodes = ClusterStorage(store, cluster_store.NODE, NODES, view.node, merge=apistorage.node_merge)
    for name in SYSTEM_NAMESPACES:
        store.create({"kind": cluster_store.NAMESPACE, "metadata": {"name": name, "namespace": ""}}, record=False)
    namespaces = ClusterStorage(store, cluster_store.NAMESPACE, NAMESPACES, view.namespace)
    core = [scope(PODS, pods, delete=pods.delete_with_options), scope(POD_STATUS, pod_status),
            scope(POD_EVICTION, pods, create_named=EvictionREST(store, pods.delete_with_options).create)]
    if logs is not None:
        core.append(scope(POD_LOG, pods, get_with_options=rest_log.new_log_getter(pods.get, logs),
                          produces_mime_types=rest_log.PRODUCES_MIME_TYPES))
    groups.install_legacy_api_group(core + [scope(ENDPOINTS, endpoints), scope(EVENTS, events), scope(SERVICES, services),
                                            scope(NODES, nodes), scope(NAMESPACES, namespaces)])
    deployments = ClusterStorage(store, cluster_store.DEPLOYMENT, DEPLOYMENTS, view.deployment, merge=apistorage.deployment_merge)
    scale = ClusterStorage(store, cluster_store.DEPLOYMENT, DEPLOYMENT_SCALE, lambda d: apistorage.scale_of(view, d),
                           merge=apistorage.scale_merge)
    replica_sets = ClusterStorage(store, cluster_store.REPLICA_SET, REPLICA_SETS, view.replica_set)
    groups.install_api_group("apps", {"v1": [scope(DEPLOYMENTS, deployments), scope(DEPLOYMENT_SCALE, scale),
                                             scope(REPLICA_SETS, replica_sets)]})
    slices = ClusterStorage(store, cluster_store.ENDPOINT_SLICE, ENDPOINT_SLICES, view.endpoint_slice)
    groups.install_api_group("discovery.k8s.io", {"v1": [scope(ENDPOINT_SLICES, slices)]})
    leases = ClusterStorage(store, cluster_store.LEASE, LEASES, view.lease)
    groups.install_api_group("coordination.k8s.io", {"v1": [scope(LEASES, leases)]})
    pdbs = ClusterStorage(store, cluster_store.PDB, PDBS, view.pod_disruption_budget, merge=poddisruptionbudget.prepare_for_update,
                          prepare_for_create=poddisruptionbudget.prepare_for_create)
    groups.install_api_group("policy", {"v1": [RequestScope(PDBS, pdbs, min_request_timeout=min_request_timeout, metrics=metrics,
                                                            validate=poddisruptionbudget.validate)]})
    reviews.install(groups, authorizer)
    return groups


def write_kubeconfig(path: str, port: int, *, host: str = "127.0.0.1", ca_file: str = "", token: str = "") -> None:
    """A kubeconfig for the served cluster: context ``genericserver``, namespace ``default``;
    the server at ``host`` (a wildcard bind address means this machine: 127.0.0.1)."""
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    address = f"[{host}]" if ":" in host else host
    cluster: dict = {"server": f"{'https' if ca_file else 'http'}://{address}:{port}"}
    if ca_file:
        cluster["certificate-authority"] = os.path.abspath(ca_file)
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "genericserver", "cluster": cluster}],
        "contexts": [{"name": "genericserver", "context": {"cluster": "genericserver", "user": "student", "namespace": "default"}}],
        "current-context": "genericserver",
        "users": [{"name": "student", "user": {"token": token} if token else {}}],
    }
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(config, f, indent=2)  # JSON is YAML, which kubectl reads
    os.replace(tmp, path)  # whoever waits for the file never reads half of it


def first_token(token_auth_file: str) -> str:
    """The first token of a ``--token-auth-file`` (a CSV of token,user,uid...), for the kubeconfig."""
    if not token_auth_file:
        return ""
    with open(token_auth_file) as f:
        for line in f:
            if line.strip():
                return line.split(",", 1)[0].strip()
    return ""


def wait_ready(port: int, tls: bool, stopping: rt.Event, period: float = 0.05) -> bool:
    """Poll the server's ``/readyz`` until it is green (True), or the shutdown began."""
    ctx = ssl.create_default_context() if tls else None
    if ctx is not None:  # our own listener: its certificate is whatever the flags gave
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    while not stopping.is_set():
        conn = (http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=ctx) if tls
                else http.client.HTTPConnection("127.0.0.1", port, timeout=5))
        try:
            conn.request("GET", "/readyz")
            if conn.getresponse().status in (200, 401, 403):  # green, or answering but not to anonymous
                return True
        except (OSError, http.client.HTTPException):
            pass
        finally:
            conn.close()
        rt.select(stopping, timeout=period)
    return False


def timeline_printer(console: Console, origin: float, scale: float) -> Callable[[Event], None]:
    """Each event as one line, in cluster seconds since the server started, as it happens. On a
    terminal (or piped with ``COLUMNS`` set) a line longer than it is wrapped between words,
    under the time (a terminal would cut it mid-word); piped, each event stays one line, for grep."""
    def show(e: Event) -> None:
        if e.get("signal") in STARTUP_SIGNALS:
            return
        line = f"{(e.at - origin) / scale:8.2f}s  {e.kind:<11} {e.name}"
        if console.is_terminal or os.environ.get("COLUMNS", "").isdigit():  # (piped to a projector's COLUMNS=60 too)
            line = "\n".join(textwrap.wrap(line, console.width, subsequent_indent=" " * 10,
                                           break_long_words=False, break_on_hyphens=False))
        console.print(line, highlight=False, soft_wrap=True)
    return show


def run(cfg: ScenarioConfig, opts: Any, kubeconfig: str, serve: Callable[..., int], console: Optional[Console] = None) -> int:
    """The world (a Deployment of ``cfg.replicas`` under load), served by ``serve``
    (``genericserver.cmd.serve`` with ``serve``'s options ``opts``) until SIGTERM or SIGINT;
    then the graceful shutdown, the pods killed, and the load client's tally (the last line
    printed). The exit code."""
    console = console if console is not None else Console(stderr=True)
    errs = opts.validate()
    if errs:
        print(f"genericserver cluster: error: {'; '.join(errs)}", file=sys.stderr)
        return 2
    # the replicas' klog lines go to their containers' logs (kubectl logs), not over the timeline;
    # the serving apiserver's print from errors up
    with logs.capture():
        return _run(cfg, opts, kubeconfig, serve, console)


def _run(cfg: ScenarioConfig, opts: Any, kubeconfig: str, serve: Callable[..., int], console: Console) -> int:
    # (no Prometheus: the replicas' /metrics feed the printed run's table, and this run prints none)
    # a manifest's Deployment, served: each revision a client writes decides its own pods
    world = World(replace(cfg, roll=True, scrape_period=0), template_settings=manifest.config_for_template if cfg.deployment_spec else None)
    started = closed = False
    try:
        view = APIView(world.clock)

        def installer(server: Any, config: Any, external_address: str) -> None:
            install(server.handler.non_go_restful_mux, world.store, view, min_request_timeout=config.min_request_timeout,
                    metrics=server.metrics, external_address=external_address, authorizer=config.authorizer,
                    logs=world.container_log)

        def built(server: Any) -> None:
            # the cluster starts once serve has taken every flag, the certificate, the token
            # file and the port: a flag it refuses stops the command before any pod runs
            # (the timeline too: a controller's first write, the service's EndpointSlice, would
            # otherwise print before serve's error when the build outlasts the controller's start)
            nonlocal started
            klog.set_verbosity(ServerOptions.verbosity)  # the replicas' -v (serve's set it for the process)
            world.events.follow(timeline_printer(console, rt.now(), cfg.scale))
            world.start_api_controllers()
            world.start_pods(30.0 + 10 * cfg.scale)
            for kubelet in world.kubelets:
                kubelet.start_node_lease()
            world.load.start()
            started = True
            port = server.secure_serving_info.listener.getsockname()[1]
            stopping = server.lifecycle_signals.shutdown_initiated.signaled()

            def announce() -> None:
                # "once it answers": /readyz polled as a load balancer would (HasBeenReady is
                # only signalled by a /readyz that passed, so this is also what turns it on)
                if wait_ready(port, server.secure_serving_info.ssl_context is not None, stopping):
                    write_kubeconfig(kubeconfig, port, host=opts.serving.bind_address, ca_file=opts.serving.cert_file,
                                     token=first_token(opts.authentication.token_auth_file))
                    console.print(f"API server on 127.0.0.1:{port}; kubeconfig written to {kubeconfig}", highlight=False, soft_wrap=True)
                    console.print(f"  KUBECONFIG={kubeconfig} kubectl get pods -w", highlight=False, soft_wrap=True)

            rt.go(announce, name="kubeconfig-writer")

        code = serve(opts, "genericserver cluster", install=installer, built=built, configure=kube_apiserver_config)
        if not started:
            return code
        world.load.stop()
        # the pods go before the tally is printed: the timeline's last lines (each replica's
        # SIGKILL and exit) come above it, and the run's result is the last line
        world.close()
        closed = True
        console.print(f"load client: lost {format_loss(tally(list(world.load.samples)))}", highlight=False, soft_wrap=True)
        return code
    finally:
        if not closed:
            world.close()


"""kubectl v1.36 against ``genericserver cluster --serve-api`` (the real kubectl; tests/test_cluster_kubectl.py is the simulated one): pods go Terminating while the simulated kubelet stops them.

One cluster for the module: a Deployment of two replicas, each pod with a 1 s sleep preStop
and a 3 s ``--shutdown-delay-duration``, time running four times as fast (``--time-scale 0.25``). Each
test deletes a pod of its own (the Deployment replaces it) and reads what kubectl printed, what
the API holds, and the cluster's own timeline on its stderr.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import re
import signal
import urllib.error
import urllib.request
from datetime import datetime, timezone
from typing import Iterator

import pytest

from tests.docs_output import assert_shows, expected
from tests.kubectl import Kubectl
from tests.serverprocess import ServerProcess

READY = r"API server on (127\.0\.0\.1):(\d+); kubeconfig written to"


@contextlib.contextmanager
def served_cluster(directory: pathlib.Path, shutdown_delay: str) -> Iterator[tuple[ServerProcess, Kubectl]]:
    """``cluster --serve-api`` of two replicas (a 1 s sleep preStop, ``shutdown_delay``, time four
    times as fast) and a kubectl on the kubeconfig it wrote; stopped gracefully at the end (exit 0).

    No load client: these tests read the API, not the losses, and busy clients for a module's
    whole life cost the suite seconds of CPU (the rollout restarts of
    test_cluster_serve_api_restart.py run a load of their own)."""
    cp = ServerProcess("--serve-api", "--kubeconfig", str(directory / "kubeconfig"), "--replicas", "2", "--pre-stop", "sleep",
                       "--pre-stop-sleep", "1", "--shutdown-delay", shutdown_delay, "--time-scale", "0.25", "--workers", "0",
                       "--shutdown-watch-termination-grace-period", "1s", command=("cluster",), ready=READY)
    try:
        k = Kubectl(str(directory), cp.port)
        k.kubeconfig = str(directory / "kubeconfig")  # the one the cluster wrote
        yield cp, k
        # gracefully: the cluster's end stops its kubelet, which removes its pods' emptyDir
        # folders (SIGKILL left them in /tmp)
        cp.signal(signal.SIGTERM)
        assert cp.wait() == 0
    finally:
        cp.kill()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with served_cluster(tmp_path_factory.mktemp("cluster"), shutdown_delay="3") as both:
        yield both


@pytest.fixture(scope="module")
def cluster(served) -> ServerProcess:
    return served[0]


@pytest.fixture(scope="module")
def kubectl(served) -> Kubectl:
    return served[1]


def seen(cluster: ServerProcess, pattern: str) -> re.Match:
    """A timeline line matching ``pattern``, already printed or the next one that does."""
    rx = re.compile(pattern)
    for line in cluster.seen:
        m = rx.search(line)
        if m:
            return m
    return cluster.expect(pattern)


def api(cluster: ServerProcess, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(f"http://127.0.0.1:{cluster.port}{path}", method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def running_pod(cluster: ServerProcess) -> str:
    """A pod that is Running, Ready and not being deleted (asked by the test, not by kubectl)."""
    pods = api(cluster, "GET", "/api/v1/namespaces/default/pods")[1]["items"]
    for p in pods:
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
        if ready and "deletionTimestamp" not in p["metadata"]:
            return p["metadata"]["name"]
    raise AssertionError(f"no running pod in {[p['metadata']['name'] for p in pods]}")


def test_the_cluster_is_served_with_kubes_columns(cluster, kubectl):
    out = kubectl.run("get", "pods", "-o", "wide").stdout.splitlines()
    assert out[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"]
    rows = [line.split() for line in out[1:]]
    assert len(rows) == 2 and all(r[1] == "1/1" and r[2] == "Running" and r[5].startswith("10.244.0.") and r[6] == "node-1" for r in rows)
    deploy = kubectl.run("get", "deployments").stdout.splitlines()
    assert deploy[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"] and deploy[1].split()[:4] == ["web", "2/2", "2", "2"]
    ep = kubectl.run("get", "endpoints")
    assert ep.stderr.strip() == "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
    assert ep.stdout.splitlines()[0].split() == ["NAME", "ENDPOINTS", "AGE"]
    assert re.fullmatch(r"web +10\.244\.0\.\d+:8080,10\.244\.0\.\d+:8080 +\d+s", ep.stdout.splitlines()[1])
    slices = kubectl.run("get", "endpointslices").stdout.splitlines()
    assert slices[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"] and slices[1].split()[:3] == ["web", "IPv4", "8080"]
    # the Service kube-proxy routes by, and describe's Endpoints line read from its slices
    svc = kubectl.run("get", "svc", "-o", "wide").stdout.splitlines()
    assert svc[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    assert svc[1].split()[:5] + svc[1].split()[6:] == ["web", "ClusterIP", "10.96.0.10", "<none>", "80/TCP", "app=web"]
    described = kubectl.run("describe", "svc", "web").stdout
    assert re.search(r"^Endpoints: +10\.244\.0\.\d+:8080,10\.244\.0\.\d+:8080$", described, re.M), described
    # the node the kubelet registered, and its pods found by spec.nodeName
    nodes = [line.split() for line in kubectl.run("get", "nodes", "-o", "wide").stdout.splitlines()]
    assert nodes[0][:6] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP"]
    assert nodes[1][:3] + nodes[1][4:6] == ["node-1", "Ready", "<none>", "v1.36.0", "192.168.49.2"] and len(nodes) == 2
    described = kubectl.run("describe", "node", "node-1").stdout
    assert re.search(r"^Non-terminated Pods: +\(2 in total\)$", described, re.M), described
    # and the namespaces kube-apiserver makes
    assert [row.split()[:2] for row in kubectl.run("get", "ns", "--no-headers").stdout.splitlines()] == [
        ["default", "Active"], ["kube-node-lease", "Active"], ["kube-public", "Active"], ["kube-system", "Active"]]
    # the pod as kube writes it: its preStop hook and the server's flags are in the spec
    pod = json.loads(kubectl.run("get", "pod", running_pod(cluster), "-o", "json").stdout)
    container = pod["spec"]["containers"][0]
    assert container["lifecycle"] == {"preStop": {"sleep": {"seconds": 1}}}
    assert "--shutdown-delay-duration=3s" in container["args"] and pod["spec"]["terminationGracePeriodSeconds"] == 30


def test_the_kubelet_holds_and_renews_its_node_lease_which_describe_node_reads(cluster, kubectl):
    leases = [line.split() for line in kubectl.run("get", "leases", "-A").stdout.splitlines()]
    assert leases[0] == ["NAMESPACE", "NAME", "HOLDER", "AGE"] and leases[1][:3] == ["kube-node-lease", "node-1", "node-1"]
    # describe reads it as protobuf: the pointers the kubelet leaves unset stay unset
    described = kubectl.run("describe", "node", "node-1").stdout
    assert re.search(r"^Lease:\n  HolderIdentity:  node-1\n  AcquireTime:     <unset>\n  RenewTime:       \w{3}, ", described, re.M), described
    # renewed every 10 cluster seconds (2.5 s here): the next renewal is a watch event
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    status, lease = api(cluster, "GET", f"{path}/node-1")
    assert status == 200 and lease["spec"]["leaseDurationSeconds"] == 40
    watch = urllib.request.urlopen(f"http://127.0.0.1:{cluster.port}{path}?watch=1&resourceVersion={lease['metadata']['resourceVersion']}",
                                   timeout=30)
    with watch:
        event = json.loads(watch.readline())
    assert event["type"] == "MODIFIED" and event["object"]["spec"]["renewTime"] > lease["spec"]["renewTime"]
    assert event["object"]["metadata"]["ownerReferences"][0]["kind"] == "Node"


def test_describe_reads_the_pod_as_protobuf(cluster, kubectl):
    # kubectl describe asks for protobuf: a probe whose handler was not a message of its own failed
    # it ("proto: wrong wireType = 2 for field InitialDelaySeconds")
    out = kubectl.run("describe", "pod", running_pod(cluster)).stdout
    assert re.search(r"^Status: +Running$", out, re.M), out
    assert re.search(r"^ +Readiness: +http-get http://:http/readyz delay=0s timeout=1s period=1s #success=1 #failure=3$", out, re.M), out
    assert re.search(r"^ +--shutdown-delay-duration=3s$", out, re.M), out
    # when the kubelet took the pod on, and when its container started (it showed year 1)
    year = r"\w{3}, \d\d \w{3} (\d{4}) \d\d:\d\d:\d\d \+0000"
    times = [re.search(rf"^ *{what}: +{year}$", out, re.M) for what in ("Start Time", "Started")]
    assert all(m and int(m.group(1)) > 2000 for m in times), out
    # the kubelet's conditions, in its status manager's order
    conditions = re.search(r"^Conditions:\n +Type +Status\n((?: +\S+ +\S+ *\n)+)", out, re.M)
    assert conditions and [row.split() for row in conditions.group(1).splitlines()] == [
        ["PodReadyToStartContainers", "True"], ["Initialized", "True"], ["Ready", "True"], ["ContainersReady", "True"],
        ["PodScheduled", "True"]], out
    # and how it came to run: the scheduler's binding, then the kubelet's start of each container
    started = re.findall(r"^  Normal +(Scheduled|Pulled|Created|Started) +\S+ +(\S+) +(.*)$", out, re.M)
    assert [(reason, source) for reason, source, _ in started] == [
        ("Scheduled", "default-scheduler"), ("Pulled", "kubelet"), ("Created", "kubelet"), ("Started", "kubelet")], out
    assert started[1][2] == 'spec.containers{app}: Container image "genericserver" already present on machine and can be accessed by the pod'


def test_a_deleted_pod_goes_terminating_then_gone_in_a_watch(cluster, kubectl):
    name = running_pod(cluster)
    watch = kubectl.popen("get", "pods", "-w", "--output-watch-events")
    try:
        assert watch.stdout is not None
        header = watch.stdout.readline()
        assert header.split()[:2] == ["EVENT", "NAME"]
        deleted = kubectl.run("delete", "pod", name)  # waits until the pod is gone, as kubectl does
        assert deleted.stdout.strip() == f'pod "{name}" deleted from default namespace'
        rows, shown = [], [header]
        for line in watch.stdout:
            row = line.split()
            if row[1] == name:
                rows.append((row[0], row[3]))
                shown.append(line)
            if row[0] == "DELETED" and row[1] == name:
                break
    finally:
        watch.terminate()
        watch.wait()
    assert rows[0] == ("ADDED", "Running")
    # Completed once the container has stopped: the kubelet writes the terminal phase before its
    # final delete, and kubectl prints Terminating only for a pod not in one (printers.go printPod)
    assert ("MODIFIED", "Terminating") in rows and rows[-1] == ("DELETED", "Completed")
    assert rows.index(("MODIFIED", "Terminating")) < rows.index(("MODIFIED", "Completed")) < len(rows) - 1
    # what docs/workshop.md's "kubectl in the room" shows a pair (its pod is web-0)
    assert_shows(expected("workshop-room-watch"), "".join(shown).replace(name, "web-0"))
    # the store's update and the kubelet's final delete, as the timeline printed them
    seen(cluster, rf"store +pod {name} updated: deletionTimestamp=now\+30s, deletionGracePeriodSeconds=30 \(Terminating\)")
    seen(cluster, rf"kubelet +{name}/app: Running preStop hook \(sleep 1\)")
    seen(cluster, rf"store +pod {name} deleted")
    # readiness failed at every probe of the 3 s delay: one Event counted up, while the timeline
    # printed each turn to not ready once: the start's if /readyz was not yet green, and the
    # delay's once failureThreshold (3) probes in a row failed, which the container's stop may
    # come before on a busy machine (two suites at once: none printed)
    failed = "Readiness probe failed: HTTP probe failed with statuscode: 500"
    events = api(cluster, "GET", f"/api/v1/namespaces/default/events?fieldSelector=involvedObject.name={name}")[1]["items"]
    unhealthy = [e for e in events if e["message"] == failed]
    printed = sum(f"{name}: Warning Unhealthy: {failed}" in line for line in cluster.seen)
    assert len(unhealthy) == 1 and printed <= 2 and unhealthy[0]["count"] >= max(1, printed), (printed, events)


def test_grace_period_ends_in_sigkill_when_the_pod_takes_longer(cluster, kubectl):
    # after the 1 s preStop, SIGTERM gets the 2 s floor; the server's 3 s delay outlasts it, so the
    # kubelet kills at the grace's end (a 2 s delay would tie with it, and a loaded machine could
    # let the graceful exit win)
    name = running_pod(cluster)
    kubectl.run("delete", "pod", name, "--grace-period=2")
    seen(cluster, rf"store +pod {name} updated: deletionTimestamp=now\+2s, deletionGracePeriodSeconds=2")
    seen(cluster, rf"container +{name}/app: SIGKILL")
    seen(cluster, rf"container +{name}/app: exited with code 137")
    assert kubectl.run("get", "pod", name, check=False).returncode == 1
    # a killed process prints nothing more: not when its abandoned 3 s delay ends (at 4 s), which
    # is before kube-proxy, a lag after the slice lost the pod at 4 s, stops routing to it at 5 s
    seen(cluster, rf"endpoints +web: {name} removed from the slice")
    seen(cluster, rf"kube-proxy +web: rules synced: new connections go to (?!.*\b{name}\b)")
    killed = next(i for i, line in enumerate(cluster.seen) if re.search(rf"container +{name}/app: SIGKILL", line))
    assert not [line for line in cluster.seen[killed:] if re.search(rf"\bpod +{name}: ", line)], cluster.seen[killed:]
    # the kubelet's recorder wrote what it did as Events
    events = [line.split(None, 4) for line in kubectl.run("get", "events", "--no-headers").stdout.splitlines()]
    assert ["Normal", "Killing", f"pod/{name}", "Stopping container app"] in [e[1:] for e in events]


def test_now_is_a_grace_period_of_one_second(cluster, kubectl):
    name = running_pod(cluster)
    kubectl.run("delete", "pod", name, "--now")
    seen(cluster, rf"store +pod {name} updated: deletionTimestamp=now\+1s, deletionGracePeriodSeconds=1")


def test_force_with_grace_zero_removes_from_the_api_at_once(cluster, kubectl):
    name = running_pod(cluster)
    out = kubectl.run("delete", "pod", name, "--force", "--grace-period=0")
    assert "Immediate deletion does not wait for confirmation" in out.stderr
    assert out.stdout.strip() == f'pod "{name}" force deleted from default namespace'
    # gone from the API before the kubelet even started to stop it
    assert kubectl.run("get", "pod", name, check=False).returncode == 1
    deleted = seen(cluster, rf"store +pod {name} deleted").string
    assert "updated: deletionTimestamp" not in " ".join(line for line in cluster.seen if f"pod {name} updated" in line)
    assert deleted


def test_a_finalizer_keeps_the_pod_terminating_until_a_patch_removes_it(cluster, kubectl):
    name = running_pod(cluster)
    kubectl.run("patch", "pod", name, "--type=merge", "-p", '{"metadata":{"finalizers":["example.com/hold"]}}')
    kubectl.run("delete", "pod", name, "--wait=false")
    # the kubelet stops the pod and deletes it with grace 0, but the finalizer holds it
    seen(cluster, rf"store +pod {name} kept: finalizers example.com/hold must be removed first")
    row = kubectl.run("get", "pod", name, "--no-headers").stdout.split()
    assert row[2] == "Completed"  # its container stopped: the terminal phase, which kubectl prints so
    # describe finds the pod's events by its name, namespace and uid: the kubelet's Killing, which
    # it records before it runs the preStop hook (about the container: kubectl shows its field path)
    described = kubectl.run("describe", "pod", name).stdout
    # describe says Terminating only for a pod not in a terminal phase (describe.go describePod)
    assert re.search(r"^Status: +Succeeded$", described, re.M), described
    assert re.search(r"^  Normal +Killing +\S+ +kubelet +spec\.containers\{app\}: Stopping container app$", described, re.M), described
    killing = json.loads(kubectl.run("get", "events", "-o", "json", "--field-selector",
                                     f"involvedObject.name={name},reason=Killing").stdout)["items"]
    uid = json.loads(kubectl.run("get", "pod", name, "-o", "json").stdout)["metadata"]["uid"]
    assert [(e["involvedObject"]["uid"], e["involvedObject"]["fieldPath"]) for e in killing] == [(uid, "spec.containers{app}")]
    pod = json.loads(kubectl.run("get", "pod", name, "-o", "json").stdout)
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 0
    kubectl.run("patch", "pod", name, "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    seen(cluster, rf"store +pod {name} deleted: its last finalizer was removed")
    assert kubectl.run("get", "pod", name, check=False).returncode == 1


def test_describe_says_lasts_invalid_while_the_grace_runs_as_kubectl_does(cluster, kubectl):
    # docs/workshop.md shows `Status: Terminating (lasts <invalid>)`: kubectl describe prints the
    # time since the deletionTimestamp, which a graceful delete sets in the future (now + the
    # grace), and apimachinery's HumanDuration writes a duration below -1 s as "<invalid>"
    name = running_pod(cluster)
    status, pod = api(cluster, "DELETE", f"/api/v1/namespaces/default/pods/{name}")
    assert status == 200, pod
    since = datetime.now(timezone.utc) - datetime.fromisoformat(pod["metadata"]["deletionTimestamp"].replace("Z", "+00:00"))
    assert since.total_seconds() < -2, since  # int(seconds) < -1: "<invalid>"
    workshop = " ".join((pathlib.Path(__file__).resolve().parent.parent / "docs/workshop.md").read_text().split())
    assert "`Status: Terminating (lasts <invalid>)`" in workshop
    seen(cluster, rf"store +pod {name} deleted")


def test_auth_whoami_and_can_i_are_answered_as_by_kube_apiserver(cluster, kubectl):
    assert kubectl.run("auth", "whoami").stdout.splitlines()[1].split() == ["Username", "system:anonymous"]
    assert kubectl.run("auth", "can-i", "delete", "pods").stdout == "yes\n"


def test_pods_and_events_are_selected_by_their_own_fields(cluster, kubectl):
    names = lambda *args: sorted(kubectl.run("get", *args, "-o", "name").stdout.split())  # noqa: E731
    every = names("pods")
    running, not_running = names("pods", "--field-selector", "status.phase=Running"), names("pods", "--field-selector", "status.phase!=Running")
    assert running and sorted(running + not_running) == every
    assert names("pods", "--field-selector", "spec.nodeName=node-1,spec.restartPolicy=Always") == every
    assert names("pods", "--field-selector", "spec.nodeName=node-2") == []
    for resource in ("pods", "events"):
        bad = kubectl.run("get", resource, "--field-selector", "spec.image=x", check=False)
        assert bad.returncode == 1 and bad.stderr.rstrip().endswith(": field label not supported: spec.image"), bad.stderr


def test_bad_input_gets_kubes_answers_and_loses_nothing(cluster, kubectl):
    name = running_pod(cluster)
    # a patch to a field a pod's update may not change
    bad = kubectl.run("patch", "pod", name, "--type=merge", "-p", '{"spec":{"nodeName":"node-2"}}', check=False)
    assert bad.returncode == 1
    assert f'The Pod "{name}" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`' in bad.stderr
    assert '  spec.nodeName: "node-1" -> "node-2"' in bad.stderr
    # a precondition that fails
    code, st = api(cluster, "DELETE", f"/api/v1/namespaces/default/pods/{name}",
                   {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "not-the-uid"}})
    assert (code, st["reason"]) == (409, "Conflict")
    assert st["message"].startswith(f'Operation cannot be fulfilled on pods "{name}": the UID in the precondition (not-the-uid) does not match')
    pod = json.loads(kubectl.run("get", "pod", name, "-o", "json").stdout)
    assert pod["spec"]["nodeName"] == "node-1" and "deletionTimestamp" not in pod["metadata"]
    # a grace period below 0 counts as 1 s (BeforeDelete), answered with the pod
    code, obj = api(cluster, "DELETE", f"/api/v1/namespaces/default/pods/{name}?gracePeriodSeconds=-5")
    assert (code, obj["kind"], obj["metadata"]["deletionGracePeriodSeconds"]) == (200, "Pod", 1)
    # deleting it again while it terminates: the pod as it is, 200; once gone: 404
    code, again = api(cluster, "DELETE", f"/api/v1/namespaces/default/pods/{name}")
    assert code == 200 and again["metadata"]["deletionGracePeriodSeconds"] == 1
    seen(cluster, rf"store +pod {name} deleted")
    missing = kubectl.run("delete", "pod", name, check=False)
    assert missing.returncode == 1 and f'Error from server (NotFound): pods "{name}" not found' in missing.stderr


def test_kubectl_logs_follows_a_replica_through_its_graceful_shutdown(cluster, kubectl):
    pod = running_pod(cluster)
    follow = kubectl.popen("logs", "-f", pod)
    try:
        first = follow.stdout.readline()  # the stream is open: the log so far has come
        kubectl.run("delete", "pod", pod, "--wait=false")
        out, err = follow.communicate(timeout=30)
    finally:
        follow.kill()
    # the follow ends when the container exits, with the replica's own words for its shutdown
    assert follow.returncode == 0, err
    log = first + out
    events = re.findall(r'"\[graceful-termination\] shutdown event" name="(\w+)"', log)
    assert sorted(events) == sorted(["ShutdownInitiated", "AfterShutdownDelayDuration", "NotAcceptingNewRequest",
                                     "InFlightRequestsDrained", "HTTPServerStoppedListening"]), log
    order = events.index
    assert order("ShutdownInitiated") < order("AfterShutdownDelayDuration") < order("NotAcceptingNewRequest") \
        < order("InFlightRequestsDrained")
    assert order("AfterShutdownDelayDuration") < order("HTTPServerStoppedListening")
    assert log.splitlines()[-1].endswith("] [graceful-termination] apiserver is exiting")
    assert_shows(expected("workshop-room-logs"), log)


def test_kubectl_logs_reads_the_last_lines_and_says_what_the_kubelet_says(cluster, kubectl):
    pod = running_pod(cluster)
    whole = kubectl.run("logs", pod).stdout.splitlines()
    assert any(line.endswith("] [graceful-termination] waiting for shutdown to be initiated") for line in whole), whole
    assert kubectl.run("logs", pod, "--tail=1").stdout.splitlines() == whole[-1:]
    previous = kubectl.run("logs", pod, "--previous", check=False)
    assert (previous.returncode, previous.stderr.strip()) == (
        1, f'Error from server (BadRequest): previous terminated container "app" in pod "{pod}" not found')
    status, body = api(cluster, "GET", f"/api/v1/namespaces/default/pods/{pod}/log?tailLines=-3")
    assert (status, body["reason"], body["message"]) == (
        422, "Invalid", f'PodLogOptions "{pod}" is invalid: tailLines: Invalid value: -3: must be greater than or equal to 0')


def json_stream(lines):
    """The objects of ``kubectl get -w -o json``: each ends with a ``}`` at the line's start."""
    buf = []
    for line in lines:
        buf.append(line)
        if line.startswith("}"):
            yield json.loads("".join(buf))
            buf = []


def test_endpointslice_watch_shows_the_endpoint_terminating_before_the_pod_is_gone(cluster, kubectl):
    name = running_pod(cluster)
    watch = kubectl.popen("get", "endpointslices", "-w", "-o", "json")
    states = []  # the pod's endpoint conditions (ready, terminating) in each version of the slice
    try:
        assert watch.stdout is not None
        for i, slice_ in enumerate(json_stream(watch.stdout)):
            if i == 0:
                kubectl.run("delete", "pod", name, "--wait=false")
            mine = [ep["conditions"] for ep in slice_["endpoints"] if ep["targetRef"]["name"] == name]
            states.append((mine[0]["ready"], mine[0]["terminating"]) if mine else "removed")
            if states[-1] == "removed":
                break
    finally:
        watch.terminate()
        watch.wait()
    assert states[0] == (True, False) and states[-1] == "removed"
    assert (False, True) in states
    # not ready and terminating while the pod still existed: the store deleted it later
    seen(cluster, rf"store +pod {name} deleted")
    lines = cluster.seen
    left = next(i for i, line in enumerate(lines) if re.search(rf"endpoints +web: {name} leaves the ready endpoints", line))
    gone = next(i for i, line in enumerate(lines) if re.search(rf"store +pod {name} deleted", line))
    assert left < gone


def test_scale_and_set_image_drive_the_rollout_and_rollout_status_follows(cluster, kubectl):
    assert kubectl.run("scale", "deployment/web", "--replicas=3").stdout.strip() == "deployment.apps/web scaled"
    out = kubectl.run("rollout", "status", "deployment/web", "--timeout=30s").stdout
    assert out.strip().splitlines()[-1] == 'deployment "web" successfully rolled out'
    # a container's env is a field the API knows (a server dry run decodes strictly, and changes nothing)
    env = kubectl.run("set", "env", "deployment/web", "GREETING=hi", "--dry-run=server")
    assert (env.stdout.strip(), env.stderr) == ("deployment.apps/web env updated (server dry run)", "")
    kubectl.run("set", "image", "deployment/web", "app=genericserver:v2")
    out = kubectl.run("rollout", "status", "deployment/web", "--timeout=60s").stdout
    assert out.strip().splitlines()[-1] == 'deployment "web" successfully rolled out'
    pods = json.loads(kubectl.run("get", "pods", "-o", "json").stdout)["items"]
    live = [p for p in pods if "deletionTimestamp" not in p["metadata"]]
    assert len(live) == 3 and {p["spec"]["containers"][0]["image"] for p in live} == {"genericserver:v2"}
    scale = json.loads(kubectl.run("get", "--raw", "/apis/apps/v1/namespaces/default/deployments/web/scale").stdout)
    assert (scale["kind"], scale["apiVersion"], scale["spec"], scale["status"]["selector"]) == (
        "Scale", "autoscaling/v1", {"replicas": 3}, "app=web")
    # paused, a new image waits: no new pod, UP-TO-DATE 0, until the resume rolls it out
    assert kubectl.run("rollout", "pause", "deployment/web").stdout.strip() == "deployment.apps/web paused"
    kubectl.run("set", "image", "deployment/web", "app=genericserver:v3")
    kubectl.run("wait", "deployment/web", "--timeout=30s",
                '--for=jsonpath={.status.conditions[?(@.type=="Progressing")].reason}=DeploymentPaused')
    assert kubectl.run("get", "deployment/web", "--no-headers").stdout.split()[1:3] == ["3/3", "0"]
    pods = json.loads(kubectl.run("get", "pods", "-o", "json").stdout)["items"]
    assert {p["spec"]["containers"][0]["image"] for p in pods if "deletionTimestamp" not in p["metadata"]} == {"genericserver:v2"}
    refused = kubectl.run("rollout", "restart", "deployment/web", check=False)
    assert "can't restart paused deployment (run rollout resume first)" in refused.stderr, refused.stderr
    kubectl.run("rollout", "resume", "deployment/web")
    out = kubectl.run("rollout", "status", "deployment/web", "--timeout=60s").stdout
    assert out.strip().splitlines()[-1] == 'deployment "web" successfully rolled out'
    pods = json.loads(kubectl.run("get", "pods", "-o", "json").stdout)["items"]
    assert {p["spec"]["containers"][0]["image"] for p in pods if "deletionTimestamp" not in p["metadata"]} == {"genericserver:v3"}
    # the conditions as the deployment controller keeps them: times, and the last one changed goes last
    conditions = json.loads(kubectl.run("get", "deployment/web", "-o", "json").stdout)["status"]["conditions"]
    progressing = next(c for c in conditions if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("True", "NewReplicaSetAvailable")
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", c[k]) for c in conditions for k in ("lastUpdateTime", "lastTransitionTime"))


def test_replica_sets_are_served_one_per_revision_and_rollout_undo_brings_one_back(cluster, kubectl):
    def replica_sets() -> dict[str, list[str]]:  # name -> DESIRED, CURRENT, READY
        return {row.split()[0]: row.split()[1:4] for row in kubectl.run("get", "rs", "--no-headers").stdout.splitlines()}

    def history() -> list[int]:
        return [int(row.split()[0]) for row in kubectl.run("rollout", "history", "deployment/web").stdout.splitlines()[2:] if row.strip()]

    def settled() -> str:
        """Wait for the rollout; the one ReplicaSet that has pods then."""
        out = kubectl.run("rollout", "status", "deployment/web", "--timeout=60s").stdout
        assert out.strip().splitlines()[-1] == 'deployment "web" successfully rolled out'
        (active,) = [name for name, counts in replica_sets().items() if counts[0] != "0"]
        return active

    def rolled_out(*command: str) -> str:
        kubectl.run(*command)
        return settled()

    replicas = kubectl.run("get", "deployment/web", "-o", "jsonpath={.spec.replicas}").stdout
    first = rolled_out("set", "image", "deployment/web", "app=genericserver:rs-a")
    revisions = history()
    second = rolled_out("set", "image", "deployment/web", "app=genericserver:rs-b")
    assert second != first and replica_sets()[first] == ["0", "0", "0"] and replica_sets()[second] == [replicas] * 3
    assert history() == revisions + [revisions[-1] + 1]
    owner = json.loads(kubectl.run("get", "rs", second, "-o", "json").stdout)["metadata"]["ownerReferences"]
    assert [(o["kind"], o["name"], o["controller"]) for o in owner] == [("Deployment", "web", True)]
    # undo: the previous template again, on its own ReplicaSet, which takes the next revision
    kept = set(replica_sets())
    undo = kubectl.run("rollout", "undo", "deployment/web")
    # (no warning: the container's resources, which kubectl sends empty, are a known field)
    assert (undo.stdout.strip(), undo.stderr) == ("deployment.apps/web rolled back", "")
    assert settled() == first and set(replica_sets()) == kept
    assert history() == revisions[:-1] + [revisions[-1] + 1, revisions[-1] + 2]
    pod = kubectl.run("get", "pods", "-l", f"pod-template-hash={first}", "-o", "name").stdout.split()[0]
    assert re.search(rf"^Controlled By: +ReplicaSet/{first}$", kubectl.run("describe", pod).stdout, re.M)
    described = kubectl.run("describe", "deployment", "web").stdout
    assert re.search(rf"^NewReplicaSet: +{first} \({replicas}/{replicas} replicas created\)$", described, re.M), described
    # and the controllers' events: the deployment's scaling steps, the ReplicaSet's pods
    assert re.search(rf"^  Normal +ScalingReplicaSet +\S+ +deployment-controller +Scaled up replica set {second} from 0 to 1$",
                     described, re.M), described
    assert re.search(rf"^  Normal +SuccessfulCreate +\S+ +replicaset-controller +Created pod: {second}-\d+$",
                     kubectl.run("describe", "rs", second).stdout, re.M)


@pytest.mark.parametrize("columns", ["", "60"], ids=["columns-unset", "columns-60"])
def test_the_timeline_wraps_between_words_on_a_terminal_and_not_when_piped(columns, monkeypatch):
    # the projector's 60 columns cut a long event mid-word ("deletionTime" / "stamp=..."); piped
    # with COLUMNS set (tee, less at the projector) it is wrapped too
    import io

    from rich.console import Console

    from genericserver.cluster.apiserver import timeline_printer
    from genericserver.events import EventStream

    monkeypatch.setenv("COLUMNS", columns)
    name = "pod web-0 updated: deletionTimestamp=now+20s, deletionGracePeriodSeconds=20 (Terminating)"
    for terminal in (True, False):
        out = io.StringIO()
        events = EventStream()
        events.follow(timeline_printer(Console(file=out, width=60, force_terminal=terminal, color_system=None), 0.0, 1.0))
        events.record("store", name, at=45.1)
        lines = out.getvalue().splitlines()
        if terminal or columns:
            assert len(lines) > 1 and all(len(line) <= 60 for line in lines), lines
            assert lines[0].split()[:3] == ["45.10s", "store", "pod"] and lines[1].startswith(" " * 10 + "deletion"), lines
            assert " ".join(lines).split()[2:] == name.split()  # every word whole
        else:
            assert lines == [f"   45.10s  store       {name}"]


def test_the_kubeconfig_is_json_with_the_server_line_the_workshop_quotes(tmp_path):
    # the workshop said "its `server:` line", but the file is JSON: it now quotes the line as written
    from genericserver.cluster.apiserver import write_kubeconfig

    path = tmp_path / "room.kubeconfig"
    write_kubeconfig(str(path), 6443, host="0.0.0.0")  # the room's --bind-address 0.0.0.0 --secure-port 6443
    text = path.read_text()
    config = json.loads(text)
    assert config["clusters"][0]["name"] == "genericserver"  # what `config set-cluster genericserver` changes
    workshop = (pathlib.Path(__file__).resolve().parent.parent / "docs/workshop.md").read_text()
    quoted = re.search(r"in its line `(.+?)`", " ".join(workshop.split()))[1]
    assert quoted in [line.strip() for line in text.splitlines()], (quoted, text)
    assert "config set-cluster genericserver --server http://ADDRESS:6443" in " ".join(workshop.split())

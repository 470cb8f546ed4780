"""kubectl v1.36's ``drain``, ``cordon``, PodDisruptionBudgets and Service changes against a ``genericserver cluster --serve-api`` of its own (no Go twin).

The cluster has one node, so a drain is the classic lesson: the evicted pods' replacements have
nowhere to go. With a budget of one disruption, the drain evicts one replica (which goes through
its graceful shutdown as a delete would), the budget refuses the other (429, retried by kubectl
every 5 s until its ``--timeout``), and the replacement waits Pending on the cordoned node until
``kubectl uncordon``. With two nodes (``--nodes 2``) the drain moves the pods, one at a time,
to the other node and the load client loses nothing. A Service takes a new selector (the
endpoints controller follows it), and refuses a change the model would not act on. A revision
whose pods request more CPU than the node has waits on its first pod, Pending in the scheduler's
words, past its progress deadline (``rollout status`` fails), until ``rollout undo``.
"""

from __future__ import annotations

import re
import signal

import pytest

from tests.kubectl import Kubectl
from tests.serverprocess import ServerProcess
from tests.test_cluster_serve_api import READY, seen, served_cluster

CANNOT_EVICT = "Cannot evict pod as it would violate the pod's disruption budget."


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with served_cluster(tmp_path_factory.mktemp("drain"), shutdown_delay="2") as both:
        yield both


def test_drain_spends_the_budget_then_waits_and_the_replacement_stays_pending_until_uncordon(cluster):
    cp, k = cluster
    created = k.run("create", "pdb", "web", "--selector=app=web", "--max-unavailable=1")
    assert created.stdout.strip() == "poddisruptionbudget.policy/web created"
    k.run("wait", "pdb/web", "--for=jsonpath={.status.disruptionsAllowed}=1", "--timeout=30s")
    assert k.run("get", "pdb", "--no-headers").stdout.split()[:4] == ["web", "N/A", "1", "1"]

    # (4 s: the evicted pod is gone well within it, the refused one is retried only after 5 s)
    drain = k.run("drain", "node-1", "--timeout=4s", check=False, timeout=60)
    assert drain.returncode == 1, drain.stderr
    assert drain.stdout.startswith("node/node-1 cordoned\n"), drain.stdout
    (evicted,) = re.findall(r"^pod/(\S+) evicted$", drain.stdout, re.M)
    (kept,) = set(re.findall(r"^evicting pod default/(\S+)$", drain.stdout, re.M)) - {evicted}
    assert f'error when evicting pods/"{kept}" -n "default" (will retry after 5s): {CANNOT_EVICT}' in drain.stderr
    assert f'error when evicting pods/"{kept}" -n "default": global timeout reached: 4s' in drain.stderr

    # the eviction is a graceful delete: the replica shuts down as kube-apiserver would
    seen(cp, rf"eviction +{evicted}: evicted \(budget web: one disruption spent\)$")
    # (has 2 when the refusal came before the controller recounted after the first eviction)
    seen(cp, rf"eviction +{kept}: eviction refused \(429\): The disruption budget web needs 1 healthy pods and has [12] currently$")
    seen(cp, rf"pod +{evicted}: ShutdownInitiated$")
    replacement = seen(cp, r"scheduler +(\S+): unschedulable, stays Pending$").group(1)
    assert k.run("get", "nodes", "--no-headers").stdout.split()[:2] == ["node-1", "Ready,SchedulingDisabled"]
    described = k.run("describe", "node", "node-1").stdout
    assert re.search(r"^Taints: +node\.kubernetes\.io/unschedulable:NoSchedule$", described, re.M), described
    assert re.search(r"^Unschedulable: +true$", described, re.M), described
    assert k.run("get", "pod", replacement, "--no-headers").stdout.split()[1:3] == ["0/1", "Pending"]
    assert re.search(r"^  Warning +FailedScheduling +\S+ +default-scheduler +0/1 nodes are available: 1 node\(s\) were unschedulable\.",
                     k.run("describe", "pod", replacement).stdout, re.M)
    # a second eviction of the kept pod, by hand: still refused, the budget spent
    refused = k.run("create", "--raw", f"/api/v1/namespaces/default/pods/{kept}/eviction", "-f", "-", check=False,
                    input=f'{{"apiVersion":"policy/v1","kind":"Eviction","metadata":{{"name":"{kept}"}}}}')
    assert refused.stderr.strip() == f"Error from server (TooManyRequests): {CANNOT_EVICT}"

    assert k.run("uncordon", "node-1").stdout.strip() == "node/node-1 uncordoned"
    seen(cp, rf"scheduler +{replacement}: bound to node-1$")
    k.run("wait", f"pod/{replacement}", "--for=condition=Ready", "--timeout=30s")
    k.run("wait", "pdb/web", "--for=jsonpath={.status.disruptionsAllowed}=1", "--timeout=30s")


def test_a_service_takes_a_new_selector_and_refuses_what_the_model_would_not_act_on(cluster):
    cp, k = cluster
    # the Service as deploy/ writes it: the same spec, so only its label and kubectl's annotation are new
    assert k.run("apply", "-f", "deploy/service.yaml").stdout.strip() == "service/web configured"
    assert k.run("apply", "-f", "deploy/service.yaml").stdout.strip() == "service/web unchanged"
    assert k.run("get", "svc", "web", "-o", "jsonpath={.metadata.labels.app}").stdout == "web"
    refused = k.run("patch", "svc", "web", "-p", '{"spec":{"type":"NodePort"}}', check=False)
    assert refused.stderr.strip() == ('The Service "web" is invalid: spec.type: Forbidden: the simulated cluster\'s Service takes a '
                                      "new selector only: its ports, type and addresses are kube-proxy's model (walkthrough.md 9.3)")
    pods = {name.removeprefix("pod/") for name in k.run("get", "pods", "-o", "name").stdout.split()}
    try:
        k.run("patch", "svc", "web", "-p", '{"spec":{"selector":{"app":"nothing"}}}')
        # the endpoints controller follows the selector: no pod matches, the slice empties
        either = "|".join(sorted(pods))  # (a line about a pod the drain evicted may still be unread)
        gone = {cp.expect(rf"endpoints +web: ({either}) removed from the slice$").group(1) for _ in pods}
        assert gone == pods
        assert k.run("get", "endpointslices", "web", "-o", "jsonpath={.endpoints}").stdout == "[]"
    finally:
        k.run("patch", "svc", "web", "-p", '{"spec":{"selector":{"app":"web"}}}')
    assert {cp.expect(rf"endpoints +web: ({either}) added \(ready=true").group(1) for _ in pods} == pods


def test_a_pod_asking_more_cpu_than_the_node_has_waits_pending_until_the_rollout_is_undone(cluster):
    cp, k = cluster
    bad = k.run("patch", "deployment/web", "--type=merge", "-p",
                '{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"lots"}}}]}}}}', check=False)
    assert bad.returncode == 1 and bad.stderr.rstrip().endswith(
        ": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"), bad.stderr
    k.run("set", "resources", "deployment/web", "--requests=cpu=3")  # the node has 2
    # (the new revision's first pod: the drain's replacement was Pending too, on the cordoned node)
    pending = seen(cp, r"scheduler +(web-v\d+-\d+): unschedulable, stays Pending$").group(1)
    described = k.run("describe", "pod", pending).stdout
    assert re.search(r"^Status: +Pending$", described, re.M) and re.search(r"^QoS Class: +Burstable$", described, re.M)
    assert ("default-scheduler  0/1 nodes are available: 1 Insufficient cpu. "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.") in described
    # no progress for its deadline (2 cluster seconds here, 600 by default): the rollout has failed
    k.run("patch", "deployment/web", "-p", '{"spec":{"progressDeadlineSeconds":2}}')
    failed = k.run("rollout", "status", "deployment/web", "--timeout=30s", check=False)
    assert (failed.returncode, failed.stderr) == (1, 'error: deployment "web" exceeded its progress deadline\n'), failed
    k.run("rollout", "undo", "deployment/web")
    k.run("wait", "--for=delete", f"pod/{pending}", "--timeout=30s")  # never bound: deleted at once
    k.run("rollout", "status", "deployment/web", "--timeout=30s")


def test_with_two_nodes_a_drain_moves_the_pods_within_the_budget_and_loses_no_request(tmp_path):
    # the drain as on a real cluster: the replacements go to the other node, the budget lets one
    # pod go at a time, and the manifest's shutdown delay keeps the load client's requests whole
    cp = ServerProcess("--serve-api", "--kubeconfig", str(tmp_path / "kubeconfig"), "--manifest", "deploy/deployment.yaml",
                       "--nodes", "2", "--time-scale", "0.25", "--workers", "1", "--interval", "0.02",
                       "--shutdown-watch-termination-grace-period", "1s", command=("cluster",), ready=READY)
    try:
        k = Kubectl(str(tmp_path), cp.port)
        k.kubeconfig = str(tmp_path / "kubeconfig")
        rows = [line.split() for line in k.run("get", "nodes", "-o", "wide", "--no-headers").stdout.splitlines()]
        assert [(r[0], r[1], r[5]) for r in rows] == [("node-1", "Ready", "192.168.49.2"), ("node-2", "Ready", "192.168.49.3")]
        before = dict(line.split() for line in k.run("get", "pods", "-o", "custom-columns=N:.metadata.name,NODE:.spec.nodeName",
                                                     "--no-headers").stdout.splitlines())
        assert sorted(before.values()) == ["node-1", "node-1", "node-2"]  # spread: the emptier node first
        k.run("apply", "-f", "deploy/pdb.yaml")
        k.run("wait", "pdb/web", "--for=jsonpath={.status.disruptionsAllowed}=1", "--timeout=30s")
        drain = k.run("drain", "node-1", "--timeout=60s", timeout=90)
        evicted = re.findall(r"^pod/(\S+) evicted$", drain.stdout, re.M)
        assert sorted(evicted) == sorted(p for p, node in before.items() if node == "node-1")
        assert drain.stdout.strip().splitlines()[-1] == "node/node-1 drained"
        k.run("wait", "pods", "--all", "--for=condition=Ready", "--timeout=30s")
        after = k.run("get", "pods", "-o", "jsonpath={.items[*].spec.nodeName}").stdout.split()
        assert after == ["node-2"] * 3
        cp.signal(signal.SIGTERM)
        assert cp.wait() == 0
        assert next(line for line in cp.seen if line.startswith("load client: lost ")).startswith("load client: lost 0% (0 of ")
    finally:
        cp.kill()

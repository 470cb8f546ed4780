"""kubectl v1.36's ``rollout restart`` against a ``genericserver cluster --serve-api`` of its own, under load; and a build that fails.

Each test here runs a cluster of its own (tests/test_cluster_serve_api.py shares one for the
module): a ``rollout restart`` of ``deploy/deployment.yaml`` loses no request of the load
client; once ``kubectl patch`` has rolled out a template without the shutdown delay, the next
restart loses some, as ``cluster --roll`` reports.
"""

from __future__ import annotations

import json
import re
import signal

from tests.docs_output import assert_shows, expected
from tests.kubectl import Kubectl
from tests.serverprocess import ServerProcess
from tests.test_cluster_serve_api import READY, seen


def rollout_restart(tmp_path, *flags: str, delay_edited_out: bool = False) -> str:
    """``kubectl rollout restart`` and ``rollout status`` on a cluster of its own; the load
    client's tally line once SIGTERM ended it. With ``delay_edited_out`` (a manifest's cluster) a
    ``kubectl patch`` first rolls out a template whose server has no shutdown delay."""
    cp = ServerProcess("--serve-api", "--kubeconfig", str(tmp_path / "kubeconfig"), "--time-scale", "0.25",
                       "--shutdown-watch-termination-grace-period", "1s", *flags, command=("cluster",), ready=READY)
    try:
        k = Kubectl(str(tmp_path), cp.port)
        k.kubeconfig = str(tmp_path / "kubeconfig")
        if "--manifest" in flags:
            # the served Deployment is the file's as written: applying it again changes nothing (the
            # generation stays), and the pods' container has the file's name and image
            manifest = flags[flags.index("--manifest") + 1]
            assert k.run("apply", "-f", manifest).stdout.strip() == "deployment.apps/web configured"
            assert k.run("get", "deployment/web", "-o", "jsonpath={.metadata.generation}").stdout == "1"
            assert k.run("get", "pods", "-o", "jsonpath={.items[0].spec.containers[*].name}={.items[0].spec.containers[*].image}").stdout \
                == "web=genericserver:dev"
            # and the pods show their template as written (the manifest's port, probes, security context)
            spec = json.loads(k.run("get", "pods", "-o", "json").stdout)["items"][0]["spec"]
            c = spec["containers"][0]
            assert (c["ports"][0]["containerPort"], c["livenessProbe"]["httpGet"]["path"], c["resources"]["requests"]["cpu"],
                    spec["securityContext"]["runAsNonRoot"]) == (8443, "/livez", "50m", True)
            # the slice's port is the one the pods declare
            assert k.run("get", "endpointslices", "web", "-o", "jsonpath={.ports[0].port}").stdout == "8443"
        revision = 2
        if delay_edited_out:
            # what a room types: the flag edited in the Deployment's template, which the new
            # revision's pods run (the old ones still had the delay: this rollout loses nothing)
            server_args = json.loads(k.run("get", "deployment/web", "-o", "jsonpath={.spec.template.spec.containers[0].args}").stdout)
            i = next(i for i, a in enumerate(server_args) if a.startswith("--shutdown-delay-duration"))
            k.run("patch", "deployment/web", "--type=json", "-p", json.dumps(
                [{"op": "replace", "path": f"/spec/template/spec/containers/0/args/{i}", "value": "--shutdown-delay-duration=0s"}]))
            out = k.run("rollout", "status", "deployment/web", "--timeout=60s", timeout=60).stdout
            assert out.strip().splitlines()[-1] == 'deployment "web" successfully rolled out'
            revision = 3
        assert k.run("rollout", "restart", "deployment/web").stdout.strip() == "deployment.apps/web restarted"
        out = k.run("rollout", "status", "deployment/web", "--timeout=60s", timeout=60).stdout
        assert out.strip().splitlines()[-1] == 'deployment "web" successfully rolled out'
        # every old pod is gone from the routing table before the load is stopped
        seen(cp, rf"kube-proxy +web: rules synced: new connections go to web-v{revision}-0, web-v{revision}-1, web-v{revision}-2$")
        cp.signal(signal.SIGTERM)
        assert cp.wait() == 0
        # the run's result is its last line, under the replicas killed at the end (which print
        # their SIGKILL and exit, and nothing more: no shutdown of a killed process)
        assert cp.seen[-1].startswith("load client: lost "), cp.seen[-12:]
        for i, line in enumerate(cp.seen):
            killed = re.search(r"container +(\S+)/\S+: SIGKILL$", line)
            if killed:
                assert not [x for x in cp.seen[i:] if re.search(rf"\bpod +{killed[1]}: ", x)], cp.seen[i:]
        if "deploy/deployment.yaml" in flags:
            # the restart deleted web-0 as `kubectl delete pod web-0` would: docs/workshop.md's
            # timeline, but for where the endpoints controller's line comes. In a rollout its
            # sync for web-0 may be one already due for another pod, which the deletion joins
            # (a work queue's dedup): then it can come before the kubelet's StopContainer
            shown = expected("workshop-room-timeline")
            at = next(i for i, x in enumerate(shown) if "endpoints" in x)
            assert_shows(shown[:at] + shown[at + 2:], "\n".join(cp.seen))
            assert_shows(shown[at:at + 2], "\n".join(cp.seen))
        return cp.seen[-1]
    finally:
        cp.kill()


def test_rollout_restart_of_the_default_manifest_loses_no_request(tmp_path):
    # (two load workers: nothing can be lost however many ask)
    assert rollout_restart(tmp_path, "--manifest", "deploy/deployment.yaml", "--workers", "2", "--interval", "0.02").startswith(
        "load client: lost 0% (0 of ")


def test_rollout_restart_after_kubectl_edits_the_shutdown_delay_out_loses_requests(tmp_path):
    # one load worker sending every 20 ms is enough: a quarter of what it sends meets a closed
    # listener (15-21 of 60-75 requests in three runs; a worker sending flat out cost 4 CPU-s more)
    line = rollout_restart(tmp_path, "--manifest", "deploy/deployment.yaml", "--workers", "1", "--interval", "0.02",
                           delay_edited_out=True)
    assert not line.startswith("load client: lost 0% ("), line


def test_a_server_build_that_fails_prints_none_of_the_cluster(monkeypatch):
    # the timeline printed from the world's start: when serve's build (imports, 5 s on a loaded
    # machine) outlasted the controllers' start, their first write (the service's EndpointSlice)
    # came out before serve's error line. Here the write comes during the build, by construction
    import io

    from rich.console import Console

    from genericserver.cluster import apiserver
    from genericserver.cluster.scenario import ScenarioConfig

    worlds = []

    class Recorded(apiserver.World):
        def __init__(self, cfg, **kwargs):
            super().__init__(cfg, **kwargs)
            worlds.append(self)

    def refused_after_a_controller_wrote(opts, prog, install, built, configure):
        worlds[0].events.record("store", "endpointslice web created")
        return 1  # what serve returns when the build fails, before built()

    class Options:
        def validate(self):
            return []

    monkeypatch.setattr(apiserver, "World", Recorded)
    out = io.StringIO()
    assert apiserver.run(ScenarioConfig(workers=0), Options(), "unused", refused_after_a_controller_wrote, Console(file=out)) == 1
    assert out.getvalue() == ""

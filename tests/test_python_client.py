"""The official Python client (``kubernetes``) against ``genericserver serve``, as against kube-apiserver.

One server is shared by the module's tests; each test uses names of its own.
"""

from __future__ import annotations

import pytest
from kubernetes import client

from serverprocess import ServerProcess


@pytest.fixture(scope="module")
def server():
    sp = ServerProcess()
    yield sp
    sp.kill()


@pytest.fixture(scope="module")
def api(server):
    config = client.Configuration()
    config.host = f"http://127.0.0.1:{server.port}"
    with client.ApiClient(config) as c:
        yield c


def test_version_api_reads_slash_version_slash(api):
    info = client.VersionApi(api).get_code()  # GET /version/
    assert (info.major, info.minor, info.git_version) == ("1", "36", "v1.36.0")


def test_core_api_versions(api):
    versions = client.CoreApi(api).get_api_versions()
    assert versions.versions == ["v1"]
    assert versions.server_address_by_client_cidrs[0].client_cidr == "0.0.0.0/0"


def test_configmap_create_read_replace_list_delete(api):
    v1 = client.CoreV1Api(api)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-a", labels={"app": "py"}), data={"k": "1"})
    created = v1.create_namespaced_config_map("py", body)
    assert (created.metadata.name, created.metadata.namespace, created.data) == ("py-a", "py", {"k": "1"})
    assert created.metadata.uid and created.metadata.creation_timestamp is not None
    read = v1.read_namespaced_config_map("py-a", "py")
    assert read.metadata.resource_version == created.metadata.resource_version
    read.data = {"k": "2"}
    replaced = v1.replace_namespaced_config_map("py-a", "py", read)
    assert replaced.data == {"k": "2"}
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    names = [cm.metadata.name for cm in v1.list_namespaced_config_map("py").items]
    assert names == ["py-a"]
    status = v1.delete_namespaced_config_map("py-a", "py")
    assert status["status"] == "Success"  # the client types a delete's answer as a plain object
    with pytest.raises(client.ApiException) as err:
        v1.read_namespaced_config_map("py-a", "py")
    assert err.value.status == 404


def test_a_stale_replace_is_a_409_conflict(api):
    v1 = client.CoreV1Api(api)
    created = v1.create_namespaced_config_map("py", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-stale")))
    v1.replace_namespaced_config_map("py-stale", "py", created)
    with pytest.raises(client.ApiException) as err:
        v1.replace_namespaced_config_map("py-stale", "py", created)  # its resourceVersion is gone by now
    assert err.value.status == 409
    assert "the object has been modified" in err.value.body

"""The official Python client (``kubernetes``) against ``genericserver serve``, as against kube-apiserver.

One server is shared by the module's tests; each test uses names of its own.
"""

from __future__ import annotations

import pytest

from lazy import Lazy
from serverprocess import ServerProcess, served

client = Lazy("kubernetes.client")


server = pytest.fixture(scope="module")(served)


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


def test_patch_and_deletecollection(api):
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map("py-patch", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="p", labels={"x": "1"}),
                                                                   data={"a": "1"}))
    patched = v1.patch_namespaced_config_map("p", "py-patch", {"data": {"b": "2"}, "metadata": {"labels": {"x": None}}})
    assert patched.data == {"a": "1", "b": "2"}
    assert patched.metadata.labels is None
    v1.create_namespaced_config_map("py-patch", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="q")))
    v1.delete_collection_namespaced_config_map("py-patch")
    assert v1.list_namespaced_config_map("py-patch").items == []


def test_a_watch_across_a_graceful_shutdown(tmp_path):
    """With watch draining on, the server ends the stream at NotAcceptingNewRequest; the
    client's ``Watch`` then resumes from the last resource version, as against kube-apiserver.
    The resumed watch goes out on the kept-alive connection, which the server's shutdown
    closes as idle (Go's closeIdleConns: "Remote end closed connection", or a reset when the
    request's bytes were already on their way), or on a new one that
    finds the listener closed (refused) or, quicker than the close, gets the server's 503 for
    a request after NotAcceptingNewRequest; each way the stream raises instead of yielding."""
    import urllib3
    from kubernetes import watch

    sp = ServerProcess("--v=1", "--shutdown-watch-termination-grace-period", "5s")
    try:
        config = client.Configuration()
        config.host = f"http://127.0.0.1:{sp.port}"
        config.retries = 0  # the resumed watch fails at once instead of retrying the refused connect
        with client.ApiClient(config) as c:
            v1 = client.CoreV1Api(c)
            v1.create_namespaced_config_map("w", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="seen")))
            w = watch.Watch()
            events = w.stream(v1.list_namespaced_config_map, "w")
            first = next(events)
            assert (first["type"], first["object"].metadata.name) == ("ADDED", "seen")
            sp.signal()
            sp.expect(r'name="NotAcceptingNewRequest"')
            with pytest.raises((urllib3.exceptions.MaxRetryError, client.ApiException)) as err:
                next(events)
            if isinstance(err.value, client.ApiException):
                assert err.value.status == 503
            else:
                reason = str(err.value.reason)
                assert any(why in reason for why in ("Connection refused", "Remote end closed connection", "Connection reset by peer", "503")), reason
            assert w.resource_version == first["object"].metadata.resource_version
        assert sp.wait() == 0
    finally:
        sp.kill()

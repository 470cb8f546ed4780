"""Discovery as kube-apiserver serves it: /api, /api/v1, /apis, /apis/G[/V] and aggregated discovery."""

from __future__ import annotations

import json

import pytest
from werkzeug.test import Client

from genericserver import sampleapi
from genericserver.api.core.v1.types import CONFIG_MAP, CONFIG_MAP_LIST
from genericserver.apigroups import APIGroups
from genericserver.endpoints.discovery.aggregated.wrapper import wants_aggregated
from genericserver.endpoints.discovery.storageversionhash import storage_version_hash
from genericserver.endpoints.handlers.rest import RequestScope
from genericserver.mux import PathRecorderMux
from genericserver.registry.generic.registry.store import Store
from genericserver.registry.rest.rest import Resource

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
KUBECTL_ACCEPT = AGGREGATED + ",application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
WIDGETS = Resource("example.com", "v1", "widgets", "Widget", CONFIG_MAP, CONFIG_MAP_LIST, namespaced=False,
                   short_names=("wd",), categories=("all",), verbs=("get", "list"))


@pytest.fixture
def client() -> Client:
    mux = PathRecorderMux("test")
    groups = APIGroups(mux, external_address="10.0.0.1:6443")
    sampleapi.install(mux, api_groups=groups)
    groups.install_api_group("example.com", {"v1": [RequestScope(WIDGETS, Store(WIDGETS))]})
    return Client(mux)


def test_storage_version_hash_is_kubes():
    assert storage_version_hash("", "v1", "ConfigMap") == "qFsyl6wFWjQ="  # what kube-apiserver lists


@pytest.mark.parametrize("path", ["/api", "/api/"])
def test_legacy_api_versions_are_written_unversioned(client, path):
    r = client.get(path)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/json"
    assert json.loads(r.data) == {"kind": "APIVersions", "versions": ["v1"],
                                  "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}]}


@pytest.mark.parametrize("path", ["/api/v1", "/api/v1/"])
def test_the_core_resource_list(client, path):
    doc = json.loads(client.get(path).data)
    assert list(doc) == ["kind", "groupVersion", "resources"]
    assert doc["resources"] == [{"name": "configmaps", "singularName": "configmap", "namespaced": True, "kind": "ConfigMap",
                                 "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
                                 "shortNames": ["cm"], "storageVersionHash": "qFsyl6wFWjQ="}]


def test_named_groups(client):
    gv = {"groupVersion": "example.com/v1", "version": "v1"}
    group = {"name": "example.com", "versions": [gv], "preferredVersion": gv}
    auth_gv = {"groupVersion": "authentication.k8s.io/v1", "version": "v1"}
    auth = {"name": "authentication.k8s.io", "versions": [auth_gv], "preferredVersion": auth_gv}
    assert json.loads(client.get("/apis").data) == {"kind": "APIGroupList", "apiVersion": "v1", "groups": [auth, group]}
    assert json.loads(client.get("/apis/example.com").data) == {"kind": "APIGroup", "apiVersion": "v1", **group}
    doc = json.loads(client.get("/apis/example.com/v1").data)
    assert (doc["kind"], doc["apiVersion"], doc["groupVersion"]) == ("APIResourceList", "v1", "example.com/v1")
    assert doc["resources"][0]["namespaced"] is False and doc["resources"][0]["categories"] == ["all"]


def test_aggregated_discovery_is_chosen_by_accept_and_cached_by_etag(client):
    r = client.get("/api", headers={"Accept": KUBECTL_ACCEPT})
    assert r.status_code == 200
    assert r.headers["Content-Type"] == AGGREGATED
    assert (r.headers["Vary"], r.headers["Cache-Control"]) == ("Accept", "public")
    doc = json.loads(r.data)
    assert (doc["kind"], doc["apiVersion"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2")
    [core] = doc["items"]
    assert core["metadata"] == {}
    assert core["versions"] == [{"version": "v1", "freshness": "Current", "resources": [{
        # the kind's group and version are empty, as the APIResource's are (apiserver pkg/endpoints/installer.go:98-101)
        "resource": "configmaps", "responseKind": {"group": "", "version": "", "kind": "ConfigMap"}, "scope": "Namespaced",
        "singularResource": "configmap", "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        "shortNames": ["cm"]}]}]
    etag = r.headers["ETag"]
    assert etag.startswith('"') and len(etag) == 130  # a quoted SHA-512 in hex
    again = client.get("/api", headers={"Accept": KUBECTL_ACCEPT, "If-None-Match": etag})
    assert (again.status_code, again.data) == (304, b"")
    named = json.loads(client.get("/apis", headers={"Accept": KUBECTL_ACCEPT}).data)
    assert [i["metadata"] for i in named["items"]] == [{"name": "authentication.k8s.io"}, {"name": "example.com"}]
    assert named["items"][1]["versions"][0]["resources"][0]["scope"] == "Cluster"
    [review] = named["items"][0]["versions"][0]["resources"]
    # Go's storage names its singular selfsubjectreview (kubernetes pkg/registry/authentication/selfsubjectreview/rest.go:107)
    assert (review["resource"], review["singularResource"], review["verbs"]) == ("selfsubjectreviews", "selfsubjectreview", ["create"])


def test_a_review_is_listed_as_kube_apiserver_lists_it(client):
    # what kube-apiserver v1.36.0 answers (tests/parity/go-api.json, apis-authentication), less tokenreviews:
    # the singular of GetSingularName (selfsubjectreview/rest.go:107), and no storageVersionHash, which
    # Go sets only for a storage with a storage version (apiserver pkg/endpoints/installer.go:489-497)
    doc = json.loads(client.get("/apis/authentication.k8s.io/v1").data)
    assert doc["resources"] == [{"name": "selfsubjectreviews", "singularName": "selfsubjectreview", "namespaced": False,
                                 "kind": "SelfSubjectReview", "verbs": ["create"]}]


@pytest.mark.parametrize("accept, aggregated", [
    (KUBECTL_ACCEPT, True),
    ("application/json", False),
    ("", False),
    ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", False),  # v2beta1 is gone
    ("application/json;q=0.5," + AGGREGATED, True),
    ("application/json," + AGGREGATED + ";q=0.5", False),
])
def test_the_first_acceptable_media_range_decides(accept, aggregated):
    assert wants_aggregated(accept) is aggregated


PB = "application/vnd.kubernetes.protobuf"
# what kube-apiserver v1.36.0 answered an Accept of protobuf (curl, 2026-12-02): /api (its address
# 127.0.0.1:54363), /apis/authentication.k8s.io and its v1 (which kube also serves tokenreviews in)
KUBE_PROTOBUF = {
    "/api": "6b3873000a0f0a00120b41504956657273696f6e7312220a027631121c0a09302e302e302e302f30120f3132372e302e302e313a"
            "35343336331a002200",
    "/apis/authentication.k8s.io": "6b3873000a0e0a027631120841504947726f757012570a1561757468656e7469636174696f6e2e6b"
            "38732e696f121e0a1861757468656e7469636174696f6e2e6b38732e696f2f7631120276311a1e0a1861757468656e7469636174"
            "696f6e2e6b38732e696f2f7631120276311a002200",
    "/apis/authentication.k8s.io/v1": "6b3873000a150a027631120f4150495265736f757263654c69737412a4010a1861757468656e"
            "7469636174696f6e2e6b38732e696f2f7631124c0a1273656c667375626a6563747265766965777310001a1153656c665375626a"
            "65637452657669657722080a06637265617465321173656c667375626a65637472657669657742004a005200123a0a0c746f6b65"
            "6e7265766965777310001a0b546f6b656e52657669657722080a06637265617465320b746f6b656e72657669657742004a005200"
            "1a002200",
}


@pytest.mark.parametrize("path", sorted(KUBE_PROTOBUF))
def test_kube_apiserver_s_protobuf_discovery_documents_read_and_write_back_byte_for_byte(path):
    from genericserver.apimachinery.runtime.serializer import protobuf

    data = bytes.fromhex(KUBE_PROTOBUF[path])
    assert protobuf.encode(protobuf.decode(data)) == data


def test_discovery_answers_protobuf_to_a_client_that_asks_as_kube_apiserver_does(client):
    # every discovery document, the aggregated one too, is written in protobuf (they were JSON, and
    # the aggregated one asked in protobuf a 406): the legacy ones with an empty apiVersion in the envelope
    from genericserver.apimachinery.runtime.serializer import protobuf

    group = client.get("/apis/authentication.k8s.io", headers={"Accept": PB})
    assert (group.status_code, group.headers["Content-Type"]) == (200, PB)
    assert group.data == bytes.fromhex(KUBE_PROTOBUF["/apis/authentication.k8s.io"])
    legacy = client.get("/api", headers={"Accept": PB})
    assert legacy.headers["Content-Type"] == PB
    assert protobuf.decode(legacy.data) == {"kind": "APIVersions", "apiVersion": "", "versions": ["v1"],
                                            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}]}
    for path in ("/apis", "/api/v1", "/apis/authentication.k8s.io/v1"):
        r = client.get(path, headers={"Accept": PB})
        assert (r.status_code, r.headers["Content-Type"], r.data[:4]) == (200, PB, b"k8s\x00"), path
    agg = PB + ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    r = client.get("/api", headers={"Accept": agg + ",application/json"})
    assert (r.status_code, r.headers["Content-Type"]) == (200, agg)
    doc = protobuf.decode(r.data)
    assert (doc["kind"], doc["items"][0]["versions"][0]["resources"][0]["resource"]) == ("APIGroupDiscoveryList", "configmaps")
    assert r.headers["ETag"] == client.get("/api", headers={"Accept": KUBECTL_ACCEPT}).headers["ETag"]

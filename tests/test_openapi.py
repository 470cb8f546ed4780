"""The OpenAPI v3 documents (kube-openapi's builder3 and handler3, as k8s.io/apiserver serves them)."""

from __future__ import annotations

import json

import pytest
from werkzeug.test import Client

from genericserver import sampleapi
from genericserver.mux import PathRecorderMux
from genericserver.openapi.builder3 import document

CM = "io.k8s.api.core.v1.ConfigMap"


@pytest.fixture
def client() -> Client:
    mux = PathRecorderMux("test")
    sampleapi.install(mux)
    return Client(mux)


def test_the_index_names_each_group_version_with_its_hash(client):
    r = client.get("/openapi/v3")
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/json"
    paths = json.loads(r.data)["paths"]
    assert sorted(paths) == ["api/v1", "apis/authentication.k8s.io/v1"]
    url = paths["api/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/api/v1?hash=") and len(url.split("=")[1]) == 128


def test_a_document_by_its_hash_is_cached_for_good_and_a_stale_hash_redirects(client):
    url = json.loads(client.get("/openapi/v3").data)["paths"]["api/v1"]["serverRelativeURL"]
    r = client.get(url)
    assert r.status_code == 200
    assert (r.headers["Cache-Control"], r.headers["Vary"]) == ("public, immutable", "Accept")
    etag = r.headers["ETag"]
    assert etag == '"' + url.split("=")[1] + '"'
    assert client.get("/openapi/v3/api/v1", headers={"If-None-Match": etag}).status_code == 304
    stale = client.get("/openapi/v3/api/v1?hash=ABC")
    assert (stale.status_code, stale.headers["Location"]) == (301, url)
    assert client.get("/openapi/v3/apis/nope/v1").status_code == 404


def test_the_configmap_schema_has_what_kubectl_reads():
    doc = document([sampleapi.CONFIGMAPS])
    assert doc["openapi"] == "3.0.0"
    cm = doc["components"]["schemas"][CM]
    assert cm["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "ConfigMap", "version": "v1"}]
    assert sorted(cm["properties"]) == ["apiVersion", "binaryData", "data", "immutable", "kind", "metadata"]
    assert cm["properties"]["metadata"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    assert cm["properties"]["binaryData"] == {"description": cm["properties"]["binaryData"]["description"], "type": "object",
                                              "additionalProperties": {"type": "string", "format": "byte"}}
    meta = doc["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
    assert (meta["finalizers"]["x-kubernetes-patch-strategy"], meta["finalizers"]["x-kubernetes-list-type"]) == ("merge", "set")
    assert meta["ownerReferences"]["x-kubernetes-patch-merge-key"] == "uid"
    assert doc["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.Time"] == {
        "description": doc["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.Time"]["description"],
        "type": "string", "format": "date-time"}
    # every $ref points at a schema of the document
    refs = {m for m in json.dumps(doc).split('"$ref": "#/components/schemas/')[1:]}
    assert {r.split('"')[0] for r in refs} <= set(doc["components"]["schemas"])


def test_a_patch_operation_advertises_field_validation_so_kubectl_validates_on_the_server():
    doc = document([sampleapi.CONFIGMAPS])
    item = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]
    patch = item["patch"]
    assert patch["operationId"] == "patchCoreV1NamespacedConfigMap"
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "kind": "ConfigMap", "version": "v1"}
    assert "fieldValidation" in [p["name"] for p in patch["parameters"] if p["in"] == "query"]
    assert sorted(patch["requestBody"]["content"]) == ["application/json-patch+json", "application/merge-patch+json",
                                                       "application/strategic-merge-patch+json"]
    assert [item[v]["operationId"] for v in ("get", "put", "delete")] == [
        "readCoreV1NamespacedConfigMap", "replaceCoreV1NamespacedConfigMap", "deleteCoreV1NamespacedConfigMap"]
    assert doc["paths"]["/api/v1/configmaps"]["get"]["operationId"] == "listCoreV1ConfigMapForAllNamespaces"


def test_the_v2_document_is_swagger_with_definitions_and_body_parameters(client):
    r = client.get("/openapi/v2", headers={"Accept": "application/json"})
    assert r.status_code == 200 and r.headers["ETag"].startswith('"')
    doc = json.loads(r.data)
    assert doc["swagger"] == "2.0"
    assert CM in doc["definitions"] and "components" not in doc
    assert '#/components/' not in r.data.decode()
    create = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["post"]
    assert create["parameters"][0] == {"name": "body", "in": "body", "required": True, "schema": {"$ref": "#/definitions/" + CM}}
    assert client.get("/openapi/v2", headers={"If-None-Match": r.headers["ETag"]}).status_code == 304
    # the gnostic protobuf form is not built: a client that takes nothing else gets 406
    pb = client.get("/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    assert pb.status_code == 406

"""The API surface corpus's hand-written exchanges (tests/parity/api.py; README.md in this folder).

Sent in this order to one fresh server, as the admin (`system:masters`) unless a case says otherwise;
every object is a configmap in `default` named `hw-...`, so that the kubectl and client sessions that
follow (record_api.py) meet none of them. Each case is (id, method, path, headers, body); the faults
are the ones kube-apiserver's handlers check, alone and two at once (which one wins is the order of
the checks in handlers/*.go).
"""

from __future__ import annotations

import json
from typing import Any, Optional

NS = "/api/v1/namespaces/default/configmaps"
JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSONPATCH = "application/json-patch+json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def cm(name: str, data: Optional[dict] = None, **meta: Any) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data or {"a": "1"}})


def case(id: str, method: str, path: str, body: Optional[str] = None, *, accept: Optional[str] = None,
         content_type: Optional[str] = None, token: Optional[str] = "admin", **headers: str) -> dict:
    h: dict[str, str] = {}
    if accept is not None:
        h["Accept"] = accept
    if content_type is not None:
        h["Content-Type"] = content_type
    elif body is not None:
        h["Content-Type"] = JSON
    if token == "admin":
        h["Authorization"] = "Bearer reference-admin-token"
    elif token == "reader":
        h["Authorization"] = "Bearer reader-token"
    elif token:
        h["Authorization"] = f"Bearer {token}"
    h.update({k.replace("_", "-"): v for k, v in headers.items()})
    return {"id": id, "source": "hand-written", "method": method, "path": path, "headers": h, "body": body}


CASES: list[dict] = [
    # -- set up, and reading one object with every Accept --------------------------------------------
    case("create", "POST", NS, cm("hw-a", labels={"app": "web"}), accept=JSON),
    case("create-second", "POST", NS, cm("hw-b", {"x": "y"}), accept=JSON),
    case("get", "GET", f"{NS}/hw-a", accept=JSON),
    case("get-no-accept", "GET", f"{NS}/hw-a"),
    case("get-yaml", "GET", f"{NS}/hw-a", accept=YAML),
    case("get-star", "GET", f"{NS}/hw-a", accept="*/*"),
    case("get-application-star", "GET", f"{NS}/hw-a", accept="application/*"),
    case("get-json-q0", "GET", f"{NS}/hw-a", accept="application/json;q=0"),
    case("get-specificity", "GET", f"{NS}/hw-a", accept="application/*;q=0.2, application/yaml;q=0.1"),
    case("get-q-order", "GET", f"{NS}/hw-a", accept="application/yaml;q=0.5, application/json;q=0.9"),
    case("get-html-then-yaml", "GET", f"{NS}/hw-a", accept="text/html, application/yaml;q=0.5"),
    case("get-html", "GET", f"{NS}/hw-a", accept="text/html"),
    case("get-bad-accept", "GET", f"{NS}/hw-a", accept="nonsense"),
    case("get-table", "GET", f"{NS}/hw-a", accept=TABLE),
    case("get-table-v1beta1", "GET", f"{NS}/hw-a", accept="application/json;as=Table;v=v1beta1;g=meta.k8s.io"),
    case("get-partial-metadata", "GET", f"{NS}/hw-a", accept="application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"),
    case("get-unknown-as", "GET", f"{NS}/hw-a", accept="application/json;as=Nonsense;v=v1;g=meta.k8s.io"),
    case("get-sv-v1", "GET", f"{NS}/hw-a", accept="application/json;sv=v1"),
    case("get-sv-v2", "GET", f"{NS}/hw-a", accept="application/json;sv=v2"),
    case("get-missing", "GET", f"{NS}/hw-missing", accept=JSON),
    case("get-missing-html", "GET", f"{NS}/hw-missing", accept="text/html"),
    case("get-bad-name", "GET", f"{NS}/Bad_Name", accept=JSON),
    case("get-export", "GET", f"{NS}/hw-a?export=true", accept=JSON),
    case("get-rv", "GET", f"{NS}/hw-a?resourceVersion=0", accept=JSON),
    case("get-bad-rv", "GET", f"{NS}/hw-a?resourceVersion=abc", accept=JSON),
    case("get-reader", "GET", f"{NS}/hw-a", accept=JSON, token="reader"),
    case("get-bad-token", "GET", f"{NS}/hw-a", accept=JSON, token="no-such-token"),
    case("get-anonymous", "GET", f"{NS}/hw-a", accept=JSON, token=None),
    # -- lists ------------------------------------------------------------------------------------------
    case("list", "GET", NS, accept=JSON),
    case("list-table", "GET", NS, accept=TABLE),
    case("list-yaml", "GET", NS, accept=YAML),
    case("list-label", "GET", f"{NS}?labelSelector=app%3Dweb", accept=JSON),
    case("list-label-set", "GET", f"{NS}?labelSelector=app%20in%20(web,db)", accept=JSON),
    case("list-label-bad", "GET", f"{NS}?labelSelector=app%20in", accept=JSON),
    case("list-label-bad-html", "GET", f"{NS}?labelSelector=app%20in", accept="text/html"),
    case("list-field-name", "GET", f"{NS}?fieldSelector=metadata.name%3Dhw-a", accept=JSON),
    case("list-field-unknown", "GET", f"{NS}?fieldSelector=spec.x%3D1", accept=JSON),
    case("list-field-bad", "GET", f"{NS}?fieldSelector=%3D%3D", accept=JSON),
    case("list-limit", "GET", f"{NS}?limit=1", accept=JSON),
    case("list-limit-negative", "GET", f"{NS}?limit=-1", accept=JSON),
    case("list-continue-bad", "GET", f"{NS}?limit=1&continue=garbage", accept=JSON),
    case("list-continue-and-rv", "GET", f"{NS}?limit=1&continue=garbage&resourceVersion=5", accept=JSON),
    case("list-rv-0", "GET", f"{NS}?resourceVersion=0", accept=JSON),
    case("list-rv-bad", "GET", f"{NS}?resourceVersion=abc", accept=JSON),
    case("list-rvmatch-without-rv", "GET", f"{NS}?resourceVersionMatch=Exact", accept=JSON),
    case("list-rvmatch-bad", "GET", f"{NS}?resourceVersionMatch=Sometimes&resourceVersion=1", accept=JSON),
    case("list-all-namespaces", "GET", "/api/v1/configmaps?labelSelector=app%3Dweb", accept=JSON),
    case("list-unknown-param", "GET", f"{NS}?nonsense=1", accept=JSON),
    case("list-timeout-bad", "GET", f"{NS}?timeoutSeconds=abc", accept=JSON),
    case("list-two-faults", "GET", f"{NS}?labelSelector=app%20in&resourceVersion=abc", accept=JSON),
    # -- watches (ended by their own timeout) ------------------------------------------------------------
    case("watch-from-0", "GET", f"{NS}?watch=1&resourceVersion=0&timeoutSeconds=1&labelSelector=app%3Dweb", accept=JSON),
    case("watch-bad-accept", "GET", f"{NS}?watch=1&timeoutSeconds=1", accept="text/html"),
    case("watch-label-bad", "GET", f"{NS}?watch=1&timeoutSeconds=1&labelSelector=app%20in", accept=JSON),
    case("watch-table", "GET", f"{NS}?watch=1&resourceVersion=0&timeoutSeconds=1&fieldSelector=metadata.name%3Dhw-b", accept=TABLE),
    # -- create -------------------------------------------------------------------------------------------
    case("create-exists", "POST", NS, cm("hw-a"), accept=JSON),
    case("create-yaml", "POST", NS, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hw-yaml\ndata:\n  a: '1'\n",
         accept=JSON, content_type=YAML),
    case("create-undecodable", "POST", NS, "{not json", accept=JSON),
    case("create-wrong-kind", "POST", NS, json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hw-s"}}), accept=JSON),
    case("create-wrong-version", "POST", NS, json.dumps({"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "hw-v"}}), accept=JSON),
    case("create-other-group", "POST", NS, json.dumps({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "hw-g"}}), accept=JSON),
    case("create-no-kind", "POST", NS, json.dumps({"apiVersion": "v1", "metadata": {"name": "hw-k"}}), accept=JSON),
    case("create-text-plain", "POST", NS, cm("hw-t"), accept=JSON, content_type="text/plain"),
    case("create-no-content-type", "POST", NS, cm("hw-n"), accept=JSON, content_type=""),
    case("create-bad-name", "POST", NS, cm("Bad_Name"), accept=JSON),
    case("create-no-name", "POST", NS, json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}), accept=JSON),
    case("create-generate-name", "POST", NS, json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "Bad_"}}), accept=JSON),
    case("create-bad-key", "POST", NS, cm("hw-key", {"a b": "1"}), accept=JSON),
    case("create-namespace-mismatch", "POST", NS, cm("hw-ns", namespace="other"), accept=JSON),
    case("create-dry-run", "POST", f"{NS}?dryRun=All", cm("hw-dry"), accept=JSON),
    case("create-dry-run-then-get", "GET", f"{NS}/hw-dry", accept=JSON),
    case("create-dry-run-bad", "POST", f"{NS}?dryRun=Sometimes", cm("hw-dry2"), accept=JSON),
    case("create-strict-unknown-field", "POST", f"{NS}?fieldValidation=Strict",
         json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hw-strict"}, "spec": {}}), accept=JSON),
    case("create-strict-duplicate-field", "POST", f"{NS}?fieldValidation=Strict",
         '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hw-dup"}, "data": {"a": "1"}, "data": {"b": "2"}}', accept=JSON),
    case("create-warn-unknown-field", "POST", f"{NS}?fieldValidation=Warn",
         json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hw-warn"}, "spec": {}}), accept=JSON),
    case("create-ignore-unknown-field", "POST", f"{NS}?fieldValidation=Ignore",
         json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hw-ignore"}, "spec": {}}), accept=JSON),
    case("create-field-validation-bad", "POST", f"{NS}?fieldValidation=Loud", cm("hw-loud"), accept=JSON),
    case("create-field-manager-long", "POST", f"{NS}?fieldManager=" + "m" * 130, cm("hw-fm"), accept=JSON),
    case("create-owner-refs-duplicate", "POST", NS, cm("hw-own", ownerReferences=[
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "hw-a", "uid": "1e0bb7b4-8d56-4e4b-9b36-2c0f8b0a8e8d"},
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "hw-a", "uid": "1e0bb7b4-8d56-4e4b-9b36-2c0f8b0a8e8d"}]), accept=JSON),
    case("create-two-faults-type-and-dry-run", "POST", f"{NS}?dryRun=Sometimes", cm("hw-2f"), accept=JSON, content_type="text/plain"),
    case("create-two-faults-accept-and-body", "POST", NS, "{not json", accept="text/html"),
    case("create-two-faults-options-and-body", "POST", f"{NS}?fieldValidation=Loud", "{not json", accept=JSON),
    case("create-on-name", "POST", f"{NS}/hw-a", cm("hw-a"), accept=JSON),
    case("create-table-accept", "POST", NS, cm("hw-tbl"), accept=TABLE),
    # -- update -------------------------------------------------------------------------------------------
    case("update-unconditional", "PUT", f"{NS}/hw-b", cm("hw-b", {"x": "z"}), accept=JSON),
    case("update-stale-rv", "PUT", f"{NS}/hw-b", cm("hw-b", {"x": "w"}, resourceVersion="1"), accept=JSON),
    case("update-name-mismatch", "PUT", f"{NS}/hw-b", cm("hw-other"), accept=JSON),
    case("update-missing", "PUT", f"{NS}/hw-missing", cm("hw-missing"), accept=JSON),
    case("update-undecodable", "PUT", f"{NS}/hw-b", "{not json", accept=JSON),
    case("update-text-plain", "PUT", f"{NS}/hw-b", cm("hw-b"), accept=JSON, content_type="text/plain"),
    case("update-bad-key", "PUT", f"{NS}/hw-b", cm("hw-b", {"a b": "1"}), accept=JSON),
    case("update-dry-run", "PUT", f"{NS}/hw-b?dryRun=All", cm("hw-b", {"x": "dry"}), accept=JSON),
    case("update-two-faults-options-and-type", "PUT", f"{NS}/hw-b?fieldValidation=Loud", cm("hw-b"), accept=JSON,
         content_type="text/plain"),
    case("update-two-faults-accept-and-name", "PUT", f"{NS}/hw-b", cm("hw-other"), accept="text/html"),
    case("update-collection", "PUT", NS, cm("hw-b"), accept=JSON),
    # -- patch --------------------------------------------------------------------------------------------
    case("patch-merge", "PATCH", f"{NS}/hw-b", '{"data":{"m":"1"}}', accept=JSON, content_type=MERGE),
    case("patch-strategic", "PATCH", f"{NS}/hw-b", '{"data":{"s":"1"}}', accept=JSON, content_type=STRATEGIC),
    case("patch-json", "PATCH", f"{NS}/hw-b", '[{"op":"add","path":"/data/j","value":"1"}]', accept=JSON, content_type=JSONPATCH),
    case("patch-json-test-fails", "PATCH", f"{NS}/hw-b", '[{"op":"test","path":"/data/j","value":"2"}]', accept=JSON, content_type=JSONPATCH),
    case("patch-json-bad-path", "PATCH", f"{NS}/hw-b", '[{"op":"remove","path":"/data/nope"}]', accept=JSON, content_type=JSONPATCH),
    case("patch-json-not-a-list", "PATCH", f"{NS}/hw-b", '{"op":"add"}', accept=JSON, content_type=JSONPATCH),
    case("patch-merge-undecodable", "PATCH", f"{NS}/hw-b", "{not json", accept=JSON, content_type=MERGE),
    case("patch-result-invalid", "PATCH", f"{NS}/hw-b", '{"data":{"a b":"1"}}', accept=JSON, content_type=MERGE),
    case("patch-result-wrong-type", "PATCH", f"{NS}/hw-b", '{"data":"x"}', accept=JSON, content_type=MERGE),
    case("patch-missing", "PATCH", f"{NS}/hw-missing", '{"data":{"m":"1"}}', accept=JSON, content_type=MERGE),
    case("patch-json-type", "PATCH", f"{NS}/hw-b", '{"data":{"m":"2"}}', accept=JSON, content_type=JSON),
    case("patch-text-plain", "PATCH", f"{NS}/hw-b", '{"data":{"m":"2"}}', accept=JSON, content_type="text/plain"),
    case("patch-apply", "PATCH", f"{NS}/hw-b?fieldManager=me", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hw-b\ndata:\n  ap: '1'\n",
         accept=JSON, content_type="application/apply-patch+yaml"),
    case("patch-dry-run", "PATCH", f"{NS}/hw-b?dryRun=All", '{"data":{"d":"1"}}', accept=JSON, content_type=MERGE),
    case("patch-rv-stale", "PATCH", f"{NS}/hw-b", '{"metadata":{"resourceVersion":"1"},"data":{"r":"1"}}', accept=JSON, content_type=MERGE),
    case("patch-name-change", "PATCH", f"{NS}/hw-b", '{"metadata":{"name":"hw-c"}}', accept=JSON, content_type=MERGE),
    case("patch-two-faults-type-and-accept", "PATCH", f"{NS}/hw-b", '{"data":{"m":"2"}}', accept="text/html", content_type="text/plain"),
    case("patch-two-faults-accept-and-options", "PATCH", f"{NS}/hw-b?fieldValidation=Loud", '{"data":{"m":"2"}}', accept="text/html",
         content_type=MERGE),
    case("patch-force-without-apply", "PATCH", f"{NS}/hw-b?force=true", '{"data":{"m":"2"}}', accept=JSON, content_type=MERGE),
    # -- delete -------------------------------------------------------------------------------------------
    case("delete-dry-run", "DELETE", f"{NS}/hw-b?dryRun=All", accept=JSON),
    case("delete-precondition-uid", "DELETE", f"{NS}/hw-b", json.dumps({"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}), accept=JSON),
    case("delete-propagation-bad", "DELETE", f"{NS}/hw-b", json.dumps({"propagationPolicy": "Sometimes"}), accept=JSON),
    case("delete-grace-negative", "DELETE", f"{NS}/hw-b?gracePeriodSeconds=-1", accept=JSON),
    case("delete-body-undecodable", "DELETE", f"{NS}/hw-b", "{not json", accept=JSON),
    case("delete-body-wrong-kind", "DELETE", f"{NS}/hw-b", json.dumps({"kind": "ConfigMap", "apiVersion": "v1"}), accept=JSON),
    case("delete-missing", "DELETE", f"{NS}/hw-missing", accept=JSON),
    case("delete-two-faults-accept-and-missing", "DELETE", f"{NS}/hw-missing", accept="text/html"),
    case("delete", "DELETE", f"{NS}/hw-b", accept=JSON),
    case("delete-again", "DELETE", f"{NS}/hw-b", accept=JSON),
    case("deletecollection-label", "DELETE", f"{NS}?labelSelector=app%3Dnone", accept=JSON),
    case("deletecollection-bad-label", "DELETE", f"{NS}?labelSelector=app%20in", accept=JSON),
    case("deletecollection-dry-run", "DELETE", f"{NS}?dryRun=All&labelSelector=app%3Dweb", accept=JSON),
    # -- paths and methods --------------------------------------------------------------------------------
    case("method-not-allowed-post-item", "POST", f"{NS}/hw-a", accept=JSON),
    case("unknown-resource", "GET", "/api/v1/namespaces/default/nonsense", accept=JSON),
    case("unknown-group", "GET", "/apis/nonsense.example/v1", accept=JSON),
    case("unknown-version", "GET", "/api/v9", accept=JSON),
    case("unknown-path", "GET", "/nonsense", accept=JSON),
    case("namespace-bad", "GET", "/api/v1/namespaces/Bad_NS/configmaps", accept=JSON),
    case("namespace-missing", "POST", "/api/v1/namespaces/hw-nowhere/configmaps", cm("hw-x"), accept=JSON),
    case("healthz", "GET", "/healthz"),
    case("healthz-ping", "GET", "/healthz/ping"),
    case("healthz-unknown", "GET", "/healthz/nonsense"),
    case("livez-verbose-excluded", "GET", "/livez?exclude=nonsense"),
    case("version", "GET", "/version", accept=JSON),
    case("api", "GET", "/api", accept=JSON),
    case("api-v1", "GET", "/api/v1", accept=JSON),
    case("apis-authentication", "GET", "/apis/authentication.k8s.io/v1", accept=JSON),
    case("selfsubjectreview", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
         json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}), accept=JSON),
    case("selfsubjectaccessreview", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
         json.dumps({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                     "spec": {"resourceAttributes": {"verb": "get", "resource": "configmaps", "namespace": "default"}}}), accept=JSON),
    case("selfsubjectaccessreview-empty", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
         json.dumps({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {}}), accept=JSON),
    case("delete-all", "DELETE", NS, accept=JSON),
]

assert len({c["id"] for c in CASES}) == len(CASES)

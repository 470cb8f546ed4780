"""The REST verbs check a request in Go's order: a request with two faults gets the status code
kube-apiserver gives it. No recorded kube-apiserver corpus covers these, so each case cites the
Go lines (k8s.io/apiserver v0.36.0, pkg/endpoints/handlers/) whose order decides it.

Also the steps of rest.go the verbs share: ``AcceptsGroupVersion``'s text, and
``dedupOwnerReferencesAndAddWarning``."""

from __future__ import annotations

import dataclasses
import json

import pytest
from werkzeug.test import Client

from genericserver import sampleapi
from genericserver.cluster.apiserver import DEPLOYMENTS
from genericserver.apigroups import APIGroups
from genericserver.endpoints.handlers.rest import DUPLICATE_OWNER_REFERENCES_WARNING_FORMAT, RequestScope, dedup_owner_references
from genericserver.mux import PathRecorderMux
from genericserver.registry.generic.registry.store import Store
from genericserver.registry.rest.rest import ALL_VERBS
from genericserver.endpoints.filters.warning import with_warning_recorder  # the chain's: warnings as headers

NS = "/api/v1/namespaces/ns/configmaps"
HTML = {"Accept": "text/html"}  # nothing the server can write: 406
TOO_BIG = b"{" + b" " * (3 * 1024 * 1024) + b"}"  # over --max-request-body-bytes: 413


@pytest.fixture
def c():
    mux = PathRecorderMux("test")
    sampleapi.install(mux, sampleapi.Store())
    client = Client(with_warning_recorder(mux))
    assert client.post(NS, json={"metadata": {"name": "a"}}).status_code == 201
    return client


def answer(r) -> tuple[int, str]:
    return r.status_code, json.loads(r.data).get("reason", "") if r.data.startswith(b"{") else ""


# (verb, request, what Go answers, the Go lines that decide it)
CASES = [
    # get.go:68 negotiates the output before get.go:74 calls the getter
    ("get", lambda c: c.get(NS + "/missing", headers=HTML), (406, "NotAcceptable")),
    # get.go:178 negotiates before get.go:183 reads the list options
    ("list", lambda c: c.get(NS + "?labelSelector=!!!", headers=HTML), (406, "NotAcceptable")),
    ("list-422", lambda c: c.get(NS + "?resourceVersionMatch=Exact", headers=HTML), (406, "NotAcceptable")),
    # get.go:202-217: the parameters decode (a selector that does not parse: 400) before ValidateListOptions (422)
    ("list-decode", lambda c: c.get(NS + "?labelSelector=!!!&resourceVersionMatch=Exact"), (400, "BadRequest")),
    # watch: the same lines, with watch=1
    ("watch", lambda c: c.get(NS + "?watch=1&labelSelector=!!!", headers=HTML), (406, "NotAcceptable")),
    # create.go:88 (the input serializer, 415) before create.go:109 (the options, 422)
    ("create", lambda c: c.post(NS + "?dryRun=bogus", data=b"x", headers={"Content-Type": "text/plain"}), (415, "UnsupportedMediaType")),
    # create.go:94 (the body, 413) before create.go:109 (the options, 422)
    ("create-413", lambda c: c.post(NS + "?dryRun=bogus", data=TOO_BIG, headers={"Content-Type": "application/json"}),
     (413, "RequestEntityTooLarge")),
    # update.go:78 (the body, 413) before update.go:92 (the options, 422)
    ("update", lambda c: c.put(NS + "/a?dryRun=bogus", data=TOO_BIG, headers={"Content-Type": "application/json"}),
     (413, "RequestEntityTooLarge")),
    # update.go:92 (the options, 422) before update.go:99 (the input serializer, 415)
    ("update-422", lambda c: c.put(NS + "/a?dryRun=bogus", data=b"x", headers={"Content-Type": "text/plain"}), (422, "Invalid")),
    # patch.go:87 (the patch type, 415) before patch.go:104 (the output, 406)
    ("patch", lambda c: c.patch(NS + "/a", data=b"{}", headers={"Content-Type": "text/plain", **HTML}), (415, "UnsupportedMediaType")),
    # patch.go:110 (the body, 413) before patch.go:124 (the options, 422)
    ("patch-413", lambda c: c.patch(NS + "/a?dryRun=bogus", data=TOO_BIG, headers={"Content-Type": "application/merge-patch+json"}),
     (413, "RequestEntityTooLarge")),
    # delete.go:80 (the output, 406) before delete.go:131 (the options, 422); and before the store (404)
    ("delete", lambda c: c.delete(NS + "/missing?propagationPolicy=bogus", headers=HTML), (406, "NotAcceptable")),
    # delete.go:236-243 (the list options: 400, 422) before delete.go:306 (the delete options, 422)
    ("deletecollection", lambda c: c.delete(NS + "?labelSelector=!!!&propagationPolicy=bogus"), (400, "BadRequest")),
]


@pytest.mark.parametrize("verb, send, want", CASES, ids=[case[0] for case in CASES])
def test_a_request_with_two_faults_gets_the_answer_of_the_check_go_makes_first(c, verb, send, want):
    assert answer(send(c)) == want


@pytest.fixture
def deployments():
    deploy = dataclasses.replace(DEPLOYMENTS, verbs=ALL_VERBS)  # the cluster's serves no create: a generic store's does
    mux = PathRecorderMux("test")
    APIGroups(mux).install_api_group("apps", {"v1": [RequestScope(deploy, Store(deploy))]})
    return Client(with_warning_recorder(mux))


DEPLOY = "/apis/apps/v1/namespaces/ns/deployments"


@pytest.mark.parametrize("api_version, message", [
    # create.go:144-148: it decodes (apps/v1beta2 is registered for the kind), then AcceptsGroupVersion says no
    ("apps/v1beta2", "the API version in the data (apps/v1beta2) does not match the expected API version (apps/v1)"),
    ("apps/v1beta1", "the API version in the data (apps/v1beta1) does not match the expected API version (apps/v1)"),
    # a version the scheme does not know fails in the decoder (transformDecodeError)
    ("apps/v2", 'Deployment in version "v2" cannot be handled as a Deployment: no kind "Deployment" is registered for '
                'version "apps/v2" in scheme "pkg/runtime/scheme.go:111"'),
])
def test_a_body_in_another_version_of_the_kind_is_turned_down_with_gos_text(deployments, api_version, message):
    body = {"apiVersion": api_version, "kind": "Deployment", "metadata": {"name": "d"}}
    for r in (deployments.post(DEPLOY, json=body), deployments.put(DEPLOY + "/d", json=body)):
        assert (r.status_code, json.loads(r.data)["message"]) == (400, message)


def test_repeated_owner_references_are_dropped_with_gos_warning(c):
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u-1"}
    other = {**ref, "name": "q"}  # the same uid, another reference: kept
    r = c.post(NS, json={"metadata": {"name": "owned", "ownerReferences": [ref, other, ref, ref]}})
    assert r.status_code == 201
    assert json.loads(r.data)["metadata"]["ownerReferences"] == [ref, other]
    warning = DUPLICATE_OWNER_REFERENCES_WARNING_FORMAT.format("u-1, u-1")
    assert r.headers.getlist("Warning") == [f'299 - "{warning}"']
    assert warning.endswith("duplicate UID(s) observed: u-1, u-1") and warning.startswith(".metadata.ownerReferences contains duplicate entries; ")
    # a patch dedups after mutating admission only: the other text
    p = c.patch(NS + "/a", data=json.dumps({"metadata": {"ownerReferences": [ref, ref]}}),
                headers={"Content-Type": "application/merge-patch+json"})
    assert p.status_code == 200
    assert json.loads(p.data)["metadata"]["ownerReferences"] == [ref]
    assert p.headers.getlist("Warning") == [
        '299 - ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner '
        'references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: u-1"']


def test_dedup_owner_references_keeps_the_first_of_equal_ones():
    a, b = {"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}
    assert dedup_owner_references([a, b, dict(a), b, {"uid": "1", "name": "c"}]) == ([a, b, {"uid": "1", "name": "c"}], ["1", "2"])
    assert dedup_owner_references([]) == ([], [])

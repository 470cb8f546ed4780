"""Tests of genericserver.registry.generic.registry.store through serve's configmaps: what kube-apiserver v1.36.0 answers, exchange by exchange.

Every expected answer here was sent by kube-apiserver v1.36.0 to the same request (reference/pair.py,
one fresh namespace per sequence): the finalizers that hold a deleted ConfigMap, the garbage
collector's two that ``propagationPolicy`` adds, ``immutable``, the uid of a PUT's body as a
precondition, a resourceVersion on a create or one that does not parse, a DELETE's query
preconditions, and what a dry run of each leaves.
"""

from __future__ import annotations

import json
import logging
import re

import pytest
from test_sampleapi import NS, cm, setup

MERGE = "application/merge-patch+json"
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")


def body(r) -> dict:
    return json.loads(r.data)


def patch(c, path: str, doc, content_type: str = MERGE):
    return c.patch(path, data=json.dumps(doc), content_type=content_type)


def test_a_finalizer_holds_a_deleted_configmap_until_an_update_takes_the_last_one_off():
    _, store, c = setup()
    c.post(NS, json=cm("a", finalizers=["example.com/x"]))
    r = c.delete(NS + "/a")
    assert r.status_code == 200  # the object, kept: markAsDeleting
    kept = body(r)
    assert kept["kind"] == "ConfigMap" and kept["metadata"]["finalizers"] == ["example.com/x"]
    assert TIME.match(kept["metadata"]["deletionTimestamp"]) and kept["metadata"]["deletionGracePeriodSeconds"] == 0
    assert body(c.get(NS + "/a")) == kept
    assert body(c.delete(NS + "/a")) == kept  # again: nothing changes, not even the resourceVersion
    r = patch(c, NS + "/a", {"metadata": {"finalizers": ["example.com/x", "example.com/y"]}})
    assert r.status_code == 422
    assert body(r)["message"] == ('ConfigMap "a" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the '
                                  'object is being deleted, found new finalizers []string{"example.com/y"}')
    assert patch(c, NS + "/a", {"data": {"k": "v"}}).status_code == 200  # other changes are fine
    r = patch(c, NS + "/a", {"metadata": {"finalizers": None}})
    assert r.status_code == 200 and "finalizers" not in body(r)["metadata"]  # the object as updated, and gone
    assert c.get(NS + "/a").status_code == 404
    assert [typ for _, typ, _ in store._history][-4:] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]
    # a watch's DELETED shows the object as it was stored last, finalizer and all (etcd's previous value)
    assert store._history[-1][2]["metadata"]["finalizers"] == ["example.com/x"]


def test_what_the_system_owns_of_a_new_objects_metadata_is_never_the_clients():
    _, _, c = setup()
    r = c.post(NS, json=cm("a", uid="u", creationTimestamp="2001-01-01T00:00:00Z", deletionTimestamp="2001-01-01T00:00:00Z",
                           deletionGracePeriodSeconds=3, selfLink="/x"))
    meta = body(r)["metadata"]
    assert meta["uid"] == "uid-1" and meta["creationTimestamp"] != "2001-01-01T00:00:00Z"
    assert not {"deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} & set(meta)
    # nor is a selfLink stored by an update (etcd3's PrepareObjectForStorage)
    assert "selfLink" not in body(c.put(NS + "/a", json=cm("a", selfLink="/x")))["metadata"]


def test_a_new_configmap_of_the_name_of_one_being_deleted():
    _, _, c = setup()
    c.post(NS, json=cm("a", finalizers=["example.com/x"]))
    c.delete(NS + "/a")
    r = c.post(NS, json=cm("a"))
    assert r.status_code == 409
    assert body(r)["message"] == 'object is being deleted: configmaps "a" already exists'


@pytest.mark.parametrize("query,options,finalizers,code", [
    ("?propagationPolicy=Foreground", None, ["foregroundDeletion"], 200),
    ("", {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"}, ["orphan"], 200),
    ("?orphanDependents=true", None, ["orphan"], 200),
], ids=["foreground", "orphan-body", "orphan-dependents"])
def test_propagation_adds_the_garbage_collectors_finalizer_and_keeps_the_configmap(query, options, finalizers, code):
    _, _, c = setup()
    c.post(NS, json=cm("a"))
    r = c.delete(NS + "/a" + query, **({"json": options} if options else {}))
    assert r.status_code == code
    assert body(r)["metadata"]["finalizers"] == finalizers
    # a later delete that asks for neither takes the finalizer off, and the configmap goes
    r = c.delete(NS + "/a", json={"orphanDependents": False})
    assert r.status_code == 200 and body(r)["kind"] == "Status"
    assert c.get(NS + "/a").status_code == 404


def test_a_configmap_kept_by_its_finalizer_with_orphan_dependents_false_is_202():
    _, _, c = setup()
    c.post(NS, json=cm("a", finalizers=["example.com/x"]))
    r = c.delete(NS + "/a", json={"orphanDependents": False})
    assert r.status_code == 202 and body(r)["metadata"]["finalizers"] == ["example.com/x"]


def test_a_dry_run_delete_changes_nothing():
    _, _, c = setup()
    c.post(NS, json=cm("a", finalizers=["example.com/x"]))
    r = c.delete(NS + "/a?dryRun=All")
    assert r.status_code == 200 and TIME.match(body(r)["metadata"]["deletionTimestamp"])
    assert "deletionTimestamp" not in body(c.get(NS + "/a"))["metadata"]
    # the finalizer orphan dropped by Background: deleted at once, and Go answers the empty object
    # its dry-run update left
    c.post(NS, json=cm("b", finalizers=["orphan"]))
    r = c.delete(NS + "/b?propagationPolicy=Background&dryRun=All")
    assert r.status_code == 200 and body(r) == {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {}}
    assert c.get(NS + "/b").status_code == 200


def test_an_immutable_configmap_refuses_a_change_of_its_data_or_its_flag():
    _, _, c = setup()
    c.post(NS, json={**cm("a", {"x": "1"}), "immutable": True})
    r = c.put(NS + "/a", json={**cm("a", {"x": "2"}), "immutable": True})
    assert r.status_code == 422
    assert body(r) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'ConfigMap "a" is invalid: data: Forbidden: field is immutable when `immutable` is set', "reason": "Invalid",
        "details": {"name": "a", "kind": "ConfigMap", "causes": [
            {"reason": "FieldValueForbidden", "message": "Forbidden: field is immutable when `immutable` is set", "field": "data"}]},
        "code": 422}
    r = patch(c, NS + "/a", {"immutable": None})
    assert body(r)["message"] == 'ConfigMap "a" is invalid: immutable: Forbidden: field is immutable when `immutable` is set'
    assert patch(c, NS + "/a?dryRun=All", {"data": {"x": "9"}}, "application/strategic-merge-patch+json").status_code == 422
    assert patch(c, NS + "/a", {"metadata": {"labels": {"l": "v"}}}).status_code == 200  # the metadata may change


def test_invalid_metadata_on_create_and_on_update():
    _, store, c = setup()
    r = c.post(NS + "?dryRun=All", json=cm("a", labels={"a": "b c"}))
    assert r.status_code == 422 and [x["field"] for x in body(r)["details"]["causes"]] == ["metadata.labels"]
    c.post(NS, json=cm("a"))
    r = c.put(NS + "/a", json=cm("a", ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "p"}]))
    # validateCommonFields (as new and as updated), ValidateConfigMapUpdate's ValidateObjectMetaUpdate and its
    # ValidateConfigMap each say it: four causes, one message
    assert body(r)["message"] == 'ConfigMap "a" is invalid: metadata.ownerReferences.uid: Invalid value: "": must not be empty'
    assert len(body(r)["details"]["causes"]) == 4
    r = c.post(NS, json={**cm("b"), "data": {"k": "1"}, "binaryData": {"k": "AA=="}})
    assert body(r)["message"] == 'ConfigMap "b" is invalid: data[k]: Invalid value: "k": duplicate of key present in binaryData'


def test_the_uid_of_a_put_is_a_precondition():
    _, _, c = setup()
    uid = body(c.post(NS, json=cm("a")))["metadata"]["uid"]
    r = c.put(NS + "/a", json=cm("a", uid="wrong"))
    assert r.status_code == 409
    assert body(r)["message"] == ('Operation cannot be fulfilled on configmaps "a": StorageError: invalid object, Code: 4, Key: '
                                  '/registry/configmaps/ns/a, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in '
                                  f'precondition: wrong, UID in object meta: {uid}')
    # a dry run never reaches etcd: the key is the registry's, without etcd's prefix
    assert "Key: /configmaps/ns/a," in body(c.put(NS + "/a?dryRun=All", json=cm("a", uid="wrong")))["message"]
    assert c.put(NS + "/b", json=cm("b", uid="wrong")).status_code == 404  # not found first
    r = patch(c, NS + "/a", {"metadata": {"uid": "wrong"}})  # a patch has no precondition: the uid is immutable
    assert body(r)["message"] == 'ConfigMap "a" is invalid: metadata.uid: Invalid value: "wrong": field is immutable'


def test_resource_versions_on_create_and_update(caplog):
    caplog.set_level(logging.CRITICAL)
    _, _, c = setup()
    r = c.post(NS, json=cm("a", resourceVersion="5"))
    assert r.status_code == 500
    assert body(r) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": "resourceVersion should not be set on objects to be created", "code": 500}
    assert c.post(NS + "?dryRun=All", json=cm("a", resourceVersion="5")).status_code == 201  # etcd never sees it
    assert c.post(NS, json=cm("a", resourceVersion="abc")).status_code == 201  # what does not parse is dropped
    r = c.put(NS + "/a", json=cm("a", resourceVersion="abc"))
    assert r.status_code == 500 and body(r)["message"] == 'strconv.ParseUint: parsing "abc": invalid syntax'
    r = patch(c, NS + "/a", {"metadata": {"resourceVersion": "1"}})
    assert r.status_code == 409


def test_a_deletes_query_names_preconditions_and_a_deletecollection_holds_each_object_to_them():
    _, _, c = setup()
    rv = body(c.post(NS, json=cm("a")))["metadata"]["resourceVersion"]
    r = c.delete(NS + "/a?uid=x")
    assert body(r)["message"] == ('Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (x) does not match '
                                  'the UID in record (uid-1). The object might have been deleted and then recreated')
    r = c.delete(NS + "?resourceVersion=0&resourceVersionMatch=NotOlderThan")
    assert r.status_code == 409
    assert body(r)["message"] == (f'Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion in the precondition (0) does '
                                  f'not match the ResourceVersion in record ({rv}). The object might have been modified')
    assert c.get(NS + "/a").status_code == 200
    assert c.delete(NS + f"/a?resourceVersion={rv}").status_code == 200


def test_a_generated_name_cuts_its_prefix_to_58():
    _, _, c = setup()
    r = c.post(NS, json={"metadata": {"generateName": "b" * 250}})
    assert r.status_code == 201 and re.fullmatch("b{58}[bcdfghjklmnpqrstvwxz2456789]{5}", body(r)["metadata"]["name"])


@pytest.mark.parametrize("name, shown, why", [("..", "..", "may not be '..'"), (".", ".", "may not be '.'"),
                                              ("a%25b", "a%b", "may not contain '%'")])
@pytest.mark.parametrize("method", ["GET", "DELETE", "PATCH", "PUT"])
def test_a_name_no_path_segment_may_be_is_400_before_the_store_is_read(method, name, shown, why):
    # kube-apiserver v1.36.0's answers, each sent live to the same request: the generic store's
    # key function refuses the name before it reads, writes or finds nothing (404 before the port)
    _, _, c = setup()
    kw = {}
    if method == "PATCH":
        kw = dict(data='{"data":{"a":"b"}}', content_type=MERGE)
    elif method == "PUT":
        kw = dict(json=cm(shown))
    r = c.open(f"{NS}/{name}", method=method, **kw)
    assert (r.status_code, body(r)["reason"], body(r)["message"]) == (
        400, "BadRequest", f'Name parameter invalid: "{shown}": {why}')


def test_a_field_error_quotes_a_control_character_as_go_s_percent_q():
    # kube-apiserver v1.36.0's answer to the same create (the generated corpus): strconv.Quote
    # writes \x01 where JSON's quoting writes \u0001
    _, _, c = setup()
    r = c.post(NS + "?fieldManager=bad%01", json=cm("a", data={}))
    assert r.status_code == 422
    assert body(r)["details"]["causes"] == [{"field": "fieldManager", "reason": "FieldValueInvalid",
                                             "message": 'Invalid value: "bad\\x01": invalid character U+0001 (at position 3)'}]


def test_a_warning_goes_out_with_the_error_that_follows_it():
    # kube-apiserver v1.36.0's answer to the same create, live: the 422 of the owner reference's
    # empty fields carries the decoder's warning (WithWarningRecorder writes it on any answer)
    _, _, c = setup()
    r = c.post(NS + "?fieldValidation=Warn", data='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w8",'
                                                  '"ownerReferences":[{"foo":1}]}}', content_type="application/json")
    assert r.status_code == 422 and body(r)["reason"] == "Invalid"
    assert r.headers.getlist("Warning") == ['299 - "unknown field \\"metadata.ownerReferences[0].foo\\""']


def test_an_empty_partial_object_metadata_list_has_items_null():
    # kube-apiserver v1.36.0's answer (the generated corpus): Go's nil slice of items, as JSON null
    _, _, c = setup()
    accept = {"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"}
    r = c.get(NS, headers=accept)
    assert r.status_code == 200 and body(r)["kind"] == "PartialObjectMetadataList" and body(r)["items"] is None
    c.post(NS, json=cm("a"))
    assert [i["metadata"]["name"] for i in body(c.get(NS, headers=accept))["items"]] == ["a"]


@pytest.mark.parametrize("kind, why", [
    # kube-apiserver v1.36.0's answers (the generated corpus, and asked live): a kind its scheme
    # does not have is not registered; one it has (a Secret) cannot be converted to a ConfigMap
    ("configmap", 'no kind "configmap" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"'),
    ("Secret", "converting (v1.Secret) to (core.ConfigMap): unknown conversion"),
])
def test_a_body_of_another_kind_is_refused_as_kube_s_scheme_refuses_it(kind, why):
    _, _, c = setup()
    r = c.post(NS, json={"apiVersion": "v1", "kind": kind, "metadata": {"name": "b"}})
    assert (r.status_code, body(r)["message"]) == (400, f'{kind} in version "v1" cannot be handled as a ConfigMap: {why}')


# -- what a read hands out: a copy the store shares nothing with (converter.py's DeepCopyJSONValue) ---
def test_a_read_shares_nothing_with_the_store():
    _, store, c = setup()
    c.post(NS, json=cm("a", data={"k": "v"}, finalizers=["example.com/x"]))
    for read in (lambda: store.get("ns", "a"), lambda: store.list("ns")[0][0]):
        got = read()
        got["data"]["k"] = "changed"
        got["metadata"]["finalizers"].append("example.com/y")
        assert body(c.get(NS + "/a"))["data"] == {"k": "v"}
        assert body(c.get(NS + "/a"))["metadata"]["finalizers"] == ["example.com/x"]

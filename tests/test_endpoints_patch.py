"""PATCH as Go's patch.go answers it: the three patch types, and each way a patch is refused."""

from __future__ import annotations

import json

import pytest
from werkzeug.test import Client

from genericserver import sampleapi
from genericserver.mux import PathRecorderMux
from genericserver.endpoints.filters.warning import with_warning_recorder  # the chain's: warnings as headers

NS = "/api/v1/namespaces/ns/configmaps"
MERGE, JSONP, SMP = "application/merge-patch+json", "application/json-patch+json", "application/strategic-merge-patch+json"


@pytest.fixture
def setup():
    mux = PathRecorderMux("test")
    store = sampleapi.install(mux)
    c = Client(with_warning_recorder(mux))
    assert c.post(NS, json={"metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v"}}).status_code == 201
    return store, c


def patch(c, body, content_type, path=NS + "/a", query=""):
    return c.patch(path + query, data=body if isinstance(body, (str, bytes)) else json.dumps(body), content_type=content_type)


@pytest.mark.parametrize("content_type, body, data", [
    (MERGE, {"data": {"k": None, "n": "1"}}, {"n": "1"}),
    (JSONP, [{"op": "add", "path": "/data/n", "value": "1"}], {"k": "v", "n": "1"}),
    (SMP, {"data": {"n": "1"}}, {"k": "v", "n": "1"}),
])
def test_each_patch_type_applies_and_bumps_the_version(setup, content_type, body, data):
    store, c = setup
    r = patch(c, body, content_type)
    assert r.status_code == 200
    obj = json.loads(r.data)
    assert obj["data"] == data and obj["metadata"]["labels"] == {"x": "1"}
    assert obj["metadata"]["resourceVersion"] == "3"


def test_an_unknown_patch_type_is_415_listing_the_three(setup):
    _, c = setup
    r = patch(c, "{}", "application/apply-patch+yaml")
    assert r.status_code == 415
    assert json.loads(r.data)["message"] == (
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, "
        "application/merge-patch+json, application/strategic-merge-patch+json")


@pytest.mark.parametrize("content_type, body, code, message", [
    (JSONP, [{"op": "test", "path": "/data/k", "value": "other"}], 422, "the server rejected our request due to an error in our request"),
    (JSONP, [{"op": "remove", "path": "/data/missing"}], 422, "the server rejected our request due to an error in our request"),
    (JSONP, "not json", 400, "error decoding patch: invalid character 'o' in literal null (expecting 'u')"),
    (MERGE, "[1]", 400, "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"),
    (SMP, {"metadata": {"name": "b"}}, 400, "the name of the object (b) does not match the name on the URL (a)"),
    (SMP, {"metadata": {"namespace": "other"}}, 400, "the namespace of the provided object does not match the namespace sent on the request"),
    (MERGE, {"metadata": {"resourceVersion": "1"}}, 409,
     'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again'),
    (SMP, {"data": {"bad key": "x"}}, 422, None),
    # patch.go passes mergepatch.ErrBadPatchType on as it is: kube-apiserver v1.36.0 answers 500
    (SMP, {"$patch": "explode"}, 500, "unknown patch type: explode in map: map[$patch:explode]"),
    (SMP, {"data": {"$patch": "frob"}}, 500, "unknown patch type: frob in map: map[$patch:frob]"),
    (SMP, {"$patch": 1}, 500, "unknown patch type: %!s(int64=1) in map: map[$patch:1]"),
])
def test_a_refused_patch_changes_nothing(setup, content_type, body, code, message):
    store, c = setup
    before = store.get("ns", "a")
    r = patch(c, body, content_type)
    assert r.status_code == code
    if message is not None:
        assert json.loads(r.data)["message"] == message
    assert store.get("ns", "a") == before


# what kube-apiserver v1.36.0 answered each (reference/pair.py): with the default directive (Warn)
# or Strict, applyJSPatch decodes a JSON or merge patch itself first, into []jsonPatchOp or a map
# (patch.go:389-426), and prefixes what it refuses with "error decoding patch: "; with Ignore the
# patch libraries' own decoding speaks (jsonpatch.DecodePatch, MergePatch's ErrBadJSONPatch)
@pytest.mark.parametrize("content_type, body, query, message", [
    (JSONP, '{"op":"add"}', "", "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"),
    (JSONP, "[1]", "", "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp"),
    (JSONP, '[{"op":1}]', "", "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"),
    (JSONP, "not json", "?fieldValidation=Ignore", "invalid character 'o' in literal null (expecting 'u')"),
    (JSONP, '{"op":"add"}', "?fieldValidation=Ignore", "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
    (MERGE, "{not json", "", "error decoding patch: invalid character 'n' looking for beginning of object key string"),
    (MERGE, "{not json", "?fieldValidation=Strict", "error decoding patch: invalid character 'n' looking for beginning of object key string"),
    (MERGE, "1", "", "error decoding patch: json: cannot unmarshal number into Go value of type map[string]interface {}"),
    (MERGE, "null", "", "Invalid JSON Patch"),
    (MERGE, "{not json", "?fieldValidation=Ignore", "Invalid JSON Patch"),
    (SMP, "{not json", "", "invalid character 'n' looking for beginning of object key string"),
    (SMP, "[1]", "", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
])
def test_a_patch_that_does_not_decode_is_400_with_gos_decoders_text(setup, content_type, body, query, message):
    store, c = setup
    before = store.get("ns", "a")
    r = patch(c, body, content_type, query=query)
    assert (r.status_code, json.loads(r.data)["message"]) == (400, message)
    assert store.get("ns", "a") == before


def test_a_patch_of_a_missing_object_is_404(setup):
    _, c = setup
    r = patch(c, {}, MERGE, path=NS + "/nope")
    assert (r.status_code, json.loads(r.data)["reason"]) == (404, "NotFound")


def test_an_unknown_field_is_a_warning_by_default_and_422_when_strict(setup):
    store, c = setup
    warned = patch(c, {"spec": {"x": 1}}, MERGE)
    assert warned.status_code == 200
    assert warned.headers.getlist("Warning") == ['299 - "unknown field \\"spec\\""']
    strict = patch(c, {"spec": {"x": 1}}, MERGE, query="?fieldValidation=Strict")
    assert strict.status_code == 422
    st = json.loads(strict.data)
    assert st["details"]["causes"][0]["field"] == "patch"
    assert st["details"]["causes"][0]["message"].endswith('strict decoding error: unknown field "spec"')


def test_dry_run_and_force(setup):
    store, c = setup
    before = store.resource_version()
    assert patch(c, {"data": {"n": "1"}}, MERGE, query="?dryRun=All").status_code == 200
    assert store.resource_version() == before
    r = patch(c, {}, MERGE, query="?force=true")
    assert r.status_code == 422
    assert json.loads(r.data)["message"] == 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'


def test_a_patch_whose_result_does_not_decode_shows_it_as_gos_patch_handler_does(setup):
    store, c = setup
    a = store.get("ns", "a")["metadata"]
    uid, created = a["uid"], a["creationTimestamp"]

    def refused(body, content_type):
        r = patch(c, body, content_type)
        assert r.status_code == 422
        return json.loads(r.data)["message"]

    # merge: json-patch's MergePatch decodes each object on the patch's way (keys sorted); the
    # rest keeps the object's own order
    assert refused({"metadata": {"labels": {"z": "2", "b": "3"}}, "data": {"n": 1}}, MERGE) == (
        ' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"v1\\",\\"data\\":{\\"k\\":\\"v\\",\\"n\\":1},\\"kind\\":'
        f'\\"ConfigMap\\",\\"metadata\\":{{\\"creationTimestamp\\":\\"{created}\\",\\"labels\\":{{\\"b\\":\\"3\\",\\"x\\":\\"1\\",'
        f'\\"z\\":\\"2\\"}},\\"name\\":\\"a\\",\\"namespace\\":\\"ns\\",\\"resourceVersion\\":\\"2\\",\\"uid\\":\\"{uid}\\"}}}}": '
        "json: cannot unmarshal number into Go struct field ConfigMap.data of type string")
    # JSON patch: only the containers on the operation's path are decoded
    assert refused([{"op": "add", "path": "/data/n", "value": 1}], JSONP) == (
        ' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"v1\\",\\"data\\":{\\"k\\":\\"v\\",\\"n\\":1},\\"kind\\":'
        f'\\"ConfigMap\\",\\"metadata\\":{{\\"name\\":\\"a\\",\\"namespace\\":\\"ns\\",\\"uid\\":\\"{uid}\\",\\"resourceVersion\\":'
        f'\\"2\\",\\"creationTimestamp\\":\\"{created}\\",\\"labels\\":{{\\"x\\":\\"1\\"}}}}}}": '
        "json: cannot unmarshal number into Go struct field ConfigMap.data of type string")
    # strategic: the patch as fmt prints a map, the result read by the unstructured converter
    assert refused({"data": {"n": 1.5e7}}, SMP) == (' "" is invalid: patch: Invalid value: "map[data:map[n:1.5e+07]]": '
                                                   "cannot convert float64 to string")
    assert refused({"metadata": {"labels": "x"}}, SMP).endswith('"map[metadata:map[labels:x]]": cannot restore map from string')
    assert refused({"metadata": 7}, SMP).endswith('"map[metadata:7]": cannot restore struct from: int64')
    assert refused({"metadata": {"creationTimestamp": 5}}, SMP).endswith(
        "json: cannot unmarshal number into Go value of type string")  # metav1.Time's UnmarshalJSON, handed 5
    assert store.get("ns", "a")["metadata"]["resourceVersion"] == "2"  # nothing was stored


def test_fmt_prints_a_decoded_json_value_as_go_does():
    from genericserver.apimachinery.strategicpatch.patch import go_sprint
    assert go_sprint({"b": [1, {"x": None}], "a": "s", "c": True}) == "map[a:s b:[1 map[x:<nil>]] c:true]"
    assert [go_sprint(x) for x in (1e6, 123456.0, 1e-4, 1e-5, 3.0, -2.5, 12345678.9, 0.0)] == [
        "1e+06", "123456", "0.0001", "1e-05", "3", "-2.5", "1.23456789e+07", "0"]


def test_a_write_between_the_read_and_the_store_is_patched_again_not_a_conflict(setup, monkeypatch):
    # kubectl set image against the served cluster got 409 when the deployment controller wrote
    # the status meanwhile: Go applies the patch inside GuaranteedUpdate, to the latest object
    store, c = setup
    update, calls = store.update, []

    def a_controller_writes_first(namespace, name, obj, **kw):
        calls.append(obj["metadata"]["resourceVersion"])
        if len(calls) == 1:
            fresh = store.get(namespace, name)
            update(namespace, name, {**fresh, "metadata": {**fresh["metadata"], "annotations": {"by": "controller"}}})
        return update(namespace, name, obj, **kw)

    monkeypatch.setattr(store, "update", a_controller_writes_first)
    r = patch(c, {"data": {"n": "1"}}, MERGE)
    assert r.status_code == 200, r.data
    obj = json.loads(r.data)
    assert obj["data"] == {"k": "v", "n": "1"} and obj["metadata"]["annotations"] == {"by": "controller"}
    read_first = calls[0]
    assert calls == [read_first, str(int(read_first) + 1)]  # applied again to the version the controller wrote
    stale = patch(c, {"metadata": {"resourceVersion": read_first}, "data": {"m": "2"}}, MERGE)  # a version of its own: held to it
    assert stale.status_code == 409


def test_a_patch_whose_result_does_not_decode_has_no_kind_in_its_details(setup):
    # patch.go:769 is NewInvalid(schema.GroupKind{}, "", ...): the details' group and kind are empty,
    # and StatusDetails.Kind is omitempty (apimachinery pkg/apis/meta/v1/types.go:863), so no "kind"
    _, c = setup
    r = patch(c, {"data": "x"}, MERGE)
    assert r.status_code == 422
    details = json.loads(r.data)["details"]
    assert list(details) == ["causes"] and details["causes"][0]["field"] == "patch"


# what kube-apiserver v1.36.0 answered each, on a configmap of data {"k": "v"} and labels {"x": "1"}:
# gopkg.in/evanphx/json-patch.v4 (what patch.go applies a JSON patch with) is more lenient than RFC 6902
@pytest.mark.parametrize("ops, data, labels, warning", [
    ([{"op": "replace", "path": "/data/missing", "value": "x"}], {"k": "v", "missing": "x"}, {"x": "1"}, None),
    ([{"op": "replace", "path": "/metadata/labels/new", "value": "y"}], {"k": "v"}, {"x": "1", "new": "y"}, None),
    ([{"op": "copy", "from": "/data/k", "path": "/data/c"}], {"k": "v", "c": "v"}, {"x": "1"}, None),
    # no leading slash: the first segment is dropped, the key lands at the root, an unknown field
    ([{"op": "add", "path": "data/noslash", "value": "x"}], {"k": "v"}, {"x": "1"}, '299 - "unknown field \\"noslash\\""'),
    ([{"op": "replace", "path": "data/k", "value": "x"}], {"k": "v"}, {"x": "1"}, '299 - "unknown field \\"k\\""'),
])
def test_a_json_patch_is_applied_as_evanphx_json_patch_v4_does(setup, ops, data, labels, warning):
    _, c = setup
    r = patch(c, ops, JSONP)
    doc = json.loads(r.data)
    assert (r.status_code, doc["data"], doc["metadata"]["labels"], r.headers.get("Warning")) == (200, data, labels, warning)


@pytest.mark.parametrize("ops", [
    [{"op": "remove", "path": "/data/missing"}],
    [{"op": "move", "from": "/data/missing", "path": "/data/m"}],
    [{"op": "add", "path": "/spec/x", "value": 1}],
    [{"op": "test", "path": "/data/k", "value": "w"}],
    [{"op": "frob", "path": "/data/k"}],
])
def test_what_even_evanphx_json_patch_v4_cannot_do_is_422(setup, ops):
    _, c = setup
    assert patch(c, ops, JSONP).status_code == 422


@pytest.mark.parametrize("content_type", [JSONP, SMP])
def test_a_null_json_or_strategic_patch_changes_nothing(setup, content_type):
    # DecodePatch(null) is no operations, and null read into the strategic patch's map leaves it empty:
    # kube-apiserver answers the object as it was (a merge patch of null is 400 "Invalid JSON Patch")
    _, c = setup
    r = patch(c, "null", content_type)
    assert (r.status_code, json.loads(r.data)["data"]) == (200, {"k": "v"})
    assert patch(c, "null", MERGE).status_code == 400


def test_a_patch_s_duplicate_fields_are_strict_errors_with_their_paths(setup):
    # kube-apiserver v1.36.0: the patch's own kjson.UnmarshalStrict reports "data.a" and "data"; under
    # Strict a 422 on the field patch, under Warn a warning and the patch (whose last "data" wins) applied
    _, c = setup
    r = patch(c, '{"data":{"k":"2","k":"3"}}', MERGE, query="?fieldValidation=Strict")
    assert r.status_code == 422
    assert json.loads(r.data)["message"].endswith('": strict decoding error: duplicate field "data.k"')
    r = patch(c, '{"data":{"a":"2"},"data":{"b":"3"}}', MERGE, query="?fieldValidation=Warn")
    assert (r.status_code, r.headers.get("Warning"), json.loads(r.data)["data"]) == (
        200, '299 - "duplicate field \\"data\\""', {"k": "v", "b": "3"})
    r = patch(c, '[{"op":"add","op":"add","path":"/data/j","value":"1"}]', JSONP, query="?fieldValidation=Warn")
    assert (r.status_code, r.headers.get("Warning")) == (200, '299 - "json patch duplicate field \\"[0].op\\""')


@pytest.mark.parametrize("body, data, finalizers", [
    # a key the object lacks takes the patch's value less removeDirectives' cut (an object holding a
    # $patch goes, whatever its directive): kube-apiserver v1.36.0 answers 200, the object unchanged
    ({"binaryData": {"$patch": "frob", "x": "MQ=="}}, {"k": "v"}, None),
    ({"metadata": {"finalizers": [{"$patch": "frob"}, "a/b"]}}, {"k": "v"}, ["a/b"]),
])
def test_a_new_key_s_directives_are_cut_as_remove_directives_cuts_them(setup, body, data, finalizers):
    _, c = setup
    r = patch(c, body, SMP)
    doc = json.loads(r.data)
    assert (r.status_code, doc["data"], doc.get("binaryData"), doc["metadata"].get("finalizers")) == (200, data, None, finalizers)

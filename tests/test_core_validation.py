"""Tests of genericserver.apis.core.validation and what it stands on (objectmeta, content, util/validation): Go's words for a bad ConfigMap.

The texts are kube-apiserver v1.36.0's, as tests/parity's recordings and the Go source
(pkg/apis/core/validation/validation.go, apimachinery's pkg/api/validation/objectmeta.go and
pkg/api/validate/content) have them.
"""

from __future__ import annotations

import pytest

from genericserver.apimachinery.api import objectmeta
from genericserver.apimachinery.api.validate import content
from genericserver.apimachinery.validation import config_map_key_errors, dns1123_subdomain_errors
from genericserver.apis.core import validation

LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
                   "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                   "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
NAME_PART_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                 "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                 "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  "
                  "or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")


def cm(**meta) -> dict:
    return {"metadata": {"name": "a", "namespace": "ns", **meta}}


def texts(errs) -> list[str]:
    return [str(e) for e in errs]


@pytest.mark.parametrize("meta,want", [
    ({"labels": {"a": "b c"}}, [f'metadata.labels: Invalid value: "b c": {LABEL_VALUE_MSG}']),
    ({"labels": {"a": "x" * 64}}, [f'metadata.labels: Invalid value: "{"x" * 64}": must be no more than 63 bytes']),
    ({"labels": {"-a": ""}}, [f'metadata.labels: Invalid value: "-a": {NAME_PART_MSG}']),
    ({"labels": {"/x": ""}}, ['metadata.labels: Invalid value: "/x": prefix part must be non-empty']),
    ({"annotations": {"-a": "b"}}, [f'metadata.annotations: Invalid value: "-a": {NAME_PART_MSG}']),
    ({"annotations": {"a": "x" * (256 * 1024)}}, ["metadata.annotations: Too long: may not be more than 262144 bytes"]),
    ({"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p"}]},
     ['metadata.ownerReferences.uid: Invalid value: "": must not be empty']),
    ({"ownerReferences": [{"apiVersion": "v1", "kind": "Event", "name": "p", "uid": "u"}]},
     ['metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"p","uid":"u"}: '
      '/v1, Kind=Event is disallowed from being an owner']),
    ({"finalizers": ["foo"]}, ['metadata.finalizers[0]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified']),
    ({"finalizers": ["orphan", "foregroundDeletion"]},
     ['metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set']),
    ({"generation": -1}, ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"]),
], ids=["label-space", "label-long", "label-key", "label-prefix-empty", "annotation-key", "annotations-size", "owner-no-uid",
        "owner-event", "finalizer-unqualified", "finalizer-both", "generation"])
def test_object_meta(meta, want):
    assert texts(validation.validate_config_map(cm(**meta))) == want


def test_config_map_keys_and_size():
    assert texts(validation.validate_config_map({**cm(), "data": {"..": "1"}})) == ["data[..]: Invalid value: \"..\": must not be '..'"]
    assert texts(validation.validate_config_map({**cm(), "binaryData": {"a b": "AA=="}})) == [
        f'binaryData[a b]: Invalid value: "a b": {CONFIG_KEY_MSG}']
    assert texts(validation.validate_config_map({**cm(), "data": {"k": "1"}, "binaryData": {"k": "AA=="}})) == [
        'data[k]: Invalid value: "k": duplicate of key present in binaryData']
    assert texts(validation.validate_config_map({**cm(), "data": {"k": "x" * (1 << 20)}, "binaryData": {"b": "AA=="}})) == [
        "[]: Too long: may not be more than 1048576 bytes"]
    assert config_map_key_errors("k" * 254)[0] == "must be no more than 253 characters"


def test_names_say_characters_where_labels_say_bytes():
    assert dns1123_subdomain_errors("a" * 254)[0] == "must be no more than 253 characters"
    assert content.is_label_value("a" * 64)[0] == "must be no more than 63 bytes"
    assert texts(validation.validate_config_map(cm(name="a" * 254)))[0] == (
        f'metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters')


def test_an_immutable_config_map_keeps_its_data_and_its_flag():
    old = {**cm(resourceVersion="5"), "immutable": True, "data": {"x": "1"}}
    new = {**cm(resourceVersion="5"), "data": {"x": "2"}, "binaryData": {"b": "AA=="}}
    assert texts(validation.validate_config_map_update(new, old)) == [
        "immutable: Forbidden: field is immutable when `immutable` is set",
        "data: Forbidden: field is immutable when `immutable` is set",
        "binaryData: Forbidden: field is immutable when `immutable` is set"]
    assert validation.validate_config_map_update({**old, "metadata": {**old["metadata"], "labels": {"l": "v"}}}, old) == []
    # data defaults to empty (SetDefaults_ConfigMap); binaryData has no default, so an empty map is a change
    none = {**cm(resourceVersion="5"), "immutable": True}
    assert validation.validate_config_map_update({**none, "data": {}}, none) == []
    assert texts(validation.validate_config_map_update({**none, "binaryData": {}}, none)) == [
        "binaryData: Forbidden: field is immutable when `immutable` is set"]


def test_an_update_may_not_add_a_finalizer_to_an_object_being_deleted():
    old = cm(resourceVersion="5", uid="u", deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["example.com/x"])["metadata"]
    new = {**old, "finalizers": ["example.com/x", "example.com/z", "example.com/y"]}
    assert texts(objectmeta.validate_object_meta_update(new, old)) == [
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers '
        '[]string{"example.com/y", "example.com/z"}']
    assert texts(objectmeta.validate_object_meta_update({**old, "uid": "v"}, old)) == ['metadata.uid: Invalid value: "v": field is immutable']


def test_a_path_segment_name():
    assert content.is_path_segment_name("..") == ["may not be '..'"]
    assert content.is_path_segment_name("a/b%") == ["may not contain '/'", "may not contain '%'"]

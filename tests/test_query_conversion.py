"""A request's query as the options of each verb, decoded as Go's parameter codec decodes it
(genericserver/apimachinery/runtime/conversion.py and apis/meta/v1/conversion.py).

The cases named after a Go test are that test's (k8s.io/apimachinery and k8s.io/apiserver
v0.36.0); Go has none for the bool and number readers (its apiserver_test.go says "there is no
invalid bool in conversion"), so theirs are what kube-apiserver v1.36.0 answered to the same
queries (reference/pair.py), noted with each."""

from __future__ import annotations

import pytest

from genericserver.apimachinery.apis.meta.v1 import conversion as metav1
from genericserver.apimachinery.runtime import conversion as rc
from genericserver.net.url.url import parse_query


# -- runtime/conversion.go, type by type ------------------------------------------------------


@pytest.mark.parametrize("values,want", [
    ([], False), (["0"], False), (["false"], False), (["FALSE"], False), (["False"], False),
    # strings.EqualFold: the long s folds to s (kube-apiserver: ?watch=fal%C5%BFe lists)
    (["fal\xc5\xbfe"], False),
    (["1"], True), (["true"], True), ([""], True), (["yes"], True), (["maybe"], True), (["no"], True),
    (["f"], True), (["0", "false"], False), (["true", "0"], True), (["00"], True), (["false "], True),
], ids=lambda v: repr(v))
def test_convert_slice_string_to_bool(values, want):
    assert rc.convert_slice_string_to_bool(values) is want
    assert rc.convert_slice_string_to_pointer_bool(values) is want  # never nil once named


@pytest.mark.parametrize("values,want", [([], ""), ([""], ""), (["a"], "a"), (["a", "b"], "a")])
def test_convert_slice_string_to_string(values, want):
    assert rc.convert_slice_string_to_string(values) == want


@pytest.mark.parametrize("values,want", [
    ([], None), (["0"], 0), (["10"], 10), (["+3"], 3), (["-7"], -7), (["007"], 7),
    (["9223372036854775807"], (1 << 63) - 1), (["-9223372036854775808"], -(1 << 63)),
])
def test_convert_slice_string_to_pointer_int64(values, want):
    assert rc.convert_slice_string_to_pointer_int64(values) == want
    assert rc.convert_slice_string_to_int64(values) == (want or 0)


@pytest.mark.parametrize("text,err", [
    # each as kube-apiserver v1.36.0 answers ?limit=<text> (400, the message)
    ("", 'strconv.ParseInt: parsing "": invalid syntax'),
    ("1_0", 'strconv.ParseInt: parsing "1_0": invalid syntax'),
    ("99999999999999999999", 'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
    (" 1", 'strconv.ParseInt: parsing " 1": invalid syntax'),
    ("0x10", 'strconv.ParseInt: parsing "0x10": invalid syntax'),
    ("+", 'strconv.ParseInt: parsing "+": invalid syntax'),
    ("\xc3\xa9", 'strconv.ParseInt: parsing "\u00e9": invalid syntax'),  # UTF-8 shown as its character
    ("\xff", 'strconv.ParseInt: parsing "\\xff": invalid syntax'),  # a byte that is no UTF-8
])
def test_a_number_that_does_not_parse_is_gos_error(text, err):
    with pytest.raises(rc.ConversionError) as e:
        rc.convert_slice_string_to_int64([text])
    assert str(e.value) == err
    with pytest.raises(rc.ConversionError):
        rc.convert_slice_string_to_pointer_int64([text])


def test_convert_slice_string_to_int_is_atoi():
    assert rc.convert_slice_string_to_int(["42"]) == 42 and rc.convert_slice_string_to_int([]) == 0
    with pytest.raises(rc.ConversionError, match=r'^strconv\.Atoi: parsing "x": invalid syntax$'):
        rc.convert_slice_string_to_int(["x"])


def test_convert_string_to_int64():
    assert rc.convert_string_to_int64(None) == 0 and rc.convert_string_to_int64("5") == 5
    assert rc.convert_string_to_pointer_int64(None) is None and rc.convert_string_to_pointer_int64("-5") == -5


@pytest.mark.parametrize("a,b,same", [
    ("false", "FALSE", True), ("\u017f", "s", True), ("\u212a", "k", True), ("\u00df", "ss", False),
    ("\u0130", "i", False), ("fals", "false", False), ("", "", True),
])
def test_equal_fold_is_gos_simple_folding(a, b, same):
    assert rc.equal_fold(a, b) is same


# -- apis/meta/v1: the options of each verb ---------------------------------------------------


@pytest.mark.parametrize("values,want", [
    (None, ""), ([], ""), (["foo"], "foo"), (["bar", "foo"], "bar"),
], ids=["TestConvertSliceStringToDeletionPropagation/nil", "TestConvertSliceStringToDeletionPropagation/empty",
        "TestConvertSliceStringToDeletionPropagation/foo", "TestConvertSliceStringToDeletionPropagation/bar-foo"])
def test_convert_slice_string_to_pointer_v1_deletion_propagation(values, want):
    assert metav1.convert_slice_string_to_pointer_v1_deletion_propagation(values or []) == want


def list_options(query: str) -> dict:
    return metav1.convert_url_values_to_v1_list_options(parse_query(query))


def test_list_options_watch_1():  # TestListOptions (internalversion/scheme/register_test.go): decode watch=1
    assert list_options("watch=1")["watch"] is True


def test_list_options_round_trip():  # TestListOptions: what EncodeParameters writes of its options reads back
    got = list_options("labelSelector=a%3D1&fieldSelector=b%3D1&resourceVersion=10&timeoutSeconds=10&watch=true")
    assert {k: got[k] for k in ("labelSelector", "fieldSelector", "resourceVersion", "timeoutSeconds", "watch")} == {
        "labelSelector": "a=1", "fieldSelector": "b=1", "resourceVersion": "10", "timeoutSeconds": 10, "watch": True}


@pytest.mark.parametrize("query,rv,labels,fields", [
    ("resourceVersion=1234", "1234", "", ""),
    ("resourceVersion=314159&fieldSelector=Host%3D&labelSelector=name%3Dfoo", "314159", "name=foo", "Host="),
    ("fieldSelector=id%3dfoo&resourceVersion=1492", "1492", "", "id=foo"),
    ("", "", "", ""),
], ids=[f"TestWatchParamParsing/{i}" for i in range(4)])
def test_watch_param_parsing(query, rv, labels, fields):  # k8s.io/apiserver pkg/endpoints/watch_test.go
    got = list_options(query)
    assert (got["resourceVersion"], got["labelSelector"], got["fieldSelector"]) == (rv, labels, fields)


def test_list_options_pointer_fields_are_nil_only_when_absent():
    absent = list_options("")
    assert "timeoutSeconds" not in absent and "sendInitialEvents" not in absent and absent["limit"] == 0
    # kube-apiserver: ?watch=1&sendInitialEvents=yes&resourceVersionMatch=NotOlderThan is a watch-list (200)
    assert list_options("sendInitialEvents=yes")["sendInitialEvents"] is True
    assert list_options("sendInitialEvents")["sendInitialEvents"] is True  # the empty value
    assert list_options("sendInitialEvents=false")["sendInitialEvents"] is False
    with pytest.raises(rc.ConversionError):  # kube-apiserver: ?timeoutSeconds= is a 400
        list_options("timeoutSeconds=")


def test_get_options():
    assert metav1.convert_url_values_to_v1_get_options(parse_query("resourceVersion=5&resourceVersion=6")) == {"resourceVersion": "5"}


def test_delete_options_with_options_query():  # TestDeleteWithOptionsQuery (apiserver_test.go): gracePeriodSeconds=300
    assert metav1.convert_url_values_to_v1_delete_options(parse_query("gracePeriodSeconds=300")) == {"gracePeriodSeconds": 300}


def test_requests_with_invalid_query_delete():  # TestRequestsWithInvalidQuery: gracePeriodSeconds=<invalid> is a 400
    with pytest.raises(rc.ConversionError, match="^strconv.ParseInt: parsing \"<invalid>\": invalid syntax$"):
        metav1.convert_url_values_to_v1_delete_options(parse_query("gracePeriodSeconds=%3Cinvalid%3E"))


@pytest.mark.parametrize("query,want", [
    # kube-apiserver: DELETE ?orphanDependents=yes puts the orphan finalizer on a configmap
    ("orphanDependents=yes", {"orphanDependents": True}),
    ("orphanDependents=", {"orphanDependents": True}),
    ("orphanDependents=0", {"orphanDependents": False}),
    ("propagationPolicy=", {"propagationPolicy": ""}),  # named, so not nil: ValidateDeleteOptions refuses ""
    ("dryRun=All&dryRun=x", {"dryRun": ["All", "x"]}),
    # conversion.go's own part: the preconditions (kube-apiserver: ?uid=nope is a 409 naming both uids)
    ("uid=u1&resourceVersion=7", {"preconditions": {"uid": "u1", "resourceVersion": "7"}}),
    ("uid=&resourceVersion=7", {"preconditions": {"resourceVersion": "7"}}),
    ("ignoreStoreReadErrorWithClusterBreakingPotential=1", {"ignoreStoreReadErrorWithClusterBreakingPotential": True}),
])
def test_delete_options(query, want):
    assert metav1.convert_url_values_to_v1_delete_options(parse_query(query)) == want


@pytest.mark.parametrize("convert", [metav1.convert_url_values_to_v1_create_options, metav1.convert_url_values_to_v1_update_options])
def test_create_and_update_options(convert):
    assert convert(parse_query("dryRun=All&fieldManager=m&fieldManager=n&fieldValidation=Strict")) == {
        "dryRun": ["All"], "fieldManager": "m", "fieldValidation": "Strict"}
    assert convert(parse_query("")) == {"fieldManager": "", "fieldValidation": ""}


def test_patch_options():
    # kube-apiserver: PATCH ?force=false is refused all the same (a *bool named in the query is set)
    assert metav1.convert_url_values_to_v1_patch_options(parse_query("force=false&dryRun=x")) == {
        "force": False, "dryRun": ["x"], "fieldManager": "", "fieldValidation": ""}
    assert "force" not in metav1.convert_url_values_to_v1_patch_options(parse_query("dryRun=All"))


def test_table_options_read_include_object_and_the_key_dash():
    got = metav1.convert_url_values_to_v1_table_options(parse_query("includeObject=Object&-=1"))
    assert got == {"-": True, "includeObject": "Object"}

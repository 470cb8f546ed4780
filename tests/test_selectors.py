"""Label and field selectors as apimachinery parses and matches them, and as the list handler answers a bad one."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import Client

from genericserver import sampleapi
from genericserver.apimachinery.fields import selector as fields
from genericserver.apimachinery.labels import selector as labels
from genericserver.mux import PathRecorderMux


@pytest.mark.parametrize("text, have, want", [
    ("app=web", {"app": "web"}, True),
    ("app==web", {"app": "db"}, False),
    ("app!=web", {}, True),
    ("tier in (a,b)", {"tier": "b"}, True),
    ("tier notin (a,b)", {"tier": "b"}, False),
    ("tier notin (a,b)", {}, True),
    ("app", {"app": ""}, True),
    ("!app", {"app": "x"}, False),
    ("n>3", {"n": "4"}, True),
    ("n<3", {"n": "x"}, False),
    ("app=web,!canary", {"app": "web", "canary": "1"}, False),
    ("", {"anything": "x"}, True),
])
def test_matches(text, have, want):
    assert labels.parse(text).matches(have) is want


@pytest.mark.parametrize("text, message", [
    ("app=", None),  # an empty value is a value
    ("=web", "found '=', expected: !, identifier, or 'end of string'"),
    ("app web", "unable to parse requirement: found 'web', expected: in, notin, =, ==, !=, gt, lt"),
    ("app in a", "unable to parse requirement: found 'a' expected: '('"),
    ("app in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("a,", "found '', expected: identifier after ','"),
    ("app=web x", "found 'x', expected: ',' or 'end of string'"),
    ("n>x", 'unable to parse requirement: values[0]: Invalid value: "x": for \'Gt\', \'Lt\' operators, the value must be an integer'),
])
def test_label_selector_errors_are_gos(text, message):
    if message is None:
        labels.parse(text)
        return
    with pytest.raises(labels.SelectorError) as err:
        labels.parse(text)
    assert str(err.value) == message


def test_a_bad_key_gets_the_qualified_name_message():
    with pytest.raises(labels.SelectorError) as err:
        labels.parse("bad key!=x")
    assert str(err.value).startswith('unable to parse requirement: found \'key\', expected: in, notin')
    with pytest.raises(labels.SelectorError) as err:
        labels.parse("-app=x")
    assert str(err.value).startswith('unable to parse requirement: <nil>: Invalid value: "-app": name part must consist of alphanumeric')


KEYS = st.from_regex(r"[a-z]([a-z0-9.-]{0,6}[a-z0-9])?", fullmatch=True)
VALUES = st.from_regex(r"([a-z0-9]([a-z0-9_.-]{0,5}[a-z0-9])?)?", fullmatch=True)
REQS = st.one_of(
    st.builds(lambda k, v, op: f"{k}{op}{v}", KEYS, VALUES, st.sampled_from(["=", "==", "!="])),
    st.builds(lambda k, vs, op: f"{k} {op} ({','.join(vs)})", KEYS, st.lists(VALUES.filter(bool), min_size=1, max_size=3),
              st.sampled_from(["in", "notin"])),
    KEYS, KEYS.map(lambda k: "!" + k))


@given(st.lists(REQS, max_size=4), st.dictionaries(KEYS, VALUES, max_size=4))
def test_a_selector_written_back_parses_to_the_same_and_matches_the_same(reqs, have):
    first = labels.parse(",".join(reqs))
    again = labels.parse(labels.to_string(first))
    assert again == first
    assert again.matches(have) == first.matches(have)


def test_field_selectors():
    s = fields.parse(r"metadata.name=a\,b,metadata.namespace!=x")
    assert s.matches({"metadata.name": "a,b", "metadata.namespace": "y"})
    assert not s.matches({"metadata.name": "a,b", "metadata.namespace": "x"})
    with pytest.raises(fields.SelectorError, match=r"^invalid selector: 'name'; can't understand 'name'$"):
        fields.parse("name")
    with pytest.raises(fields.SelectorError, match=r"^invalid field selector: invalid escape sequence: \\q$"):
        fields.parse(r"a=\q")


@pytest.mark.parametrize("text", ["==", "=", "!=", "==,=", "metadata.name=one,=="])
def test_a_field_term_of_no_field_and_no_value_selects_everything(text):
    # fields/selector.go:104-106 and :152-154 (v1.36.0): ParseSelector transforms each term, and one whose
    # field and value are both empty becomes Everything, which an and-term drops (:224)
    s = fields.parse(text)
    assert [t.field for t in s.terms] == (["metadata.name"] if "metadata.name" in text else [])
    assert s.matches({"metadata.name": "two"}) == ("metadata.name" not in text)


def test_a_field_selector_of_double_equals_lists_everything(client):
    # what kube-apiserver v1.36.0 answers (tests/parity/go-api.json, list-field-bad)
    r = client.get("/api/v1/configmaps?fieldSelector=%3D%3D")
    assert r.status_code == 200
    assert names(r) == ["one", "two", "three"]


@pytest.fixture
def client():
    mux = PathRecorderMux("test")
    sampleapi.install(mux)
    c = Client(mux)
    for ns, name, app in [("a", "one", "web"), ("a", "two", "db"), ("b", "three", "web")]:
        c.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": name, "labels": {"app": app}}})
    return c


def names(r) -> list[str]:
    return [i["metadata"]["name"] for i in json.loads(r.data)["items"]]


def test_a_list_is_filtered_by_both_selectors(client):
    assert names(client.get("/api/v1/configmaps?labelSelector=app%3Dweb")) == ["one", "three"]
    assert names(client.get("/api/v1/configmaps?labelSelector=app%3Dweb&fieldSelector=metadata.namespace%3Db")) == ["three"]
    assert names(client.get("/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name!%3Done")) == ["two"]


@pytest.mark.parametrize("query, message", [
    ("labelSelector=app%20web", "unable to parse requirement: found 'web', expected: in, notin, =, ==, !=, gt, lt"),
    ("fieldSelector=spec.x%3D1", '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"'),
    ("fieldSelector=oops", "invalid selector: 'oops'; can't understand 'oops'"),
])
def test_a_selector_that_does_not_parse_is_400(client, query, message):
    r = client.get("/api/v1/configmaps?" + query)
    assert r.status_code == 400
    assert json.loads(r.data)["message"] == message

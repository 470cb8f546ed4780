"""github.com/munnerz/goautoneg's ParseAccept and Negotiate (its autoneg_test.go cases as pytest
ids), and the Accept headers whose answer depends on goautoneg's reading of them, as
kube-apiserver answers them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import Client

from genericserver import sampleapi
from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.github_com.munnerz.goautoneg.autoneg import Accept, _less, negotiate as go_negotiate, parse_accept
from genericserver.mux import PathRecorderMux

CHROME = "application/xml,application/xhtml+xml,text/html;q=0.9,text/plain;q=0.8,image/png,*/*;q=0.5"


@pytest.mark.parametrize("alternatives, want", [
    pytest.param(["text/html", "image/png"], "image/png", id="TestParseAccept/image-png"),
    pytest.param(["text/html", "text/plain", "text/n3"], "text/html", id="TestParseAccept/text-html"),
    pytest.param(["text/n3", "text/plain"], "text/plain", id="TestParseAccept/text-plain"),
    pytest.param(["text/n3", "application/rdf+xml"], "text/n3", id="TestParseAccept/text-n3"),
])
def test_parse_accept(alternatives, want):
    assert go_negotiate(CHROME, alternatives) == want


def test_a_clause_weighed_zero_is_kept():
    assert parse_accept("application/json;q=0") == [Accept("application", "json", 0.0, {})]


def test_a_concrete_subtype_goes_before_a_wildcard_whatever_the_weights():
    assert [(a.type, a.subtype) for a in parse_accept("application/*;q=0.2, application/yaml;q=0.1")] == [
        ("application", "yaml"), ("application", "*")]


@pytest.mark.parametrize("header, want", [
    ("*", [("*", "*", 1.0, None)]),  # a lone * is */*
    ("text", []),  # a type without a subtype is dropped
    ("a/b/c, d/e", [("d", "e", 1.0, None)]),  # two slashes: dropped
    ("a/b;x;y=1;z=2=3", [("a", "b", 1.0, {"y": "1"})]),  # parameters without one "=" are dropped
    ("a/b;q=nope", [("a", "b", 0.0, {})]),  # a q that does not parse is 0
    ("a/b;q=0.3", [("a", "b", 0.30000001192092896, {})]),  # read as a float32
    ("\ta/b", [("\ta", "b", 1.0, None)]),  # only spaces are trimmed
])
def test_goautonegs_leniency(header, want):
    assert [(a.type, a.subtype, a.q, a.params) for a in parse_accept(header)] == want


@pytest.mark.parametrize("header, want", [
    # insertion sort, step by step: application/* goes before */* by its type, and stays there
    # though */* would go before it by its weight (Less is no order)
    ("*/*, application/*;q=0", ["application/*", "*/*"]),
    ("text/html;q=0.5, */*, application/json", ["application/json", "*/*", "text/html"]),
])
def test_go_sorts_clauses_by_insertion(header, want):
    assert [f"{a.type}/{a.subtype}" for a in parse_accept(header)] == want


@given(st.lists(st.sampled_from(["*/*", "application/*", "application/json", "text/html;q=0", "a/b;q=0.5"]), max_size=12))
def test_parse_accept_keeps_every_clause_it_can_read(clauses):
    assert sorted(f"{a.type}/{a.subtype}" for a in parse_accept(",".join(clauses))) == sorted(c.split(";")[0] for c in clauses)


@pytest.fixture
def c():
    mux = PathRecorderMux("test")
    sampleapi.install(mux)
    return Client(mux)


NS = "/api/v1/namespaces/ns/configmaps"


@pytest.mark.parametrize("accept, code, content_type", [
    # goautoneg keeps a q=0 clause, and negotiation then tries it like any other
    ("application/json;q=0", 200, "application/json"),
    # application/yaml goes before application/* (goautoneg's Less), weights aside
    ("application/*;q=0.2, application/yaml;q=0.1", 200, "application/yaml"),
    # sv: AllowsServerVersion accepts meta.k8s.io's version only
    ("application/json;sv=v1", 200, "application/json"),
    ("application/json;sv=v2", 406, "application/json"),
    ("application/json;sv=v2, application/yaml", 200, "application/yaml"),
])
def test_accept_headers_answered_as_kube_apiserver_answers_them(c, accept, code, content_type):
    r = c.get(NS, headers={"Accept": accept})
    assert (r.status_code, r.headers["Content-Type"]) == (code, content_type)


def test_the_default_restrictions_take_no_server_version():
    assert negotiate.negotiate_media_type_options("application/json;sv=v1", codec_factory.SUPPORTED,
                                                  negotiate.DEFAULT_ENDPOINT_RESTRICTIONS) is None
    opts = negotiate.negotiate_media_type_options("application/json;sv=", codec_factory.SUPPORTED, negotiate.DEFAULT_ENDPOINT_RESTRICTIONS)
    assert opts is not None and opts.accepted.media_type == "application/json"

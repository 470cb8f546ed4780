"""Tests of genericserver.requestinfo and genericserver.endpoints.filters.requestinfo.

Ports of requestinfo_test.go (TestGetAPIRequestInfo, TestGetNonAPIRequestInfo,
TestSelectorParsing) with Go's case names, plus the with_request_info filter.
"""

from __future__ import annotations

import pytest
from werkzeug.test import Client, EnvironBuilder

from genericserver import request
from genericserver.endpoints.filters.requestinfo import with_request_info
from genericserver.requestinfo import RequestInfo, RequestInfoFactory, parse_field_selector


def resolver() -> RequestInfoFactory:
    return RequestInfoFactory(api_prefixes={"api", "apis"}, groupless_api_prefixes={"api"})


def resolve(method: str, url: str) -> tuple[RequestInfo, object]:
    environ = EnvironBuilder(path=url, method=method).get_environ()
    return resolver().new_request_info(environ)


# (method, url, verb, apiPrefix-as-Go-lists-it, group, version, namespace, resource, subresource, name, parts)
SUCCESS_CASES = [
    # resource paths
    ("GET", "/api/v1/namespaces", "list", "api", "", "v1", "", "namespaces", "", "", ["namespaces"]),
    ("GET", "/api/v1/namespaces/other", "get", "api", "", "v1", "other", "namespaces", "", "other", ["namespaces", "other"]),
    ("GET", "/api/v1/namespaces/other/pods", "list", "api", "", "v1", "other", "pods", "", "", ["pods"]),
    ("GET", "/api/v1/namespaces/other/pods/foo", "get", "api", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]),
    ("HEAD", "/api/v1/namespaces/other/pods/foo", "get", "api", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]),
    ("GET", "/api/v1/pods", "list", "api", "", "v1", "", "pods", "", "", ["pods"]),
    ("HEAD", "/api/v1/pods", "list", "api", "", "v1", "", "pods", "", "", ["pods"]),
    ("GET", "/api/v1/namespaces/other/pods/foo", "get", "api", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]),
    ("GET", "/api/v1/namespaces/other/pods", "list", "api", "", "v1", "other", "pods", "", "", ["pods"]),
    # special verbs
    ("GET", "/api/v1/proxy/namespaces/other/pods/foo", "proxy", "api", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]),
    (
        "GET",
        "/api/v1/proxy/namespaces/other/pods/foo/subpath/not/a/subresource",
        "proxy", "api", "", "v1", "other", "pods", "", "foo",
        ["pods", "foo", "subpath", "not", "a", "subresource"],
    ),
    ("GET", "/api/v1/watch/pods", "watch", "api", "", "v1", "", "pods", "", "", ["pods"]),
    ("GET", "/api/v1/pods?watch=true", "watch", "api", "", "v1", "", "pods", "", "", ["pods"]),
    ("GET", "/api/v1/pods?watch=false", "list", "api", "", "v1", "", "pods", "", "", ["pods"]),
    ("GET", "/api/v1/watch/namespaces/other/pods", "watch", "api", "", "v1", "other", "pods", "", "", ["pods"]),
    ("GET", "/api/v1/namespaces/other/pods?watch=1", "watch", "api", "", "v1", "other", "pods", "", "", ["pods"]),
    ("GET", "/api/v1/namespaces/other/pods?watch=0", "list", "api", "", "v1", "other", "pods", "", "", ["pods"]),
    # subresource identification
    ("GET", "/api/v1/namespaces/other/pods/foo/status", "get", "api", "", "v1", "other", "pods", "status", "foo", ["pods", "foo", "status"]),
    ("GET", "/api/v1/namespaces/other/pods/foo/proxy/subpath", "get", "api", "", "v1", "other", "pods", "proxy", "foo", ["pods", "foo", "proxy", "subpath"]),
    ("PUT", "/api/v1/namespaces/other/finalize", "update", "api", "", "v1", "other", "namespaces", "finalize", "other", ["namespaces", "other", "finalize"]),
    ("PUT", "/api/v1/namespaces/other/status", "update", "api", "", "v1", "other", "namespaces", "status", "other", ["namespaces", "other", "status"]),
    # verb identification
    ("PATCH", "/api/v1/namespaces/other/pods/foo", "patch", "api", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]),
    ("DELETE", "/api/v1/namespaces/other/pods/foo", "delete", "api", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]),
    ("POST", "/api/v1/namespaces/other/pods", "create", "api", "", "v1", "other", "pods", "", "", ["pods"]),
    # deletecollection verb identification
    ("DELETE", "/api/v1/nodes", "deletecollection", "api", "", "v1", "", "nodes", "", "", ["nodes"]),
    ("DELETE", "/api/v1/namespaces", "deletecollection", "api", "", "v1", "", "namespaces", "", "", ["namespaces"]),
    ("DELETE", "/api/v1/namespaces/other/pods", "deletecollection", "api", "", "v1", "other", "pods", "", "", ["pods"]),
    ("DELETE", "/apis/extensions/v1/namespaces/other/pods", "deletecollection", "api", "extensions", "v1", "other", "pods", "", "", ["pods"]),
    # api group identification
    ("POST", "/apis/extensions/v1/namespaces/other/pods", "create", "api", "extensions", "v1", "other", "pods", "", "", ["pods"]),
    # api version identification
    ("POST", "/apis/extensions/v1beta3/namespaces/other/pods", "create", "api", "extensions", "v1beta3", "other", "pods", "", "", ["pods"]),
]


@pytest.mark.parametrize("case", SUCCESS_CASES, ids=[f"{c[0]} {c[1]}" for c in SUCCESS_CASES])
def test_get_api_request_info(case):
    method, url, verb, _prefix, group, version, namespace, resource, subresource, name, parts = case
    info, err = resolve(method, url)
    assert err is None
    assert info.is_resource_request
    # Go checks these fields (its table's apiPrefix column is never compared, and says "api" for /apis)
    assert (info.verb, info.api_group, info.api_version, info.namespace) == (verb, group, version, namespace)
    assert (info.resource, info.subresource, info.name, info.parts) == (resource, subresource, name, parts)
    assert info.api_prefix == url.split("/")[1]


ERROR_CASES = {
    "no resource path": "/",
    "just apiversion": "/api/version/",
    "just prefix, group, version": "/apis/group/version/",
    "apiversion with no resource": "/api/version/",
    "bad prefix": "/badprefix/version/resource",
    "missing api group": "/apis/version/resource",
}


@pytest.mark.parametrize("url", ERROR_CASES.values(), ids=ERROR_CASES.keys())
def test_get_api_request_info_error_cases(url):
    info, err = resolve("GET", url)
    assert err is None
    assert not info.is_resource_request
    assert info.verb == "get"


NON_API_CASES = {
    "simple groupless": ("/api/version/resource", True),
    "simple group": ("/apis/group/version/resource/name/subresource", True),
    "more steps": ("/api/version/resource/name/subresource", True),
    "group list": ("/apis/batch/v1/job", True),
    "group get": ("/apis/batch/v1/job/foo", True),
    "group subresource": ("/apis/batch/v1/job/foo/scale", True),
    "bad root": ("/not-api/version/resource", False),
    "group without enough steps": ("/apis/extensions/v1beta1", False),
    "group without enough steps 2": ("/apis/extensions/v1beta1/", False),
    "not enough steps": ("/api/version", False),
    "one step": ("/api", False),
    "zero step": ("/", False),
    "empty": ("", False),
}


@pytest.mark.parametrize("url,expected", NON_API_CASES.values(), ids=NON_API_CASES.keys())
def test_get_non_api_request_info(url, expected):
    info, err = resolve("GET", url)
    assert err is None
    assert info.is_resource_request is expected


# name, method, url, expected name, verb, fieldSelector, labelSelector
SELECTOR_CASES = [
    ("no selector", "GET", "/apis/group/version/resource", "", "list", "", ""),
    ("metadata.name selector", "GET", "/apis/group/version/resource?fieldSelector=metadata.name=name1", "name1", "list", "metadata.name=name1", ""),
    (
        "metadata.name selector with watch", "GET",
        "/apis/group/version/resource?watch=true&fieldSelector=metadata.name=name1", "name1", "watch", "metadata.name=name1", "",
    ),
    (
        "random selector", "GET",
        "/apis/group/version/resource?fieldSelector=foo=bar&labelSelector=baz=qux", "", "list", "foo=bar", "baz=qux",
    ),
    (
        "invalid selector with metadata.name", "GET",
        "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo", "", "list", "metadata.name=name1,foo", "",
    ),
    (
        "invalid selector with metadata.name with watch", "GET",
        "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=true", "", "watch", "metadata.name=name1,foo", "",
    ),
    (
        "invalid selector with metadata.name with watch false", "GET",
        "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=false", "", "list", "metadata.name=name1,foo", "",
    ),
    (
        "selector on deletecollection is honored", "DELETE",
        "/apis/group/version/resource?fieldSelector=foo=bar&labelSelector=baz=qux", "", "deletecollection", "foo=bar", "baz=qux",
    ),
    (
        "selector on repeated param matches parsed param", "GET",
        "/apis/group/version/resource?fieldSelector=metadata.name=foo&fieldSelector=metadata.name=bar&labelSelector=foo=bar&labelSelector=foo=baz",
        "foo", "list", "metadata.name=foo", "foo=bar",
    ),
    (
        "selector on other verb is ignored", "GET",
        "/apis/group/version/resource/name?fieldSelector=foo=bar&labelSelector=foo=bar", "name", "get", "", "",
    ),
    (
        "selector on deprecated root type watch is not parsed", "GET",
        "/apis/group/version/watch/resource?fieldSelector=metadata.name=foo&labelSelector=foo=bar", "", "watch", "", "",
    ),
    (
        "selector on deprecated root item watch is not parsed", "GET",
        "/apis/group/version/watch/resource/name?fieldSelector=metadata.name=foo&labelSelector=foo=bar", "name", "watch", "", "",
    ),
]


@pytest.mark.parametrize("case", SELECTOR_CASES, ids=[c[0] for c in SELECTOR_CASES])
def test_selector_parsing(case):
    _, method, url, name, verb, field_selector, label_selector = case
    info, err = resolve(method, url)
    assert err is None
    assert (info.name, info.verb, info.field_selector, info.label_selector) == (name, verb, field_selector, label_selector)


# -- beyond the Go tables: the rules the filters depend on --------------------------------


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"])
def test_non_resource_requests_get_the_lowercase_method_as_verb(method):
    info, err = resolve(method, "/healthz/ping")
    assert err is None
    assert (info.is_resource_request, info.verb, info.path) == (False, method.lower(), "/healthz/ping")


@pytest.mark.parametrize("value,verb", [("true", "watch"), ("1", "watch"), ("yes", "watch"), ("", "watch"), ("FALSE", "list"), ("0", "list")])
def test_watch_parameter_follows_go_bool_conversion(value, verb):
    # only "0" and "false" (any case) are false, as runtime.Convert_Slice_string_To_bool says
    info, _ = resolve("GET", f"/api/v1/pods?watch={value}")
    assert info.verb == verb


def test_watch_parameter_on_a_named_object_is_a_get():
    info, _ = resolve("GET", "/api/v1/namespaces/ns/pods/foo?watch=true")
    assert (info.verb, info.name) == ("get", "foo")


def test_unknown_method_on_a_resource_has_an_empty_verb():
    info, _ = resolve("OPTIONS", "/api/v1/pods")
    assert (info.is_resource_request, info.verb) == (True, "")


def test_special_verb_without_a_resource_is_an_error_with_go_text():
    info, err = resolve("GET", "/api/v1/watch?x=1")
    assert str(err) == "unable to determine kind and namespace from url, /api/v1/watch?x=1"
    # the info holds what was known before the failure
    assert (info.is_resource_request, info.api_version, info.verb) == (True, "v1", "get")


def test_a_list_options_decode_error_drops_the_selected_name_but_keeps_watch():
    info, _ = resolve("GET", "/api/v1/pods?fieldSelector=metadata.name=foo&timeoutSeconds=abc&watch=true")
    assert (info.name, info.verb, info.field_selector) == ("", "watch", "metadata.name=foo")


@pytest.mark.parametrize("name", ["..", "a/b", "50%"])
def test_a_selected_name_that_is_no_path_segment_is_ignored(name):
    info, _ = resolve("GET", f"/api/v1/pods?fieldSelector=metadata.name%3D{name.replace('%', '%25').replace('/', '%2F')}")
    assert info.name == ""


def test_parse_field_selector_grammar():
    assert parse_field_selector(r"b!=x,a==y\,z") == [("a", "==", "y,z"), ("b", "!=", "x")]
    assert parse_field_selector("") == []
    with pytest.raises(ValueError, match=r"^invalid selector: 'a=b,c'; can't understand 'c'$"):
        parse_field_selector("a=b,c")
    with pytest.raises(ValueError, match=r"invalid escape sequence: \\q"):
        parse_field_selector(r"a=\q")


def test_not_equal_metadata_name_does_not_name_the_object():
    info, _ = resolve("GET", "/api/v1/pods?fieldSelector=metadata.name!=foo")
    assert info.name == ""


# -- with_request_info (pkg/endpoints/filters/requestinfo.go) ----------------------------


def test_with_request_info_attaches_the_resolved_info():
    seen = []

    def app(environ, start_response):
        seen.append(request.request_info_from(environ))
        start_response("200 OK", [])
        return [b"ok"]

    resp = Client(with_request_info(app, resolver())).get("/api/v1/namespaces/ns/pods?watch=1")
    assert resp.status_code == 200
    assert len(seen) == 1 and (seen[0].verb, seen[0].namespace, seen[0].resource) == ("watch", "ns", "pods")


def test_with_request_info_answers_500_when_resolution_fails():
    called = []

    def app(environ, start_response):  # pragma: no cover - must not run
        called.append(1)
        start_response("200 OK", [])
        return []

    resp = Client(with_request_info(app, resolver())).get("/api/v1/watch")
    assert called == []
    assert resp.status_code == 500
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert resp.get_data() == (
        b'Internal Server Error: "/api/v1/watch": failed to create RequestInfo: '
        b"unable to determine kind and namespace from url, /api/v1/watch\n"
    )

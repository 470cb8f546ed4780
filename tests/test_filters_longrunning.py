"""Tests of genericserver.filters.longrunning (basic_long_running_request_check)."""

from __future__ import annotations

import pytest
from werkzeug.test import EnvironBuilder

from genericserver.filters.longrunning import basic_long_running_request_check
from genericserver.requestinfo import RequestInfoFactory

CHECK = basic_long_running_request_check({"watch", "proxy"}, {"attach", "exec", "proxy", "log", "portforward"})


@pytest.mark.parametrize(
    "method,url,expected",
    [
        ("GET", "/api/v1/pods?watch=true", True),
        ("GET", "/api/v1/watch/pods", True),
        ("GET", "/api/v1/proxy/namespaces/ns/pods/foo", True),
        ("POST", "/api/v1/namespaces/ns/pods/foo/exec", True),
        ("GET", "/api/v1/namespaces/ns/pods/foo/log", True),
        ("GET", "/debug/pprof/profile", True),
        ("GET", "/api/v1/pods", False),
        ("GET", "/api/v1/namespaces/ns/pods/foo/status", False),
        ("GET", "/debug/pprof", False),  # the prefix needs the trailing slash
        ("GET", "/exec", False),  # a non-resource path is not a subresource
        ("GET", "/healthz", False),
    ],
)
def test_basic_long_running_request_check(method, url, expected):
    environ = EnvironBuilder(path=url, method=method).get_environ()
    info, err = RequestInfoFactory().new_request_info(environ)
    assert err is None
    assert CHECK(environ, info) is expected


def test_a_resource_subresource_named_like_a_pprof_path_is_not_long_running():
    environ = EnvironBuilder(path="/apis/debug/pprof/things").get_environ()
    info, _ = RequestInfoFactory().new_request_info(environ)
    assert info.is_resource_request and not CHECK(environ, info)

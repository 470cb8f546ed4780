"""Tests of genericserver.notfoundhandler: pkg/util/notfoundhandler/not_found_handler_test.go."""

from __future__ import annotations

from werkzeug.test import Client

from genericserver.mux import PathRecorderMux
from genericserver.notfoundhandler import not_found_handler


def test_not_found_handler():
    complete = {"value": True}
    target = not_found_handler(lambda environ: complete["value"])
    client = Client(target)

    # scenario 1: the request came after all paths were installed
    resp = client.get("/apis/flowcontrol.apiserver.k8s.io/v1beta1")
    assert resp.status_code == 404
    assert resp.data == b"404 page not found\n"
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert "Retry-After" not in resp.headers

    # scenario 2: the request came before
    complete["value"] = False
    resp = client.get("/apis/flowcontrol.apiserver.k8s.io/v1beta1")
    assert resp.status_code == 503
    assert resp.data == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"the request has been made before all known HTTP paths have been installed, please try again",'
        b'"reason":"ServiceUnavailable","details":{"retryAfterSeconds":5},"code":503}\n'
    )
    assert resp.headers["Retry-After"] == "5"
    assert resp.headers["Content-Type"] == "application/json"
    # Go writes it with ErrorNegotiated, which sets no X-Content-Type-Options
    assert "X-Content-Type-Options" not in resp.headers


def test_as_the_mux_not_found_app_it_sees_the_request():
    seen = []

    def complete(environ):
        seen.append(environ["PATH_INFO"])
        return False

    mux = PathRecorderMux("test")
    mux.not_found_handler(not_found_handler(complete))
    assert Client(mux).get("/unknown").status_code == 503
    assert seen == ["/unknown"]


def test_not_ready_503_sets_exactly_the_headers_error_negotiated_sets():
    # ErrorNegotiated: Retry-After from the Status details, Content-Type from the serializer;
    # Content-Length is what net/http adds for a short body (the server here too). No nosniff.
    got = []
    body = b"".join(not_found_handler(lambda environ: False)({"PATH_INFO": "/x"}, lambda s, h, e=None: got.append((s, h))))
    assert body and got == [("503 Service Unavailable", [("Retry-After", "5"), ("Content-Type", "application/json")])]

"""Tests of genericserver.filters.wrap: ports of TestErrConnKilled (timeout_test.go) and
TestPropogatingPanic (wrap_test.go), and Go's crash-handler behaviour with really_crash off.

On werkzeug's test Client a re-raised panic propagates out of the request: that is the client's
"transport error" (the project's HTTP server drops the connection instead of answering).
"""

from __future__ import annotations

import logging

import pytest
from werkzeug.test import Client, EnvironBuilder

from genericserver.filters.timeout import AbortHandler
from genericserver.filters.wrap import PANIC_MESSAGE, with_panic_recovery
from genericserver.requestinfo import RequestInfoFactory
from genericserver import wsgi

RESOLVER = RequestInfoFactory({"api", "apis"}, {"api"})
PANIC_BODY = PANIC_MESSAGE.encode() + b"\n"


def test_err_conn_killed(caplog):
    def handler(environ, start_response):
        # a response already started, then the quiet abort (what the timeout filter does)
        start_response("200 OK", [])("hello from the handler".encode())
        raise AbortHandler()

    with caplog.at_level(logging.DEBUG):
        with pytest.raises(AbortHandler):
            Client(with_panic_recovery(handler, RESOLVER)).get("/")
    assert "Traceback" not in caplog.text and "Observed a panic" not in caplog.text
    assert '"Timeout or abort while handling" logger="UnhandledError" method="GET" URI="/" auditID=""' in caplog.text


def test_propogating_panic(caplog):
    def handler(environ, start_response):
        raise RuntimeError("panic as designed")

    with caplog.at_level(logging.DEBUG):
        with pytest.raises(RuntimeError, match="panic as designed"):
            Client(with_panic_recovery(handler, RESOLVER)).get("/")
    assert "panic as designed" in caplog.text
    assert "apiserver panic'd" in caplog.text
    assert '"apiserver panic\'d" method="GET" URI="/" auditID=""' in caplog.text
    assert "Traceback" in caplog.text  # "Observed a panic" logs the stack


def test_without_really_crash_the_client_gets_the_500(caplog):
    def handler(environ, start_response):
        raise RuntimeError("boom")

    resp = Client(with_panic_recovery(handler, RESOLVER, really_crash=False)).get("/api/v1/pods?x=1")
    assert resp.status_code == 500
    assert resp.get_data() == PANIC_BODY
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert '"apiserver panic\'d" method="GET" URI="/api/v1/pods?x=1"' in caplog.text


def test_without_really_crash_an_abort_writes_no_500(caplog):
    def handler(environ, start_response):
        raise AbortHandler()

    resp = Client(with_panic_recovery(handler, RESOLVER, really_crash=False)).get("/")
    assert (resp.status_code, resp.get_data()) == (200, b"")
    assert "Timeout or abort while handling" in caplog.text and "apiserver panic'd" not in caplog.text


def streaming_then_panic(headers):
    def handler(environ, start_response):
        start_response("200 OK", headers)

        def body():
            yield b"partial "
            raise RuntimeError("panic while streaming")

        return body()

    return handler


def test_a_panic_while_iterating_the_body_counts_and_is_re_raised(caplog):
    app = with_panic_recovery(streaming_then_panic([]), RESOLVER)
    resp = Client(app).get("/", buffered=False)
    chunks = iter(resp.response)
    assert next(chunks) == b"partial "
    with pytest.raises(RuntimeError, match="panic while streaming"):
        next(chunks)
    resp.close()
    assert "apiserver panic'd" in caplog.text


def test_a_500_after_the_response_started_keeps_the_status_and_appends_the_text():
    # Go: the second WriteHeader is ignored, http.Error's text is written after the partial body
    resp = Client(with_panic_recovery(streaming_then_panic([]), RESOLVER, really_crash=False)).get("/")
    assert (resp.status_code, resp.get_data()) == (200, b"partial " + PANIC_BODY)


def test_a_500_after_a_declared_content_length_appends_nothing():
    # Go: writing past the declared Content-Length fails, so nothing is added
    app = with_panic_recovery(streaming_then_panic([("Content-Length", "8")]), RESOLVER, really_crash=False)
    resp = Client(app).get("/")
    assert (resp.status_code, resp.get_data()) == (200, b"partial ")


def test_a_healthy_response_passes_untouched():
    def handler(environ, start_response):
        start_response("201 Created", [("X-A", "b")])
        return [b"x", b"y"]

    resp = Client(with_panic_recovery(handler, RESOLVER)).get("/")
    assert (resp.status_code, resp.headers["X-A"], resp.get_data()) == (201, "b", b"xy")


def test_a_body_at_hand_is_handed_on_as_it_is():
    """A list cannot panic while it is iterated: the filter returns it unwrapped, so the server
    still sees a body that is all at hand and frames it with its length, as Go frames a handler
    that wrote less than its buffer and returned."""
    def handler(environ, start_response):
        start_response("200 OK", [])
        return wsgi.on_close([b"x", b"y"], lambda: None)


    body = with_panic_recovery(handler, RESOLVER)(EnvironBuilder("/").get_environ(), lambda *a: None)
    assert wsgi.known_chunks(body) == [b"x", b"y"]
    wsgi.close_iterable(body)

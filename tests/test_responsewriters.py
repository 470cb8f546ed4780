"""The apiserver's hand-written answers (genericserver/responsewriters.py, routes.py) leave their
framing to the server, as Go's do: a length when the body fits net/http's 2 KiB response buffer,
chunked past it (no Go twin)."""

from __future__ import annotations

import http.client

import pytest
from prometheus_client import CollectorRegistry, Counter

from genericserver import responsewriters, routes
from genericserver.net.http import server as hs
from genericserver import runtime as rt

WAIT = 10.0


@pytest.fixture
def serve():
    started = []

    def start(app):
        srv = hs.Server(app, error_log=lambda *_: None)
        ln = hs.listen()

        def run():
            try:
                srv.serve(ln)
            except hs.ServerClosed:
                pass  # what close() makes serve return with

        started.append((srv, rt.go(run, name="test-serve")))
        return ln.getsockname()[1]

    yield start
    for srv, serving in started:
        srv.close()
        serving.join(WAIT)


def _get(port: int) -> http.client.HTTPResponse:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    c.request("GET", "/")
    r = c.getresponse()
    r.read()
    c.close()
    return r


# Go: WriteRawJSON and writeNegotiated write the body and set no Content-Length
# (apiserver pkg/endpoints/handlers/responsewriters/writers.go:406-408), http.Error drops one
# (go/src/net/http/server.go:2311), and net/http sets it only when the handler returned within its
# 2048-byte buffer (server.go:341, :1317)
@pytest.mark.parametrize("size, chunked", [(100, False), (5000, True)])
@pytest.mark.parametrize("writer", ["status", "http-error"])
def test_an_error_answer_is_chunked_past_the_buffer_as_go_frames_it(serve, writer, size, chunked):
    def app(environ, start_response):
        if writer == "status":
            return responsewriters.write_status(start_response, responsewriters.status(500, "InternalError", "x" * size))
        return responsewriters.http_error(start_response, "x" * size, 503, [("Content-Length", "3")])

    r = _get(serve(app))
    assert (r.getheader("Transfer-Encoding"), r.getheader("Content-Length") is None) == (("chunked", True) if chunked else (None, False))


def test_metrics_past_the_buffer_are_chunked(serve):
    registry = CollectorRegistry()
    for i in range(60):
        Counter(f"test_counter_{i}", "a counter with some help text to fill the buffer", registry=registry).inc()
    r = _get(serve(routes.metrics_handler(registry)))
    assert (r.status, r.getheader("Transfer-Encoding"), r.getheader("Content-Length")) == (200, "chunked", None)


def test_an_object_answer_is_chunked_past_the_buffer_as_go_frames_it(serve):
    # SerializeObject's deferredResponseWriter sets Content-Type and no length (apiserver
    # pkg/endpoints/handlers/responsewriters/writers.go:280-281): a list past 2 KiB goes out chunked,
    # as kube-apiserver's list-table and delete-all do (tests/parity/go-api.json)
    from werkzeug.test import Client

    from genericserver import sampleapi
    from genericserver.mux import PathRecorderMux

    mux = PathRecorderMux("test")
    sampleapi.install(mux)
    ns = "/api/v1/namespaces/default/configmaps"
    c = Client(mux)
    assert c.post(ns, json={"metadata": {"name": "small"}}).status_code == 201
    port = serve(mux)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    conn.request("GET", ns + "/small")
    r = conn.getresponse()
    assert (r.status, r.getheader("Transfer-Encoding"), r.getheader("Content-Length")) == (200, None, str(len(r.read())))
    for i in range(20):
        assert c.post(ns, json={"metadata": {"name": f"cm-{i}"}, "data": {"k": "v" * 100}}).status_code == 201
    conn.request("GET", ns)
    r = conn.getresponse()
    assert len(r.read()) > 2048
    assert (r.status, r.getheader("Transfer-Encoding"), r.getheader("Content-Length")) == (200, "chunked", None)
    conn.close()


def test_a_verbose_health_answer_past_the_buffer_is_chunked(serve):
    # handleRootHealth writes the checks' lines and sets no length (apiserver pkg/server/healthz/healthz.go:329-330):
    # kube-apiserver's /readyz?verbose of many checks goes out chunked
    from genericserver.healthz import healthz
    from genericserver.mux import PathRecorderMux

    mux = PathRecorderMux("test")
    healthz.install_readyz_handler(mux, *[healthz.named_check(f"a-check-with-a-long-name-{i:03d}", lambda environ: None)
                                          for i in range(80)])
    port = serve(mux)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    for path, chunked in (("/readyz", False), ("/readyz?verbose", True)):
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read()
        assert (r.status, r.getheader("Transfer-Encoding") == "chunked", r.getheader("Content-Length")) == (
            200, chunked, None if chunked else str(len(body)))
    conn.close()

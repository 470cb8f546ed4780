"""A watch on the sample API ends at NotAcceptingNewRequest when watch draining is on (real sockets)."""

from __future__ import annotations

import http.client
import json

from genericserver import runtime as rt
from genericserver import sampleapi
from genericserver.config import new_config
from genericserver.context import context as gocontext
from genericserver.net.http.server import listen
from genericserver.secure_serving import SecureServingInfo

WAIT = 30.0


def start_server(watch_grace: float, delay: float):
    config = new_config()
    config.shutdown_delay_duration = delay
    config.shutdown_watch_termination_grace_period = watch_grace
    config.secure_serving = SecureServingInfo(listener=listen("127.0.0.1", 0))
    port = config.secure_serving.listener.getsockname()[1]
    s = config.complete().new("watch-test")
    sampleapi.install(s.handler.non_go_restful_mux)
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    running = rt.go(s.prepare_run().run_with_context, ctx, name="run-with-context")
    return s, port, cancel, running.done  # set once run_with_context returned


def test_the_watch_stream_ends_at_not_accepting_new_request_when_draining_is_on():
    s, port, cancel, done = start_server(watch_grace=2.0, delay=0.3)
    signals = s.lifecycle_signals
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        conn.request("GET", "/api/v1/namespaces/empty/configmaps?watch=true")
        # the header comes at once although the namespace is empty (the flush)
        resp = conn.getresponse()
        assert resp.status == 200
        assert resp.getheader("Transfer-Encoding") == "chunked"
        # an object created now arrives as an event on the open stream
        other = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
        try:
            other.request("POST", "/api/v1/namespaces/empty/configmaps", body=b'{"metadata":{"name":"x"}}')
            assert other.getresponse().status == 201
        finally:
            other.close()
        event = json.loads(resp.readline())
        assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "x")

        cancel()
        assert signals.shutdown_initiated.signaled().wait(WAIT)
        # the stream ends, and not before the server stopped accepting new requests
        assert resp.readline() == b""
        assert signals.not_accepting_new_request.is_signaled()
        assert signals.after_shutdown_delay_duration.is_signaled()
    finally:
        conn.close()
    assert done.wait(WAIT)
    assert signals.in_flight_requests_drained.is_signaled()

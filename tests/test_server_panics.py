"""A panicking handler on a real server with the full chain: contained, logged, audited, as in Go.

Go's ``WithPanicRecovery`` logs "apiserver panic'd" and re-panics (``ReallyCrash``); net/http
then drops the connection without sending the buffered 500 (``TestPropogatingPanic`` asserts a
transport error). The server keeps serving, and the request's wait-group slot is given back so
the shutdown can still drain.
"""

from __future__ import annotations

import http.client
import logging

from genericserver import runtime as rt
from genericserver.audit.memory import MemoryBackend
from genericserver.config import new_config
from genericserver.context import context as gocontext
from genericserver.net.http.server import listen
from genericserver.secure_serving import SecureServingInfo
from genericserver.testing.client import Client

WAIT = 30.0


def test_a_panicking_handler_drops_its_connection_and_the_server_keeps_serving(caplog):
    audit = MemoryBackend()
    config = new_config()
    config.audit_backend = audit
    config.audit_policy_rule_evaluator = audit
    config.secure_serving = SecureServingInfo(listener=listen("127.0.0.1", 0))
    port = config.secure_serving.listener.getsockname()[1]
    s = config.complete().new("panics")

    def panics(environ, start_response):
        raise RuntimeError("panic as designed")

    def echo(environ, start_response):
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    s.handler.non_go_restful_mux.handle("/panic", panics)
    s.handler.non_go_restful_mux.handle("/echo", echo)
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    running = rt.go(s.prepare_run().run_with_context, ctx, name="run-with-context")
    try:
        with caplog.at_level(logging.ERROR):
            with Client("127.0.0.1", port, new_connection=True) as c:
                r = c.get("/panic", timeout=WAIT, headers={"Audit-ID": "the-panic"})
        # no response at all: the 500 the crash handler wrote is never sent
        assert isinstance(r.error, http.client.RemoteDisconnected), r
        assert "apiserver panic'd" in caplog.text and "panic as designed" in caplog.text
        assert [getattr(st, "value", st) for st in audit.stages("the-panic")] == ["RequestReceived", "Panic"]
        with Client("127.0.0.1", port, new_connection=True) as c:
            assert c.get("/echo", timeout=WAIT).status == 200
    finally:
        cancel()
    # the panicking request gave its wait-group slot back: the shutdown drains and returns
    assert running.join(WAIT)
    assert s.lifecycle_signals.in_flight_requests_drained.is_signaled()

"""finisher.go's FinishRequest: its own test cases (finisher_test.go, v0.36.0) as pytest ids; the
timeouts run under the simulation runtime, on its virtual clock."""

from __future__ import annotations

import pytest

from genericserver import metrics as epmetrics
from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.context import context as gocontext
from genericserver.endpoints.handlers.finisher import finisher
from genericserver.testing.sim import Simulation

OBJ = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}}
ERR = errors.new_bad_request("error")
SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "message": "success message"}
FAILURE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "error message"}


class Boom(Exception):
    pass


def returns(value):
    return lambda: value


def raises(exc):
    def fn():
        raise exc
    return fn


@pytest.mark.parametrize("fn, want, raised", [
    pytest.param(returns(OBJ), OBJ, None, id="Expected obj is returned"),
    pytest.param(raises(ERR), None, ERR, id="Expected error is returned"),
    pytest.param(returns(None), None, None, id="No expected error or object or panic"),
    pytest.param(returns(SUCCESS), SUCCESS, None, id="Successful status object is returned as expected"),
])
def test_finish_request(fn, want, raised):
    ctx, cancel = gocontext.with_timeout(gocontext.todo(), 1.0)
    try:
        if raised is None:
            assert finisher.finish_request(ctx, fn) == want
        else:
            with pytest.raises(errors.StatusError) as got:
                finisher.finish_request(ctx, fn)
            assert got.value is raised
    finally:
        cancel()


def test_finish_request_error_status_object_is_converted_to_status_error():
    with pytest.raises(errors.StatusError) as got:
        finisher.finish_request(gocontext.todo(), returns(FAILURE))
    assert got.value.status == FAILURE


def test_finish_request_panic_is_propagated_up_with_the_goroutines_stack():
    with pytest.raises(Boom) as got:
        finisher.finish_request(gocontext.todo(), raises(Boom("my panic")))
    # the exception crossed from the goroutine: its traceback still shows where it was raised
    assert any(frame.name == "fn" for frame in __import__("traceback").extract_tb(got.value.__traceback__))


TIMEOUT_TEXT = "Timeout: request did not complete within requested timeout - context deadline exceeded"


@pytest.mark.parametrize("outcome, wait, status", [
    pytest.param("object", 300.0, epmetrics.POST_TIMEOUT_HANDLER_OK, id="ResultFunc function returns a result after the request had timed out"),
    pytest.param("error", 300.0, epmetrics.POST_TIMEOUT_HANDLER_ERROR, id="ResultFunc function returns an error after the request had timed out"),
    pytest.param("panic", 300.0, epmetrics.POST_TIMEOUT_HANDLER_PANIC, id="ResultFunc function panics after the request had timed out"),
    pytest.param("never", 1.0, epmetrics.POST_TIMEOUT_HANDLER_PENDING, id="ResultFunc function never returns, parent gives up after postTimeoutWait"),
])
def test_finish_request_with_post_timeout_tracker(outcome, wait, status):
    metrics = epmetrics.Metrics(__import__("prometheus_client").CollectorRegistry())
    got: dict = {}

    def main():
        ctx, cancel = gocontext.with_timeout(gocontext.todo(), 0.001)
        release, logged = rt.event("release"), rt.event("logged")

        def fn():
            release.wait()
            if outcome == "never":
                rt.sleep(wait + 1.0)  # outlives the receiver's wait
            if outcome == "panic":
                raise Boom("my panic")
            if outcome == "error":
                raise errors.new_bad_request("my error")
            return OBJ

        def logger(timed_out_at, r):
            got["result"] = r
            finisher.log_post_timeout_result(timed_out_at, r, metrics)
            logged.set()

        try:
            finisher._finish_request(ctx, fn, wait, logger)
        except errors.StatusError as err:
            got["err"] = err.status
        release.set()
        logged.wait()
        cancel()

    Simulation().run(main)
    assert got["err"]["code"] == 504 and got["err"]["reason"] == "Timeout" and got["err"]["message"] == TIMEOUT_TEXT
    assert got["err"]["details"] == {}
    r = got["result"]
    if outcome == "never":
        assert r is None
    else:
        assert (r.object is not None, r.err is not None, r.reason is not None) == (outcome == "object", outcome == "error", outcome == "panic")
    assert metrics.request_post_timeout_total.labels(epmetrics.POST_TIMEOUT_SOURCE_REST_HANDLER, status)._value.get() == 1


def test_a_write_that_outlasts_the_requests_deadline_is_a_504_and_stays_done():
    # the handlers' use: the request's context ends first, the storage call finishes later
    from genericserver import sampleapi

    store = sampleapi.Store()
    calls = []

    def main():
        ctx, cancel = gocontext.with_timeout(gocontext.todo(), 2.0)
        release = rt.event("release")

        def create():
            release.wait()
            calls.append("created")
            return store

        with pytest.raises(errors.StatusError) as got:
            finisher._finish_request(ctx, create, 300.0, lambda at, r: calls.append(("logged", r is not None)))
        assert got.value.status["code"] == 504
        release.set()
        cancel()

    Simulation().run(main)
    assert calls == ["created", ("logged", True)]


def test_a_create_whose_storage_call_outlasts_34_seconds_is_gos_504():
    # create.go: the storage call runs under FinishRequest within requestTimeoutUpperBound (34 s)
    import json

    from werkzeug.test import Client

    from genericserver import sampleapi
    from genericserver.mux import PathRecorderMux

    from genericserver.registry.generic.registry.store import Store

    class SlowStore(Store):
        def create(self, namespace, obj, *, dry_run=False):
            rt.sleep(40.0)
            return super().create(namespace, obj, dry_run=dry_run)

    got = {}

    def main():
        mux = PathRecorderMux("test")
        store = sampleapi.install(mux, SlowStore(sampleapi.CONFIGMAPS))
        c = Client(mux)
        started = rt.now()
        r = c.post("/api/v1/namespaces/ns/configmaps", json={"metadata": {"name": "late"}})
        got.update(code=r.status_code, body=json.loads(r.data), after=rt.now() - started)
        rt.sleep(10.0)  # the call goes on, and stores the object after the client got its 504
        got["stored"] = [o["metadata"]["name"] for o in store.list("ns")[0]]

    Simulation().run(main)
    assert got["code"] == 504 and got["after"] == pytest.approx(34.0)
    assert got["body"]["reason"] == "Timeout" and got["body"]["message"] == TIMEOUT_TEXT
    assert got["stored"] == ["late"]

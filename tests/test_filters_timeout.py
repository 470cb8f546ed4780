"""Tests of genericserver.filters.timeout: the timeout_test.go cases that apply, adapted to WSGI.

Go's ``newHandler`` reads from channels; here it reads commands from a queue. The deadline is
the context the test puts in the environ (Go's ``withDeadline`` wrapper); a cancelled context
times out at once. Handler goroutines are waited for before each test ends.
"""

from __future__ import annotations

import json
import logging
import queue
import traceback

import pytest
from werkzeug.test import Client

from genericserver import klog
from genericserver import request, runtime as rt, wsgi
from genericserver.context import context as gocontext
from genericserver.filters.maxinflight import with_max_in_flight_limit
from genericserver.filters.timeout import (
    AbortHandler,
    ErrHandlerTimeout,
    new_timeout_error,
    with_timeout,
    with_timeout_for_non_long_running_requests,
)
from genericserver.filters.waitgroup import with_wait_group
from genericserver.filters.wrap import PANIC_MESSAGE, _with_panic_recovery, with_http_logging
from genericserver.requestinfo import RequestInfo
from genericserver.responsewriters import http_error, status as status_dict
from genericserver.testing.sim import Simulation

GO_504_BODY = (
    b'{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout",'
    b'"reason":"Timeout","details":{},"code":504}\n'
)


def server_timeout_error() -> dict:
    """apierrors.NewServerTimeout(foo/bar, "get", 0).ErrStatus."""
    return status_dict(
        500,
        "ServerTimeout",
        "The get operation against bar.foo could not be completed at this time, please try again.",
        {"group": "foo", "kind": "bar"},
        kind=False,
    )


class Deadline:
    """Go's ``withDeadline`` test wrapper: every request gets ``self.ctx`` as its context."""

    def __init__(self, app):
        self.ctx = gocontext.background()
        self.app = app
        self.environs: list[dict] = []

    def __call__(self, environ, start_response):
        self.environs.append(environ)
        request.with_context(environ, self.ctx)
        return self.app(environ, start_response)


def cancelled() -> gocontext.Context:
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    cancel()
    return ctx


def new_handler(commands: "queue.Queue", write_errors: "queue.Queue"):
    """Go's newHandler: respond with a write, or panic, as the next command says."""

    def new_handler_app(environ, start_response):
        kind, value = commands.get(timeout=30)
        if kind == "respond":
            write = start_response("200 OK", [])
            try:
                write(value.encode())
                write_errors.put(None)
            except Exception as err:
                write_errors.put(err)
            return []
        raise value

    return new_handler_app


def test_timeout():
    commands: queue.Queue = queue.Queue()
    write_errors: queue.Queue = queue.Queue()
    got_panic: queue.Queue = queue.Queue()
    record = []
    timeout_err = server_timeout_error()

    def crash_handler(environ, start_response, exc):
        got_panic.put(exc)
        return http_error(start_response, PANIC_MESSAGE, 500)

    timed = with_timeout(new_handler(commands, write_errors), lambda env: (env, False, lambda: record.append(1), timeout_err))
    app = Deadline(_with_panic_recovery(timed, crash_handler, really_crash=False))
    client = Client(app)

    # no timeout
    commands.put(("respond", "test response"))
    resp = client.get("/")
    assert (resp.status_code, resp.get_data()) == (200, b"test response")
    resp.close()
    assert write_errors.get(timeout=30) is None
    assert record == []

    # times out: the handler is still waiting for its command
    app.ctx = cancelled()
    resp = client.get("/")
    assert resp.status_code == 504
    assert json.loads(resp.get_data()) == timeout_err
    resp.close()
    assert record == [1]

    # now the timed-out handler tries to respond: its write fails
    app.ctx = gocontext.background()
    commands.put(("respond", "test response"))
    err = write_errors.get(timeout=30)
    assert isinstance(err, ErrHandlerTimeout) and str(err) == "http: Handler timeout"

    # panics: re-raised in the caller, where panic recovery answers 500
    commands.put(("panic", RuntimeError("inner handler panics")))
    resp = client.get("/")
    assert (resp.status_code, resp.get_data()) == (500, PANIC_MESSAGE.encode() + b"\n")
    exc = got_panic.get(timeout=30)
    assert "new_handler_app" in "".join(traceback.format_exception(exc))  # the root cause's frame

    # panics with the abort sentinel: passed on as the very same object
    abort = AbortHandler()
    commands.put(("panic", abort))
    resp = client.get("/")
    assert resp.status_code == 500
    assert got_panic.get(timeout=30) is abort


def test_timeout_headers():
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    post_timeout = rt.event("post-timeout")
    done = rt.event("handler-done")

    def handler(environ, start_response):
        headers = [("Test", "pre")]
        cancel()  # trigger the timeout
        n = 0
        while not post_timeout.is_set():  # keep changing our own headers until the timeout is handled
            headers.append(("Test", f"post-{n}"))
            n += 1
        start_response("200 OK", headers)  # too late: ignored, as Go ignores WriteHeader
        done.set()
        return [b"late"]

    app = Deadline(with_timeout(handler, lambda env: (env, False, post_timeout.set, server_timeout_error())))
    app.ctx = ctx
    resp = Client(app).get("/")
    assert resp.status_code == 504
    assert "Test" not in resp.headers
    assert done.wait(30)


def test_timeout_request_headers():
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    test_done = rt.event("test-done")
    handler_done = rt.event("handler-done")

    def handler(environ, start_response):
        cancel()
        n = 0
        while not test_done.is_set():  # mutate the request, as the authorization filter does
            environ["HTTP_TEST"] = f"post-{n}"
            n += 1
        handler_done.set()
        return []

    app = Deadline(with_timeout_for_non_long_running_requests(handler, lambda env, info: False))
    app.ctx = ctx
    resp = Client(app).patch("/", environ_overrides={request.REQUEST_INFO_KEY: RequestInfo()})
    assert resp.status_code == 504
    assert "HTTP_TEST" not in app.environs[0]  # the handler works on a copy of the request
    test_done.set()
    assert handler_done.wait(30)


def test_timeout_with_logging(caplog):
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    test_done = rt.event("test-done")
    handler_done = rt.event("handler-done")

    def handler(environ, start_response):
        cancel()
        while not test_done.is_set():
            environ["HTTP_TEST"] = "post"
        handler_done.set()
        return []

    inner = Deadline(with_timeout_for_non_long_running_requests(handler, lambda env, info: False))
    inner.ctx = ctx
    with caplog.at_level(logging.INFO, logger="genericserver.httplog"), klog.with_verbosity(3):
        resp = Client(with_http_logging(inner)).patch("/", environ_overrides={request.REQUEST_INFO_KEY: RequestInfo()})
        assert resp.status_code == 504
        resp.close()
    test_done.set()
    assert handler_done.wait(30)
    assert 'resp=504' in caplog.text and '"HTTP" verb="PATCH" URI="/"' in caplog.text


# -- beyond the Go tests --------------------------------------------------------------------


def test_the_504_body_and_headers_are_go_bytes():
    release = rt.event("release")
    done = rt.event("done")

    def handler(environ, start_response):
        release.wait(30)
        done.set()
        return []

    app = Deadline(with_timeout_for_non_long_running_requests(handler, lambda env, info: False))
    app.ctx = cancelled()
    resp = Client(app).get("/api/v1/pods", environ_overrides={request.REQUEST_INFO_KEY: RequestInfo(verb="list")})
    assert resp.status_code == 504
    assert resp.get_data() == GO_504_BODY
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"  # net/http's sniffing of the JSON
    assert resp.headers["Content-Length"] == str(len(GO_504_BODY))
    release.set()
    assert done.wait(30)


def test_without_request_info_the_timeout_body_is_the_internal_error():
    release, done = rt.event("release"), rt.event("done")

    def handler(environ, start_response):
        release.wait(30)
        done.set()
        return []

    app = Deadline(with_timeout_for_non_long_running_requests(handler, lambda env, info: False))
    app.ctx = cancelled()
    resp = Client(app).get("/")
    assert resp.status_code == 504
    assert resp.get_data() == (
        b'{"metadata":{},"status":"Failure","message":"Internal error occurred: no request info found for request during timeout",'
        b'"reason":"InternalError","details":{"causes":[{"message":"no request info found for request during timeout"}]},"code":500}\n'
    )
    release.set()
    assert done.wait(30)


def test_long_running_requests_bypass_the_timeout():
    seen = []

    def handler(environ, start_response):
        seen.append(rt.current().name)
        start_response("200 OK", [])
        return [b"watching"]

    app = Deadline(with_timeout_for_non_long_running_requests(handler, lambda env, info: info.verb == "watch"))
    app.ctx = cancelled()
    resp = Client(app).get("/", environ_overrides={request.REQUEST_INFO_KEY: RequestInfo(verb="watch")})
    assert (resp.status_code, resp.get_data()) == (200, b"watching")


def test_a_nil_long_running_check_disables_the_filter():
    def app(environ, start_response):  # pragma: no cover - identity only
        return []

    assert with_timeout_for_non_long_running_requests(app, None) is app


def test_a_timeout_after_the_response_started_aborts_it_and_fails_later_yields():
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    proceed, caught = rt.event("proceed"), rt.event("caught")
    seen: list = []

    def handler(environ, start_response):
        start_response("200 OK", [("X-Inner", "1")])

        def body():
            yield b"first"
            proceed.wait(30)
            try:
                yield b"second"
            except ErrHandlerTimeout as err:  # the failed write, seen at the yield
                seen.append(err)
                caught.set()
                raise

        return body()

    app = Deadline(with_timeout(handler, lambda env: (env, False, None, new_timeout_error("x", 0))))
    app.ctx = ctx
    resp = Client(app).get("/", buffered=False)
    assert resp.status_code == 200 and resp.headers["X-Inner"] == "1"
    chunks = iter(resp.response)
    assert next(chunks) == b"first"
    cancel()
    with pytest.raises(AbortHandler):
        next(chunks)  # the server drops the connection
    proceed.set()
    resp.close()
    assert caught.wait(30)
    assert [type(e) for e in seen] == [ErrHandlerTimeout]


def test_a_body_streams_through_and_the_inner_response_closes_when_the_response_is_closed():
    closed = rt.event("inner-closed")

    def handler(environ, start_response):
        start_response("200 OK", [])
        return wsgi.on_close(iter([b"a", b"b", b"c"]), closed.set)

    app = Deadline(with_timeout(handler, lambda env: (env, False, None, new_timeout_error("x", 0))))
    resp = Client(app).get("/", buffered=False)
    chunks = iter(resp.response)
    assert next(chunks) == b"a"
    assert list(chunks) == [b"b", b"c"]
    # every chunk was sent, but the server has not closed the response: the handler's
    # response (and whatever slots it holds) stays open until it does
    assert not closed.is_set()
    resp.close()
    assert closed.is_set()


def test_a_generator_that_starts_the_response_at_its_first_step_keeps_its_status_and_body():
    # PEP 3333 lets an app call start_response inside its iterable, up to its first chunk; the
    # start was queued after that chunk, and the client got an empty 200 (found by the lifecycle
    # corpus: /slow's body was lost)
    def handler(environ, start_response):
        def body():
            start_response("201 Created", [("X-Step", "first")])
            yield b""
            yield b"made"
        return body()

    app = Deadline(with_timeout(handler, lambda env: (env, False, None, new_timeout_error("x", 0))))
    resp = Client(app).get("/")
    assert (resp.status_code, resp.headers.get("X-Step"), resp.get_data()) == (201, "first", b"made")


def test_a_generator_that_starts_the_response_at_its_first_step_streams_through():
    # start_response is called inside the generator, so only once the filter iterates it (serve's
    # /slow?flush=1): its empty first chunk flushes the header and every chunk reaches the client
    def handler(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        yield b""
        yield b"slept 1s\n"

    app = Deadline(with_timeout(handler, lambda env: (env, False, None, new_timeout_error("x", 0))))
    resp = Client(app).get("/", buffered=False)
    assert (resp.status_code, resp.headers["Content-Type"]) == (200, "text/plain")
    assert list(resp.response) == [b"", b"slept 1s\n"]
    resp.close()


def test_a_handler_that_writes_nothing_gets_an_empty_200():
    app = Deadline(with_timeout(lambda environ, start_response: [], lambda env: (env, False, None, None)))
    resp = Client(app).get("/")
    assert (resp.status_code, resp.get_data(), resp.headers["Content-Length"]) == (200, b"", "0")


def test_post_timeout_activity_is_logged(caplog):
    release = rt.event("release")

    def handler(environ, start_response):
        release.wait(30)
        return []

    app = Deadline(with_timeout(handler, lambda env: (env, False, None, new_timeout_error("x", 0))))
    app.ctx = cancelled()
    with caplog.at_level(logging.ERROR, logger="genericserver.filters.timeout"):
        handler_goroutines_before = {g for g in rt.THREADS.live() if g.name == "timeout-handler"}
        assert Client(app).get("/api/v1/pods").status_code == 504
        (g,) = {g for g in rt.THREADS.live() if g.name == "timeout-handler"} - handler_goroutines_before
        release.set()
        assert g.join(30)
    assert '"Post-timeout activity" logger="UnhandledError"' in caplog.text
    assert 'method="GET" path="/api/v1/pods" result=null' in caplog.text


# -- under the simulation runtime: real deadlines on virtual time ----------------------------


def run_sim(main):
    return Simulation().run(main)


@pytest.mark.parametrize("work,expected", [(30.0, "200 OK"), (61.0, "504 Gateway Timeout")])
def test_the_deadline_fires_on_virtual_time(work, expected):
    out: dict = {}

    def main():
        def handler(environ, start_response):
            rt.sleep(work)
            try:
                start_response("200 OK", [])("done".encode())
            except ErrHandlerTimeout as err:
                out["late_write"] = err
            return []

        app = with_timeout_for_non_long_running_requests(handler, lambda env, info: False)
        ctx, cancel = gocontext.with_timeout(gocontext.background(), 60.0)
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", request.REQUEST_INFO_KEY: RequestInfo(verb="get")}
        request.with_context(environ, ctx)
        got = []
        body = app(environ, lambda status, headers, exc_info=None: got.append(status))
        out["status"], out["at"], out["body"] = got[0], rt.now(), b"".join(body)
        getattr(body, "close", lambda: None)()
        cancel()
        rt.sleep(10)  # let the abandoned handler finish its (virtual) work

    run_sim(main)
    assert out["status"] == expected
    assert out["at"] == min(work, 60.0)
    if expected.startswith("504"):
        assert out["body"] == GO_504_BODY
        assert isinstance(out["late_write"], ErrHandlerTimeout)
    else:
        assert out["body"] == b"done" and "late_write" not in out


def test_outer_slots_are_held_until_the_response_through_the_timeout_filter_is_closed():
    """Wait group outside, max-in-flight inside the timeout filter: both slots last the stream."""

    class CountingWaitGroup:
        inflight = 0

        def add(self, delta):
            self.inflight += delta

        def done(self):
            self.inflight -= 1

    out: dict = {}

    def main():
        wg = CountingWaitGroup()

        def streaming(environ, start_response):
            start_response("200 OK", [])

            def body():
                for i in range(3):
                    rt.sleep(1)
                    yield b"%d" % i

            return body()

        inner = with_max_in_flight_limit(streaming, 1, 1, None)
        app = with_wait_group(with_timeout_for_non_long_running_requests(inner, lambda e, i: False), lambda e, i: False, wg)
        env = lambda: {"REQUEST_METHOD": "GET", "PATH_INFO": "/", request.REQUEST_INFO_KEY: RequestInfo(verb="get")}  # noqa: E731
        sr = lambda status, headers, exc_info=None: out.setdefault("statuses", []).append(status)  # noqa: E731
        first = app(env(), sr)
        it = iter(first)
        out["chunk"] = next(it)
        out["wg_while_streaming"] = wg.inflight
        second = app(env(), sr)  # max-in-flight is still held by the first stream
        out["second"] = b"".join(second)
        second.close()
        out["rest"] = b"".join(it)
        out["wg_before_close"] = wg.inflight
        first.close()
        out["wg_after_close"] = wg.inflight

    run_sim(main)
    assert out["chunk"] == b"0" and out["rest"] == b"12"
    assert out["statuses"] == ["200 OK", "429 Too Many Requests"]
    assert out["second"] == b"Too many requests, please try again later.\n"
    assert (out["wg_while_streaming"], out["wg_before_close"], out["wg_after_close"]) == (1, 1, 0)


def test_a_handler_answering_because_the_deadline_passed_still_gets_the_client_a_504():
    # the handler gives up when its context ends and answers 503; by then the deadline has
    # passed, so the client must see the timeout filter's 504, not the handler's late answer
    from genericserver.testing.sim import Simulation

    def handler(environ, start_response):
        request.context_from(environ).done().wait()
        start_response("503 Service Unavailable", [("Content-Length", "0")])
        return [b""]

    def main():
        app = Deadline(with_timeout(handler, lambda env: (env, False, None, new_timeout_error("request did not complete within the allotted timeout", 0))))
        app.ctx, cancel = gocontext.with_timeout(gocontext.background(), 5.0)
        try:
            resp = Client(app).get("/api/v1/pods")
            return resp.status_code, rt.now()
        finally:
            cancel()

    # every interleaving of the waking handler and the waking caller: the same answer
    from genericserver.testing.sim import SeededRandom

    for seed in range(12):
        status, at = Simulation(chooser=SeededRandom(seed)).run(main)
        assert (seed, status, at) == (seed, 504, 5.0)


def test_a_whole_body_goes_over_in_one_piece_and_its_inner_response_closes_with_the_response():
    # a list under an on_close wrapper (as max-in-flight returns) is handed over whole, but
    # what the wrapper holds is still released only when the server closes the response
    closed = rt.event("inner-closed")

    def handler(environ, start_response):
        start_response("200 OK", [("Content-Length", "3")])
        return wsgi.on_close([b"abc"], closed.set)

    app = Deadline(with_timeout(handler, lambda env: (env, False, None, new_timeout_error("x", 0))))
    resp = Client(app).get("/", buffered=False)
    assert (resp.status_code, b"".join(resp.response)) == (200, b"abc")
    assert not closed.is_set()
    resp.close()
    assert closed.is_set()


@pytest.mark.parametrize("stream", [False, True], ids=["whole-body", "stream"])
def test_a_late_answer_that_lost_to_the_deadline_still_has_its_inner_response_closed(stream):
    # the handler's answer is queued, then the caller sees the deadline and sends the 504:
    # the handler's response (and the in-flight slot it holds) must still be closed
    closes: list[float] = []

    def handler(environ, start_response):
        request.context_from(environ).done().wait()
        start_response("503 Service Unavailable", [("Content-Length", "0")])
        body = iter([b""]) if stream else [b""]
        return wsgi.on_close(body, lambda: closes.append(rt.now()))

    def main():
        closes.clear()
        app = Deadline(with_timeout(handler, lambda env: (env, False, None, new_timeout_error("x", 0))))
        app.ctx, cancel = gocontext.with_timeout(gocontext.background(), 5.0)
        try:
            status = Client(app).get("/api/v1/pods").status_code
            rt.sleep(1)  # virtual time: the abandoned handler goroutine runs to its end
            return status, list(closes)
        finally:
            cancel()

    from genericserver.testing.sim import SeededRandom

    for seed in range(12):
        assert (seed, *Simulation(chooser=SeededRandom(seed)).run(main)) == (seed, 504, [5.0])


def test_a_handler_writing_because_the_deadline_passed_after_its_head_went_out_is_aborted():
    # /slow?flush=1 under the request timeout: its head is out, then the deadline wakes both the
    # handler (which writes "gave up" and returns) and the caller. Go's filter, woken by the
    # deadline, aborts (14 of 14 runs of genericserver-go); the handler's late chunk must not win
    from genericserver.testing.sim import SeededRandom

    def handler(environ, start_response):
        ctx = request.context_from(environ)
        start_response("200 OK", [("Content-Type", "text/plain")])

        def body():
            yield b""  # the head, at once
            ctx.done().wait()
            yield b"gave up waiting\n"

        return body()

    def main():
        app = Deadline(with_timeout(handler, lambda env: (env, False, None, new_timeout_error("x", 0))))
        app.ctx, cancel = gocontext.with_timeout(gocontext.background(), 5.0)
        resp = Client(app).get("/api/v1/pods", buffered=False)
        chunks = []
        try:
            for chunk in resp.response:
                chunks.append(chunk)
            return resp.status_code, chunks, "completed"
        except AbortHandler:
            return resp.status_code, chunks, "aborted"
        finally:
            resp.close()
            cancel()
            rt.sleep(1)  # virtual time: the abandoned handler goroutine runs to its end

    for seed in range(12):
        assert (seed, *Simulation(chooser=SeededRandom(seed)).run(main)) == (seed, 200, [b""], "aborted")


@pytest.mark.parametrize("stream", [False, True], ids=["whole-body", "stream"])
def test_post_timeout_activity_is_logged_once_whichever_side_saw_the_end_last(stream, caplog):
    # Go's post-timeout goroutine reads the handler's result whenever it comes, so a handler that
    # ended after the deadline is always logged, also when it queued its answer before the caller
    # woke (2 of 14 runs logged it before, against Go's 14 of 14)
    from genericserver.testing.sim import SeededRandom

    def handler(environ, start_response):
        request.context_from(environ).done().wait()
        start_response("503 Service Unavailable", [("Content-Length", "0")])
        return iter([b""]) if stream else [b""]

    def main():
        app = Deadline(with_timeout(handler, lambda env: (env, False, None, new_timeout_error("x", 0))))
        app.ctx, cancel = gocontext.with_timeout(gocontext.background(), 5.0)
        try:
            status = Client(app).get("/api/v1/pods").status_code
            rt.sleep(1)  # virtual time: the abandoned handler goroutine runs to its end
            return status
        finally:
            cancel()

    with caplog.at_level(logging.ERROR, logger="genericserver.filters.timeout"):
        for seed in range(12):
            caplog.clear()
            status = Simulation(chooser=SeededRandom(seed)).run(main)
            assert (seed, status, caplog.text.count('"Post-timeout activity"')) == (seed, 504, 1)

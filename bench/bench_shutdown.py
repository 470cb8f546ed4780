"""The shutdown tail on real sockets: how long run_with_context takes to return once nothing holds it (no Go twin).

The budget (design.md section 9): from the last in-flight request finishing, or the shutdown
delay ending, whichever is later, to ``run_with_context`` returning, under 50 ms. Everything in
that window is the shutdown machinery itself: the signals handing over to each other, the wait
groups, the audit backend's flush, the listener and the HTTP server's shutdown.

Each run builds a real server on 127.0.0.1 port 0 (the full handler chain, an audit backend, a
50 ms shutdown delay), cancels its context, and measures, for each mode:

* *request in flight*: a request is held in its handler through the delay and released right
  after AfterShutdownDelayDuration; the tail starts when the handler returns;
* *delay only*: nothing in flight; the tail starts when AfterShutdownDelayDuration fires.

Medians over RUNS runs, in milliseconds, printed beside the target. Then the stop lag of the HTTP
server alone: from ``shutdown()`` being called on an idle server to its ``serve`` returning, ours
against werkzeug's development server at its default ``poll_interval`` (walkthrough.md 8.3).
"""

from __future__ import annotations

import logging
import statistics
import time
from typing import Optional

from genericserver import runtime as rt
from genericserver.audit.memory import MemoryBackend
from genericserver.config import new_config
from genericserver.context import context as gocontext
from genericserver.net.http.server import listen
from genericserver.secure_serving import SecureServingInfo
from genericserver.testing.client import Client

RUNS = 10
DELAY = 0.05
TARGET_MS = 50.0
WAIT = 30.0


def ok(environ, start_response):
    start_response("200 OK", [("Content-Length", "0")])
    return [b""]


def _request(port: int, path: str) -> Optional[int]:
    with Client("127.0.0.1", port, new_connection=True) as c:
        return c.get(path, timeout=WAIT).status


def one_run(keep_listening: bool, hold_request: bool) -> float:
    """Seconds from the later of (held request done, delay over) to run_with_context returning."""
    c = new_config()
    c.shutdown_delay_duration = DELAY
    c.shutdown_send_retry_after = keep_listening
    c.audit_backend = c.audit_policy_rule_evaluator = MemoryBackend()
    c.secure_serving = SecureServingInfo(listener=listen("127.0.0.1", 0))
    port = c.secure_serving.listener.getsockname()[1]
    s = c.complete().new("bench")
    started, release = rt.event("held-started"), rt.event("held-release")
    marks: dict[str, float] = {}

    def held(environ, start_response):
        started.set()
        release.wait()
        start_response("200 OK", [("Content-Length", "0")])
        marks["request done"] = time.perf_counter()
        return [b""]

    s.handler.non_go_restful_mux.handle("/held", held)
    s.handler.non_go_restful_mux.handle("/ok", ok)
    delay_over = s.lifecycle_signals.after_shutdown_delay_duration
    delay_over.observe(lambda sig, at: marks.setdefault("delay over", time.perf_counter()))

    ctx, cancel = gocontext.with_cancel(gocontext.background())
    returned = rt.event("run-returned")
    errors: list[BaseException] = []

    def run() -> None:
        try:
            s.prepare_run().run_with_context(ctx)
        except BaseException as err:  # reported below
            errors.append(err)
        finally:
            marks["returned"] = time.perf_counter()
            returned.set()

    rt.go(run, name="bench-run")
    client_done = rt.event("held-client-done")
    try:
        assert _request(port, "/ok") == 200  # serving has begun
        if hold_request:
            rt.go(lambda: (_request(port, "/held"), client_done.set()), name="bench-held-client")
            assert started.wait(WAIT), "the held request never reached its handler"
        else:
            client_done.set()
        cancel()
        assert delay_over.signaled().wait(WAIT), "the shutdown delay never ended"
        release.set()
        assert returned.wait(WAIT), "run_with_context did not return"
        assert client_done.wait(WAIT)
    finally:
        cancel()
        release.set()
        returned.wait(WAIT)
    if errors:
        raise errors[0]
    start = max(marks["delay over"], marks.get("request done", 0.0))
    return marks["returned"] - start


def _stop_lag_ours() -> float:
    from genericserver.net.http.server import Server, ServerClosed

    srv, ln = Server(ok), listen()
    returned = rt.event("serve-returned")

    def serve() -> None:
        try:
            srv.serve(ln)
        except ServerClosed:
            returned.set()

    rt.go(serve, name="bench-serve")
    Client("127.0.0.1", ln.getsockname()[1], new_connection=True).get("/")  # serving for sure
    started = time.perf_counter()
    ctx, cancel = gocontext.with_timeout(gocontext.background(), WAIT)
    srv.shutdown(ctx)
    cancel()
    returned.wait(WAIT)
    return time.perf_counter() - started


def _stop_lag_werkzeug() -> float:
    import threading

    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    srv = make_server("127.0.0.1", 0, ok, threaded=True)
    t = threading.Thread(target=srv.serve_forever, name="bench-werkzeug")  # its default poll_interval
    t.start()
    Client("127.0.0.1", srv.server_port, new_connection=True).get("/")
    started = time.perf_counter()
    srv.shutdown()
    elapsed = time.perf_counter() - started
    srv.server_close()
    t.join(WAIT)
    return elapsed


def stop_lags() -> None:
    ours = statistics.median(_stop_lag_ours() * 1000 for _ in range(RUNS))
    werkzeug = statistics.median(_stop_lag_werkzeug() * 1000 for _ in range(RUNS))
    print(f"stop lag of an idle HTTP server, median of {RUNS}: ours {ours:.2f} ms, werkzeug {werkzeug:.1f} ms "
          f"({werkzeug / ours:.0f}x)")


def main() -> None:
    logging.getLogger("genericserver").setLevel(logging.ERROR)
    modes = [("default", False), ("retry-after", True)]
    cases = [("request in flight", True), ("delay only", False)]
    print(f"shutdown tail, median of {RUNS} runs on real sockets ({DELAY * 1000:.0f} ms delay); target < {TARGET_MS:.0f} ms")
    print(f"{'mode':12s} " + " ".join(f"{name:>28s}" for name, _ in cases))
    worst = 0.0
    for mode, keep_listening in modes:
        cells = []
        for _, hold in cases:
            tails = [one_run(keep_listening, hold) * 1000 for _ in range(RUNS)]
            median = statistics.median(tails)
            worst = max(worst, median)
            cells.append(f"{median:7.2f} ms (max {max(tails):6.2f})")
        print(f"{mode:12s} " + " ".join(f"{cell:>28s}" for cell in cells))
    verdict = "within" if worst < TARGET_MS else "OVER"
    print(f"worst median {worst:.2f} ms: {verdict} the {TARGET_MS:.0f} ms target")
    stop_lags()


if __name__ == "__main__":
    main()

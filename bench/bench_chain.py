"""What the default v1.36.0 handler chain costs per request, against a bare WSGI app (no Go twin).

In process: the same trivial app called bare and through ``default_build_handler_chain``, with
werkzeug-built environs (one template made by ``EnvironBuilder``, copied per request, so the
builder is not measured), each response iterated and closed as a server would. The calls are
made from a goroutine, as ``genericserver.net.http.server`` calls the chain (each connection is
served by one). Rounds alternate between the variants; medians are shown. Variants: the default
config (no audit, authentication and authorization off) and the chain with the in-memory audit
backend plus an AlwaysAllow authorizer. Two diagnostic rows leave out the timeout filter (its
per-request goroutine and hand-offs) and then also the request-deadline filter (its context and
deadline timer), to show where the cost is. One more row calls the default chain from a plain
thread, as werkzeug's threaded server would: such a thread is not placed on a CPU
(:mod:`genericserver.runtime.speed_tricks` places goroutine threads only), so the timeout filter's
goroutine may start on, and wake it from, the other core.

Over loopback: ``genericserver.net.http.server.Server`` serving the bare app and the full chain, one
keep-alive client, 1,000 requests each in each of 7 rounds (design.md budget: the chain at least
0.9x the bare app's throughput), and a bare app on werkzeug's threaded server. Then, with a Go
toolchain, the same three beside a bare Go net/http handler, all under one Go load client
(:mod:`bench.versus_go`). The HTTP/1 port's first-round line (the chain's ratio to the werkzeug
app kept at its level before the port) is retired: Go's checks cost what they cost, and
``make instructions`` counts it instead.

When the overhead is well over the target, a short cProfile run lists the top costs.
Run: ``python -m bench chain``.
"""

from __future__ import annotations

import cProfile
import http.client
import io
import logging
import pstats
import statistics
import time
from typing import Callable

from werkzeug.test import EnvironBuilder

from genericserver import runtime as rt
from genericserver.audit.memory import MemoryBackend
from genericserver.authz import ALWAYS_ALLOW
from genericserver.chain import build, handler_chain_steps
from genericserver.config import new_config

from bench import versus_go
from bench.serving import serve, serve_werkzeug

TARGET_OVERHEAD_US = 60.0
THROUGHPUT_BUDGET = 0.9
ROUND_SECONDS = 0.4
ROUNDS = 3
# over loopback: enough rounds and requests that this VM's swings (10-20% between runs of a few
# hundred requests) mostly cancel; each round measures the three servers one after the other
LOOPBACK_ROUNDS = 7
LOOPBACK_REQUESTS = 1000
PATH = "/api/v1/namespaces/default/pods/p1"
BODY = b"ok"


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))])
    return [BODY]


def _start_response(status, headers, exc_info=None):
    return None


def default_chain() -> Callable:
    c = new_config().complete().config
    return c.build_handler_chain_func(app, c)


def audited_chain() -> Callable:
    c = new_config().complete().config
    c.audit_backend = c.audit_policy_rule_evaluator = MemoryBackend()
    c.authorizer = ALWAYS_ALLOW
    return c.build_handler_chain_func(app, c)


def chain_without(*names: str) -> Callable:
    """The default chain minus some steps (diagnostics only: not a chain anyone should run)."""
    c = new_config().complete().config
    return build(app, [s for s in handler_chain_steps(c) if s.name not in names])


def _per_request_us(handler: Callable, template: dict, seconds: float) -> float:
    """Microseconds per request, calling ``handler`` for about ``seconds``."""
    n = 0
    started = time.perf_counter()
    deadline = started + seconds
    while True:
        for _ in range(50):
            body = handler(dict(template), _start_response)
            for _chunk in body:
                pass
            close = getattr(body, "close", None)
            if close is not None:
                close()
        n += 50
        now = time.perf_counter()
        if now >= deadline:
            return (now - started) / n * 1e6


def _in_goroutine(fn: Callable[[], float]) -> float:
    out: list[float] = []
    g = rt.go(lambda: out.append(fn()), name="bench-chain")
    g.join()
    if g.exception is not None:
        raise g.exception
    return out[0]


def in_process() -> dict[str, float]:
    template = EnvironBuilder(path=PATH, headers={"User-Agent": "bench"}).get_environ()
    variants = {
        "bare app": app,
        "default chain": default_chain(),
        "chain + memory audit + AlwaysAllow": audited_chain(),
        "(diagnostic) without timeout": chain_without("timeout"),
        "(diagnostic) without timeout, request-deadline": chain_without("timeout", "request-deadline"),
    }
    for handler in variants.values():  # warm up
        _in_goroutine(lambda: _per_request_us(handler, template, 0.05))
    rows: dict[str, list[float]] = {name: [] for name in variants}
    rows[PLAIN_THREAD] = []
    for _ in range(ROUNDS):
        for name, handler in variants.items():
            rows[name].append(_in_goroutine(lambda: _per_request_us(handler, template, ROUND_SECONDS)))
        rows[PLAIN_THREAD].append(_per_request_us(variants["default chain"], template, ROUND_SECONDS))
    return {name: statistics.median(v) for name, v in rows.items()}


PLAIN_THREAD = "(diagnostic) default chain, from a plain thread"


def profile_top(handler: Callable, n: int = 10) -> str:
    """The top costs by own time, then the runtime, timeout and context functions by cumulative time."""
    template = EnvironBuilder(path=PATH).get_environ()
    pr = cProfile.Profile()
    pr.enable()
    _per_request_us(handler, template, 0.5)
    pr.disable()
    out = io.StringIO()
    stats = pstats.Stats(pr, stream=out)
    stats.sort_stats("tottime").print_stats(n)
    # where the blocking comes from: thread starts and hand-offs of the runtime seam
    stats.sort_stats("cumulative").print_stats(r"runtime/__init__.py|timeout.py|context/context.py", n)
    return "\n".join(line for line in out.getvalue().splitlines() if line.strip())


def _loopback_rate(handler: Callable, server: Callable = serve) -> float:
    port, stop = server(handler)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for _ in range(20):  # warm up, and open the keep-alive connection
            conn.request("GET", PATH)
            conn.getresponse().read()
        started = time.perf_counter()
        for _ in range(LOOPBACK_REQUESTS):
            conn.request("GET", PATH)
            r = conn.getresponse()
            assert r.status == 200 and r.read() == BODY, r.status
        rate = LOOPBACK_REQUESTS / (time.perf_counter() - started)
        conn.close()
        return rate
    finally:
        stop()


def loopback() -> dict[str, float]:
    rows: dict[str, list[float]] = {"bare app": [], "default chain": [], "bare app on werkzeug's threaded server": []}
    for _ in range(LOOPBACK_ROUNDS):
        rows["bare app"].append(_loopback_rate(app))
        rows["default chain"].append(_loopback_rate(default_chain()))
        rows["bare app on werkzeug's threaded server"].append(_loopback_rate(app, serve_werkzeug))
    return {name: statistics.median(v) for name, v in rows.items()}


def report_in_process() -> float:
    us = in_process()
    bare = us["bare app"]
    print(f"in process, from a goroutine, per request (median of {ROUNDS} rounds of {ROUND_SECONDS:g} s):")
    for name, value in us.items():
        extra = "" if name == "bare app" else f"   overhead {value - bare:8.1f} us   ratio {value / bare:7.1f}x"
        print(f"  {name:50s} {value:8.1f} us{extra}")
    overhead = us["default chain"] - bare
    verdict = "met" if overhead <= TARGET_OVERHEAD_US else "MISSED"
    print(f"  target: default chain overhead <= {TARGET_OVERHEAD_US:g} us/request: {verdict} ({overhead:.1f} us)")
    return overhead


def main() -> None:
    # the chain warns once per build that authn/authz are off; keep the output to the numbers
    logging.getLogger("genericserver").setLevel(logging.ERROR)
    overhead = report_in_process()

    rates = loopback()
    print(f"over loopback, one keep-alive client, {LOOPBACK_REQUESTS} requests (median of {LOOPBACK_ROUNDS} rounds):")
    for name, rate in rates.items():
        print(f"  {name:50s} {rate:8.0f} req/s   {1e6 / rate:8.1f} us/request")
    ratio = rates["default chain"] / rates["bare app"]
    print(f"  full chain / bare app, both on our server: {ratio:.2f}x")
    ratio = rates["default chain"] / rates["bare app on werkzeug's threaded server"]
    verdict = "met" if ratio >= THROUGHPUT_BUDGET else "MISSED"
    print(f"  budget (design.md 9): full chain >= {THROUGHPUT_BUDGET:g}x a bare werkzeug app: {verdict} ({ratio:.2f}x)")
    versus_go.report({"bare app, our server": lambda: serve(app), "default chain, our server": lambda: serve(default_chain())})

    if overhead > 3 * TARGET_OVERHEAD_US:
        print("top costs of the default chain (cProfile):")
        print(profile_top(default_chain()))


if __name__ == "__main__":
    main()

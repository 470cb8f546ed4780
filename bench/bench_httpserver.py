"""Requests per second over loopback: genericserver.httpserver against werkzeug's threaded server (no Go twin).

One client thread, a trivial app, the same run. Our server keeps the connection alive (as Go's
does); werkzeug's always answers ``Connection: close``, so its client dials once per request.
Our server is also measured with a new connection per request, which isolates what keep-alive buys
from what the request path itself costs. Rounds alternate between the servers; medians are shown.
"""

from __future__ import annotations

import http.client
import logging
import statistics
import threading
import time
from typing import Callable

from werkzeug.serving import make_server

from genericserver import context as gocontext
from genericserver import httpserver as hs
from genericserver import runtime as rt

ROUND_SECONDS = 1.0
ROUNDS = 3
BODY = b"hello"


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))])
    return [BODY]


def _rate(port: int, new_connection: bool) -> float:
    """Requests per second one client gets for ROUND_SECONDS."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    n, started = 0, time.perf_counter()
    deadline = started + ROUND_SECONDS
    while time.perf_counter() < deadline:
        conn.request("GET", "/")
        r = conn.getresponse()
        assert r.read() == BODY
        n += 1
        if new_connection:
            conn.close()
    conn.close()
    return n / (time.perf_counter() - started)


def _ours() -> tuple[int, Callable[[], None]]:
    srv = hs.Server(app)
    ln = hs.listen()

    def serve() -> None:
        try:
            srv.serve(ln)
        except hs.ServerClosed:
            pass

    g = rt.go(serve, name="bench-serve")

    def stop() -> None:
        ctx, cancel = gocontext.with_timeout(gocontext.background(), 5.0)
        srv.shutdown(ctx)
        cancel()
        g.join(5.0)

    return ln.getsockname()[1], stop


def _werkzeugs() -> tuple[int, Callable[[], None]]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, name="bench-werkzeug")
    t.start()

    def stop() -> None:
        srv.shutdown()
        srv.server_close()
        t.join(5.0)

    return srv.server_port, stop


def main() -> None:
    rows = {"ours, keep-alive": [], "ours, new connection each": [], "werkzeug threaded (closes each)": []}
    for _ in range(ROUNDS):
        port, stop = _ours()
        try:
            rows["ours, keep-alive"].append(_rate(port, new_connection=False))
            rows["ours, new connection each"].append(_rate(port, new_connection=True))
        finally:
            stop()
        port, stop = _werkzeugs()
        try:
            rows["werkzeug threaded (closes each)"].append(_rate(port, new_connection=True))
        finally:
            stop()
    medians = {k: statistics.median(v) for k, v in rows.items()}
    for name, rate in medians.items():
        print(f"{name:34s} {rate:9.0f} req/s")
    base = medians["werkzeug threaded (closes each)"]
    print(f"ratio ours keep-alive / werkzeug: {medians['ours, keep-alive'] / base:.2f}x")
    print(f"ratio ours new connection / werkzeug: {medians['ours, new connection each'] / base:.2f}x")


if __name__ == "__main__":
    main()

"""Requests per second over loopback: genericserver.httpserver against werkzeug's threaded server (no Go twin).

One client thread, a trivial app, the same run. Our server keeps the connection alive (as Go's
does); werkzeug's always answers ``Connection: close``, so its client dials once per request.
Our server is also measured with a new connection per request, which isolates what keep-alive buys
from what the request path itself costs. Rounds alternate between the servers; medians are shown.
"""

from __future__ import annotations


import http.client
import statistics
import time


from bench.serving import serve, serve_werkzeug


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


def main() -> None:
    rows = {"ours, keep-alive": [], "ours, new connection each": [], "werkzeug threaded (closes each)": []}
    for _ in range(ROUNDS):
        port, stop = serve(app)
        try:
            rows["ours, keep-alive"].append(_rate(port, new_connection=False))
            rows["ours, new connection each"].append(_rate(port, new_connection=True))
        finally:
            stop()
        port, stop = serve_werkzeug(app)
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

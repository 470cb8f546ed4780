"""Requests per second over loopback: genericserver.net.http.server against werkzeug's threaded server (no Go twin).

One client thread, a trivial app, the same run. Our server keeps the connection alive (as Go's
does); werkzeug's always answers ``Connection: close``, so its client dials once per request.
Our server is also measured with a new connection per request, which isolates what keep-alive buys
from what the request path itself costs. Rounds alternate between the servers; medians are shown.

Then, in process, what the request path costs per request and what its steps cost, each measured
alone (issue 11's question: what do Go's checks cost?): the whole path over a fake socket that
holds many pipelined requests and swallows the answers; Go's ``readRequest`` (request line,
header, framing, with its checks); the server's checks on what it read (``conn.readRequest``:
version, Host, header names and values, the last two already passed when the header was read at
one go); the WSGI environ; the request's context; the background
read's start and abort on a real socket; the answer (``chunkWriter.writeHeader`` and the body).
"""

from __future__ import annotations


import http.client
import socket
import statistics
import time
from typing import Callable

from genericserver.bufio import bufio
from genericserver.context import context as gocontext
from genericserver.net.http import request as httprequest
from genericserver.net.http import response as httpresponse
from genericserver.net.http import server as httpserver
from genericserver.net.http.connreader import BackgroundReads

from bench.fakes import BODY, REQUEST, FakeSocket, app
from bench.serving import serve, serve_werkzeug


ROUND_SECONDS = 1.0
ROUNDS = 3


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


PIPELINED = 2000


def _us(step: Callable[[], object], n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        step()
    return (time.perf_counter() - started) / n * 1e6


def _whole_path() -> float:
    server = httpserver.Server(app)
    c = httpserver.Conn(1, FakeSocket(REQUEST * PIPELINED), ("127.0.0.1", 50000))
    server.prepare_conn(c)  # what serving a connection sets up before its first request
    started = time.perf_counter()
    while server._serve_one(c) and server._wait_for_next_request(c):
        pass
    return (time.perf_counter() - started) / PIPELINED * 1e6


def _parsed() -> list:
    b = bufio.Reader(FakeSocket(REQUEST * PIPELINED).recv)
    return [httprequest.read_request(b) for _ in range(PIPELINED)]


def _read_request() -> float:
    b = bufio.Reader(FakeSocket(REQUEST * PIPELINED).recv)
    return _us(lambda: httprequest.read_request(b), PIPELINED)


def _server_checks() -> float:
    # conn.readRequest's checks after readRequest: the whole of Server._read_request, minus readRequest
    server = httpserver.Server(app)
    c = httpserver.Conn(1, FakeSocket(REQUEST * PIPELINED), ("127.0.0.1", 50000))
    return _us(lambda: server._read_request(c), PIPELINED) - _read_request()


def _environ() -> float:
    c = httpserver.Conn(1, FakeSocket(b""), ("127.0.0.1", 50000))
    reqs = iter(_parsed())
    return _us(lambda: httprequest.environ(c, next(reqs)), PIPELINED)


def _context() -> float:
    parent, cancel_parent = gocontext.with_cancel(gocontext.background())

    def step() -> None:
        _, cancel = gocontext.with_cancel(parent)
        cancel()

    us = _us(step, PIPELINED)
    cancel_parent()
    return us


def _background_read() -> float:
    reads = BackgroundReads("bench-background-read")
    a, b = socket.socketpair()
    try:
        us = _us(lambda: (reads.start(b, _nothing), reads.abort(b)), PIPELINED)
        reads.forget(b)
    finally:
        reads.stop_when_idle()
        a.close()
        b.close()
    return us


def _nothing() -> None:
    pass


def _answer() -> float:
    c = httpserver.Conn(1, FakeSocket(b""), ("127.0.0.1", 50000))
    reqs = iter(_parsed())

    def step() -> None:
        resp = httpresponse.Response(c, next(reqs), lambda: True, print)
        resp.start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))])
        resp.send_body([BODY])
        resp.finish_request()

    return _us(step, PIPELINED)


STEPS = {
    "whole request path (fake socket)": _whole_path,
    "  Go's readRequest: line, header, framing": _read_request,
    "  conn.readRequest's checks (version, Host...)": _server_checks,
    "  the WSGI environ": _environ,
    "  the request's context (WithCancel, cancel)": _context,
    "  background read: start + abort": _background_read,
    "  the answer: writeHeader + body": _answer,
}


def in_process() -> None:
    rows: dict[str, list[float]] = {name: [] for name in STEPS}
    for _ in range(ROUNDS + 2):
        for name, measure in STEPS.items():
            rows[name].append(measure())
    print(f"in process, per request ({PIPELINED} requests, median of {ROUNDS + 2} rounds):")
    for name, values in rows.items():
        print(f"  {name:46s} {statistics.median(values):6.1f} us")


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
    in_process()


if __name__ == "__main__":
    main()

"""The HTTP/2 shutdown corpus: scenarios a Go HTTP/2 client runs against a Go HTTP/2 server that
shuts down (recorded by ``record_shutdown.py`` with ``h2shutdown/``), replayed against genericserver by
``tests/test_parity_h2shutdown.py`` (tests/parity/README.md, "The HTTP/2 shutdown corpus").

A scenario is a list of steps, read the same way by the Go recorder and the Python replay:

* ``request(id, path[, method])``: the client sends ``GET path`` (or ``method``) in the background;
* ``started(tag)``: wait until the handler of the request with ``tag=`` in its query runs;
* ``done(id)``: wait until request ``id`` has its answer or error;
* ``sleep(ms)``;
* ``shutdown(timeout_ms)``: call ``Shutdown`` in the background with that deadline; every time
  recorded is in milliseconds after this call;
* ``shutdown_returned()``: wait until ``Shutdown`` returned;
* ``close()``: the server's ``Close``.
"""

from __future__ import annotations

from dataclasses import dataclass

from parity.shutdowns import shutdown, shutdown_returned, sleep, started


def request(id: str, path: str, method: str = "GET") -> dict:
    step = {"op": "request", "id": id, "path": path}
    if method != "GET":
        step["method"] = method
    return step



def done(id: str) -> dict:
    return {"op": "done", "id": id}





def close() -> dict:
    return {"op": "close"}


@dataclass(frozen=True)
class Scenario:
    id: str
    description: str
    steps: tuple


SCENARIOS = [
    Scenario("idle-connection", "an HTTP/2 connection with no stream open when Shutdown starts: Go 1.26's client "
             "leaves it open on reading the GOAWAY, the server closes it goAwayTimeout (1 s) later, and Shutdown "
             "returns at its next poll; the next request dials and is refused",
             (request("a", "/echo"), done("a"), shutdown(5000), shutdown_returned(), request("b", "/echo"), done("b"))),
    Scenario("stream-in-flight", "a request in flight when Shutdown starts gets its 200 on its connection; "
             "a request sent after the GOAWAY goes to a new connection and is refused; the client closes the "
             "GOAWAY'd connection once the stream ended, and Shutdown returns at its next poll",
             (request("a", "/slow?ms=800&tag=a"), started("a"), shutdown(5000), sleep(200),
              request("b", "/echo"), done("b"), done("a"), shutdown_returned())),
    Scenario("two-streams-in-flight", "two streams in flight on one connection: both answered; Shutdown "
             "returns once the client closed the connection after the later one",
             (request("a", "/slow?ms=500&tag=a"), started("a"), request("b", "/slow?ms=900&tag=b"), started("b"),
              shutdown(5000), done("a"), done("b"), shutdown_returned())),
    Scenario("streaming-in-flight", "a streamed answer whose header went out before Shutdown: its body "
             "still comes",
             (request("a", "/stream?ms=700&tag=a"), started("a"), shutdown(5000), done("a"), shutdown_returned())),
    Scenario("shutdown-deadline", "a stream longer than Shutdown's deadline: Shutdown returns the "
             "deadline's error, Close then ends the connection under the stream",
             (request("a", "/slow?ms=3000&tag=a"), started("a"), shutdown(500), shutdown_returned(), close(), done("a"))),
    Scenario("head-and-lengths", "what the answers' headers say before Shutdown: a HEAD of /echo (its "
             "content-length, no body: Go ends the stream with the HEADERS), an empty answer (content-length: 0), "
             "a HEAD answered 404 (http.NotFound's length and nosniff), a GET of /echo",
             (request("a", "/echo", "HEAD"), done("a"), request("b", "/empty"), done("b"),
              request("c", "/no-such-path", "HEAD"), done("c"), request("d", "/echo"), done("d"),
              shutdown(5000), shutdown_returned())),
    Scenario("connection-close", "a handler's Connection: close is a graceful GOAWAY: the answer comes, "
             "the next request takes a new connection",
             (request("a", "/close"), done("a"), sleep(100), request("b", "/echo"), done("b"), shutdown(5000),
              shutdown_returned())),
]

SCENARIOS_BY_ID = {s.id: s for s in SCENARIOS}

"""The HTTP/1 shutdown corpus: raw connections to a Go net/http server that shuts down (recorded
by ``record_shutdown.py`` with ``h1shutdown/``), replayed against genericserver by
``tests/test_parity_h1shutdown.py`` (tests/parity/README.md, "The HTTP/1 shutdown corpus").

A scenario holds the server's settings (TLS or not; a read-header or idle timeout shortened so
that it fits a test) and a list of steps, read the same way by the Go recorder and the replay:

* ``dial(c)``: open connection ``c`` (and its TLS handshake); a refused dial is the connection's end;
* ``send(c, data)``: write raw bytes;
* ``seen(c, text)``: wait until ``c`` received ``text``, or ended;
* ``idle(c)``: wait until the server marked ``c`` idle (its ``ConnState`` hook): the client can
  read an answer before the server's bookkeeping after it, a race Go wins by far and a loaded
  machine's Python thread does not always;
* ``ended(c)``: wait until the server ended ``c`` (EOF or RST);
* ``close_write(c)``: half-close (over TLS, close_notify first);
* ``close(c)``: the client leaves altogether;
* ``started(tag)``: wait until the handler of the request with ``tag=`` runs;
* ``sleep(ms)``;
* ``shutdown(timeout_ms)``: call ``Shutdown`` in the background with that deadline; every time
  recorded is in milliseconds after this call (0 before it);
* ``shutdown_returned()``; ``server_close()``: the server's ``Close``.

Recorded per connection: the bytes received (Date values blanked), how it ended (``EOF``,
``RST``, ``refused``, or ``open``: still open when the steps were done) and when; per tag, when
the request's context ended; when ``Shutdown`` returned and its error.
"""

from __future__ import annotations

from dataclasses import dataclass

from parity.shutdowns import shutdown, shutdown_returned, sleep, started


def dial(c: str) -> dict:
    return {"op": "dial", "conn": c}


def send(c: str, data: str) -> dict:
    return {"op": "send", "conn": c, "data": data}


def seen(c: str, text: str) -> dict:
    return {"op": "seen", "conn": c, "text": text}


def idle(c: str) -> dict:
    return {"op": "idle", "conn": c}


def ended(c: str) -> dict:
    return {"op": "ended", "conn": c}


def close_write(c: str) -> dict:
    return {"op": "close_write", "conn": c}


def close(c: str) -> dict:
    return {"op": "close", "conn": c}


def server_close() -> dict:
    return {"op": "server_close"}


def get(path: str, *headers: str, proto: str = "HTTP/1.1") -> str:
    return f"GET {path} {proto}\r\nHost: example.com\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n"


def post(path: str, length: int, body: str, *headers: str) -> str:
    return (f"POST {path} HTTP/1.1\r\nHost: example.com\r\nContent-Length: {length}\r\n"
            + "".join(h + "\r\n" for h in headers) + "\r\n" + body)


@dataclass(frozen=True)
class Scenario:
    id: str
    description: str
    steps: tuple
    tls: bool = False
    read_header_timeout_ms: int = 0  # 0: secure_serving.go's 32 s
    idle_timeout_ms: int = 0  # 0: secure_serving.go's 90 s

    def script(self) -> dict:
        return {"id": self.id, "tls": self.tls, "read_header_timeout_ms": self.read_header_timeout_ms,
                "idle_timeout_ms": self.idle_timeout_ms, "steps": list(self.steps)}


SCENARIOS = [
    Scenario("new-and-silent", "a connection that sent nothing is new, not idle, for its first 5 s: Shutdown "
             "waits for it until its deadline and leaves it open",
             (dial("a"), sleep(100), shutdown(1000), shutdown_returned())),
    Scenario("idle-keep-alive", "an idle keep-alive connection is closed at once and Shutdown returns",
             (dial("a"), send("a", get("/echo")), seen("a", "ok"), idle("a"), shutdown(3000), ended("a"),
              shutdown_returned())),
    Scenario("active-then-idle", "a request in flight is answered; its connection closes once idle, then "
             "Shutdown returns",
             (dial("a"), send("a", get("/slow?ms=600&tag=a")), started("a"), shutdown(3000), seen("a", "slept"),
              ended("a"), shutdown_returned())),
    Scenario("active-unread-body", "a keep-alive request whose handler answers without reading the small "
             "body left: Go reads the rest before it writes the answer, so it waits for bytes that never come "
             "and Shutdown meets its deadline",
             (dial("a"), send("a", post("/slow?ms=300&tag=a", 100, "0123456789")), started("a"), shutdown(1000),
              shutdown_returned())),
    Scenario("close-unread-body", "Connection: close with part of a small body unread: Go answers and closes, "
             "so Shutdown does not wait for the rest",
             (dial("a"), send("a", post("/slow?ms=300&tag=a", 100, "0123456789", "Connection: close")), started("a"),
              shutdown(3000), seen("a", "slept"), ended("a"), shutdown_returned())),
    Scenario("http10-unread-body", "an HTTP/1.0 request with part of its body unread: answered and closed",
             (dial("a"), send("a", "POST /slow?ms=300&tag=a HTTP/1.0\r\nContent-Length: 100\r\n\r\n0123456789"),
              started("a"), shutdown(3000), seen("a", "slept"), ended("a"), shutdown_returned())),
    Scenario("streaming", "a streamed answer in flight: its body is finished, then the connection closes",
             (dial("a"), send("a", get("/stream?ms=500&tag=a")), started("a"), shutdown(3000), seen("a", "done"),
              ended("a"), shutdown_returned())),
    Scenario("watch-client-left", "a watch whose client closed its connection: the background read sees the "
             "end, the request's context is cancelled and Shutdown returns",
             (dial("a"), send("a", get("/watch?tag=a")), started("a"), seen("a", "chunked\r\n\r\n"), close("a"), sleep(200), shutdown(3000),
              shutdown_returned())),
    Scenario("watch-client-half-closed", "a watch whose client half-closed (FIN): the same as leaving for Go's "
             "background read",
             (dial("a"), send("a", get("/watch?tag=a")), started("a"), close_write("a"), sleep(200), shutdown(3000),
              shutdown_returned())),
    Scenario("tls-close-notify", "over TLS, a client that leaves politely (close_notify, then FIN) while its "
             "slow request runs: its context is cancelled",
             (dial("a"), send("a", get("/slow?ms=3000&tag=a")), started("a"), close_write("a"), sleep(200),
              shutdown(3000), shutdown_returned()), tls=True),
    Scenario("http10", "an HTTP/1.0 request: answered and closed, nothing left for Shutdown",
             (dial("a"), send("a", get("/echo", proto="HTTP/1.0")), seen("a", "ok"), ended("a"), shutdown(3000),
              shutdown_returned())),
    Scenario("connection-close", "a request with Connection: close: answered and closed",
             (dial("a"), send("a", get("/echo", "Connection: close")), seen("a", "ok"), ended("a"), shutdown(3000),
              shutdown_returned())),
    Scenario("expect-100-unanswered", "Expect: 100-continue, and a handler that never reads the body: no 100, "
             "the answer; then Shutdown",
             (dial("a"), send("a", post("/echo", 10, "", "Expect: 100-continue")), seen("a", "ok"), sleep(100),
              shutdown(1000), shutdown_returned())),
    Scenario("dial-after-shutdown", "a connection dialled once Shutdown has closed the listener is refused "
             "(first a request answered and closed: Serve had begun, else Shutdown can return before Serve "
             "tracks the listener, which stays open until Serve runs)",
             (dial("w"), send("w", get("/echo", "Connection: close")), seen("w", "ok"), ended("w"), shutdown(3000),
              shutdown_returned(), dial("a"))),
    Scenario("request-after-idle-closed", "a request sent on a keep-alive connection that Shutdown closed "
             "as idle: the client reads the end first, the request is never read (sent at once, it would race "
             "the close: EOF or RST)",
             (dial("a"), send("a", get("/echo")), seen("a", "ok"), idle("a"), shutdown(3000), sleep(100),
              send("a", get("/echo")), ended("a"), shutdown_returned())),
    Scenario("read-header-timeout", "a header that never ends: the connection is closed at the read-header "
             "timeout",
             (dial("a"), send("a", "GET /echo HTTP/1.1\r\nHost: example.com\r\n"), ended("a"), shutdown(3000),
              shutdown_returned()), read_header_timeout_ms=300),
    Scenario("idle-timeout", "a keep-alive connection idle past the idle timeout is closed",
             (dial("a"), send("a", get("/echo")), seen("a", "ok"), ended("a"), shutdown(3000), shutdown_returned()),
             idle_timeout_ms=300),
    Scenario("shutdown-deadline-then-close", "a request longer than Shutdown's deadline: the deadline's error, "
             "then Close ends the connection under it",
             (dial("a"), send("a", get("/slow?ms=3000&tag=a")), started("a"), shutdown(400), shutdown_returned(),
              server_close(), ended("a"))),
]

SCENARIOS_BY_ID = {s.id: s for s in SCENARIOS}

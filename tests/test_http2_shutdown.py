"""The shutdown as an HTTP/2 client sees it: ``genericserver serve`` over TLS, the h2 client, SIGTERM.

Default mode: Go's ``http.Server.Shutdown`` runs once the server stops accepting requests, and
its on-shutdown hook sends every HTTP/2 connection a GOAWAY (NO_ERROR, the last stream it took);
the streams in flight finish, a newer one is never answered, the process exits 0.
Retry-after mode: the listener stays open; a new stream gets 429 with ``Retry-After`` and
``Connection: close``, which the HTTP/2 server turns into a GOAWAY after the answer."""

from __future__ import annotations

import threading

import h2.errors
import h2.events
import pytest

from h2client import H2Client
from serverprocess import ServerProcess

WAIT = 30.0


TOKEN = "h2-token"


@pytest.fixture
def tls_server(tls_cert, tmp_path):
    started: list[ServerProcess] = []
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f"{TOKEN},alice,uid-alice\n")

    def start(*flags: str) -> ServerProcess:
        cert, key = tls_cert
        sp = ServerProcess("--v=1", "--tls-cert-file", cert, "--tls-private-key-file", key, "--token-auth-file", str(tokens), *flags)
        started.append(sp)
        return sp

    yield start
    for sp in started:
        sp.kill()


def ready_client(sp: ServerProcess, ca: str) -> H2Client:
    """An HTTP/2 connection once /readyz is green (the post-start hooks run in the server's goroutines)."""
    c = H2Client(sp.port, ca, token=TOKEN)  # an authenticated client keeps its connection
    pace = threading.Event()  # never set: its timed wait paces the polling
    for _ in range(int(WAIT / 0.02)):
        status, _, body = c.response(c.request("/readyz"))
        if status == 200:
            return c
        assert status == 500 and b"poststarthook/" in body
        pace.wait(0.02)
    pytest.fail("/readyz never turned green")


def test_sigterm_sends_goaway_and_the_stream_in_flight_gets_its_200(tls_server, tls_cert):
    sp = tls_server("--shutdown-delay-duration", "500ms")
    c = ready_client(sp, tls_cert[0])
    # admitted long before the delay ends, still running when Shutdown starts
    slow = c.request("/slow?seconds=1")
    sp.signal()
    sp.expect(r'name="ShutdownInitiated"')
    status, _, body = c.response(c.request("/readyz"))  # the same connection, still served in the delay
    assert status == 500 and b"[-]shutdown failed: reason withheld" in body
    sp.expect(r'name="NotAcceptingNewRequest"')  # then Shutdown, whose hook sends the GOAWAY
    ga = c.goaway()
    last = c.conn.highest_outbound_stream_id
    assert (ga.error_code, ga.last_stream_id) == (h2.errors.ErrorCodes.NO_ERROR, last)
    late = c.request_after_goaway("/echo?message=after-the-goaway")  # newer than the last id
    status, _, body = c.response(slow)
    assert (status, body) == (200, b"slept 1s\n")
    assert not c.of(h2.events.ResponseReceived, late)
    c.close()  # as Go's client hangs up on a GOAWAY'd connection once it is idle
    assert sp.wait() == 0


def test_an_anonymous_client_gets_a_goaway_after_each_answer(tls_server, tls_cert):
    sp = tls_server()
    c = H2Client(sp.port, tls_cert[0])
    sid = c.request("/version")  # (not /livez: red until the post-start hooks finished)
    assert c.response(sid)[0] == 200
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (h2.errors.ErrorCodes.NO_ERROR, sid)
    c.close()  # (the server would close it a second later: tests/test_http2server.py)


def test_retry_after_mode_answers_a_new_stream_429_then_goaway(tls_server, tls_cert):
    sp = tls_server("--shutdown-delay-duration", "500ms", "--shutdown-send-retry-after")
    c = ready_client(sp, tls_cert[0])
    slow = c.request("/slow?seconds=1.5")  # keeps the drain, and so the listener, going
    sp.signal()
    sp.expect(r'name="NotAcceptingNewRequest"')
    assert not c.of(h2.events.ConnectionTerminated)  # no GOAWAY yet: Shutdown waits for the drain
    refused = c.request("/echo?message=after-not-accepting")
    status, headers, body = c.response(refused)
    assert (status, headers["retry-after"]) == (429, "5")
    assert "connection" not in headers  # HTTP/2 has none: it became the GOAWAY
    ga = c.goaway()
    assert (ga.error_code, ga.last_stream_id) == (h2.errors.ErrorCodes.NO_ERROR, refused)
    assert c.response(slow)[0] == 200
    c.close()  # as Go's client hangs up on a GOAWAY'd connection once it is idle
    assert sp.wait() == 0

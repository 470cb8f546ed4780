"""Port of k8s.io/apiserver/pkg/server/filters/goaway_test.go (v1.36.0): WithProbabilisticGoaway,
its decider, and what an HTTP/2 client sees: a GOAWAY moves its next requests to a new
connection while the watches in flight on the old one run to their end."""

from __future__ import annotations

import random
import threading

import h2.events
import pytest
from hypothesis import given, strategies as st
from werkzeug.test import Client

from genericserver.filters.goaway import ProbabilisticGoawayDecider, with_goaway, with_probabilistic_goaway
from h2client import h2_pool

WAIT = 10.0


@pytest.mark.parametrize("chance, draw, want", [
    (0, 0.0, False),  # always not GOAWAY
    (1, 0.999, True),  # always GOAWAY
    (0.5, 0.1, True),  # hit
    (0.5, 0.9, False),  # does not hit
], ids=["always not", "always", "hit", "does not hit"])
def test_probabilistic_goaway_decider(chance, draw, want):
    assert ProbabilisticGoawayDecider(chance, lambda: draw).goaway({}) is want


def hello(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"hello"]


def test_http1_requests_never_get_connection_close():
    # Go's TestGOAWAYHTTP1Requests: the header would close an HTTP/1 connection under the answer
    resp = Client(with_probabilistic_goaway(hello, 1)).get("/")
    assert resp.status_code == 200 and "Connection" not in resp.headers


def test_an_http2_request_that_draws_it_gets_exactly_one_connection_close():
    def app(environ, start_response):
        start_response("200 OK", [("Connection", "keep-alive")])
        return [b""]

    got = []
    list(with_goaway(app, ProbabilisticGoawayDecider(1, lambda: 0.5))(
        {"SERVER_PROTOCOL": "HTTP/2.0"}, lambda status, headers, exc_info=None: got.extend(headers)))
    assert got == [("Connection", "close")]


@given(seed=st.integers(0, 2**32 - 1), chance=st.floats(0.001, 0.02))
def test_the_goaway_rate_stays_within_its_bound(seed, chance):
    # over 20,000 HTTP/2 requests the GOAWAYs are binomial(n, chance): within six standard
    # deviations of n * chance for every seed (a seeded generator makes each case replay)
    n = 20_000
    decider = ProbabilisticGoawayDecider(chance, random.Random(seed).random)
    hits = sum(decider.goaway({"SERVER_PROTOCOL": "HTTP/2.0"}) for _ in range(n))
    mean, sd = n * chance, (n * chance * (1 - chance)) ** 0.5
    assert abs(hits - mean) <= 6 * sd + 1, (hits, mean)


# -- TestClientReceivedGOAWAY -------------------------------------------------------------------
class Watch:
    """Go's test watch handler: streams a byte each time the test says so, then ends."""

    def __init__(self):
        self.release = threading.Event()

    def __call__(self, environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        yield b"w"
        assert self.release.wait(WAIT)
        yield b"atch"


@pytest.mark.parametrize("reqs, want_conns", [
    (["/get", "/post", "/get"], 1),  # all normal requests use only one connection
    (["/post", "/watch", "/get-with-goaway", "/get", "/post"], 2),  # got GOAWAY after set-up watch
    (["/get", "/watch", "/get-with-goaway", "/watch", "/get", "/post"], 2),  # ... and set-up a new watch
    (["/post", "/watch", "/get-with-goaway", "/get-with-goaway", "/get", "/post"], 3),  # got 2 GOAWAY after set-up watch
    (["/get", "/watch-with-goaway", "/get", "/watch", "/get-with-goaway", "/get", "/post"], 3),  # combine with watch-with-goaway
], ids=["no goaway", "goaway after watch", "goaway then new watch", "two goaways", "watch with goaway"])
def test_client_received_goaway(tls_cert, reqs, want_conns):
    watch = Watch()
    routes = {
        "/get": with_probabilistic_goaway(hello, 0), "/post": with_probabilistic_goaway(hello, 0),
        "/watch": with_probabilistic_goaway(watch, 0), "/get-with-goaway": with_probabilistic_goaway(hello, 1),
        "/watch-with-goaway": with_probabilistic_goaway(watch, 1),
    }

    def mux(environ, start_response):
        return routes[environ["PATH_INFO"]](environ, start_response)

    try:
        with h2_pool(mux, tls_cert) as pool:
            watches = []
            for path in reqs:
                c, sid = pool.request(path)
                if "watch" in path:
                    c.wait_for(lambda: c.of(h2.events.DataReceived, sid), f"{path}'s first byte")
                    watches.append((c, sid))
                else:
                    assert c.response(sid)[:1] == (200,)
                if path.endswith("-with-goaway"):
                    c.goaway()  # the next request must see it, as Go's transport does
            assert len(pool.conns) == want_conns
            watch.release.set()
            # the watches in flight were not broken by the GOAWAYs on their connections
            assert [c.response(sid)[2] for c, sid in watches] == [b"watch"] * len(watches)
    finally:
        watch.release.set()

"""HTTP/2 in the simulation (genericserver.testing.h2transport): shutdown interleavings with
multiplexed streams, fuzzed like the HTTP/1 ones, and the h2 invariant's power to fail."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from genericserver.testing import h2transport, replay
from genericserver.testing.invariants import View, check, h2_streams_follow_goaway
from genericserver.testing.scenario import ANCHORS, RequestSpec, Scenario, deep_schedules, run_scenario

EXAMPLES = settings.default.max_examples


@pytest.fixture(autouse=True)
def replays_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv(replay.REPLAY_DIR_ENV, str(tmp_path / "replays"))


def answers(run):
    return {e.fields["rid"]: e.fields for e in run.of("client", "answer")}


def h2_events(run, name):
    return [e.fields for e in run.of("h2") if e.name == name]


# every request on the one shared connection: the multiplexed case HTTP/1 cannot have
multiplexed = st.builds(
    Scenario,
    http2=st.just(True),
    retry_after=st.booleans(),
    shutdown_delay=st.sampled_from((0.0, 1.0)),
    watch_grace=st.sampled_from((0.0, 2.0)),
    requests=st.lists(st.builds(RequestSpec, kind=st.sampled_from(("ordinary", "watch", "mutating", "readyz")),
                                anchor=st.sampled_from(ANCHORS), offset=st.sampled_from((0.0, 0.1, 0.5)),
                                duration=st.sampled_from((0.0, 0.5, 3.0)), conn=st.just("reused")),
                      min_size=1, max_size=5).map(tuple),
)


@settings(max_examples=EXAMPLES)
@given(scenario=multiplexed, schedule=deep_schedules())
def test_property_multiplexed_streams_keep_the_invariants(scenario, schedule):
    replay.check_run(run_scenario(scenario, schedule), "lifecycle, HTTP/2 multiplexed")


def test_default_mode_goaway_comes_with_shutdown_and_the_stream_in_flight_is_answered():
    run = run_scenario(Scenario(http2=True, shutdown_delay=1.0, requests=(
        RequestSpec(conn="reused", duration=2.0),  # in flight across the GOAWAY
        RequestSpec(conn="reused", anchor="ShutdownInitiated", offset=0.5),  # the delay: same connection
        RequestSpec(conn="reused", anchor="NotAcceptingNewRequest", offset=0.1),  # after the GOAWAY
    )))
    assert check(run) == []
    got = answers(run)
    assert (got["0"]["outcome"], got["0"]["reused"]) == ("ok", True)
    assert (got["1"]["outcome"], got["1"]["reused"]) == ("ok", True)
    assert got["2"]["outcome"] == "refused"  # a new connection, and the listener is closed
    goaway = h2_events(run, "goaway")
    assert goaway == [{"conn": 1, "last": 5}]  # prime, 0 and 1 were streams 1, 3 and 5
    signal_at = {e.name: e.at for e in run.of("signal")}
    goaway_at = next(e.at for e in run.of("h2") if e.name == "goaway")
    assert goaway_at == signal_at["NotAcceptingNewRequest"]  # Shutdown begins then, in the default mode
    # stream 0's answer reached the client before the GOAWAY did: Go 1.26.8's client leaves a
    # connection idle at its GOAWAY open, and the server closes it GO_AWAY_TIMEOUT later
    closed = [e for e in run.of("h2") if e.name == "closed"]
    assert [e.fields for e in closed] == [{"conn": 1, "by": "server"}]
    assert closed[0].at == goaway_at + h2transport.GO_AWAY_TIMEOUT


def test_a_goaway_that_meets_a_stream_in_flight_has_the_client_hang_up_when_it_ends():
    # Go 1.26.8's forgetStreamID: the last stream of a GOAWAY'd connection ends, the client closes it
    run = run_scenario(Scenario(http2=True, shutdown_delay=1.0, requests=(
        RequestSpec(conn="reused", duration=3.0),  # in flight when the GOAWAY comes (at 2.0)
    )))
    assert check(run) == []
    assert answers(run)["0"]["outcome"] == "ok"
    closed = [e for e in run.of("h2") if e.name == "closed"]
    assert [e.fields for e in closed] == [{"conn": 1, "by": "client"}]
    assert closed[0].at == next(e.at for e in run.of("client") if e.name == "answer" and e.fields["rid"] == "0")


def test_retry_after_429_becomes_a_goaway_and_the_next_request_takes_a_new_connection():
    run = run_scenario(Scenario(http2=True, retry_after=True, shutdown_delay=1.0, requests=(
        RequestSpec(conn="reused", duration=3.0),
        RequestSpec(conn="reused", anchor="NotAcceptingNewRequest", offset=0.1),
        RequestSpec(conn="reused", anchor="NotAcceptingNewRequest", offset=0.2),
    )))
    assert check(run) == []
    got = answers(run)
    assert got["1"]["outcome"] == got["2"]["outcome"] == "retry-after-429"
    assert got["1"]["connection"] is None  # no Connection header in HTTP/2
    assert (got["1"]["reused"], got["2"]["reused"]) == (True, False)
    assert h2_events(run, "goaway")[:2] == [{"conn": 1, "last": 5}, {"conn": 2, "last": 1}]
    assert got["0"]["outcome"] == "ok"  # the stream in flight on the GOAWAY'd connection


class AdmitsAfterGoaway:
    """A broken server that serves streams above the GOAWAY's last id."""

    def __init__(self, monkeypatch):
        original = h2transport.serve_conn

        def serve_conn(server, c):
            real_next = c.next_request

            def next_request(deadline):
                frame = real_next(deadline)
                if frame is not None:
                    c.h2.in_goaway = False  # forget the GOAWAY when the next frame comes
                return frame

            c.next_request = next_request
            return original(server, c)

        monkeypatch.setattr(h2transport, "serve_conn", serve_conn)


RACE = Scenario(http2=True, shutdown_delay=1.0, requests=(
    RequestSpec(conn="reused", duration=2.0),
    RequestSpec(conn="reused", anchor="NotAcceptingNewRequest", offset=0.0),  # races the GOAWAY
))


def racing_schedules(n: int = 60):
    """Seeded random schedules (the same ones every run): some let request 1 go out after the
    server sent its GOAWAY and before the client read it."""
    for seed in range(n):
        r = random.Random(seed)
        yield [r.choice((0, 0, 0, 1, 2)) for _ in range(300)]


def test_a_stream_that_races_the_goaway_is_dropped_and_retried_on_a_new_connection():
    for schedule in racing_schedules():
        run = run_scenario(RACE, schedule)
        if h2_events(run, "dropped"):
            break
    else:
        pytest.fail("no schedule let a stream race the GOAWAY")
    assert check(run) == []
    assert h2_events(run, "dropped") == [{"conn": 1, "stream": 5, "last": 3}]
    assert answers(run)["1"]["outcome"] == "refused"  # retried on a new connection: the listener is closed


def test_the_h2_invariant_catches_a_stream_admitted_after_the_goaway(monkeypatch):
    AdmitsAfterGoaway(monkeypatch)
    for schedule in racing_schedules():
        problems = h2_streams_follow_goaway(View(run_scenario(RACE, schedule)))
        if problems:
            break
    assert problems == ["conn 1: stream 5 admitted after a GOAWAY with last stream 3"]


def test_a_handler_that_aborts_resets_its_stream_and_the_connection_serves_on():
    # Go's runHandler: a panic (ErrAbortHandler included) resets that stream (handlerPanicRST);
    # the connection and its other streams go on (it was closed under them)
    from genericserver.context import context as gocontext
    from genericserver.events import EventStream
    from genericserver.net.http.server import ERR_ABORT_HANDLER
    from genericserver.testing.memclient import MemoryClient, serve_app
    from genericserver.testing.sim import Simulation
    from genericserver.testing.transport import ConnectionDropped, MemoryListener

    def app(environ, start_response):
        if environ["PATH_INFO"] == "/abort":
            raise ERR_ABORT_HANDLER
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"fine"]

    def scenario():
        events = EventStream()
        ln = MemoryListener()
        server = serve_app(app, ln)
        server.events = events
        client = MemoryClient(ln, http2=True)
        aborted, after = client.get("/abort"), client.get("/ok")
        ctx, cancel = gocontext.with_timeout(gocontext.background(), 60)
        server.shutdown(ctx)
        cancel()
        return aborted, after, [(e.name, e.fields) for e in events.events("h2")]

    sim = Simulation()
    aborted, after, h2 = sim.run(scenario)
    assert sim.leftover() == []
    assert isinstance(aborted.error, ConnectionDropped)
    assert (after.status, after.body, after.reused) == (200, b"fine", True)  # the same connection
    assert ("reset", {"conn": 1, "stream": 1}) in h2 and not any(name == "closed" for name, _ in h2[:2])

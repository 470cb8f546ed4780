"""Tests for genericserver.events: the stream's order, as a live view follows it (no Go twin)."""

from __future__ import annotations

import threading

from genericserver.events import EventStream


def race(subscribe_view: str) -> list[int]:
    """Thread A records event 0 and is held in an earlier subscriber until thread B has recorded
    and delivered event 1: what the view (subscribed with ``subscribe_view``) saw, in order."""
    stream, seen = EventStream(), []
    a_recorded, b_done = threading.Event(), threading.Event()

    def hold_the_first(ev):
        if ev.seq == 0:
            a_recorded.set()
            assert b_done.wait(10)

    stream.subscribe(hold_the_first)
    getattr(stream, subscribe_view)(lambda ev: seen.append(ev.seq))
    a = threading.Thread(target=stream.record, args=("pod", "web-0: InFlightRequestsDrained"))
    a.start()
    assert a_recorded.wait(10)  # A has its sequence number and waits for B
    stream.record("pod", "web-1: HTTPServerStoppedListening")  # B, this thread
    b_done.set()
    a.join(10)
    return seen


def test_a_plain_subscriber_can_see_two_threads_events_out_of_order():
    assert race("subscribe") == [1, 0]


def test_a_follower_sees_them_in_the_streams_order_whichever_thread_delivers():
    assert race("follow") == [0, 1]


def test_a_follower_is_given_the_events_recorded_after_it_started_following():
    stream, seen = EventStream(), []
    stream.record("signal", "ShutdownInitiated")
    stream.follow(lambda ev: seen.append((ev.seq, ev.name)))
    stream.record("signal", "NotAcceptingNewRequest")
    stream.record("signal", "InFlightRequestsDrained")
    assert seen == [(1, "NotAcceptingNewRequest"), (2, "InFlightRequestsDrained")]

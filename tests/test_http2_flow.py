"""Port of golang.org/x/net/http2's flow_test.go (v0.49.0), its inflow cases: when the server gives
request-body window back (genericserver.net.http.internal.http2.flow)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from genericserver.net.http.internal.http2.flow import INFLOW_MIN_REFRESH, Inflow


def test_in_flow_take():
    f = Inflow(100)
    assert f.take(40) and f.take(40)
    assert not f.take(40)  # 20 left
    assert f.take(20)


def test_inflow_add_small():
    # adding even a small amount when there is no flow causes an immediate send
    assert Inflow(0).add(1) == 1


def test_inflow_add():
    f = Inflow(10 * INFLOW_MIN_REFRESH)
    assert f.add(INFLOW_MIN_REFRESH - 1) == 0
    assert f.add(1) == INFLOW_MIN_REFRESH


@given(window=st.integers(1, 1 << 20), reads=st.lists(st.integers(0, 1 << 16), max_size=50))
def test_every_byte_given_back_is_sent_once_and_none_is_held_past_the_threshold(window, reads):
    f = Inflow(window)
    sent = 0
    for n in reads:
        sent += f.add(n)
        assert f.unsent < INFLOW_MIN_REFRESH  # never more than 4 KiB owed
    assert sent + f.unsent == sum(reads) and f.avail == window + sent

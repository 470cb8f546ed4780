"""Tests of genericserver/context/context.py, the port of Go's context package.

Cancellation flows down a tree and never up; ``without_cancel`` cuts it but keeps values;
``cause`` reads back why; deadlines are checked on the simulation runtime's virtual clock,
where they fire at exactly the expected time.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver import runtime as rt
from genericserver.context import context
from genericserver.context.context import CANCELED, DEADLINE_EXCEEDED
from genericserver.testing.sim import Simulation


def simulate(main):
    return Simulation().run(main)


def test_err_values_are_the_go_sentinels():
    assert isinstance(CANCELED, context.Canceled) and isinstance(CANCELED, context.ContextError)
    assert isinstance(DEADLINE_EXCEEDED, context.DeadlineExceeded)
    assert isinstance(DEADLINE_EXCEEDED, context.ContextError)
    assert str(CANCELED) == "context canceled"
    assert str(DEADLINE_EXCEEDED) == "context deadline exceeded"


@pytest.mark.parametrize("make", [context.background, context.todo], ids=["Background", "TODO"])
def test_background_is_never_done(make):
    ctx = make()
    assert ctx.err() is None
    assert ctx.deadline() is None
    assert ctx.value("k") is None
    assert context.cause(ctx) is None
    assert not ctx.done().is_set()
    assert ctx.done() is ctx.done()


def test_cancel_propagates_to_children_and_grandchildren_not_to_parents():
    root, cancel_root = context.with_cancel(context.background())
    parent, cancel_parent = context.with_cancel(root)
    sibling, cancel_sibling = context.with_cancel(root)
    child, _ = context.with_cancel(parent)
    grandchild, _ = context.with_cancel(context.with_value(child, "k", "v"))
    timed, cancel_timed = context.with_timeout(child, 3600)
    try:
        assert parent.err() is None and not parent.done().is_set()
        cancel_parent()
        for ctx in (parent, child, grandchild, timed):
            assert ctx.done().is_set()
            assert ctx.err() is CANCELED
            assert context.cause(ctx) is CANCELED
        for ctx in (root, sibling):
            assert not ctx.done().is_set()
            assert ctx.err() is None
    finally:
        cancel_timed()
        cancel_sibling()
        cancel_root()


def test_cancel_is_idempotent_and_the_first_error_stays():
    ctx, cancel = context.with_timeout(context.background(), 3600)
    cancel()
    cancel()
    assert ctx.err() is CANCELED


def test_a_child_of_a_done_parent_is_done_at_once():
    parent, cancel = context.with_cancel_cause(context.background())
    why = RuntimeError("stop")
    cancel(why)
    child, _ = context.with_cancel(parent)
    assert child.done().is_set()
    assert child.err() is CANCELED
    assert context.cause(child) is why


def test_a_cancelled_child_leaves_its_parent():
    parent, cancel_parent = context.with_cancel(context.background())
    first, cancel_first = context.with_cancel(context.with_value(parent, "k", 1))
    second, cancel_second = context.with_timeout(parent, 3600)
    third, cancel_third = context.with_cancel(parent)
    # kept in creation order, so cancellation visits them the same way on every replay
    assert list(parent._children) == [first, second, third]
    cancel_second()
    cancel_first()
    assert list(parent._children) == [third]
    assert parent.err() is None
    cancel_parent()
    assert third.err() is CANCELED
    cancel_third()


def test_without_cancel_keeps_values_but_not_cancellation_or_deadline():
    parent, cancel = context.with_timeout(context.with_value(context.background(), "user", "alice"), 3600)
    detached = context.without_cancel(parent)
    below, cancel_below = context.with_cancel(detached)
    cancel()
    assert parent.err() is CANCELED
    assert detached.err() is None and not detached.done().is_set()
    assert detached.deadline() is None
    assert detached.value("user") == "alice"
    assert context.cause(detached) is None
    assert below.err() is None and not below.done().is_set()
    cancel_below()
    assert below.err() is CANCELED
    assert detached.err() is None


def test_values_chain_and_shadow():
    a = context.with_value(context.background(), "k", 1)
    b = context.with_value(a, "other", 2)
    c, cancel = context.with_cancel(b)
    d = context.with_value(c, "k", 3)
    assert (a.value("k"), c.value("k"), d.value("k")) == (1, 1, 3)
    assert d.value("other") == 2
    assert d.value("missing") is None
    cancel()
    assert d.err() is CANCELED  # a value context reports its parent's state
    assert d.done() is c.done()


def test_with_cancel_cause_records_the_first_cause():
    ctx, cancel = context.with_cancel_cause(context.background())
    child, _ = context.with_cancel(ctx)
    assert context.cause(ctx) is None
    why = ValueError("drain timed out")
    cancel(why)
    cancel(KeyError("later"))
    assert ctx.err() is CANCELED  # err() is still the sentinel
    assert context.cause(ctx) is why
    assert context.cause(child) is why
    assert context.cause(context.with_value(child, "k", 1)) is why


def test_with_cancel_cause_without_a_cause_reports_canceled():
    ctx, cancel = context.with_cancel_cause(context.background())
    cancel(None)
    assert context.cause(ctx) is CANCELED


def test_with_timeout_fires_after_exactly_the_timeout():
    def main():
        t0 = rt.now()
        ctx, cancel = context.with_timeout(context.background(), 3)
        try:
            assert ctx.deadline() == t0 + 3
            assert not ctx.done().wait(2.999)
            assert ctx.err() is None
            ctx.done().wait()
            return rt.now() - t0, ctx.err(), context.cause(ctx)
        finally:
            cancel()

    elapsed, err, why = simulate(main)
    assert elapsed == pytest.approx(3.0, abs=1e-9)
    assert err is DEADLINE_EXCEEDED and why is DEADLINE_EXCEEDED


def test_an_earlier_parent_deadline_wins():
    def main():
        t0 = rt.now()
        parent, cancel_parent = context.with_timeout(context.background(), 1)
        child, cancel_child = context.with_timeout(parent, 5)
        try:
            assert child.deadline() == parent.deadline() == t0 + 1
            child.done().wait()
            return rt.now() - t0, child.err()
        finally:
            cancel_child()
            cancel_parent()

    elapsed, err = simulate(main)
    assert elapsed == pytest.approx(1.0, abs=1e-9)
    assert err is DEADLINE_EXCEEDED


def test_an_earlier_child_deadline_does_not_touch_the_parent():
    def main():
        t0 = rt.now()
        parent, cancel_parent = context.with_timeout(context.background(), 5)
        child, cancel_child = context.with_timeout(parent, 1)
        try:
            assert child.deadline() == t0 + 1
            child.done().wait()
            at = rt.now() - t0
            assert parent.err() is None
            parent.done().wait()
            return at, rt.now() - t0, child.err(), parent.err()
        finally:
            cancel_child()
            cancel_parent()

    child_at, parent_at, child_err, parent_err = simulate(main)
    assert (child_at, parent_at) == pytest.approx((1.0, 5.0), abs=1e-9)
    assert child_err is DEADLINE_EXCEEDED and parent_err is DEADLINE_EXCEEDED


def test_a_deadline_in_the_past_is_done_at_once():
    def main():
        ctx, cancel = context.with_deadline(context.background(), rt.now() - 1)
        cancel()
        return ctx.done().is_set(), ctx.err()

    assert simulate(main) == (True, DEADLINE_EXCEEDED)


def test_cancel_before_the_deadline_reports_canceled_and_stops_the_timer():
    def main():
        t0 = rt.now()
        ctx, cancel = context.with_timeout(context.background(), 10)
        rt.sleep(2)
        cancel()
        rt.sleep(20)  # the deadline passes: the error stays CANCELED
        return ctx.err(), rt.now() - t0

    err, elapsed = simulate(main)
    assert err is CANCELED
    assert elapsed == pytest.approx(22.0)


def test_a_deadline_fires_under_the_threads_runtime():
    ctx, cancel = context.with_timeout(context.background(), 0.02)
    try:
        assert ctx.done().wait(5.0)
        assert ctx.err() is DEADLINE_EXCEEDED
    finally:
        cancel()


# a random tree of contexts: each node names its parent (an earlier node, or -1 for the root)
# and how it was derived; cancelling a node must cancel exactly the nodes linked to it by
# cancellable edges
KINDS = ("cancel", "cancel_cause", "value", "without_cancel", "timeout")


@given(
    tree=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(KINDS)), min_size=1, max_size=20),
    cancels=st.lists(st.integers(0, 20), max_size=5),
)
def test_cancellation_reaches_exactly_the_cancellable_descendants(tree, cancels):
    root, cancel_root = context.with_cancel(context.background())
    nodes, parents, kinds, cancel_fns = [root], [-1], ["cancel"], [cancel_root]
    for i, (p, kind) in enumerate(tree):
        parent = p % (i + 1)
        pctx = nodes[parent]
        if kind == "cancel":
            ctx, fn = context.with_cancel(pctx)
        elif kind == "cancel_cause":
            ctx, fn = context.with_cancel_cause(pctx)
        elif kind == "timeout":
            ctx, fn = context.with_timeout(pctx, 3600)
        elif kind == "value":
            ctx, fn = context.with_value(pctx, "k", i), None
        else:
            ctx, fn = context.without_cancel(pctx), None
        nodes.append(ctx)
        parents.append(parent)
        kinds.append(kind)
        cancel_fns.append(fn)

    cancelled_directly = set()
    for c in cancels:
        idx = c % len(nodes)
        if cancel_fns[idx] is not None:
            cancel_fns[idx]()
            cancelled_directly.add(idx)

    def expected_done(i: int) -> bool:
        while i != -1:
            if i in cancelled_directly:
                return True
            if kinds[i] == "without_cancel":
                return False
            i = parents[i]
        return False

    try:
        for i, ctx in enumerate(nodes):
            want = expected_done(i)
            assert ctx.done().is_set() == want, f"node {i} ({kinds[i]})"
            assert ctx.err() is (CANCELED if want else None)
    finally:
        for fn in cancel_fns:
            if fn is not None:
                fn()

"""Tests of genericserver.apimachinery.errors: the cases of apimachinery's pkg/util/errors/errors_test.go."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver.apimachinery.errors import (
    Aggregate,
    aggregate_goroutines,
    create_aggregate_from_message_count_map,
    filter_out,
    flatten,
    is_,
    new_aggregate,
    reduce,
)


def E(msg: str) -> Exception:
    return Exception(msg)


def shape(err):
    """An error as comparable data: aggregates become lists, other errors their message."""
    if err is None:
        return None
    if isinstance(err, Aggregate):
        return [shape(e) for e in err.errors()]
    return str(err)


def test_empty_aggregate():
    assert new_aggregate([]) is None
    assert new_aggregate(None) is None
    agg = Aggregate([])  # not possible through new_aggregate
    assert str(agg) == ""
    assert agg.errors() == []


def test_aggregate_with_nil():
    assert new_aggregate([None]) is None
    agg = new_aggregate([None, E("err")])
    assert agg is not None
    assert str(agg) == "err"
    assert len(agg.errors()) == 1
    assert str(agg.errors()[0]) == "err"


def test_singular_aggregate():
    agg = new_aggregate([E("err")])
    assert str(agg) == "err"
    assert [str(e) for e in agg.errors()] == ["err"]
    assert isinstance(agg, Exception)


def test_plural_aggregate():
    agg = new_aggregate([E("abc"), E("123")])
    assert str(agg) == "[abc, 123]"
    assert len(agg.errors()) == 2
    assert str(agg.errors()[0]) == "abc"


def test_dedupe_aggregate():
    agg = new_aggregate([E("abc"), E("abc")])
    assert str(agg) == "abc"
    assert len(agg.errors()) == 2


def test_dedupe_plural_aggregate():
    agg = new_aggregate([E("abc"), E("abc"), E("123")])
    assert str(agg) == "[abc, 123]"
    assert len(agg.errors()) == 3


def test_flatten_and_dedupe_aggregate():
    agg = new_aggregate([E("abc"), E("abc"), new_aggregate([E("abc")])])
    assert str(agg) == "abc"
    assert len(agg.errors()) == 3


def test_flatten_aggregate():
    agg = new_aggregate([E("abc"), E("abc"), new_aggregate([E("abc"), E("def"), new_aggregate([E("def"), E("ghi")])])])
    assert str(agg) == "[abc, def, ghi]"
    assert len(agg.errors()) == 3


A = Aggregate
never = lambda err: False  # noqa: E731
always = lambda err: True  # noqa: E731
is_def = lambda err: str(err) == "def"  # noqa: E731


@pytest.mark.parametrize(
    "err,matchers,expected",
    [
        (None, [], None),
        (A([]), [], None),
        (A([E("abc")]), [], ["abc"]),
        (A([E("abc")]), [never], ["abc"]),
        (A([E("abc")]), [always], None),
        (A([E("abc")]), [never, never], ["abc"]),
        (A([E("abc")]), [never, always], None),
        (A([E("abc"), E("def"), E("ghi")]), [is_def], ["abc", "ghi"]),
        (A([A([E("abc")])]), [], [["abc"]]),
        (A([A([E("abc"), A([E("def")])])]), [], [["abc", ["def"]]]),
        (A([A([E("abc"), A([E("def")])])]), [is_def], [["abc"]]),
    ],
    ids=[f"case-{i}" for i in range(11)],
)
def test_filter_out(err, matchers, expected):
    assert shape(filter_out(err, *matchers)) == expected


def test_filter_out_keeps_a_plain_error_unless_matched():
    err = E("abc")
    assert filter_out(err, never) is err
    assert filter_out(err, always) is None


@pytest.mark.parametrize(
    "agg,expected",
    [
        (None, None),
        (A([]), None),
        (A([E("abc")]), ["abc"]),
        (A([E("abc"), E("def"), E("ghi")]), ["abc", "def", "ghi"]),
        (A([A([E("abc")])]), ["abc"]),
        (A([A([A([E("abc")])])]), ["abc"]),
        (A([A([E("abc"), A([E("def")])])]), ["abc", "def"]),
        (A([A([A([E("abc")]), E("def"), A([E("ghi")])])]), ["abc", "def", "ghi"]),
    ],
    ids=[f"case-{i}" for i in range(8)],
)
def test_flatten(agg, expected):
    assert shape(flatten(agg)) == expected


def test_reduce():
    one = E("abc")
    assert reduce(A([one])) is one
    assert reduce(A([])) is None
    two = A([E("a"), E("b")])
    assert reduce(two) is two
    assert reduce(one) is one
    assert reduce(None) is None


@pytest.mark.parametrize(
    "mcm,expected",
    [
        ({"abc": 1}, ["abc"]),
        ({"abc": 2, "ghi": 1}, ["abc (repeated 2 times)", "ghi"]),
        ({"ghi": 1, "abc": 2}, ["abc (repeated 2 times)", "ghi"]),
    ],
    ids=["input has single instance of one message", "input has multiple messages", "input has multiple messages (other order)"],
)
def test_create_aggregate_from_message_count_map(mcm, expected):
    assert sorted(str(e) for e in create_aggregate_from_message_count_map(mcm).errors()) == expected
    assert create_aggregate_from_message_count_map(None) is None


@pytest.mark.parametrize(
    "errs,expected",
    [
        ([], set()),
        ([None], set()),
        ([None, None], set()),
        (["1"], {"1"}),
        (["1", None], {"1"}),
        (["1", "267"], {"1", "267"}),
        (["1", None, "1234"], {"1", "1234"}),
        ([None, "1", None, "1234", "22"], {"1", "1234", "22"}),
    ],
    ids=[f"case-{i}" for i in range(8)],
)
def test_aggregate_goroutines(errs, expected):
    funcs = [(lambda m=m: None if m is None else E(m)) for m in errs]
    agg = aggregate_goroutines(*funcs)
    if not expected:
        assert agg is None
        return
    assert len(agg.errors()) == len(expected)
    assert {str(e) for e in agg.errors()} == expected


class AlwaysMatchingError(Exception):
    def __str__(self) -> str:
        return "error"

    def is_(self, target: object) -> bool:
        return True


@dataclass(eq=True)
class SomeError(Exception):
    msg: str = ""

    def __str__(self) -> str:
        return self.msg or "err"


def _wrapped() -> Exception:
    try:
        raise Exception("wrap") from A([E("err"), SomeError()])
    except Exception as exc:
        return exc


@pytest.mark.parametrize(
    "err,target,expect",
    [
        (A([E("my-error"), E("my-other-error")]), E("no entry here"), False),
        (A([E("forbidden"), AlwaysMatchingError()]), E("unauthorized"), True),
        (A([E("err"), SomeError()]), SomeError(), True),
        (A([E("closed today"), A([A([SomeError()])])]), SomeError(), True),
        (_wrapped(), SomeError(), True),
    ],
    ids=["no match", "match via .Is()", "match via equality", "match via nested aggregate", "match via wrapped aggregate"],
)
def test_aggregate_with_errors_is(err, target, expect):
    assert is_(err, target) is expect


def test_errors_is_matches_an_exception_class():
    assert is_(A([E("x"), KeyError("k")]), KeyError)
    assert not is_(A([E("x")]), KeyError)


def test_err_configuration_invalid_with_errors_is_short_circuits_on_first_match():
    class AccessTracking(Exception):
        def __init__(self):
            super().__init__("err")
            self.was_accessed = False

        def is_(self, target: object) -> bool:
            self.was_accessed = True
            return True

    errs = [AccessTracking(), AccessTracking()]
    is_(A(errs), AccessTracking())
    assert sum(e.was_accessed for e in errs) == 1


@given(st.lists(st.text(alphabet="abc", min_size=1, max_size=3), min_size=2, max_size=6))
def test_plural_message_lists_each_distinct_message_once_in_first_seen_order(msgs):
    agg = new_aggregate([E(m) for m in msgs])
    distinct = list(dict.fromkeys(msgs))
    expected = distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"
    assert str(agg) == expected

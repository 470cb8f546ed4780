"""Tests of genericserver.godur: Go's time.ParseDuration and Duration.String cases (Go's format_test.go)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver.godur import (
    HOUR,
    MICROSECOND,
    MILLISECOND,
    MINUTE,
    SECOND,
    format_go_duration,
    format_go_duration_ns,
    parse_rfc3339_error,
    parse_go_duration,
    parse_go_duration_ns,
)

VALID = [
    ("0", 0), ("5s", 5 * SECOND), ("30s", 30 * SECOND), ("1478s", 1478 * SECOND),
    ("-5s", -5 * SECOND), ("+5s", 5 * SECOND), ("-0", 0), ("+0", 0),
    ("5.0s", 5 * SECOND), ("5.6s", 5 * SECOND + 600 * MILLISECOND), ("5.s", 5 * SECOND),
    (".5s", 500 * MILLISECOND), ("1.0s", SECOND), ("1.00s", SECOND), ("1.004s", SECOND + 4 * MILLISECOND),
    ("1.0040s", SECOND + 4 * MILLISECOND), ("100.00100s", 100 * SECOND + 1 * MILLISECOND),
    ("10ns", 10), ("11us", 11 * MICROSECOND), ("12\u00b5s", 12 * MICROSECOND), ("12\u03bcs", 12 * MICROSECOND),
    ("13ms", 13 * MILLISECOND), ("14s", 14 * SECOND), ("15m", 15 * MINUTE), ("16h", 16 * HOUR),
    ("3h30m", 3 * HOUR + 30 * MINUTE), ("10.5s4m", 4 * MINUTE + 10 * SECOND + 500 * MILLISECOND),
    ("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400 * MILLISECOND)),
    ("1h2m3s4ms5us6ns", HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6),
    ("39h9m14.425s", 39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLISECOND),
    ("52763797000ns", 52763797000), ("0.3333333333333333333h", 20 * MINUTE),
    ("9007199254740993ns", (1 << 53) + 1), ("9223372036854775807ns", (1 << 63) - 1),
    ("9223372036854775.807us", (1 << 63) - 1), ("9223372036854.775807ms", (1 << 63) - 1),
    ("-9223372036854775808ns", -1 << 63), ("-9223372036854775.808us", -1 << 63),
    ("-9223372036854.775808ms", -1 << 63), ("-2562047h47m16.854775808s", -1 << 63),
    ("0.100000000000000000000h", 6 * MINUTE), ("0.830103483285477580700h", 49 * MINUTE + 48 * SECOND + 372539827),
]

INVALID = [
    ("", 'time: invalid duration ""'),
    ("3", 'time: missing unit in duration "3"'),
    ("-", 'time: invalid duration "-"'),
    ("s", 'time: invalid duration "s"'),
    (".", 'time: invalid duration "."'),
    ("-.", 'time: invalid duration "-."'),
    (".s", 'time: invalid duration ".s"'),
    ("+.s", 'time: invalid duration "+.s"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("foo", 'time: invalid duration "foo"'),
    ("1x2s", 'time: unknown unit "x" in duration "1x2s"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'),
    ("9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"'),
    ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
    ("1\u00e9s", 'time: unknown unit "\\xc3\\xa9s" in duration "1\\xc3\\xa9s"'),
]


@pytest.mark.parametrize("text,want", VALID, ids=[v[0] for v in VALID])
def test_parse_duration(text, want):
    ns, err = parse_go_duration_ns(text)
    assert err is None
    assert ns == want
    seconds, err = parse_go_duration(text)
    assert err is None and seconds == pytest.approx(want / SECOND)


@pytest.mark.parametrize("text,message", INVALID, ids=[v[0] or "empty" for v in INVALID])
def test_parse_duration_errors(text, message):
    ns, err = parse_go_duration_ns(text)
    assert ns == 0
    assert str(err) == message
    seconds, err = parse_go_duration(text)
    assert seconds == 0.0 and str(err) == message


STRINGS = [
    ("0s", 0), ("1ns", 1), ("1.1\u00b5s", 1100), ("2.2ms", 2200 * MICROSECOND), ("3.3s", 3300 * MILLISECOND),
    ("4m5s", 4 * MINUTE + 5 * SECOND), ("4m5.001s", 4 * MINUTE + 5001 * MILLISECOND),
    ("5h6m7.001s", 5 * HOUR + 6 * MINUTE + 7001 * MILLISECOND), ("8m0.000000001s", 8 * MINUTE + 1),
    ("2562047h47m16.854775807s", (1 << 63) - 1), ("-2562047h47m16.854775808s", -1 << 63),
    ("1m1s", MINUTE + SECOND), ("1h0m0s", HOUR),
]


@pytest.mark.parametrize("text,ns", STRINGS, ids=[s[0] for s in STRINGS])
def test_duration_string(text, ns):
    assert format_go_duration_ns(ns) == text


def test_format_float_seconds():
    assert format_go_duration(61.0) == "1m1s"
    assert format_go_duration(0.1) == "100ms"


@given(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1))
def test_property_string_parses_back(ns):
    back, err = parse_go_duration_ns(format_go_duration_ns(ns))
    assert err is None
    assert back == ns


# Go's own parseErrorTests (time/format_test.go, Go 1.26) for the RFC 3339 layout: each error
# contains the text given
RFC3339_ERRORS = [
    ("2006-01-02T15:04:05Z07:00", 'parsing time "2006-01-02T15:04:05Z07:00": extra text: "07:00"'),
    ("2006-01-02T15:04_abc", 'parsing time "2006-01-02T15:04_abc" as "2006-01-02T15:04:05Z07:00": cannot parse "_abc" as ":"'),
    ("2006-01-02T15:04:05_abc", 'parsing time "2006-01-02T15:04:05_abc" as "2006-01-02T15:04:05Z07:00": cannot parse "_abc" as "Z07:00"'),
    ("2006-01-02T15:04:05Z_abc", 'parsing time "2006-01-02T15:04:05Z_abc": extra text: "_abc"'),
    ("2010-02-04T21:00:67.012345678-08:00", "second out of range"),
    ("0000-01-01T00:00:.0+00:00", 'parsing time "0000-01-01T00:00:.0+00:00" as "2006-01-02T15:04:05Z07:00": cannot parse ".0+00:00" as "05"'),
    ('"', 'parsing time "\\"" as "2006-01-02T15:04:05Z07:00": cannot parse "\\"" as "2006"'),
    ("0000-01-01T00:00:00+00:+0", 'parsing time "0000-01-01T00:00:00+00:+0" as "2006-01-02T15:04:05Z07:00": cannot parse "+00:+0" as "Z07:00"'),
    ("0000-01-01T00:00:00+-0:00", 'parsing time "0000-01-01T00:00:00+-0:00" as "2006-01-02T15:04:05Z07:00": cannot parse "+-0:00" as "Z07:00"'),
    # and kube-apiserver's answer to a creationTimestamp of "yesterday" (the generated corpus)
    ("yesterday", 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'),
]


@pytest.mark.parametrize("value, error", RFC3339_ERRORS)
def test_parse_rfc3339_errors_are_go_s(value, error):
    got = parse_rfc3339_error(value)
    assert got is not None and error in got


@pytest.mark.parametrize("value", ["2009-02-04T21:00:57-08:00", "2010-02-04T21:00:57.012345678-08:00",
                                   "2020-01-01T1:00:00Z", "2020-01-01T00:00:00,5Z", "2020-02-29T00:00:00Z"])
def test_parse_rfc3339_takes_what_go_takes(value):
    assert parse_rfc3339_error(value) is None


def test_a_creation_timestamp_that_is_no_time_ends_the_decode():
    # metav1.Time's UnmarshalJSON fails, and that ends the decode at once (unlike a type error)
    from genericserver.api.core.v1.types import CONFIG_MAP
    from genericserver.apimachinery.runtime.serializer import json as jsonserializer
    body = b'{"metadata":{"name":"a","creationTimestamp":"yesterday"},"data":{"k":1}}'
    with pytest.raises(jsonserializer.DecodeError, match='^parsing time "yesterday" as'):
        jsonserializer.decode(body, CONFIG_MAP)

"""Port of Go's time package (format.go ``ParseDuration`` and ``Parse`` of RFC 3339, time.go ``Duration.String``, Go 1.26, which Kubernetes v1.36.0 is built with).

The apiserver reads durations in Go syntax: ``?timeout=1m10s`` on a request, and flags such as
``--shutdown-delay-duration=70s``. :func:`parse_go_duration` accepts exactly what Go's
``time.ParseDuration`` accepts (a sign, then one or more decimal numbers each followed by a unit
``ns``, ``us``/``µs``, ``ms``, ``s``, ``m``, ``h``) and fails with Go's error texts, e.g.
``time: invalid duration "foo"``. :func:`format_go_duration` is ``Duration.String``
(``1m1s``, ``100ms``, ``0s``).

Go's durations are int64 nanoseconds; the runtime here counts float seconds, so the parser
returns seconds and :func:`parse_go_duration_ns` keeps the exact nanoseconds. Go returns
``(Duration, error)``; here the pair is returned as it is, ``(0, error)`` on failure.

Two Go files in one module: the parser and the formatter of one type, ``Duration``; and
format.go's ``Parse`` for the layout an object's times are written in, which answers only
whether a text is one and Go's error where it is not (:func:`parse_rfc3339_error`).
"""

from __future__ import annotations

from typing import Optional

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_UNITS = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "\u00b5s": MICROSECOND,  # micro sign
    "\u03bcs": MICROSECOND,  # Greek small letter mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}

_LIMIT = 1 << 63  # durations are int64: the magnitude may reach 2**63 only when negative


class DurationError(ValueError):
    """A duration string Go would refuse; the message is Go's."""


def _quote(s: str) -> str:
    # Go's time.quote: double quotes, \" and \\ escaped, and every byte of a non-ASCII or
    # control character written as \xNN (simpler than strconv.Quote, on purpose).
    out = ['"']
    for ch in s:
        if ord(ch) >= 0x80 or ord(ch) < 0x20:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            if ch in '"\\':
                out.append("\\")
            out.append(ch)
    out.append('"')
    return "".join(out)


def _leading_int(s: str) -> tuple[int, str]:
    """The leading decimal digits of ``s`` as an int, and the rest; overflow past 2**63 fails."""
    x = 0
    i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        if x > _LIMIT // 10:
            raise OverflowError
        x = x * 10 + (ord(s[i]) - 48)
        if x > _LIMIT:
            raise OverflowError
        i += 1
    return x, s[i:]


def _leading_fraction(s: str) -> tuple[int, float, str]:
    """Digits after a decimal point: their value, the scale to divide by, the rest.

    Only precision is lost on overflow (the extra digits are consumed and ignored), as in Go.
    """
    x = 0
    scale = 1.0
    overflow = False
    i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        if not overflow:
            if x > (_LIMIT - 1) // 10:
                overflow = True
            else:
                y = x * 10 + (ord(s[i]) - 48)
                if y > _LIMIT:
                    overflow = True
                else:
                    x = y
                    scale *= 10
        i += 1
    return x, scale, s[i:]


def parse_go_duration_ns(s: str) -> tuple[int, Optional[DurationError]]:
    """``time.ParseDuration`` in exact nanoseconds: ``(ns, None)`` or ``(0, error)``."""
    orig = s
    invalid = DurationError("time: invalid duration " + _quote(orig))
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0, None  # a bare zero needs no unit
    if s == "":
        return 0, invalid
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            return 0, invalid
        before = len(s)
        try:
            v, s = _leading_int(s)
        except OverflowError:
            return 0, invalid
        had_int = before != len(s)
        f, scale, had_frac = 0, 1.0, False
        if s and s[0] == ".":
            s = s[1:]
            before = len(s)
            f, scale, s = _leading_fraction(s)
            had_frac = before != len(s)
        if not had_int and not had_frac:
            return 0, invalid  # a lone "." as in ".s"
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            return 0, DurationError("time: missing unit in duration " + _quote(orig))
        unit_name, s = s[:i], s[i:]
        unit = _UNITS.get(unit_name)
        if unit is None:
            return 0, DurationError("time: unknown unit " + _quote(unit_name) + " in duration " + _quote(orig))
        if v > _LIMIT // unit:
            return 0, invalid
        v *= unit
        if f > 0:
            # float arithmetic, as Go: exact enough to the nanosecond for fractions of an hour
            v += int(float(f) * (float(unit) / scale))
            if v > _LIMIT:
                return 0, invalid
        total += v
        if total > _LIMIT:
            return 0, invalid
    if neg:
        return -total, None
    if total > _LIMIT - 1:
        return 0, invalid
    return total, None


def parse_go_duration(s: str) -> tuple[float, Optional[DurationError]]:
    """``time.ParseDuration`` in float seconds: ``(seconds, None)`` or ``(0.0, error)``."""
    ns, err = parse_go_duration_ns(s)
    if err is not None:
        return 0.0, err
    return ns / SECOND, None


def _fmt_frac(v: int, prec: int) -> tuple[str, int]:
    # the fraction digits of v / 10**prec, trailing zeros dropped (with the dot); and v // 10**prec
    digits = []
    printed = False
    for _ in range(prec):
        digit = v % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        v //= 10
    frac = ("." + "".join(reversed(digits))) if printed else ""
    return frac, v


def format_go_duration_ns(ns: int) -> str:
    """``Duration.String``: ``72h3m0.5s``, ``1.5ms``, ``0s``."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < SECOND:
        if u < MICROSECOND:
            out = f"{u}ns"
        elif u < MILLISECOND:
            frac, whole = _fmt_frac(u, 3)
            out = f"{whole}{frac}\u00b5s"
        else:
            frac, whole = _fmt_frac(u, 6)
            out = f"{whole}{frac}ms"
    else:
        frac, secs = _fmt_frac(u, 9)
        out = f"{secs % 60}{frac}s"
        mins = secs // 60
        if mins > 0:
            out = f"{mins % 60}m" + out
            hours = mins // 60
            if hours > 0:
                out = f"{hours}h" + out
    return ("-" + out) if neg else out


def format_go_duration(seconds: float) -> str:
    """``Duration.String`` of a float number of seconds (rounded to the nanosecond)."""
    return format_go_duration_ns(round(seconds * SECOND))


# -- format.go's Parse, for the one layout the apiserver reads: metav1.Time's RFC 3339 ----------

RFC3339 = "2006-01-02T15:04:05Z07:00"
# the layout's chunks as nextStdChunk cuts them: (the literal before it, the element)
_RFC3339_CHUNKS = (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"), ("", "Z07:00"))
_DAYS_IN = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _getnum(s: str, fixed: bool) -> tuple[int, str, bool]:
    """``getnum``: one or two digits (two when ``fixed``); (value, rest, ok)."""
    if not s[:1].isdigit() or not s[:1].isascii():
        return 0, s, False
    if not s[1:2].isdigit() or not s[1:2].isascii():
        return (0, s, False) if fixed else (int(s[0]), s[1:], True)
    return int(s[:2]), s[2:], True


def _days_in(month: int, year: int) -> int:
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 29 if month == 2 and leap else _DAYS_IN[month - 1]


def parse_rfc3339_error(value: str) -> Optional[str]:
    """The error ``time.Parse(time.RFC3339, value)`` returns (``ParseError.Error``), or None when
    it parses: what ``metav1.Time``'s UnmarshalJSON answers a creationTimestamp with. Go tries
    a fast RFC 3339 reader first and, where it fails, the layout-driven ``parse`` for the error,
    whose rules these are: each literal of the layout must be there, each number has its digits
    and its range, seconds may have a fraction the layout does not name, the zone is Z or ±hh:mm,
    and nothing may follow."""
    rest = value

    def failed(layout_elem: str, value_elem: str) -> str:
        return (f"parsing time {_quote(value)} as {_quote(RFC3339)}: cannot parse {_quote(value_elem)} "
                f"as {_quote(layout_elem)}")

    def out_of_range(what: str) -> str:
        return f"parsing time {_quote(value)}: {what} out of range"

    year = month = day = 0
    for prefix, std in _RFC3339_CHUNKS:
        if not rest.startswith(prefix):
            return failed(prefix, rest)
        rest = rest[len(prefix):]
        hold, ok, too_big = rest, True, ""
        if std == "2006":
            ok = len(rest) >= 4 and rest[:4].isdigit() and rest[:4].isascii()
            if ok:
                year, rest = int(rest[:4]), rest[4:]
        elif std == "01":
            month, rest, ok = _getnum(rest, True)
            too_big = "month" if ok and not 1 <= month <= 12 else ""
        elif std == "02":
            day, rest, ok = _getnum(rest, True)
        elif std == "15":
            hour, rest, ok = _getnum(rest, False)
            too_big = "hour" if hour >= 24 else ""
        elif std == "04":
            minute, rest, ok = _getnum(rest, True)
            too_big = "minute" if minute >= 60 else ""
        elif std == "05":
            second, rest, ok = _getnum(rest, True)
            too_big = "second" if ok and second >= 60 else ""
            if ok and not too_big and len(rest) >= 2 and rest[0] in ".," and rest[1].isdigit() and rest[1].isascii():
                n = 2  # a fraction the layout does not name is read all the same
                while n < len(rest) and rest[n].isdigit() and rest[n].isascii():
                    n += 1
                rest = rest[n:]
        elif rest[:1] == "Z":
            rest = rest[1:]
        else:  # ±hh:mm
            ok = len(rest) >= 6 and rest[3] == ":"
            if ok:
                sign, hh, mm, rest = rest[0], rest[1:3], rest[4:6], rest[6:]
                hours, _, ok = _getnum(hh, True)
                minutes, _, ok2 = _getnum(mm, True) if ok else (0, "", False)
                ok = ok and ok2 and sign in "+-"
                too_big = "time zone offset minute" if minutes > 60 else "time zone offset hour" if hours > 24 else ""
        if too_big:
            return out_of_range(too_big)
        if not ok:
            return failed(std, hold)
    if rest:
        return f"parsing time {_quote(value)}: extra text: {_quote(rest)}"
    if day < 1 or day > _days_in(month, year):
        return out_of_range("day")
    return None

"""Port of k8s.io/apimachinery/pkg/runtime/conversion.go (v1.36.0): a query parameter's values as a string, number or bool.

The parameter codec (``runtime.NewParameterCodec``, which every REST handler's
``DecodeParameters`` is) turns a request's ``url.Values`` into an options struct by the
conversions of :mod:`genericserver.apimachinery.apis.meta.v1.conversion`, and those read each
parameter's values with the functions here. Each takes the values of one key, as Go's
``URL.Query()`` gives them (:func:`genericserver.request.query`; the caller has checked the key is
there with at least one value, so ``?watch`` is ``[""]``), and reads the first:

* a string is the first value as it is;
* a bool is false only for ``0`` and for ``false`` in any case (``strings.EqualFold``: ``FALSE``,
  ``falſe``); anything else is true, the empty value and ``yes`` included. The pointer form gives
  the same answer: a ``*bool`` option named in the query is never left nil;
* a number is ``strconv.ParseInt(v, 10, 64)`` (``Atoi`` for an ``int``): an optional sign and
  decimal digits, nothing else (no spaces, no ``_``, no empty value), else an error with Go's text
  (``strconv.ParseInt: parsing "x": invalid syntax``, ``... value out of range``), which the
  handlers answer with a 400.

Python has no pointers: a ``*bool`` or ``*int64`` is the same value here, and "nil" is the caller's
``None`` for a key that is absent.
"""

from __future__ import annotations

import re

from genericserver.klog import go_quote

_DECIMAL = re.compile(r"[+-]?[0-9]+\Z")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class ConversionError(ValueError):
    """A value that does not convert (a ``*strconv.NumError``); its text is Go's."""


def quote(s: str) -> str:
    """``strconv.Quote`` of a query value (its bytes held one per character, as
    :func:`genericserver.net.url.url.unescape` gives them): UTF-8 shown as its characters, a byte
    that is no UTF-8 as ``\\xNN``."""
    text = s.encode("latin-1", "replace").decode("utf-8", "surrogateescape")
    out = []
    for part in re.split(r"([\udc80-\udcff]+)", text):
        if part and "\udc80" <= part[0] <= "\udcff":
            out.append("".join(f"\\x{ord(c) - 0xDC00:02x}" for c in part))
        elif part:
            out.append(go_quote(part)[1:-1])
    return '"' + "".join(out) + '"'


def equal_fold(s: str, t: str) -> bool:
    """``strings.EqualFold``: the same characters under Unicode simple case folding, one for one
    (``ſ`` is ``s``, the Kelvin sign ``k``; ``ß`` is not ``ss``)."""
    if len(s) != len(t):
        return False
    for a, b in zip(s, t):
        if a == b:
            continue
        fa, fb = a.casefold(), b.casefold()
        if len(fa) == 1 and fa == fb:
            continue
        if a.lower() == b.lower() and len(a.lower()) == 1:
            continue
        return False
    return True


def parse_int(s: str, bits: int = 64, func: str = "ParseInt") -> int:
    """``strconv.ParseInt(s, 10, bits)``; raises :class:`ConversionError` with Go's text."""
    if not _DECIMAL.match(s):
        raise ConversionError(f"strconv.{func}: parsing {quote(s)}: invalid syntax")
    v = int(s)
    if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
        raise ConversionError(f"strconv.{func}: parsing {quote(s)}: value out of range")
    return v


def convert_slice_string_to_string(values: list[str]) -> str:
    return values[0] if values else ""


def convert_slice_string_to_int(values: list[str]) -> int:
    """``strconv.Atoi`` of the first value (Go's ``int`` is 64 bits here)."""
    if not values:
        return 0
    return parse_int(values[0], 64, "Atoi")


def convert_slice_string_to_bool(values: list[str]) -> bool:
    """Only no value, ``0`` and ``false`` (in any case) are false; the empty value is true."""
    if not values:
        return False
    return not (values[0] == "0" or equal_fold(_runes(values[0]), "false"))


def _runes(s: str) -> str:
    """A query value's characters as Go reads its string, UTF-8 (a value holds its bytes one per
    character; a byte that is no UTF-8 is U+FFFD, Go's RuneError)."""
    try:
        return s.encode("latin-1").decode("utf-8", "replace")
    except UnicodeEncodeError:  # already characters
        return s


def convert_slice_string_to_pointer_bool(values: list[str]) -> bool:
    """The ``*bool`` form: the same answer, never nil (no value is false too)."""
    return convert_slice_string_to_bool(values)


def string_to_int64(s: str) -> int:
    return parse_int(s, 64)


def convert_string_to_int64(s: "str | None") -> int:
    return 0 if s is None else string_to_int64(s)


def convert_slice_string_to_int64(values: list[str]) -> int:
    return string_to_int64(values[0]) if values else 0


def convert_string_to_pointer_int64(s: "str | None") -> "int | None":
    return None if s is None else string_to_int64(s)


def convert_slice_string_to_pointer_int64(values: list[str]) -> "int | None":
    return string_to_int64(values[0]) if values else None

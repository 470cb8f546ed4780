"""Port of Go's github.com/munnerz/goautoneg package (autoneg.go at v0.0.0-20191010083416-a7dc8b61c822): Accept headers.

:func:`parse_accept` is ``ParseAccept``: the header split at commas, each clause at semicolons
and its media range at slashes, with goautoneg's own leniency:

* only spaces are trimmed (not tabs); a range without a subtype counts only as ``*`` (``*/*``),
  one with two slashes is dropped;
* a parameter without ``=``, or with two, is dropped; ``q`` is read as a float32 (a ``q`` that
  does not parse is 0) and a clause with ``q=0`` is **kept**: nothing is refused by its weight
  alone (kube-apiserver answers ``Accept: application/json;q=0`` with JSON);
* the clauses are sorted by Go's ``sort.Sort`` with goautoneg's ``Less``: ``i`` before ``j`` when
  its q is higher, **or** when its type is concrete and ``j``'s is ``*``, **or** when its subtype
  is concrete and ``j``'s is ``*``. That is no consistent order (a concrete subtype goes before a
  wildcard whatever the weights: ``application/*;q=0.2, application/yaml;q=0.1`` puts YAML first),
  so the result is whatever Go's sorting algorithm makes of it: for up to 12 clauses
  ``pdqsort`` is an insertion sort, ported here step by step. Longer headers are sorted by the
  same ``Less`` with Python's sort, whose result may differ from Go's pdqsort (walkthrough
  section 9).

:func:`negotiate` is ``Negotiate``: the first alternative the best clause matches.
"""

from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass, field
from typing import Optional

MAX_INSERTION = 12  # Go's pdqsort sorts this many or fewer by insertion


@dataclass
class Accept:
    """A clause of an Accept header."""

    type: str
    subtype: str
    q: float = 1.0
    params: Optional[dict] = field(default=None)


def _less(ai: Accept, aj: Accept) -> bool:
    # acceptSlice.Less, as it is
    if ai.q > aj.q:
        return True
    if ai.type != "*" and aj.type == "*":
        return True
    if ai.subtype != "*" and aj.subtype == "*":
        return True
    return False


def _next_split_element(s: str, sep: str) -> tuple[str, str]:
    index = s.find(sep)
    if index != -1:
        return s[:index], s[index + 1:]
    return s, ""


_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z|[+-]?(inf|infinity|nan)\Z", re.IGNORECASE)
_FLOAT32_MAX = 3.4028234663852886e38


def _parse_float32(text: str) -> float:
    """``strconv.ParseFloat(s, 32)`` as goautoneg reads it, its error ignored: 0 for a syntax
    error, +-Inf out of range, else the value rounded to a float32. (Go's hex and underscore
    forms are not read here.)"""
    if not _DECIMAL.match(text):
        return 0.0
    value = float(text)
    if abs(value) > _FLOAT32_MAX and value == value:
        return float("inf") if value > 0 else float("-inf")
    return struct.unpack("f", struct.pack("f", value))[0]


def parse_accept(header: str) -> list[Accept]:
    """``ParseAccept``: the header's clauses, sorted as goautoneg sorts them."""
    accept: list[Accept] = []
    remaining = header
    while remaining:
        part, remaining = _next_split_element(remaining, ",")
        part = part.strip(" ")
        sp, remaining_part = _next_split_element(part, ";")
        sp0, sp_remaining = _next_split_element(sp, "/")
        a = Accept(sp0.strip(" "), "")
        if not sp_remaining:
            if a.type != "*":
                continue
            a.subtype = "*"
        else:
            sp1, sp_remaining = _next_split_element(sp_remaining, "/")
            if sp_remaining:
                continue
            a.subtype = sp1.strip(" ")
        if not remaining_part:
            accept.append(a)
            continue
        a.params = {}
        while remaining_part:
            sp, remaining_part = _next_split_element(remaining_part, ";")
            sp0, sp_remaining = _next_split_element(sp, "=")
            if not sp_remaining:
                continue
            sp1, sp_remaining = _next_split_element(sp_remaining, "=")
            if sp_remaining:
                continue
            token = sp0.strip(" ")
            if token == "q":
                a.q = _parse_float32(sp1)
            else:
                a.params[token] = sp1.strip(" ")
        accept.append(a)
    _sort(accept)
    return accept


def _sort(data: list[Accept]) -> None:
    """Go's ``sort.Sort`` of an ``acceptSlice``."""
    if len(data) <= MAX_INSERTION:
        # insertionSort: each element moves left while Less says it goes before its neighbour
        for i in range(1, len(data)):
            j = i
            while j > 0 and _less(data[j], data[j - 1]):
                data[j], data[j - 1] = data[j - 1], data[j]
                j -= 1
        return
    data.sort(key=functools.cmp_to_key(lambda x, y: -1 if _less(x, y) else (1 if _less(y, x) else 0)))


def negotiate(header: str, alternatives: list[str]) -> str:
    """``Negotiate``: the alternative the best clause matches first ("" when none does)."""
    asp = [ctype.split("/", 1) for ctype in alternatives]
    for clause in parse_accept(header):
        for i, ctsp in enumerate(asp):
            if clause.type == ctsp[0] and (clause.subtype == ctsp[1] or clause.subtype == "*"):
                return alternatives[i]
            if clause.type == "*" and clause.subtype == "*":
                return alternatives[i]
    return ""

"""Port of k8s.io/apimachinery/pkg/fields/selector.go (v1.36.0): parsing and matching a field selector.

``fieldSelector=metadata.name=a,metadata.namespace!=b``: terms split at unescaped commas, each
``field=value``, ``field==value`` or ``field!=value``; ``\\,``, ``\\=`` and ``\\\\`` escape
within a value. A term without an operator is Go's ``invalid selector: 'S'; can't understand
'T'``; a bad escape ``invalid field selector: ...``; a term of no field and no value (``==``)
selects everything, as Go's ``Transform`` makes it ``Everything()``. Which fields a resource can be selected by
is the resource's business (Go's field label conversion): for most, ``metadata.name`` and
``metadata.namespace``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

OPERATORS = ("!=", "==", "=")


class SelectorError(ValueError):
    """A selector Go refuses; its text is Go's."""


@dataclass(frozen=True)
class Term:
    field: str
    value: str
    negated: bool = False

    def matches(self, fields: dict) -> bool:
        have = fields.get(self.field, "")
        return (have != self.value) if self.negated else (have == self.value)


@dataclass(frozen=True)
class Selector:
    terms: tuple[Term, ...] = ()

    def matches(self, fields: dict) -> bool:
        return all(t.matches(fields) for t in self.terms)

    def empty(self) -> bool:
        return not self.terms

    def requires_exact_match(self, name: str) -> Optional[str]:
        for t in self.terms:
            if t.field == name and not t.negated:
                return t.value
        return None


def _split_terms(text: str) -> list[str]:
    if not text:
        return []
    terms, start, escaped = [], 0, False
    for i, c in enumerate(text):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def unescape_value(s: str) -> str:
    if not any(c in s for c in "\\,="):
        return s
    out, escaped = [], False
    for c in s:
        if escaped:
            if c not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse(text: str) -> Selector:
    """``fields.ParseSelector``: the terms, sorted as Go sorts them."""
    terms = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        for i in range(len(part)):
            op = next((o for o in OPERATORS if part.startswith(o, i)), None)
            if op is not None:
                lhs, rhs = part[:i], part[i + len(op):]
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        value = unescape_value(rhs)
        if lhs or value:  # Go's Transform makes a term of no field and no value Everything: '==' selects all
            terms.append(Term(lhs, value, op == "!="))
    return Selector(tuple(terms))

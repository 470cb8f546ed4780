"""Port of k8s.io/apimachinery/pkg/labels/selector.go (v1.36.0): parsing and matching a label selector.

``kubectl get -l 'app=web,tier in (a,b),!canary'`` sends ``labelSelector``; the list handler
parses it with Go's lexer and parser, whose error texts a client sees in the 400:

* a lexer that cuts the text into identifiers, keywords (``in``, ``notin``) and the symbols
  ``= == != ! ( ) , < >``;
* requirements separated by commas: ``key`` (exists), ``!key`` (does not exist), ``key = v``,
  ``key == v``, ``key != v``, ``key in (a,b)``, ``key notin (a,b)``, ``key > 3``, ``key < 3``;
* each key checked as a qualified name, each value as a label value, with Go's messages.

:func:`parse` returns a :class:`Selector`; its ``matches(labels)`` is Go's ``Matches``:
``!=`` and ``notin`` also match an object without the label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from genericserver.apimachinery.errors import new_aggregate
from genericserver.apimachinery.field import errors as field
from genericserver.apimachinery.validation import is_dns1123_subdomain

BINARY_OPERATORS = ["in", "notin", "=", "==", "!=", "gt", "lt"]
_TOKENS = {")": "CLOSED_PAR", ",": "COMMA", "!": "DOES_NOT_EXIST", "==": "DOUBLE_EQUALS", "=": "EQUALS", ">": "GREATER_THAN",
           "in": "IN", "<": "LESS_THAN", "!=": "NOT_EQUALS", "notin": "NOT_IN", "(": "OPEN_PAR"}
_SPECIAL = set("=!(),><")
_WHITESPACE = set(" \t\r\n")
_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY_RE = re.compile(_KEY_FMT + r"\Z")
_KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_VALUE_FMT = "(" + _KEY_FMT + ")?"
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
              "and must start and end with an alphanumeric character")


class SelectorError(ValueError):
    """A selector Go's parser refuses; its text is Go's."""


def _regex_error(msg: str, regex: str, *examples: str) -> str:
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples).replace(", or", " or") + f"regex used for validation is '{regex}')"


def label_key_errors(key: str) -> list[str]:
    """content.IsLabelKey: an optional DNS subdomain prefix and '/', then a name."""
    errs = []
    parts = key.split("/")
    if len(parts) > 2:
        return ["a valid label key " + _regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc") +
                " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        elif not is_dns1123_subdomain(prefix):
            errs.append("prefix part " + _regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                                                      "'-' or '.', and must start and end with an alphanumeric character",
                                                      r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", "example.com"))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _KEY_RE.match(name):
        errs.append("name part " + _regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 bytes")
    if value and not _KEY_RE.match(value):
        errs.append(_regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # "exists", "!", "=", "==", "!=", "in", "notin", "gt", "lt"
    values: tuple[str, ...] = ()

    def matches(self, labels: dict) -> bool:
        op, has = self.operator, self.key in labels
        if op in ("=", "==", "in"):
            return has and labels[self.key] in self.values
        if op in ("!=", "notin"):
            return not has or labels[self.key] not in self.values
        if op == "exists":
            return has
        if op == "!":
            return not has
        if not has:
            return False
        try:
            have, want = int(labels[self.key]), int(self.values[0])
        except ValueError:
            return False
        return have > want if op == "gt" else have < want


def new_requirement(key: str, op: str, values: list[str]) -> Requirement:
    """``NewRequirement``: the key, the operator's value count and each value checked."""
    errs: list[field.Error] = []
    key_errs = label_key_errors(key)
    if key_errs:
        errs.append(field.invalid("key", key, "; ".join(key_errs)))
    if op in ("in", "notin") and not values:
        errs.append(field.invalid("values", values, "for 'in', 'notin' operators, values set can't be empty"))
    if op in ("=", "==", "!=") and len(values) != 1:
        errs.append(field.invalid("values", values, "exact-match compatibility requires one single value"))
    if op in ("gt", "lt"):
        if len(values) != 1:
            errs.append(field.invalid("values", values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(values):
            if not re.fullmatch(r"[+-]?[0-9]+", v):
                errs.append(field.invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, v in enumerate(values):
        value_errs = label_value_errors(v)
        if value_errs:
            errs.append(field.invalid(f"values[{i}][{key}]", v, "; ".join(value_errs)))
    if errs:
        agg = new_aggregate([SelectorError(str(e)) for e in errs])
        raise SelectorError(str(agg))
    return Requirement(key, op, tuple(sorted(set(values))))


@dataclass(frozen=True)
class Selector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Optional[dict]) -> bool:
        return all(r.matches(labels or {}) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements


def _lex(text: str) -> list[tuple[str, str]]:
    items, i = [], 0
    while True:
        while i < len(text) and text[i] in _WHITESPACE:
            i += 1
        if i >= len(text):
            items.append(("END", ""))
            return items
        if text[i] in _SPECIAL:
            buf, last, j = "", None, i
            while j < len(text) and text[j] in _SPECIAL:
                buf += text[j]
                if buf in _TOKENS:
                    last = (_TOKENS[buf], buf)
                    j += 1
                elif last is not None:
                    break
                else:
                    j += 1
            if last is None:
                items.append(("ERROR", f"error expected: keyword found '{buf}'"))
                i = j
            else:
                items.append(last)
                i += len(last[1])
        else:
            j = i
            while j < len(text) and text[j] not in _SPECIAL and text[j] not in _WHITESPACE:
                j += 1
            word = text[i:j]
            items.append((_TOKENS.get(word, "IDENTIFIER") if word in ("in", "notin") else "IDENTIFIER", word))
            i = j


class _Parser:
    def __init__(self, text: str):
        self.items = _lex(text)
        self.pos = 0

    def _tok(self, item: tuple[str, str], values: bool) -> tuple[str, str]:
        tok, lit = item
        if values and tok in ("IN", "NOT_IN"):
            tok = "IDENTIFIER"
        return tok, lit

    def lookahead(self, values: bool = True) -> tuple[str, str]:
        return self._tok(self.items[self.pos], values)

    def consume(self, values: bool = True) -> tuple[str, str]:
        self.pos += 1
        return self._tok(self.items[self.pos - 1], values)

    def parse(self) -> list[Requirement]:
        reqs = []
        while True:
            tok, lit = self.lookahead()
            if tok == "END":
                return reqs
            if tok not in ("IDENTIFIER", "DOES_NOT_EXIST"):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self.requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            t, l = self.consume()
            if t == "END":
                return reqs
            if t != "COMMA":
                raise SelectorError(f"found '{l}', expected: ',' or 'end of string'")
            t2, l2 = self.lookahead()
            if t2 not in ("IDENTIFIER", "DOES_NOT_EXIST"):
                raise SelectorError(f"found '{l2}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        op = ""
        tok, lit = self.consume()
        if tok == "DOES_NOT_EXIST":
            op = "!"
            tok, lit = self.consume()
        if tok != "IDENTIFIER":
            raise SelectorError(f"found '{lit}', expected: identifier")
        key_errs = label_key_errors(lit)
        if key_errs:
            raise SelectorError(str(field.invalid("<nil>", lit, "; ".join(key_errs))))
        if self.lookahead()[0] in ("END", "COMMA"):
            return new_requirement(lit, op or "exists", [])
        if op == "!":
            raise SelectorError(f"found '{self.lookahead()[1]}', expected: ',' or 'end of string'")
        key = lit
        tok, lit = self.consume(values=False)
        op = {"IN": "in", "NOT_IN": "notin", "EQUALS": "=", "DOUBLE_EQUALS": "==", "NOT_EQUALS": "!=",
              "GREATER_THAN": "gt", "LESS_THAN": "lt"}.get(tok)
        if op is None:
            raise SelectorError(f"found '{lit}', expected: {', '.join(BINARY_OPERATORS)}")
        values = self.values() if op in ("in", "notin") else self.exact_value()
        return new_requirement(key, op, values)

    def values(self) -> list[str]:
        tok, lit = self.consume()
        if tok != "OPEN_PAR":
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok == "CLOSED_PAR":
            self.consume()
            return [""]
        if tok not in ("IDENTIFIER", "COMMA"):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        out: set[str] = set()
        while True:
            t, l = self.consume()
            if t == "IDENTIFIER":
                out.add(l)
                t2, l2 = self.lookahead()
                if t2 == "COMMA":
                    continue
                if t2 == "CLOSED_PAR":
                    self.consume()
                    return sorted(out)
                raise SelectorError(f"found '{l2}', expected: ',' or ')'")
            if t == "COMMA":
                if not out:
                    out.add("")
                t2, _ = self.lookahead()
                if t2 == "CLOSED_PAR":
                    out.add("")
                    self.consume()
                    return sorted(out)
                if t2 == "COMMA":
                    out.add("")
                continue
            raise SelectorError(f"found '{l}', expected: ',', or identifier")

    def exact_value(self) -> list[str]:
        tok, _ = self.lookahead()
        if tok in ("END", "COMMA"):
            return [""]
        tok, lit = self.consume()
        if tok == "IDENTIFIER":
            return [lit]
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse(text: str) -> Selector:
    """``labels.Parse``: the requirements, sorted by key as Go sorts them."""
    return Selector(tuple(sorted(_Parser(text).parse(), key=lambda r: r.key)))


def requirement_string(r: Requirement) -> str:
    """A requirement written back as selector text (Go's ``Requirement.String``)."""
    if r.operator == "exists":
        return r.key
    if r.operator == "!":
        return "!" + r.key
    if r.operator in ("in", "notin"):
        return f"{r.key} {r.operator} ({','.join(r.values)})"
    op = {"gt": ">", "lt": "<"}.get(r.operator, r.operator)
    return f"{r.key}{op}{r.values[0]}"


def to_string(s: Selector) -> str:
    return ",".join(requirement_string(r) for r in s.requirements)

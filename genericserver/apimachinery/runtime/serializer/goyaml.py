"""JSON written as YAML the way sigs.k8s.io/yaml v1.6.0's ``JSONToYAML`` writes it, through go.yaml.in/yaml/v2 v2.4.3 (no Go twin in the Kubernetes tree: it ports the parts of those modules' yaml.go, encode.go, resolve.go, sorter.go and emitterc.go that ``JSONToYAML`` reaches).

json.go's YAML serializer turns an object into JSON and hands it to ``JSONToYAML``, which reads
the JSON with yaml.v2 (a JSON number becomes an int or a float64, a JSON string a string) and
marshals what it read. So every answer's YAML follows yaml.v2's encoder:

* a map's keys in yaml.v2's order (``keyList.Less``: letters by code point, a run of digits by
  its number, so ``a2`` before ``a10``), block style, a sequence in a mapping not indented, an
  empty map ``{}`` and an empty list ``[]``;
* a string is plain when it would read back as a string (``resolve``: not ``1``, ``true``,
  ``y``, ``null``, ``""``, an RFC 3339 time, a base-60 float), else double-quoted
  (``stringv``): ``a: "1"``, ``creationTimestamp: "2026-01-02T03:04:05Z"``, ``x: ""``; a
  string with a newline is a literal block (``|``, ``|-``);
* then the emitter's own analysis (``yaml_emitter_analyze_scalar``) may overrule a plain
  string that starts with an indicator, has a ``: `` or `` #``, or leading or trailing spaces: it
  is single-quoted, or double-quoted if it cannot be (special characters: control characters,
  characters past U+FFFF, which yaml.v2 does not count printable);
* long lines are broken at a space past column 80, as the emitter does.

PyYAML's emitter is a port of the same C emitter (libyaml) that emitterc.go ports, so it does
the layout; what yaml.v2 decides differently is done here: the style of each scalar (PyYAML's
resolver and representer would choose single quotes), the key order, the scalar analysis and
the double-quoted writer (yaml.v2's printable set and line breaking).
"""

from __future__ import annotations

import decimal
import functools
import io
import math
import re
import unicodedata
from typing import Any, Optional

from yaml import emitter as pyemitter
from yaml import events

# resolve.go: what a plain scalar's first character hints it may be
_SIGN, _DIGIT, _IN_MAP, _DOT = "S", "D", "M", "."
_NON_STR = {**{s: "bool" for s in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
                                   "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
            **{s: "null" for s in ("", "~", "null", "Null", "NULL")},
            **{s: "float" for s in (".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
                                    "-.inf", "-.Inf", "-.INF")},
            "<<": "merge"}
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_BASE60_FLOAT = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z")
# resolve.go's allowedTimestampFormats, as time.Parse reads them: 2006-1-2T15:4:5.999999999Z07:00 (and
# with a lower-case t), 2006-1-2 15:4:5.999999999, 2006-1-2
_TIMESTAMP = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:([Tt])|( ))(\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?"
                        r"(Z|[+-]\d\d:\d\d)?)?\Z", re.ASCII)


def _hint(s: str) -> str:
    if not s:
        return "N"
    c = s[0]
    if c in "+-":
        return _SIGN
    if "0" <= c <= "9":
        return _DIGIT
    if c in "yYnNtTfFoO~":
        return _IN_MAP
    return _DOT if c == "." else ""


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _is_timestamp(s: str) -> bool:
    """``parseTimestamp``: one of the allowed layouts, every field in its range."""
    m = _TIMESTAMP.match(s)
    if not m:
        return False
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not 1 <= month <= 12 or not 1 <= day <= _days_in(month, year):
        return False
    if m.group(6) is None:
        return True
    if (m.group(4) is not None) != (m.group(9) is not None):  # a T needs a zone, a space has none
        return False
    zone = m.group(9) or "Z"
    if zone != "Z" and (int(zone[1:3]) > 24 or int(zone[4:6]) > 60):
        return False
    return int(m.group(6)) < 24 and int(m.group(7)) < 60 and int(m.group(8)) < 60


def _go_parse_int(s: str, bits_signed: bool = True) -> Optional[int]:
    """strconv.ParseInt(s, 0, 64) (or ParseUint): a sign (not for Uint), then 0x, 0o, 0b, a
    leading 0 (octal) or decimal digits."""
    sign, body = 1, s
    if body[:1] in "+-" and body:
        if not bits_signed:
            return None
        sign, body = (-1 if body[0] == "-" else 1), body[1:]
    base, digits = 10, body
    if len(body) > 1 and body[0] == "0":
        prefix = body[1].lower()
        base, digits = {"x": (16, body[2:]), "o": (8, body[2:]), "b": (2, body[2:])}.get(prefix, (8, body[1:]))
    if not digits or not all(c in "0123456789abcdefABCDEF"[: base if base <= 10 else 22] for c in digits):
        return None
    v = sign * int(digits, base)
    lo, hi = (-(1 << 63), (1 << 63) - 1) if bits_signed else (0, (1 << 64) - 1)
    return v if lo <= v <= hi else None


def _go_parse_float_ok(s: str) -> bool:
    """strconv.ParseFloat(s, 64) succeeds (for the decimal forms the resolver tries; an
    overflow such as 1e400 is an error)."""
    try:
        return not math.isinf(float(s))
    except ValueError:
        return False


def resolve(s: str) -> str:
    """``resolve("", s)``'s tag for a plain scalar ``s``: str, bool, null, int, float,
    timestamp or merge."""
    hint = _hint(s)
    if not hint:
        return "str"
    if s in _NON_STR:
        return _NON_STR[s]
    if hint == _DOT:  # ParseFloat: digits, an underscore only between two of them (underscoreOK)
        ok = re.fullmatch(r"\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?", s) and _go_parse_float_ok(s.replace("_", ""))
        return "float" if ok else "str"
    if hint in (_DIGIT, _SIGN):
        if _is_timestamp(s):
            return "timestamp"
        plain = s.replace("_", "")
        if _go_parse_int(plain) is not None or _go_parse_int(plain, bits_signed=False) is not None:
            return "int"
        if _YAML_STYLE_FLOAT.match(plain) and _go_parse_float_ok(plain):
            return "float"
        if plain.startswith("-0b") and _go_parse_int(plain[3:], bits_signed=False) is not None:
            return "int"
    return "str"


def _is_base60_float(s: str) -> bool:
    return bool(s) and (s[0] in "+-" or "0" <= s[0] <= "9") and ":" in s and bool(_BASE60_FLOAT.match(s))


def string_style(s: str) -> str:
    """``stringv``'s requested style: ``|`` (a newline), ``""`` (plain: it reads back as a
    string) or ``"`` (double-quoted)."""
    if "\n" in s:
        return "|"
    return "" if resolve(s) == "str" and not _is_base60_float(s) else '"'


def _is_letter(c: str) -> bool:
    return unicodedata.category(c).startswith("L")


def _is_digit(c: str) -> bool:
    return unicodedata.category(c) == "Nd"


def _int64(v: int) -> int:
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)  # Go's int64 wraps (a run of 19 digits and more)


def key_less(a: str, b: str) -> bool:
    """sorter.go's ``keyList.Less`` for two string keys."""
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        al, bl = _is_letter(a[i]), _is_letter(b[i])
        if al and bl:
            return a[i] < b[i]
        if al or bl:
            return bl
        an = bn = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and _is_digit(a[j]):
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and _is_digit(a[ai]):
            an = _int64(an * 10 + ord(a[ai]) - ord("0"))
            ai += 1
        bi = i
        while bi < len(b) and _is_digit(b[bi]):
            bn = _int64(bn * 10 + ord(b[bi]) - ord("0"))
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return a[i] < b[i]
    return len(a) < len(b)


_KEY_ORDER = functools.cmp_to_key(lambda a, b: -1 if key_less(a, b) else 1 if key_less(b, a) else 0)


def sorted_keys(keys: list) -> list:
    """``sort.Sort(keyList)``. ``Less`` is not transitive (``017`` < ``0x1F`` < ``12:30`` < ``017``),
    so for such keys the order is the algorithm's and the starting order's: Go's pdqsort
    insertion-sorts up to 12 elements (zsortinterface.go), as here, but starts from its map's
    random iteration order, so Go itself writes such a map differently from run to run; this
    starts from the JSON's order. A longer map is sorted by Python's sort, which gives Go's
    order whenever its keys compare transitively (as any keys without digits do)."""
    if len(keys) > 12:
        return sorted(keys, key=_KEY_ORDER)
    out = list(keys)
    for i in range(1, len(out)):  # zsortinterface.go's insertionSort
        j = i
        while j > 0 and key_less(out[j], out[j - 1]):
            out[j], out[j - 1] = out[j - 1], out[j]
            j -= 1
    return out


def format_float(f: float) -> str:
    """``floatv``: strconv.FormatFloat(f, 'g', -1, 64), with YAML's names for the infinities and NaN."""
    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    sign, digits, exp = decimal.Decimal(repr(f)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    exp = int(exp) + len("".join(map(str, digits))) - len(ds)
    dp = len(ds) + exp  # where the decimal point goes
    x = dp - 1
    out = "-" if sign else ""
    if x < -4 or x >= 6:  # shortest 'g': %e past an exponent of 6 (ftoa.go)
        mantissa = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{out}{mantissa}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if dp <= 0:
        return f"{out}0.{'0' * -dp}{ds}"
    if dp >= len(ds):
        return out + ds + "0" * (dp - len(ds))
    return f"{out}{ds[:dp]}.{ds[dp:]}"


# yamlprivateh.go's character classes, on code points
def _printable(c: str) -> bool:
    o = ord(c)
    return o == 0x0A or 0x20 <= o <= 0x7E or 0xA0 <= o <= 0xD7FF or (0xE000 <= o <= 0xFFFD and o != 0xFEFF)


def _is_break(c: str) -> bool:
    return c in "\r\n\x85\u2028\u2029"


def _is_blankz(s: str, i: int) -> bool:
    return i >= len(s) or s[i] in " \t\0" or _is_break(s[i])


class _Emitter(pyemitter.Emitter):
    """libyaml's emitter as yaml.v2 has it: its scalar analysis and double-quoted writer."""

    def analyze_scalar(self, scalar: str) -> pyemitter.ScalarAnalysis:  # yaml_emitter_analyze_scalar
        if not scalar:
            return pyemitter.ScalarAnalysis(scalar=scalar, empty=True, multiline=False, allow_flow_plain=False,
                                            allow_block_plain=True, allow_single_quoted=True,
                                            allow_double_quoted=True, allow_block=False)
        block_ind = flow_ind = line_breaks = special = False
        leading_space = leading_break = trailing_space = trailing_break = break_space = space_break = False
        previous_space = previous_break = False
        if scalar.startswith(("---", "...")):
            block_ind = flow_ind = True
        preceded_by_ws = True
        n = len(scalar)
        for i, c in enumerate(scalar):
            followed_by_ws = i + 1 >= n or scalar[i + 1] in " \t"
            if i == 0:
                if c in "#,[]{}&*!|>'\"%@`":
                    flow_ind = block_ind = True
                elif c in "?:":
                    flow_ind = True
                    block_ind = block_ind or followed_by_ws
                elif c == "-" and followed_by_ws:
                    flow_ind = block_ind = True
            else:
                if c in ",?[]{}":
                    flow_ind = True
                elif c == ":":
                    flow_ind = True
                    block_ind = block_ind or followed_by_ws
                elif c == "#" and preceded_by_ws:
                    flow_ind = block_ind = True
            if not _printable(c):
                special = True
            if c == " ":
                leading_space = leading_space or i == 0
                trailing_space = trailing_space or i == n - 1
                break_space = break_space or previous_break
                previous_space, previous_break = True, False
            elif _is_break(c):
                line_breaks = True
                leading_break = leading_break or i == 0
                trailing_break = trailing_break or i == n - 1
                space_break = space_break or previous_space
                previous_space, previous_break = False, True
            else:
                previous_space = previous_break = False
            preceded_by_ws = _is_blankz(scalar, i)
        flow_plain = block_plain = single = block = True
        if leading_space or leading_break or trailing_space or trailing_break:
            flow_plain = block_plain = False
        if trailing_space:
            block = False
        if break_space:
            flow_plain = block_plain = single = False
        if space_break or special:
            flow_plain = block_plain = single = block = False
        if line_breaks:
            flow_plain = block_plain = False
        if flow_ind:
            flow_plain = False
        if block_ind:
            block_plain = False
        return pyemitter.ScalarAnalysis(scalar=scalar, empty=False, multiline=line_breaks, allow_flow_plain=flow_plain,
                                        allow_block_plain=block_plain, allow_single_quoted=single,
                                        allow_double_quoted=True, allow_block=block)

    def write_literal(self, text: str) -> None:
        super().write_literal(text)
        # yaml.v2 marks a kept (|+) block open-ended, but the chomping indicator's own write clears
        # the mark again (write_block_scalar_hints), so no "..." ever follows
        self.open_ended = False

    def check_simple_key(self) -> bool:  # yaml_emitter_check_simple_key: an empty key is simple too
        if isinstance(self.event, events.ScalarEvent):
            if self.analysis is None:
                self.analysis = self.analyze_scalar(self.event.value)
            return not self.analysis.multiline and len(self.event.value.encode()) <= 128
        if isinstance(self.event, events.SequenceStartEvent):
            return self.check_empty_sequence()
        if isinstance(self.event, events.MappingStartEvent):
            return self.check_empty_mapping()
        return False

    def write_double_quoted(self, text: str, split: bool = True) -> None:  # yaml_emitter_write_double_quoted_scalar
        self.write_indicator('"', True)
        escapes = {"\0": "0", "\x07": "a", "\x08": "b", "\t": "t", "\n": "n", "\x0b": "v", "\x0c": "f", "\r": "r",
                   "\x1b": "e", '"': '"', "\\": "\\", "\x85": "N", "\xa0": "_", "\u2028": "L", "\u2029": "P"}
        bom = text.startswith("\ufeff")  # is_bom looks at the value's start, so it escapes every character
        spaces = False
        for i, c in enumerate(text):
            if not _printable(c) or bom or _is_break(c) or c in '"\\':
                o = ord(c)
                self._put("\\" + (escapes.get(c) or ("x%02X" % o if o <= 0xFF else "u%04X" % o if o <= 0xFFFF else "U%08X" % o)))
                spaces = False
            elif c == " ":
                if split and not spaces and self.column > self.best_width and 0 < i < len(text) - 1:
                    self.write_indent()
                    if text[i + 1] == " ":
                        self._put("\\")
                else:
                    self._put(c)
                spaces = True
            else:
                self._put(c)
                spaces = False
        self.write_indicator('"', False)
        self.whitespace = self.indention = False

    def _put(self, data: str) -> None:
        self.column += len(data)
        self.stream.write(data)
        self.whitespace = self.indention = False


def _events(value: Any) -> Any:
    """yaml.v2's ``marshal`` of what ``yaml.Unmarshal`` read from the JSON, as emitter events."""
    if isinstance(value, dict):
        yield events.MappingStartEvent(None, None, True, flow_style=False)
        for k in sorted_keys(list(value)):
            yield from _events(k)
            yield from _events(value[k])
        yield events.MappingEndEvent()
    elif isinstance(value, list):
        yield events.SequenceStartEvent(None, None, True, flow_style=False)
        for v in value:
            yield from _events(v)
        yield events.SequenceEndEvent()
    elif isinstance(value, str):
        yield events.ScalarEvent(None, None, (True, True), value, style=string_style(value) or None)
    elif value is None or isinstance(value, bool):
        yield events.ScalarEvent(None, None, (True, True), {None: "null", True: "true", False: "false"}[value])
    elif isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        # Go's JSON writes an integral float64 without a fraction, and yaml.v2 reads that back as an int
        yield events.ScalarEvent(None, None, (True, True), str(int(value)))
    elif isinstance(value, float):
        yield events.ScalarEvent(None, None, (True, True), format_float(value))
    else:
        yield events.ScalarEvent(None, None, (True, True), str(value))


def json_to_yaml(doc: Any) -> str:
    """``JSONToYAML`` of the JSON ``doc`` stands for (a value as ``json.loads`` gives it)."""
    out = io.StringIO()
    e = _Emitter(out, canonical=False, indent=2, width=80, allow_unicode=True, line_break="\n")
    for ev in (events.StreamStartEvent(encoding=None), events.DocumentStartEvent(explicit=False),
               *_events(doc), events.DocumentEndEvent(explicit=False), events.StreamEndEvent()):
        e.emit(ev)
    return out.getvalue()

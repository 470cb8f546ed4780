"""Port of Go's encoding/json package (scanner.go, Go 1.26): the scanner that checks a document before it is decoded.

``json.Unmarshal`` (and sigs.k8s.io/json, its fork) scans the whole input byte by byte before it
decodes anything, so what a client is told of a body that is not JSON is the scanner's first
complaint: ``invalid character 'n' looking for beginning of object key string``, ``unexpected end
of JSON input``, ``invalid character 'x' after top-level value``. The apiserver passes these texts
on (``json parse error: ...``, ``error decoding patch: ...``, ``continue key is not valid: ...``).

The scanner is a state machine: ``step`` is the state, a function of the next byte, and
``parse_state`` the stack of the objects and arrays open around it. Go's step results other
than ``scanError`` only matter to its decoder; here a step answers True to go on and False at
an error, whose text is in ``err``.

Python differs: reading byte by byte is slow in CPython (measured: 57 µs for a 700-byte
ConfigMap, where ``json.loads`` takes 3.4), so :func:`check_valid` is for a document Python's own
parser has refused (the two accept the same
documents but for NaN and Infinity, which :mod:`genericserver.encoding.json.decode` refuses
before it asks Python); it is not on the path of a body that parses.
"""

from __future__ import annotations

from typing import Callable, Optional

# an object or array nested deeper than this is refused, as Go refuses it
MAX_NESTING_DEPTH = 10000

PARSE_OBJECT_KEY, PARSE_OBJECT_VALUE, PARSE_ARRAY_VALUE = range(3)


class SyntaxError(ValueError):  # noqa: A001 (Go's name; this module's callers write scanner.SyntaxError)
    """Go's ``*json.SyntaxError``: the text, and how many bytes had been read when it was met."""

    def __init__(self, msg: str, offset: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.offset = offset


Step = Callable[["Scanner", int], bool]


class Scanner:
    """One scan: the state (``step``), the open objects and arrays, the error once one is met."""

    def __init__(self) -> None:
        self.step: Step = state_begin_value
        self.end_top = False  # the top-level value is complete: only spaces may follow
        self.parse_state: list[int] = []
        self.err: Optional[SyntaxError] = None
        self.bytes = 0

    def eof(self) -> bool:
        """The input ended: fine after a complete value; a number ends there (its step is fed a
        space); anything else open is ``unexpected end of JSON input``."""
        if self.err is not None:
            return False
        if self.end_top:
            return True
        self.step(self, ord(" "))
        if self.end_top:
            return True
        if self.err is None:
            self.err = SyntaxError("unexpected end of JSON input", self.bytes)
        return False

    def push_parse_state(self, c: int, new_parse_state: int) -> bool:
        self.parse_state.append(new_parse_state)
        if len(self.parse_state) <= MAX_NESTING_DEPTH:
            return True
        return self.error(c, "exceeded max depth")

    def pop_parse_state(self) -> None:
        self.parse_state.pop()
        if not self.parse_state:
            self.step = state_end_top
            self.end_top = True
        else:
            self.step = state_end_value

    def error(self, c: int, context: str) -> bool:
        self.step = state_error
        self.err = SyntaxError(f"invalid character {quote_char(c)} {context}", self.bytes)
        return False


def check_valid(data: bytes) -> Optional[SyntaxError]:
    """``checkValid``: None for a well-formed document, else the scanner's first complaint."""
    scan = Scanner()
    for c in data:
        scan.bytes += 1
        if not scan.step(scan, c):
            return scan.err
    if not scan.eof():
        return scan.err
    return None


def is_space(c: int) -> bool:
    return c in (0x20, 0x09, 0x0D, 0x0A)


def _is_hex(c: int) -> bool:
    return 0x30 <= c <= 0x39 or 0x61 <= c <= 0x66 or 0x41 <= c <= 0x46


def _is_digit(c: int) -> bool:
    return 0x30 <= c <= 0x39


def state_begin_value_or_empty(s: Scanner, c: int) -> bool:
    # just after '[': a ']' closes an empty array
    if is_space(c):
        return True
    if c == ord("]"):
        return state_end_value(s, c)
    return state_begin_value(s, c)


def state_begin_value(s: Scanner, c: int) -> bool:
    if is_space(c):
        return True
    if c == ord("{"):
        s.step = state_begin_string_or_empty
        return s.push_parse_state(c, PARSE_OBJECT_KEY)
    if c == ord("["):
        s.step = state_begin_value_or_empty
        return s.push_parse_state(c, PARSE_ARRAY_VALUE)
    if c in LITERAL_STARTS:
        s.step = LITERAL_STARTS[c]
        return True
    if 0x31 <= c <= 0x39:  # 1-9: a number that is not 0.x
        s.step = state1
        return True
    return s.error(c, "looking for beginning of value")


def state_begin_string_or_empty(s: Scanner, c: int) -> bool:
    # just after '{': a '}' closes an empty object
    if is_space(c):
        return True
    if c == ord("}"):
        s.parse_state[-1] = PARSE_OBJECT_VALUE
        return state_end_value(s, c)
    return state_begin_string(s, c)


def state_begin_string(s: Scanner, c: int) -> bool:
    # where an object's key must start
    if is_space(c):
        return True
    if c == ord('"'):
        s.step = state_in_string
        return True
    return s.error(c, "looking for beginning of object key string")


def state_end_value(s: Scanner, c: int) -> bool:
    """After a value: what may follow depends on what it is inside."""
    if not s.parse_state:
        s.step = state_end_top
        s.end_top = True
        return state_end_top(s, c)
    if is_space(c):
        s.step = state_end_value
        return True
    ps = s.parse_state[-1]
    if ps == PARSE_OBJECT_KEY:
        if c == ord(":"):
            s.parse_state[-1] = PARSE_OBJECT_VALUE
            s.step = state_begin_value
            return True
        return s.error(c, "after object key")
    if ps == PARSE_OBJECT_VALUE:
        if c == ord(","):
            s.parse_state[-1] = PARSE_OBJECT_KEY
            s.step = state_begin_string
            return True
        if c == ord("}"):
            s.pop_parse_state()
            return True
        return s.error(c, "after object key:value pair")
    if c == ord(","):
        s.step = state_begin_value
        return True
    if c == ord("]"):
        s.pop_parse_state()
        return True
    return s.error(c, "after array element")


def state_end_top(s: Scanner, c: int) -> bool:
    # Go's scanEnd: the byte is not consumed, and only a space may follow (checkValid goes on)
    if not is_space(c):
        s.error(c, "after top-level value")
        return False
    return True


def state_in_string(s: Scanner, c: int) -> bool:
    if c == ord('"'):
        s.step = state_end_value
        return True
    if c == ord("\\"):
        s.step = state_in_string_esc
        return True
    if c < 0x20:
        return s.error(c, "in string literal")
    return True


def state_in_string_esc(s: Scanner, c: int) -> bool:
    if c in b'bfnrt\\/"':
        s.step = state_in_string
        return True
    if c == ord("u"):
        s.step = _hex_digit(4)
        return True
    return s.error(c, "in string escape code")


def _hex_digit(left: int) -> Step:
    # Go's stateInStringEscU, U1, U12 and U123: four hexadecimal digits after \u
    def state(s: Scanner, c: int) -> bool:
        if _is_hex(c):
            s.step = state_in_string if left == 1 else _hex_digit(left - 1)
            return True
        return s.error(c, "in \\u hexadecimal character escape")
    return state


def state_neg(s: Scanner, c: int) -> bool:
    if c == ord("0"):
        s.step = state0
        return True
    if 0x31 <= c <= 0x39:
        s.step = state1
        return True
    return s.error(c, "in numeric literal")


def state1(s: Scanner, c: int) -> bool:
    # within the integer part of a number that does not start with 0
    if _is_digit(c):
        s.step = state1
        return True
    return state0(s, c)


def state0(s: Scanner, c: int) -> bool:
    # after the integer part
    if c == ord("."):
        s.step = state_dot
        return True
    if c in (ord("e"), ord("E")):
        s.step = state_e
        return True
    return state_end_value(s, c)


def state_dot(s: Scanner, c: int) -> bool:
    if _is_digit(c):
        s.step = state_dot0
        return True
    return s.error(c, "after decimal point in numeric literal")


def state_dot0(s: Scanner, c: int) -> bool:
    if _is_digit(c):
        return True
    if c in (ord("e"), ord("E")):
        s.step = state_e
        return True
    return state_end_value(s, c)


def state_e(s: Scanner, c: int) -> bool:
    if c in (ord("+"), ord("-")):
        s.step = state_e_sign
        return True
    return state_e_sign(s, c)


def state_e_sign(s: Scanner, c: int) -> bool:
    if _is_digit(c):
        s.step = state_e0
        return True
    return s.error(c, "in exponent of numeric literal")


def state_e0(s: Scanner, c: int) -> bool:
    if _is_digit(c):
        return True
    return state_end_value(s, c)


def _literal(word: str, at: int) -> Step:
    # Go's stateT, stateTr, stateTru, stateF... : the rest of true, false or null, a byte at a time
    def state(s: Scanner, c: int) -> bool:
        if c == ord(word[at]):
            s.step = state_end_value if at == len(word) - 1 else _literal(word, at + 1)
            return True
        return s.error(c, f"in literal {word} (expecting {quote_char(ord(word[at]))})")
    return state


state_t, state_f, state_n = _literal("true", 1), _literal("false", 1), _literal("null", 1)

# a literal's first byte and the state that reads the rest of it (1-9 start a number too: state1)
LITERAL_STARTS: dict[int, Step] = {ord('"'): state_in_string, ord("-"): state_neg, ord("0"): state0,
                                   ord("t"): state_t, ord("f"): state_f, ord("n"): state_n}


def state_error(s: Scanner, c: int) -> bool:
    return False


# strconv.Quote's short escapes for the control characters that have one
_SHORT_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v", 0x5C: "\\\\"}


def quote_char(c: int) -> str:
    """``quoteChar``: the byte in single quotes, as Go's %q writes the rune of that number
    (``'\\x01'``, ``'\\n'``, ``'\\u0081'``, ``'é'``), a quote of either kind as itself
    (``'\\''`` for the single one)."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    if c in _SHORT_ESCAPES:
        return "'" + _SHORT_ESCAPES[c] + "'"
    if c < 0x20 or c == 0x7F:
        return f"'\\x{c:02x}'"
    if c >= 0x80 and not chr(c).isprintable():  # C1 controls, no-break space, soft hyphen: not graphic to Go
        return f"'\\u{c:04x}'"
    return "'" + chr(c) + "'"

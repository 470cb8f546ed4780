"""Tests for genericserver.encoding.base64.base64: Go's TestDecodeCorrupt (encoding/base64/base64_test.go, Go 1.26), and the decoded []byte as a body's binaryData comes back."""

from __future__ import annotations

import pytest

from genericserver.apimachinery.runtime.serializer import json as jsonserializer
from genericserver.api.core.v1.types import CONFIG_MAP
from genericserver.encoding.base64.base64 import corrupt_input_offset

# Go's own table: the input, and the offset of its CorruptInputError (None: it decodes)
DECODE_CORRUPT = [
    ("", None), ("\n", None), ("AAA=\n", None), ("AAAA\n", None), ("!!!!", 0), ("====", 0), ("x===", 1),
    ("=AAA", 0), ("A=AA", 1), ("AA=A", 2), ("AA==A", 4), ("AAA=AAAA", 4), ("AAAAA", 4), ("AAAAAA", 4),
    ("A=", 1), ("A==", 1), ("AA=", 3), ("AA==", None), ("AAA=", None), ("AAAA", None), ("AAAAAA=", 7),
    ("YWJjZA=====", 8), ("A!\n", 1), ("A=\n", 1),
]


@pytest.mark.parametrize("src, offset", DECODE_CORRUPT)
def test_decode_corrupt(src, offset):
    assert corrupt_input_offset(src.encode()) == offset


@pytest.mark.parametrize("value, error, back", [
    # what Go 1.26.8's encoding/json answered for the same []byte field (json.Unmarshal, then
    # base64 again): the byte a corrupt value fails at; a newline skipped, stray low bits dropped
    ("not base64!", "illegal base64 data at input byte 3", None),
    ("YQ==\n\nx", "illegal base64 data at input byte 6", None),
    ("é", "illegal base64 data at input byte 0", None),
    ("YWJj\nZA==", None, "YWJjZA=="),
    ("YR==", None, "YQ=="),
])
def test_binary_data_is_decoded_and_written_again_as_go_does(value, error, back):
    body = ('{"metadata":{"name":"a"},"binaryData":{"k":%s}}' % jsonserializer.json.dumps(value)).encode()
    if error is not None:
        with pytest.raises(jsonserializer.DecodeError, match=f"^{error}$"):
            jsonserializer.decode(body, CONFIG_MAP)
    else:
        assert jsonserializer.decode(body, CONFIG_MAP)[1]["binaryData"] == {"k": back}

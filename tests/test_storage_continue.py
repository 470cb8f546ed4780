"""pkg/storage's continue tokens (continue_test.go's Test_decodeContinue cases as pytest ids) and
ValidateListOptions' rules for them."""

from __future__ import annotations

import base64
import json

import pytest

from genericserver.apimachinery.api import errors
from genericserver.storage import interfaces, storage_continue
from genericserver.storage.storage_continue import (ERR_EMPTY_START_KEY, ERR_GENERIC_INVALID_KEY, ERR_INVALID_START_RV,
                                                    ERR_UNRECOGNIZED_ENCODED_VERSION, ContinueError, decode_continue)


def encode_continue_or_die(version: str, rv: int, start: str) -> str:
    raw = json.dumps({"v": version, "rv": rv, "start": start}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.mark.parametrize("token, want", [
    pytest.param(encode_continue_or_die("meta.k8s.io/v1", 1, "key"), ("/test/key", 1), id="valid"),
    pytest.param(encode_continue_or_die("meta.k8s.io/v1", 1, "/"), ("/test/", 1), id="root path"),
    pytest.param(encode_continue_or_die("", 1, "key"), ERR_UNRECOGNIZED_ENCODED_VERSION, id="empty version"),
    pytest.param(encode_continue_or_die("v1", 1, "key"), ERR_UNRECOGNIZED_ENCODED_VERSION, id="invalid version"),
    pytest.param(encode_continue_or_die("meta.k8s.io/v1", 0, "key"), ERR_INVALID_START_RV, id="invalid RV"),
    pytest.param(encode_continue_or_die("meta.k8s.io/v1", 1, ""), ERR_EMPTY_START_KEY, id="no start Key"),
    pytest.param(encode_continue_or_die("meta.k8s.io/v1", 1, "../key"), ERR_GENERIC_INVALID_KEY, id="path traversal - parent"),
    pytest.param(encode_continue_or_die("meta.k8s.io/v1", 1, "./key"), ERR_GENERIC_INVALID_KEY, id="path traversal - local"),
    pytest.param(encode_continue_or_die("meta.k8s.io/v1", 1, "./../key"), ERR_GENERIC_INVALID_KEY, id="path traversal - double parent"),
    pytest.param(encode_continue_or_die("meta.k8s.io/v1", 1, "key/../.."), ERR_GENERIC_INVALID_KEY, id="path traversal - after parent"),
])
def test_decode_continue(token, want):
    if isinstance(want, tuple):
        assert decode_continue(token, "/test/") == want
    else:
        with pytest.raises(ContinueError) as err:
            decode_continue(token, "/test/")
        assert str(err.value).startswith(want)


def test_a_token_round_trips_and_counts_what_is_left():
    token, remaining = storage_continue.prepare_continue_token("/registry/configmaps/ns/b", "/registry/configmaps/ns/", 6, 5, True, 2, True)
    assert decode_continue(token, "/registry/configmaps/ns/") == ("/registry/configmaps/ns/b\x00", 6)
    assert remaining == 3
    assert storage_continue.prepare_continue_token("/k/b", "/k/", 6, 5, True, 2, False)[1] is None  # a selector: no count
    assert storage_continue.prepare_continue_token("/k/b", "/k/", 6, 5, False, 2, True) == ("", None)


@pytest.mark.parametrize("rv, match, limit, token, want", [
    ("", "", 0, "", (0, "")),
    ("5", "Exact", 0, "", (5, "")),
    ("5", "", 2, "", (5, "")),  # the legacy rule: a limited list reads at the version given
    ("5", "", 0, "", (0, "")),
    ("5", "NotOlderThan", 2, "", (0, "")),
    ("0", "", 0, encode_continue_or_die("meta.k8s.io/v1", 7, "b\x00"), (7, "/p/b\x00")),
])
def test_validate_list_options(rv, match, limit, token, want):
    assert interfaces.validate_list_options("/p/", rv, match, limit, token) == want


@pytest.mark.parametrize("rv, token, message", [
    ("5", encode_continue_or_die("meta.k8s.io/v1", 7, "b"), "specifying resource version is not allowed when using continue"),
    ("", "!!", "invalid continue token: continue key is not valid: "),
    ("x", "", 'invalid resource version: resourceVersion: Invalid value: "x": strconv.ParseUint: parsing "x": invalid syntax'),
])
def test_validate_list_options_refuses_with_gos_400(rv, token, message):
    with pytest.raises(errors.StatusError) as err:
        interfaces.validate_list_options("/p/", rv, "", 0, token)
    assert err.value.status["code"] == 400 and err.value.status["message"].startswith(message)


# what kube-apiserver v1.36.0 answered each token (reference/pair.py): DecodeContinue's json.Unmarshal
# (continue.go:53) says what is wrong in encoding/json's words, the scanner's for what is not JSON
@pytest.mark.parametrize("token, message", [
    ("garbage", "continue key is not valid: invalid character '\\u0081' looking for beginning of value"),
    ("eyJ2IjoxfQ", "continue key is not valid: json: cannot unmarshal number into Go struct field continueToken.v of type string"),
    ("eyJydiI6IngifQ", "continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64"),
    ("eyJydiI6MS41fQ", "continue key is not valid: json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64"),
    ("WzFd", "continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken"),
    ("bnVsbA", "continue key is not valid: server does not recognize this encoded version "),
])
def test_a_token_that_is_not_a_continue_token_is_refused_with_encoding_jsons_text(token, message):
    with pytest.raises(ContinueError) as err:
        decode_continue(token, "/p/")
    assert str(err.value) == message

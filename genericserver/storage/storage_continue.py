"""Port of k8s.io/apiserver/pkg/storage/continue.go (v1.36.0): continue tokens (named storage_continue: ``continue`` is a Python keyword).

A list cut at its ``limit`` answers a ``continue`` token: base64 (URL alphabet, no padding) of
``{"v":"meta.k8s.io/v1","rv":N,"start":"KEY\\u0000"}``, where KEY is the last item's key under
the list's key prefix (``/registry/configmaps/ns/`` for one namespace's list: ``b``; the
resource's root for a list of every namespace: ``ns/b``), and N the version the list was read
at. :func:`decode_continue` reads one back into the key to start from, with Go's texts for a
token it cannot read (the caller makes them a 400 ``invalid continue token: ...``).
"""

from __future__ import annotations

import base64
import binascii
import json
import posixpath
from typing import Optional

from genericserver.encoding.json import decode as gojson

ERR_INVALID_START_RV = "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
ERR_EMPTY_START_KEY = "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
ERR_GENERIC_INVALID_KEY = "continue key is not valid"
ERR_UNRECOGNIZED_ENCODED_VERSION = "continue key is not valid: server does not recognize this encoded version"


class ContinueError(ValueError):
    """A token :func:`decode_continue` cannot read; the message is Go's."""


def decode_continue(continue_value: str, key_prefix: str) -> tuple[str, int]:
    """``DecodeContinue``: the full key to start from and the resource version of the token."""
    try:
        if "=" in continue_value:  # RawURLEncoding: padding is not part of the alphabet
            raise binascii.Error(f"illegal base64 data at input byte {continue_value.index('=')}")
        data = base64.urlsafe_b64decode(continue_value + "=" * (-len(continue_value) % 4))
        token = _continue_token(gojson.loads(data))
    except (binascii.Error, ValueError) as err:  # the scanner's and encoding/json's texts are ValueErrors
        raise ContinueError(f"{ERR_GENERIC_INVALID_KEY}: {err}") from None
    version = token.get("v") or ""
    if version != "meta.k8s.io/v1":
        raise ContinueError(f"{ERR_UNRECOGNIZED_ENCODED_VERSION} {version}")
    rv, start = token.get("rv") or 0, token.get("start") or ""
    if rv == 0:
        raise ContinueError(ERR_INVALID_START_RV)
    if not start:
        raise ContinueError(ERR_EMPTY_START_KEY)
    # a start key may not climb out of the prefix: it must be clean once rooted
    key = start if start.startswith("/") else "/" + start
    if _clean(key) != key:
        raise ContinueError(f"{ERR_GENERIC_INVALID_KEY}: {start}")
    return key_prefix + key[1:], rv


def _continue_token(token: object) -> dict:
    """The token as json.Unmarshal reads it into ``continueToken`` (``v`` and ``start`` strings,
    ``rv`` an int64), or encoding/json's type error."""
    if token is None:
        return {}
    if not isinstance(token, dict):
        raise gojson.UnmarshalTypeError(gojson.kind_of(token), "storage.continueToken")
    for key, go_type in (("v", "string"), ("rv", "int64"), ("start", "string")):
        value = token.get(key)
        fits = isinstance(value, str) if go_type == "string" else isinstance(value, int) and not isinstance(value, bool)
        if value is not None and not fits:
            what = gojson.kind_of(value)
            if what == "number" and go_type == "int64":  # a number that is no int64: Go says which
                what = f"number {json.dumps(value)}"
            raise gojson.UnmarshalTypeError(what, go_type, "continueToken", key)
    return token


def _clean(p: str) -> str:
    # Go's path.Clean of a rooted path (posixpath keeps a leading "//", Go does not)
    cleaned = posixpath.normpath(p)
    return "/" + cleaned.lstrip("/") if cleaned.startswith("//") else cleaned


def encode_continue(key: str, key_prefix: str, resource_version: int) -> str:
    """``EncodeContinue``: the token that starts at ``key`` (which must lie under the prefix)."""
    if not key.startswith(key_prefix) or not key_prefix:
        raise ValueError("unable to encode next field: the key and key prefix do not match")
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": resource_version, "start": key[len(key_prefix):]},
                     separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def prepare_continue_token(key_last_item: str, key_prefix: str, resource_version: int, items_count: int,
                           has_more_items: bool, limit: int, predicate_empty: bool) -> tuple[str, Optional[int]]:
    """``PrepareContinueToken``: the token after the last item, and how many are left (only
    when no selector filtered the list: etcd counts what a selector would drop)."""
    if not has_more_items:
        return "", None
    token = encode_continue(key_last_item + "\x00", key_prefix, resource_version)
    return token, (items_count - limit if predicate_empty else None)

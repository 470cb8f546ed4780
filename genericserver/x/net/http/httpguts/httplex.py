"""Port of Go's golang.org/x/net/http/httpguts package (httplex.go, as vendored in Go 1.26.8): header lexing.

The byte rules net/http uses to decide whether a request's header names, values and ``Host`` are
acceptable, and whether a comma-separated header value holds a token. Go's server checks every
request header with these before a handler sees it (server.go ``readRequest``); a failure is
``400 Bad Request: invalid header name`` (or value, or ``malformed Host header``).
"""

from __future__ import annotations

import re
from typing import Iterable

# Go keeps these as 256-entry tables and loops over the bytes; a compiled character class does
# the same check in C (a header name or value is checked on every request).

# RFC 7230 tchar: the bytes a token (a method, a header name) may hold
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")

# RFC 3986 host syntax, loosely: letters, digits, sub-delims, unreserved, ':' for the port and
# '[' ']' for IPv6 literals, '%' for escapes and zones. Anything else (space, '/', '@', '"',
# control bytes, non-ASCII) makes the Host header malformed.
_HOST = re.compile(r"[0-9A-Za-z!$%&()*+,\-.:;=\[\]'_~]*\Z")

# a control byte other than the tab (VCHAR, SP, HTAB and obs-text are allowed)
_CTL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def is_token_rune(c: str) -> bool:
    """Go's ``IsTokenRune``: ``c`` is an ASCII token character."""
    return len(c) == 1 and _TOKEN.match(c) is not None


def valid_header_field_name(v: str) -> bool:
    """Go's ``ValidHeaderFieldName``: a non-empty token (also what a method must be)."""
    return _TOKEN.match(v) is not None


def valid_host_header(h: str) -> bool:
    """Go's ``ValidHostHeader``: only bytes a URI host (and port) can hold; empty is valid."""
    return _HOST.match(h) is not None


def valid_header_field_value(v: str) -> bool:
    """Go's ``ValidHeaderFieldValue``: no control byte but space and tab (obs-text is allowed)."""
    return _CTL.search(v) is None


def _trim_ows(x: str) -> str:
    return x.strip(" \t")


def _token_equal(t1: str, t2: str) -> bool:
    # ASCII case-insensitive; a non-ASCII byte in t1 never matches
    return len(t1) == len(t2) and t1.isascii() and t1.lower() == t2.lower()


def header_values_contain_token(values: Iterable[str], token: str) -> bool:
    """Go's ``HeaderValuesContainsToken``: one of the comma-separated elements equals ``token``."""
    return any(_token_equal(_trim_ows(element), token) for v in values for element in v.split(","))

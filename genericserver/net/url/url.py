"""Port of Go's net/url package (url.go, Go 1.26.8): ``ParseRequestURI`` and ``ParseQuery``.

net/http parses every request target with it and answers 400 when it fails: a control byte
anywhere, an empty target, a target that is neither ``*``, an absolute path, nor an absolute URL
(``GET foo``), a bad ``%`` escape in the path (``/%zz``), a host with bytes a host cannot hold, a
bad port, or a bad IP literal. Unlike ``url.Parse`` it keeps a ``#`` as part of the path or query.
Only what the server needs is ported: the parsed :class:`URL` carries scheme, host, path (escapes
decoded), raw path and raw query.

:func:`parse_query` is ``url.ParseQuery`` (what ``r.URL.Query()`` gives a Go handler): pairs split
at ``&`` only, a pair holding ``;`` or a bad escape is dropped, ``+`` is a space, at most 10,000
pairs; values hold bytes (one character per byte), as Go's strings do, where
``urllib.parse.parse_qs`` would keep ``a;b`` and ``%zz`` and decode UTF-8.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

# Go's encoding modes (url.go): which bytes a part may hold unescaped
ENCODE_PATH, ENCODE_HOST, ENCODE_ZONE, ENCODE_USER_PASSWORD = "path", "host", "zone", "userinfo"
ENCODE_QUERY_COMPONENT = "query"
DEFAULT_MAX_PARAMS = 10000  # Go 1.24's limit on the pairs of one query
_HEXDIGITS = frozenset("0123456789abcdefABCDEF")
_UNRESERVED = frozenset("-_.~")
_HOST_EXTRA = frozenset("!$&'()*+,;=:[]<>\"")
_RESERVED = frozenset("$&+,/:;=?@")
_USERINFO_OK = frozenset("-._:~!$&'()*+,;=%@")
_CTL = re.compile(r"[\x00-\x1f\x7f]")
# the bytes a path holds unescaped (shouldEscape(c, encodePath) is false): the common case
_PATH_PLAIN = re.compile(r"[0-9A-Za-z\-_.~$&+,/:;=@]*\Z")
# a target whose parse is plain: an absolute path of such bytes (nothing to unescape, no raw path
# to keep), then maybe a non-empty query holding no "?" and no control byte
_PLAIN_TARGET = re.compile(r"(/[0-9A-Za-z\-_.~$&+,/:;=@]*)(?:\?([^\x00-\x1f\x7f?]+))?\Z")


class URLError(ValueError):
    """``*url.Error``: ``parse "<url>": <reason>``."""

    def __init__(self, raw: str, reason: str):
        super().__init__(f'parse "{raw}": {reason}')


class EscapeError(ValueError):
    def __init__(self, s: str):
        super().__init__(f'invalid URL escape "{s}"')


class InvalidHostError(ValueError):
    def __init__(self, s: str):
        super().__init__(f'invalid character "{s}" in host name')


@dataclass
class URL:
    scheme: str = ""
    opaque: str = ""
    host: str = ""
    path: str = ""
    raw_path: str = ""
    raw_query: str = ""
    force_query: bool = False


def should_escape(c: str, mode: str) -> bool:
    """Go's ``shouldEscape`` for the modes a request target uses."""
    if c.isascii() and c.isalnum():
        return False
    if mode in (ENCODE_HOST, ENCODE_ZONE) and c in _HOST_EXTRA:
        return False
    if c in _UNRESERVED:
        return False
    if c in _RESERVED:
        if mode == ENCODE_PATH:
            return c == "?"
        if mode == ENCODE_USER_PASSWORD:
            return c in "@/?:"
    return True


def unescape(s: str, mode: str) -> str:
    """Go's ``unescape``: decode ``%XX``; a bad escape, or (in a host) a byte a host may not
    hold, is an error. ``+`` is a space in a query component only."""
    if "%" not in s and "+" not in s and mode in (ENCODE_PATH, ENCODE_USER_PASSWORD, ENCODE_QUERY_COMPONENT):
        return s  # nothing to decode, and these modes refuse no plain byte
    n, i = 0, 0
    while i < len(s):
        c = s[i]
        if c == "%":
            n += 1
            if i + 2 >= len(s) or s[i + 1] not in _HEXDIGITS or s[i + 2] not in _HEXDIGITS:
                raise EscapeError(s[i : i + 3])
            if mode == ENCODE_HOST and int(s[i + 1], 16) < 8 and s[i : i + 3] != "%25":
                raise EscapeError(s[i : i + 3])  # only escapes of non-ASCII bytes in a host
            if mode == ENCODE_ZONE:
                v = chr(int(s[i + 1 : i + 3], 16))
                if s[i : i + 3] != "%25" and v != " " and should_escape(v, ENCODE_HOST):
                    raise EscapeError(s[i : i + 3])
            i += 3
            continue
        if mode in (ENCODE_HOST, ENCODE_ZONE) and ord(c) < 0x80 and should_escape(c, mode):
            raise InvalidHostError(c)
        i += 1
    if n == 0:
        return s.replace("+", " ") if mode == ENCODE_QUERY_COMPONENT else s
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == "%":
            out.append(int(s[i + 1 : i + 3], 16))
            i += 3
        else:
            out += (" " if s[i] == "+" and mode == ENCODE_QUERY_COMPONENT else s[i]).encode("latin-1")
            i += 1
    return out.decode("latin-1")


def parse_query(query: str) -> dict[str, list[str]]:
    """Go's ``ParseQuery``, dropping what it reports as errors (as ``URL.Query()`` does)."""
    m: dict[str, list[str]] = {}
    if query.count("&") + 1 > DEFAULT_MAX_PARAMS:
        return m
    for pair in query.split("&"):
        if ";" in pair or not pair:
            continue  # "invalid semicolon separator in query"
        key, _, value = pair.partition("=")
        try:
            key, value = unescape(key, ENCODE_QUERY_COMPONENT), unescape(value, ENCODE_QUERY_COMPONENT)
        except ValueError:
            continue
        m.setdefault(key, []).append(value)
    return m


def escape_path(s: str) -> str:
    """Go's ``escape(s, encodePath)``, to decide whether a raw path is the default encoding."""
    if _PATH_PLAIN.match(s):
        return s
    return "".join(f"%{b:02X}" if should_escape(chr(b), ENCODE_PATH) else chr(b) for b in s.encode("latin-1"))


def get_scheme(raw: str) -> tuple[str, str]:
    """Go's ``getScheme``: ``(scheme, rest)``; no scheme when the first byte cannot start one."""
    if raw[:1] == "/":
        return "", raw  # (Go's default case on the first byte: the usual request target, at once)
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if (c.isascii() and c.isdigit()) or c in "+-.":
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise ValueError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def valid_optional_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


def _valid_userinfo(s: str) -> bool:
    return all((c.isascii() and c.isalnum()) or c in _USERINFO_OK for c in s)


def parse_host(scheme: str, host: str) -> str:
    """Go's ``parseHost``: an IP literal in brackets, or a name with an optional port."""
    open_bracket = host.rfind("[")
    if open_bracket > 0:
        raise ValueError("invalid IP-literal")
    if open_bracket == 0:
        close = host.rfind("]")
        if close < 0:
            raise ValueError("missing ']' in host")
        colon_port = host[close + 1 :]
        if not valid_optional_port(colon_port):
            raise ValueError(f'invalid port "{colon_port}" after host')
        colon_port = unescape(colon_port, ENCODE_HOST)
        name = host[1:close]
        zone = name.find("%25")
        if zone >= 0:
            name = unescape(name[:zone], ENCODE_HOST) + unescape(name[zone:], ENCODE_ZONE)
        else:
            name = unescape(name, ENCODE_HOST)
        try:
            addr = ipaddress.ip_address(name)
        except ValueError as err:
            raise ValueError(f"invalid host: {err}") from None
        if addr.version == 4:
            raise ValueError("invalid IP-literal")
        return "[" + name + "]" + colon_port
    i = host.find(":")
    if i != -1:
        # Go 1.26 made several colons in an http(s) host an error (the old behaviour behind
        # GODEBUG=urlstrictcolons=0 took the last colon); other schemes take the last colon
        if host.rfind(":") != i and scheme not in ("http", "https"):
            i = host.rfind(":")
        if not valid_optional_port(host[i:]):
            raise ValueError(f'invalid port "{host[i:]}" after host')
    return unescape(host, ENCODE_HOST)


def _parse_authority(scheme: str, authority: str) -> str:
    at = authority.rfind("@")
    host = parse_host(scheme, authority[at + 1 :] if at >= 0 else authority)
    if at >= 0:
        userinfo = authority[:at]
        if not _valid_userinfo(userinfo):
            raise ValueError("net/url: invalid userinfo")
        for part in userinfo.split(":", 1):
            unescape(part, ENCODE_USER_PASSWORD)
    return host


def parse_request_uri(raw: str) -> URL:
    """Go's ``ParseRequestURI``; raises :class:`URLError` with Go's text."""
    try:
        return _parse(raw)
    except ValueError as err:
        raise URLError(raw, str(err)) from None


def _parse(raw: str) -> URL:
    m = _PLAIN_TARGET.match(raw)
    if m is not None:  # the usual origin-form target: what _parse_all gives it, at once
        return URL(path=m.group(1), raw_query=m.group(2) or "")
    return _parse_all(raw)


def _parse_all(raw: str) -> URL:
    """Go's ``parse(rawURL, viaRequest=true)``."""
    if _CTL.search(raw):
        raise ValueError("net/url: invalid control character in URL")
    if raw == "":
        raise ValueError("empty url")
    url = URL()
    if raw == "*":
        url.path = "*"
        return url
    url.scheme, rest = get_scheme(raw)
    url.scheme = url.scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        url.force_query, rest = True, rest[:-1]
    else:
        rest, _, url.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if url.scheme:
            url.opaque = rest
            return url
        raise ValueError("invalid URI for request")
    if url.scheme and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        url.host = _parse_authority(url.scheme, authority)
        rest = slash + path
    url.path = unescape(rest, ENCODE_PATH)
    url.raw_path = "" if escape_path(url.path) == rest else rest
    return url

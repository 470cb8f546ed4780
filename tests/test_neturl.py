"""Tests of genericserver.neturl: ParseRequestURI, with cases from Go's url_test.go (parseRequestURLTests)."""

from __future__ import annotations

import urllib.parse

import pytest
from hypothesis import given, strategies as st

from genericserver.neturl import ENCODE_PATH, URLError, escape_path, parse_request_uri, should_escape, unescape


@pytest.mark.parametrize(
    "raw,path,host,query",
    [
        ("/", "/", "", ""),
        ("*", "*", "", ""),
        ("/a%20b?x=1#frag", "/a b", "", "x=1#frag"),  # a '#' stays: a request target has no fragment
        ("http://foo.com/path?q", "/path", "foo.com", "q"),
        ("http://[fe80::1]:8080/", "/", "[fe80::1]:8080", ""),
        ("http://[fe80::1%25en0]/", "/", "[fe80::1%en0]", ""),
        ("http://user:pass@host:80/p", "/p", "host:80", ""),
        ("/%E2%82%AC", "/\xe2\x82\xac", "", ""),
        ("/a b", "/a b", "", ""),  # net/url lets a space through; the request line split already decided
    ],
)
def test_valid_request_targets(raw, path, host, query):
    u = parse_request_uri(raw)
    assert (u.path, u.host, u.raw_query) == (path, host, query)


@pytest.mark.parametrize(
    "raw,reason",
    [
        ("", "empty url"),
        ("foo", "invalid URI for request"),
        ("foo.html", "invalid URI for request"),
        ("../dir/", "invalid URI for request"),
        ("/%zz", 'invalid URL escape "%zz"'),
        ("/%", 'invalid URL escape "%"'),
        ("/a\x00b", "net/url: invalid control character in URL"),
        ("/a\x7fb", "net/url: invalid control character in URL"),
        ("http://[::1", "missing ']' in host"),
        ("http://[1.2.3.4]/", "invalid IP-literal"),
        ("http://a[b]/", "invalid IP-literal"),
        ("http://host:port/", 'invalid port ":port" after host'),
        ("http://a:1:2/", 'invalid port ":1:2" after host'),  # Go 1.26+: one colon in an http host
        ("http://a b/", 'invalid character " " in host name'),
        ("http://a%20b/", 'invalid URL escape "%20"'),
        ("http://us er@host/", "net/url: invalid userinfo"),
        (":foo", "missing protocol scheme"),
    ],
)
def test_invalid_request_targets_have_go_texts(raw, reason):
    with pytest.raises(URLError) as err:
        parse_request_uri(raw)
    assert str(err.value) == f'parse "{raw}": {reason}'


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=40))
def test_escape_path_is_gos_escape_byte_by_byte(s):
    reference = "".join(f"%{b:02X}" if should_escape(chr(b), ENCODE_PATH) else chr(b) for b in s.encode("latin-1"))
    assert escape_path(s) == reference


@given(st.text(alphabet="ab/%+2fF5 ", max_size=20))
def test_unescape_decodes_every_valid_escape_and_refuses_the_rest(s):
    try:
        got = unescape(s, ENCODE_PATH)
    except ValueError:
        assert any(s[i] == "%" and not all(c in "0123456789abcdefABCDEF" for c in s[i + 1 : i + 3].ljust(2, "x"))
                   for i in range(len(s)))
        return
    assert got.encode("latin-1") == urllib.parse.unquote_to_bytes(s)  # '+' stays '+' in a path

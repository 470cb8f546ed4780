"""Tests of genericserver.net.url.url: ParseRequestURI, with cases from Go's url_test.go (parseRequestURLTests)."""

from __future__ import annotations

import urllib.parse

import pytest
from hypothesis import example, given, strategies as st

from genericserver.net.url.url import ENCODE_PATH, URLError, escape_path, parse_request_uri, should_escape, unescape


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


def _outcome(parse, raw: str):
    try:
        return parse(raw)
    except ValueError as err:
        return type(err).__name__, str(err)


_TARGET_BYTES = ["/", "/", "a", "Z", "0", "-", "_", ".", "~", "$", "&", "+", ",", ":", ";", "=", "@", "?", "#",
                 "%", "%2F", "%zz", " ", "\t", "\x00", "\x7f", "\xe9", "[", "]", "*", "'", "!", "http:", "//h"]


@given(st.tuples(st.sampled_from(["/"] * 8 + _TARGET_BYTES), st.lists(st.sampled_from(_TARGET_BYTES), max_size=12))
       .map(lambda t: t[0] + "".join(t[1])))
@example("/%zz")
@example("/a%2Fb")
@example("/p?")
@example("/p?a?b")
@example("/a\x7f")
@example("/a?b\x00")
@example("/\xe9")
@example("/a#b?c")
def test_a_plain_target_is_parsed_at_once_as_the_whole_parse_would(raw):
    # the shortcut for the usual origin-form target against Go's whole parse: the same URL or
    # the same error, for every target (whether or not the shortcut takes it)
    from genericserver.net.url import url as neturl

    assert _outcome(neturl._parse, raw) == _outcome(neturl._parse_all, raw)


@pytest.mark.parametrize("raw", ["/", "/api/v1/pods", "/a?b=c&d", "/a?b#c", "//x/y", "/a+b:c@d;e=f$g,h~i"])
def test_the_usual_targets_take_the_shortcut(raw, monkeypatch):
    from genericserver.net.url import url as neturl

    want = neturl._parse_all(raw)
    monkeypatch.setattr(neturl, "_parse_all", None)  # (it would fail if called)
    assert neturl._parse(raw) == want

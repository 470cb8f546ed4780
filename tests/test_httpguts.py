"""Tests of genericserver.x.net.http.httpguts.httplex: Go's httplex_test.go (TestIsToken, TestHeaderValuesContainsToken,
TestValidHostHeader), and every byte against the RFC 7230 classes."""

from __future__ import annotations

import pytest

from genericserver.x.net.http.httpguts import httplex as httpguts

TCHAR = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def test_every_byte_is_a_token_byte_exactly_when_rfc7230_says_so():
    for b in range(256):
        assert httpguts.valid_header_field_name(chr(b)) is (chr(b) in TCHAR), hex(b)
    assert not httpguts.valid_header_field_name("")


def test_every_byte_in_a_value():
    for b in range(256):
        allowed = b in (0x09, 0x20) or (0x21 <= b <= 0x7E) or b >= 0x80
        assert httpguts.valid_header_field_value("a" + chr(b) + "b") is allowed, hex(b)


@pytest.mark.parametrize(
    "host,valid",
    [("", True), ("www.google.com", True), ("www.google.com:80", True), ("1.2.3.4", True), ("[::1]:80", True),
     ("[fe80::1%25en0]", True), ("gopher.example:*", True), ("a b", False), ("a/b", False), ("a@b", False),
     ('"', False), ("\x00", False), ("\xe9", False), ("a\tb", False)],
)
def test_TestValidHostHeader(host, valid):
    assert httpguts.valid_host_header(host) is valid


@pytest.mark.parametrize(
    "values,token,want",
    [
        (["foo"], "foo", True), (["foo"], "FOO", True), (["foo"], "fo", False), (["foo bar"], "foo", False),
        (["foo, bar"], "bar", True), (["bar,foo"], "foo", True), ([" foo ,\t bar "], "bar", True),
        (["x", "y, close"], "close", True), (["clos\xe9"], "close", False),
    ],
)
def test_TestHeaderValuesContainsToken(values, token, want):
    assert httpguts.header_values_contain_token(values, token) is want

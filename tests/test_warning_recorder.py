"""Tests for genericserver.endpoints.filters.warning and genericserver.warning.context: a request's warnings as Warning headers, as warning.go writes them."""

from __future__ import annotations

from werkzeug.test import Client

from genericserver.apimachinery.utilnet import new_warning_header
from genericserver.endpoints.filters import warning as filters
from genericserver.warning.context import add_warning


def app_warning(*texts: str, status: str = "200 OK"):
    def app(environ, start_response):
        for text in texts:
            add_warning(environ, "", text)
        start_response(status, [("Content-Type", "text/plain")])
        return [b"ok"]
    return app


def test_each_text_is_one_header_once_on_any_answer():
    r = Client(filters.with_warning_recorder(app_warning("a", "b \"q\" \\", "a", "", status="422 Unprocessable Entity"))).get("/")
    assert r.status_code == 422
    assert r.headers.getlist("Warning") == ['299 - "a"', '299 - "b \\"q\\" \\\\"']


def test_a_text_with_a_control_character_is_dropped_and_no_recorder_drops_all():
    r = Client(filters.with_warning_recorder(app_warning("bad\x01", "good"))).get("/")
    assert r.headers.getlist("Warning") == ['299 - "good"']
    assert Client(app_warning("lost")).get("/").headers.getlist("Warning") == []  # outside the chain: none


def test_past_4096_characters_every_warning_is_cut_to_256():
    first, second, third = "a" * 3000, "b" * 2000, "c" * 300
    r = Client(filters.with_warning_recorder(app_warning(first, second, third))).get("/")
    # the second crossed the limit: the first two are replayed cut, and so is every one after
    assert r.headers.getlist("Warning") == [f'299 - "{"a" * 256}"', f'299 - "{"b" * 256}"', f'299 - "{"c" * 256}"']


def test_new_warning_header_is_go_s():
    assert new_warning_header(299, "", "x") == '299 - "x"'
    assert new_warning_header(199, "agent", "é") == '199 agent "é"'
    for code, agent, text in ((1000, "", "x"), (299, "a b", "x"), (299, "", "x\ny")):
        try:
            new_warning_header(code, agent, text)
        except ValueError:
            continue
        raise AssertionError((code, agent, text))

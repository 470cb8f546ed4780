"""Tests of genericserver.mux: the cases of pkg/server/mux/pathrecorder_test.go, and more."""

from __future__ import annotations

import logging
from collections import Counter

import pytest
from werkzeug.test import Client

from genericserver.mux import PathRecorderMux


def counting(counts: Counter, key: str, body: bytes = b""):
    def app(environ, start_response):
        counts[key] += 1
        start_response("200 OK", [("Content-Length", str(len(body)))])
        return [body]

    return app


def test_secret_handlers():
    c = PathRecorderMux("test")
    c.unlisted_handle_func("/secret", counting(Counter(), "secret"))
    c.handle_func("/nonswagger", counting(Counter(), "nonswagger"))
    assert "/secret" not in c.listed_paths()
    assert "/nonswagger" in c.listed_paths()


def test_unregister_handlers():
    counts: Counter = Counter()
    c = PathRecorderMux("test")
    client = Client(c)

    c.unlisted_handle_func("/secret", counting(counts, "secret"))
    c.handle_func("/nonswagger", counting(counts, "first"))
    assert "/secret" not in c.listed_paths()
    assert "/nonswagger" in c.listed_paths()

    assert client.get("/nonswagger").status_code == 200
    assert counts["first"] == 1

    c.unregister("/nonswagger")
    assert "/nonswagger" not in c.listed_paths()
    resp = client.get("/nonswagger")
    assert resp.status_code == 404
    assert counts["first"] == 1

    c.handle_func("/nonswagger", counting(counts, "second"))
    assert "/nonswagger" in c.listed_paths()
    assert client.get("/nonswagger").status_code == 200
    assert (counts["first"], counts["second"]) == (1, 1)


def test_prefix_handlers():
    counts: Counter = Counter()
    c = PathRecorderMux("test")
    client = Client(c)
    c.unlisted_handle_prefix("/secretPrefix/", counting(counts, "secretPrefix"))
    c.handle_prefix("/publicPrefix/", counting(counts, "publicPrefix"))
    c.handle_prefix("/publicPrefix/but-more-precise/", counting(counts, "precisePrefix"))
    c.handle("/publicPrefix/exactmatch", counting(counts, "exactMatch"))
    c.handle("/otherPublic/exactmatchslash/", counting(counts, "slashMatch"))
    c.not_found_handler(counting(counts, "fallThrough"))

    assert "/secretPrefix/" not in c.listed_paths()
    assert "/publicPrefix/" in c.listed_paths()

    steps = [
        ("/fallthrough", "fallThrough", 1),
        ("/publicPrefix", "fallThrough", 2),
        ("/publicPrefix/", "publicPrefix", 1),
        ("/publicPrefix/something", "publicPrefix", 2),
        ("/publicPrefix/but-more-precise", "publicPrefix", 3),
        ("/publicPrefix/but-more-precise/", "precisePrefix", 1),
        ("/publicPrefix/but-more-precise/more-stuff", "precisePrefix", 2),
        ("/publicPrefix/exactmatch", "exactMatch", 1),
        ("/publicPrefix/exactmatch/", "publicPrefix", 4),
        ("/otherPublic/exactmatchslash", "fallThrough", 3),
        ("/otherPublic/exactmatchslash/", "slashMatch", 1),
        ("/secretPrefix/", "secretPrefix", 1),
        ("/secretPrefix/something", "secretPrefix", 2),
    ]
    for path, key, want in steps:
        resp = client.get(path)
        assert resp.status_code == 200, path
        assert counts[key] == want, path
    assert sum(counts.values()) == len(steps)


def test_default_not_found_is_go_404():
    resp = Client(PathRecorderMux("test")).get("/nothing-here")
    assert resp.status_code == 404
    assert resp.data == b"404 page not found\n"
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


def test_listed_paths_are_sorted_and_include_prefixes():
    c = PathRecorderMux("test")
    for p in ["/readyz", "/healthz", "/livez"]:
        c.handle(p, counting(Counter(), p))
    c.handle_prefix("/apis/", counting(Counter(), "apis"))
    c.unlisted_handle("/hidden", counting(Counter(), "hidden"))
    assert c.listed_paths() == ["/apis/", "/healthz", "/livez", "/readyz"]


def test_handle_prefix_requires_a_trailing_slash():
    c = PathRecorderMux("test")
    with pytest.raises(ValueError, match='"/api" must end in a trailing slash'):
        c.handle_prefix("/api", counting(Counter(), "x"))
    with pytest.raises(ValueError, match='"/api" must end in a trailing slash'):
        c.unlisted_handle_prefix("/api", counting(Counter(), "x"))
    assert c.listed_paths() == []


def test_duplicate_registration_replaces_and_logs_both_stacks(caplog):
    counts: Counter = Counter()
    c = PathRecorderMux("test")
    c.handle("/dup", counting(counts, "first"))
    with caplog.at_level(logging.ERROR, logger="genericserver.mux"):
        c.handle("/dup", counting(counts, "second"))
    assert any('duplicate path registration of "/dup": original registration from' in r.getMessage() for r in caplog.records)
    Client(c).get("/dup")
    assert counts == Counter(second=1)


def test_exact_match_wins_over_prefix_and_longer_prefix_wins():
    counts: Counter = Counter()
    c = PathRecorderMux("test")
    c.handle_prefix("/a/", counting(counts, "a"))
    c.handle_prefix("/a/b/", counting(counts, "ab"))
    c.handle("/a/b/c", counting(counts, "exact"))
    client = Client(c)
    for path in ["/a/b/c", "/a/b/d", "/a/x", "/a/b/c/d"]:
        client.get(path)
    assert counts == Counter(exact=1, ab=2, a=1)


def test_replacing_the_not_found_handler():
    c = PathRecorderMux("test")

    def gone(environ, start_response):
        start_response("410 Gone", [])
        return [b"gone"]

    c.not_found_handler(gone)
    c.handle("/x", counting(Counter(), "x"))  # a later registration keeps the not-found app
    resp = Client(c).get("/missing")
    assert (resp.status_code, resp.data) == (410, b"gone")

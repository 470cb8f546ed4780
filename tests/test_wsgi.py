"""genericserver.wsgi: releases run when the server closes a response, once, innermost first."""

from __future__ import annotations

import pytest

from genericserver import wsgi


class Body(list):
    closed = 0

    def close(self):
        self.closed += 1


def test_releases_added_by_nested_filters_share_one_wrapper_and_run_innermost_first():
    order: list[str] = []
    inner = Body([b"a", b"b"])
    body = wsgi.on_close(inner, lambda: order.append("max-in-flight"))
    outer = wsgi.on_close(body, lambda: order.append("wait-group"))
    assert outer is body  # added to, not nested
    assert list(outer) == [b"a", b"b"]
    assert order == []  # iterating releases nothing: only close does
    outer.close()
    outer.close()
    assert (inner.closed, order) == (1, ["max-in-flight", "wait-group"])


def test_every_release_runs_even_when_one_raises_and_the_errors_chain_as_nested_finally_blocks():
    ran: list[str] = []

    def boom(name):
        def release():
            ran.append(name)
            raise RuntimeError(name)

        return release

    body = wsgi.on_close([b""], boom("first"))
    body = wsgi.on_close(body, lambda: ran.append("second"))
    body = wsgi.on_close(body, boom("third"))
    with pytest.raises(RuntimeError) as info:
        body.close()
    assert ran == ["first", "second", "third"]
    assert str(info.value) == "third" and str(info.value.__context__) == "first"


def test_a_closed_response_is_wrapped_anew_and_known_chunks_sees_through_wrappers():
    released: list[int] = []
    body = wsgi.on_close((b"x",), lambda: released.append(1))
    body.close()
    again = wsgi.on_close(body, lambda: released.append(2))
    assert again is not body  # closed already: adding to it would never run
    again.close()
    assert released == [1, 2]
    assert wsgi.known_chunks(wsgi.on_close([b"a"], lambda: None)) == [b"a"]
    assert wsgi.known_chunks(wsgi.on_close(iter([b"a"]), lambda: None)) is None

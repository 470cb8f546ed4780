"""WSGI helpers the filters share (no Go twin: Go's handlers return when the response is sent).

In net/http a handler has sent its response when ``ServeHTTP`` returns. A WSGI app returns an
iterable that the server sends *afterwards*, so a filter that must hold something (a wait-group
slot, an in-flight slot, an audit event) for the life of the response releases it when the
iterable is closed, never when the app callable returns. :func:`on_close` does that.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator


def close_iterable(body: Any) -> None:
    """Call ``body.close()`` if it has one (PEP 3333: the server must, whatever the body is)."""
    close = getattr(body, "close", None)
    if close is not None:
        close()


class _Closing:
    """Iterates ``inner``; when the server closes it, closes ``inner`` and then runs each ``fn``.

    Filters nest, and each one that holds something adds its release here rather than another
    wrapper around the last: one object and one ``close`` per response, however deep the chain.
    The releases run innermost first, each even if an earlier one raised, and errors come out
    as from nested ``try``/``finally`` blocks (the last raised, chained to the earlier).
    """

    def __init__(self, inner: Iterable[bytes], fn: Callable[[], Any]):
        self._inner = inner
        self._fns = [fn]
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._inner)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            close_iterable(self._inner)
        finally:
            self._release(0)

    def _release(self, i: int) -> None:
        try:
            self._fns[i]()
        finally:
            if i + 1 < len(self._fns):
                self._release(i + 1)


def header_set(start_response: Callable, name: str, value: str) -> Callable:
    """``start_response`` with header ``name`` set to ``value`` (Go's ``w.Header().Set`` before
    the handler runs): whatever the app gives for it is replaced."""

    def start(status: str, headers: list, exc_info: Any = None) -> Any:
        kept = [(k, v) for k, v in headers if k.lower() != name.lower()]
        return start_response(status, kept + [(name, value)], exc_info)

    return start


def known_chunks(body: Any) -> Any:
    """The body's chunks as a list or tuple, if it is one, alone or under ``on_close`` wrappers.

    Such a body can be handed on whole; closing the wrapper is still the caller's to do.
    """
    while isinstance(body, _Closing):
        body = body._inner
    return body if isinstance(body, (list, tuple)) else None


def on_close(inner: Iterable[bytes], fn: Callable[[], Any]) -> Iterable[bytes]:
    """Wrap a response iterable so that ``fn`` runs once, when the server closes it."""
    if type(inner) is _Closing and not inner._closed:
        inner._fns.append(fn)  # the response is ours to wrap: add to it, do not nest
        return inner
    return _Closing(inner, fn)


def call_app(app: Callable, environ: dict, start_response: Callable, release: Callable[[], Any]) -> Iterable[bytes]:
    """Call ``app`` and run ``release`` when its response is closed, or at once if it raises."""
    try:
        body = app(environ, start_response)
    except BaseException:
        release()
        raise
    return on_close(body, release)

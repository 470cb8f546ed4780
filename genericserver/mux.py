"""Port of k8s.io/apiserver/pkg/server/mux/pathrecorder.go (v1.36.0).

:class:`PathRecorderMux` is the server's non-go-restful mux: a WSGI app that routes by exact
path first, then by the longest matching prefix, then to a not-found app, and remembers which
paths it serves so the root listing can show them.

Unlike Go's ``http.ServeMux`` it never redirects: ``/foo/`` registered with :meth:`handle`
matches only ``/foo/``, and a prefix is matched only when registered with
:meth:`handle_prefix` (which must end in ``/``). Registration swaps in a fresh immutable
routing table, so serving never takes the lock.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, Optional

from genericserver import runtime as rt
from genericserver.responsewriters import go_quote, http_error
from genericserver.runtime.stack import Stack, capture

log = logging.getLogger("genericserver.mux")

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict, StartResponse], Iterable[bytes]]


def not_found(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
    """net/http's ``NotFoundHandler``: 404 ``404 page not found``."""
    return http_error(start_response, "404 page not found", 404)


def _prefix_priority(prefix: str) -> tuple[int, int, str]:
    # the most specific prefix first: most slashes, then longest, then (reverse) lexical
    return (prefix.count("/"), len(prefix), prefix)


class _PathHandler:
    """One immutable routing table: exact paths, prefixes in priority order, the not-found app."""

    def __init__(self, mux_name: str, exact: dict[str, WSGIApp], prefixes: list[tuple[str, WSGIApp]], not_found_app: WSGIApp):
        self.mux_name = mux_name
        self.exact = exact
        self.prefixes = prefixes
        self.not_found_app = not_found_app

    def __call__(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "") or ""
        app = self.exact.get(path)
        if app is not None:
            log.debug("%s: %r satisfied by exact match", self.mux_name, path)
            return app(environ, start_response)
        for prefix, app in self.prefixes:
            if path.startswith(prefix):
                log.debug("%s: %r satisfied by prefix %s", self.mux_name, path, prefix)
                return app(environ, start_response)
        log.debug("%s: %r satisfied by NotFoundHandler", self.mux_name, path)
        return self.not_found_app(environ, start_response)


class PathRecorderMux:
    """A WSGI mux that records the paths it exposes (``listed_paths``)."""

    def __init__(self, name: str):
        self._name = name
        self._lock = rt.lock()
        self._not_found_app: Optional[WSGIApp] = None
        self._path_to_handler: dict[str, WSGIApp] = {}
        self._prefix_to_handler: dict[str, WSGIApp] = {}
        self._exposed_paths: list[str] = []
        self._path_stacks: dict[str, Stack] = {}
        self._mux = _PathHandler(name, {}, [], not_found)

    def listed_paths(self) -> list[str]:
        """The listed paths (exact and prefix), sorted."""
        with self._lock:
            paths = list(self._exposed_paths)
        return sorted(paths)

    def _track_callers(self, path: str) -> None:
        # A second registration replaces the first; say where both came from, since that is
        # hard to find otherwise.
        stack = capture(2)
        existing = self._path_stacks.get(path)
        if existing is not None:
            log.error(
                "duplicate path registration of %s: original registration from %s\n\nnew registration from %s",
                go_quote(path), existing, stack,
            )
        self._path_stacks[path] = stack

    def _refresh_mux_locked(self) -> None:
        prefixes = sorted(self._prefix_to_handler, key=_prefix_priority, reverse=True)
        self._mux = _PathHandler(
            self._name,
            dict(self._path_to_handler),
            [(p, self._prefix_to_handler[p]) for p in prefixes],
            self._not_found_app if self._not_found_app is not None else not_found,
        )

    def not_found_handler(self, app: WSGIApp) -> None:
        """Serve unmatched paths with ``app`` instead of the plain 404."""
        with self._lock:
            self._not_found_app = app
            self._refresh_mux_locked()

    def unregister(self, path: str) -> None:
        """Forget ``path`` (exact or prefix) and stop listing it."""
        with self._lock:
            self._path_to_handler.pop(path, None)
            self._prefix_to_handler.pop(path, None)
            self._path_stacks.pop(path, None)
            if path in self._exposed_paths:
                self._exposed_paths.remove(path)
            self._refresh_mux_locked()

    def handle(self, path: str, app: WSGIApp) -> None:
        """Serve exactly ``path`` with ``app`` and list it."""
        with self._lock:
            self._track_callers(path)
            self._exposed_paths.append(path)
            self._path_to_handler[path] = app
            self._refresh_mux_locked()

    handle_func = handle

    def unlisted_handle(self, path: str, app: WSGIApp) -> None:
        """Like :meth:`handle`, without listing the path."""
        with self._lock:
            self._track_callers(path)
            self._path_to_handler[path] = app
            self._refresh_mux_locked()

    unlisted_handle_func = unlisted_handle

    def handle_prefix(self, path: str, app: WSGIApp) -> None:
        """Serve everything under ``path`` (which must end in ``/``) with ``app`` and list it."""
        _require_trailing_slash(path)
        with self._lock:
            self._track_callers(path)
            self._exposed_paths.append(path)
            self._prefix_to_handler[path] = app
            self._refresh_mux_locked()

    def unlisted_handle_prefix(self, path: str, app: WSGIApp) -> None:
        """Like :meth:`handle_prefix`, without listing the path."""
        _require_trailing_slash(path)
        with self._lock:
            self._track_callers(path)
            self._prefix_to_handler[path] = app
            self._refresh_mux_locked()

    def __call__(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        # one attribute read: a registration running meanwhile swaps the whole table at once
        return self._mux(environ, start_response)


def _require_trailing_slash(path: str) -> None:
    if not path.endswith("/"):
        raise ValueError(f"{go_quote(path)} must end in a trailing slash")

"""Port of k8s.io/apiserver/pkg/server/filters/wrap.go (v1.36.0).

``with_panic_recovery`` is Go's ``runtime.HandleCrash`` around the rest of the chain. An
exception raised by the inner app, or while its response body is iterated, is a panic (a body
that is a list cannot raise while iterated, so it is passed on unwrapped, still all at hand for
the server):

1. it is logged as ``"Observed a panic"`` with its traceback, except :class:`AbortHandler`,
   which is the deliberate, quiet way to abort a response;
2. the crash handler runs: for :class:`AbortHandler` it logs
   ``"Timeout or abort while handling" logger="UnhandledError" method=... URI=... auditID=...``
   and writes nothing; for anything else it writes a 500 ``http.Error`` with
   "This request caused apiserver to panic. Look in the logs for details." and logs
   ``"apiserver panic'd" method=... URI=... auditID=...``;
3. with ``really_crash`` (Go's ``ReallyCrash``, true by default) the exception is raised again.

How a re-panic shows to the client on werkzeug: the exception leaves the WSGI app. The project's
HTTP server treats any exception escaping the app as Go's net/http treats a panicking handler:
it drops the connection without sending the 500 the crash handler "wrote" (in Go that 500 sits
unflushed in the buffer), logs nothing more for :class:`AbortHandler`, and keeps serving other
connections. The client sees a closed connection, not a 500. werkzeug's test ``Client`` lets the
exception propagate to the test. With ``really_crash=False`` the client gets the 500.

As in Go, a 500 after the response has started cannot change its status: Go ignores the second
``WriteHeader`` and appends the text to the body; here the text is appended too, unless the
response declared a Content-Length (Go's write would fail then).

``with_http_logging`` is the access log (:mod:`genericserver.httplog`).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, Iterator, Optional

from genericserver import klog
from genericserver import metrics as epmetrics
from genericserver.audit.context import get_audit_id_truncated
from genericserver import httplog
from genericserver.filters.timeout import AbortHandler
from genericserver.requestinfo import RequestInfoResolver
from genericserver.responsewriters import http_error, request_uri
from genericserver.wsgi import close_iterable, known_chunks

log = logging.getLogger("genericserver.filters.wrap")

PANIC_MESSAGE = "This request caused apiserver to panic. Look in the logs for details."

# crash_handler(environ, start_response, exc) -> body to send (None: nothing)
CrashHandler = Callable[[dict, Callable, BaseException], Optional[Iterable[bytes]]]


def with_panic_recovery(
    app: Callable, resolver: RequestInfoResolver, *, really_crash: bool = True, metrics: Optional[epmetrics.Metrics] = None
) -> Callable:
    """Log panics of the rest of the chain, answer 500 or abort, then re-raise (``really_crash``).

    An abort is counted in ``apiserver_request_aborts_total`` of ``metrics`` (the server's; Go:
    package globals; None: ``metrics.LEGACY``), labelled from ``resolver``'s request info.
    """
    metrics = metrics if metrics is not None else epmetrics.LEGACY

    def crash_handler(environ: dict, start_response: Callable, exc: BaseException) -> Optional[Iterable[bytes]]:
        if isinstance(exc, AbortHandler):
            info, err = resolver.new_request_info(environ)
            metrics.record_request_abort(environ, None if err is not None else info)
            log.error("%s", klog.format_s("Timeout or abort while handling", logger="UnhandledError", **_request_keys(environ)))
            return None
        body = http_error(start_response, PANIC_MESSAGE, 500)
        log.error("%s", klog.format_s("apiserver panic'd", **_request_keys(environ)))
        return body

    return _with_panic_recovery(app, crash_handler, really_crash=really_crash)


def with_http_logging(app: Callable) -> Callable:
    """Access-log every request (``httplog.with_logging`` with the default predicate)."""
    return httplog.with_logging(app, httplog.default_stacktrace_pred)


def _request_keys(environ: dict) -> dict[str, str]:
    return {"method": environ.get("REQUEST_METHOD", ""), "URI": request_uri(environ), "auditID": get_audit_id_truncated(environ)}


def _log_panic(exc: BaseException) -> None:
    # apimachinery's logPanic: the quiet abort is not a crash worth a stack trace
    if isinstance(exc, AbortHandler):
        return
    log.error("%s", klog.format_s("Observed a panic", panic=str(exc)), exc_info=exc)


class _Response:
    """What the inner app has done to the response so far (Go's ResponseWriter state)."""

    def __init__(self, start_response: Callable):
        self._start_response = start_response
        self.started = False  # start_response called: the status is fixed (Go: WriteHeader)
        self.content_length = False
        self.write: Optional[Callable] = None

    def start_response(self, status: str, headers: list, exc_info: Any = None) -> Callable:
        self.write = self._start_response(status, headers, exc_info)
        self.started = True
        self.content_length = any(k.lower() == "content-length" for k, _ in headers)
        return self.write

    def crash_start_response(self, status: str, headers: list, exc_info: Any = None) -> Callable:
        """The crash handler's start_response: a no-op once the response has started."""
        if self.started:
            return lambda data: None
        return self.start_response(status, headers)


def _with_panic_recovery(app: Callable, crash_handler: CrashHandler, *, really_crash: bool = True) -> Callable:
    def panic_recovery_filter(environ: dict, start_response: Callable) -> Iterable[bytes]:
        resp = _Response(start_response)
        try:
            body = app(environ, resp.start_response)
        except Exception as exc:
            tail = _handle_crash(environ, resp, crash_handler, exc, really_crash)
            if not resp.started:
                # the crash handler wrote nothing (an abort): net/http then sends an empty 200
                resp.start_response("200 OK", [("Content-Length", "0")])
            return tail
        if known_chunks(body) is not None:
            return body  # its chunks are at hand: iterating them cannot panic
        return _RecoveringBody(body, environ, resp, crash_handler, really_crash)

    return panic_recovery_filter


def _handle_crash(environ: dict, resp: _Response, crash_handler: CrashHandler, exc: BaseException, really_crash: bool) -> list[bytes]:
    """HandleCrash: log, run the crash handler, then re-raise or return what it wrote."""
    started_before = resp.started
    _log_panic(exc)
    body = crash_handler(environ, resp.crash_start_response, exc)
    if really_crash:
        raise exc
    if body is None or (started_before and resp.content_length):
        return []
    return list(body)


class _RecoveringBody:
    """Iterates the inner body; a panic while iterating is handled like one in the app call."""

    def __init__(self, inner: Iterable[bytes], environ: dict, resp: _Response, crash_handler: CrashHandler, really_crash: bool):
        self._inner = inner
        self._environ = environ
        self._resp = resp
        self._crash_handler = crash_handler
        self._really_crash = really_crash

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                yield chunk
        except Exception as exc:
            tail = _handle_crash(self._environ, self._resp, self._crash_handler, exc, self._really_crash)
            if not self._resp.started:
                self._resp.start_response("200 OK", [])
            yield from tail

    def close(self) -> None:
        close_iterable(self._inner)

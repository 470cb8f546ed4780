"""Port of k8s.io/apiserver/pkg/server/httplog/httplog.go (v1.36.0).

One access-log line per request, written when the response is finished (its iterable closed, or
the app raised), in klog's structured form with Go's keys:
``"HTTP" verb="LIST" URI="/api/v1/pods" latency="1.2ms" userAgent="curl/8" audit-ID="..." srcIP="127.0.0.1:5555" resp=200``.
Go logs it at verbosity 3 (``--v=3``), naming the caller of the logging function
(``InfoSDepth(1, ...)``); when that verbosity is off the filter costs one comparison per
request. :class:`PassthroughLogger` lines are Go's ``V(2)``. A whole body (a list) goes on as one,
under ``on_close``, so the server still holds it until the handler has returned (Go's response
buffer) as it does without this filter.

Other code can add to the line through :func:`add_key_value` and :func:`add_infof`. When the
stack-trace predicate holds for the status (default: 1xx but 101, and 5xx), the response body is
added to the line (``addedInfo="logging error output: ..."``) as in Go; Go also records the
goroutine's stack there (``statusStack``), which is left out: the Python stack at that point
names only the filters.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from genericserver import klog, request, runtime as rt
from genericserver.audit.context import get_audit_id_truncated
from genericserver.metrics import normalized_verb
from genericserver.requestinfo import RequestInfo
from genericserver.responsewriters import go_quote, request_uri
from genericserver.wsgi import close_iterable, known_chunks, on_close


# the verbosity of the access lines
WITH_LOGGING_LEVEL = 3

# environ key of the request's logger (Go keeps it in the request context)
RESP_LOGGER_KEY = "genericserver.httplog"

StacktracePred = Callable[[int], bool]


def default_stacktrace_pred(status: int) -> bool:
    """Errors worth a closer look: 1xx other than 101, and 5xx."""
    return (status < 200 or status >= 500) and status != 101


def status_is_not(*statuses: int) -> StacktracePred:
    """A predicate true for every status not listed."""
    quiet = frozenset(statuses)
    return lambda status: status not in quiet


class RespLogger:
    """What one request's log line will say; filled in while the request is served."""

    def __init__(self, environ: dict, start_time: float, pred: StacktracePred):
        self._lock = rt.lock()
        self.environ = environ
        self.start_time = start_time
        # read now: a timed-out handler may still be changing the request after the answer
        self.user_agent = environ.get("HTTP_USER_AGENT", "")
        self.status = 0
        self.capture_error_output = False
        self._pred = pred
        self._added_info: list[str] = []
        self._added_kv: dict[str, Any] = {}
        self._logged = False

    def stacktrace_when(self, pred: StacktracePred) -> "RespLogger":
        with self._lock:
            self._pred = pred
        return self

    def addf(self, fmt: str, *args: Any) -> None:
        with self._lock:
            self._added_info.append(fmt % args if args else fmt)

    def add_key_value(self, key: str, value: Any) -> None:
        with self._lock:
            self._added_kv[key] = value

    def record_status(self, status: int) -> None:
        with self._lock:
            self.status = status
            self.capture_error_output = self._pred(status)

    def wrote(self, chunk: bytes) -> None:
        if self.capture_error_output and chunk:
            self.addf("logging error output: %s\n", go_quote(chunk.decode("utf-8", "replace")))

    def log(self) -> None:
        """Write the line (once)."""
        latency = rt.wall() - self.start_time
        env = self.environ
        kv: dict[str, Any] = {
            "verb": normalized_verb(env),
            "URI": request_uri(env),
            "latency": _go_duration(latency),
            "userAgent": self.user_agent,
            "audit-ID": get_audit_id_truncated(env),
            "srcIP": _src_ip(env),
        }
        with self._lock:
            if self._logged:
                return
            self._logged = True
            kv.update(self._added_kv)
            kv["resp"] = self.status
            if self._added_info:
                kv["addedInfo"] = "".join(self._added_info)
        klog.v(WITH_LOGGING_LEVEL).info_s_depth(1, "HTTP", **kv)

    def log_closed(self) -> None:
        """:meth:`log`, called when the response is closed: klog names the caller of ``log``, this
        file, as Go's line names httplog.go's deferred call."""
        self.log()


def with_logging(app: Callable, stacktrace_pred: StacktracePred) -> Callable:
    """Log each request once its response is complete."""
    return _with_logging(app, stacktrace_pred, lambda: klog.v(WITH_LOGGING_LEVEL).enabled)


def _with_logging(app: Callable, stacktrace_pred: StacktracePred, should_log_request: Callable[[], bool]) -> Callable:
    def logging_filter(environ: dict, start_response: Callable) -> Iterable[bytes]:
        if not should_log_request():
            return app(environ, start_response)
        if RESP_LOGGER_KEY in environ:
            raise RuntimeError("multiple WithLogging calls!")
        start = request.received_timestamp_from(environ)
        rl = RespLogger(environ, start if start is not None else rt.wall(), stacktrace_pred)
        environ[RESP_LOGGER_KEY] = rl

        def logged_start_response(status: str, headers: list, exc_info: Any = None) -> Callable:
            rl.record_status(_status_code(status))
            write = start_response(status, headers, exc_info)

            def logged_write(data: bytes) -> Any:
                rl.wrote(data)
                return write(data)

            return logged_write

        try:
            body = app(environ, logged_start_response)
        except BaseException:
            rl.log()
            raise
        chunks = known_chunks(body)
        if chunks is not None:
            # a whole body stays one, so that the server holds it until the handler has returned
            # (Go's response buffer) as it does without this filter: its output noted now, the
            # line logged when it is closed
            for chunk in chunks:
                rl.wrote(chunk)
            return on_close(body, rl.log_closed)
        return _LoggedBody(body, rl)

    return logging_filter


class _LoggedBody:
    """Passes the body through (noting error output) and logs the line when closed."""

    def __init__(self, inner: Iterable[bytes], rl: RespLogger):
        self._inner = inner
        self._rl = rl

    def __iter__(self):
        rl = self._rl
        for chunk in self._inner:
            rl.wrote(chunk)
            yield chunk

    def close(self) -> None:
        try:
            close_iterable(self._inner)
        finally:
            self._rl.log()


def resp_logger_from(environ: dict) -> Optional[RespLogger]:
    return environ.get(RESP_LOGGER_KEY)


class PassthroughLogger:
    """What :func:`log_of` gives when the request is not being logged: each line at once."""

    def addf(self, fmt: str, *args: Any) -> None:
        klog.v(2).info(fmt % args if args else fmt)


def log_of(environ: dict) -> "RespLogger | PassthroughLogger":
    """The request's logger, or a pass-through one that logs immediately."""
    rl = resp_logger_from(environ)
    return rl if rl is not None else PassthroughLogger()


def add_infof(environ: dict, fmt: str, *args: Any) -> None:
    rl = resp_logger_from(environ)
    if rl is not None:
        rl.addf(fmt, *args)


def add_key_value(environ: dict, key: str, value: Any) -> None:
    """Add ``key=value`` to the request's access-log line (if it is being logged)."""
    rl = resp_logger_from(environ)
    if rl is not None:
        rl.add_key_value(key, value)


def set_stacktrace_predicate(environ: dict, pred: StacktracePred) -> None:
    rl = resp_logger_from(environ)
    if rl is not None:
        rl.stacktrace_when(pred)


def _status_code(status: str) -> int:
    try:
        return int(status.split(" ", 1)[0])
    except ValueError:
        return 0


def _src_ip(environ: dict) -> str:
    addr, port = environ.get("REMOTE_ADDR", ""), environ.get("REMOTE_PORT", "")
    return f"{addr}:{port}" if port else addr


def _go_duration(seconds: float) -> str:
    """A duration the way Go prints one (``1.5s``, ``12.3ms``, ``450µs``)."""
    if seconds >= 1:
        return f"{seconds:.9g}s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.6g}ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.6g}µs"
    return f"{round(seconds * 1e9)}ns"

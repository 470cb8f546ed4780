"""Port of k8s.io/apiserver/pkg/endpoints/filters/warning.go (v1.36.0): WithWarningRecorder, a request's warnings as Warning headers.

The filter gives each request a recorder (:mod:`genericserver.warning.context`). Each warning a
handler adds becomes a ``Warning: 299 - "text"`` header of the answer, whatever the answer is
(a 422 after a field the decoder did not know carries its warning too); the same text twice is
one header. Go adds the header to the writer at once; a WSGI filter adds the ones recorded so far
when the inner app calls ``start_response``, which is the same moment for the client: a warning
added after the answer's header went out is lost in both.

The headers are bounded: past 4096 characters of warning text in all, every warning, those already
recorded and those to come, is cut to its first 256 characters (and the cut is logged once as an
unhandled error). The timeout filter wraps this one, so a request answered 504 while its handler
goes on gets none of the handler's late warnings.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from genericserver import klog
from genericserver import runtime as rt
from genericserver.apimachinery.utilnet import new_warning_header
from genericserver.warning import context as warning

TRUNCATE_AT_TOTAL_RUNES = 4 * 1024
TRUNCATE_ITEM_RUNES = 256


class Recorder:
    """Go's ``recorder``: the warnings of one request, deduplicated, as header values."""

    def __init__(self) -> None:
        self.lock = rt.lock()  # handlers may warn from goroutines of their own
        self.recorded: set[str] = set()
        self.ordered: list[tuple[str, str]] = []  # (agent, text), to replay them truncated
        self.headers: list[str] = []  # the Warning header's values, as the writer holds them
        self.written = 0  # characters of text in the headers
        self.truncating = False

    def add_warning(self, agent: str, text: str) -> None:
        if not text:
            return
        with self.lock:
            if self.written >= TRUNCATE_AT_TOTAL_RUNES and self.truncating:
                return
            if text in self.recorded:
                return
            self.recorded.add(text)
            self.ordered.append((agent, text))
            if self.truncating and len(text) > TRUNCATE_ITEM_RUNES:
                text = text[:TRUNCATE_ITEM_RUNES]
            try:
                header = new_warning_header(299, agent, text)
            except ValueError:
                return  # a text Go cannot put in a header (a control character): dropped
            if self.written + len(text) <= TRUNCATE_AT_TOTAL_RUNES or self.truncating:
                self.written += len(text)
                self.headers.append(header)
                return
            # over the limit: from now on every warning is cut, the ones recorded included
            self.truncating, self.written = True, 0
            self.headers = []
            klog.error_s("exceeded max warning header size, truncating", "Unhandled Error", logger="UnhandledError")
            for agent, text in self.ordered:
                text = text[:TRUNCATE_ITEM_RUNES]
                try:
                    header = new_warning_header(299, agent, text)
                except ValueError:
                    continue
                self.written += len(text)
                self.headers.append(header)

    def header_values(self) -> list[str]:
        # read without the lock, as Go's writer reads its header map: a handler's goroutine that
        # still warns while the answer's header goes out races there too
        return list(self.headers)


def with_warning_recorder(app: Callable) -> Callable:
    """``WithWarningRecorder``: a recorder for each request; its warnings go out with the answer's header."""

    def warning_recorder(environ: dict, start_response: Callable) -> Iterable[bytes]:
        recorder = Recorder()
        warning.with_warning_recorder(environ, recorder)

        def warning_start_response(status: str, headers: list, exc_info: Any = None) -> Callable:
            recorded = recorder.header_values()
            if recorded:
                headers = list(headers) + [("Warning", value) for value in recorded]
            return start_response(status, headers, exc_info)

        return app(environ, warning_start_response)

    return warning_recorder


__all__ = ["Recorder", "TRUNCATE_AT_TOTAL_RUNES", "TRUNCATE_ITEM_RUNES", "with_warning_recorder"]

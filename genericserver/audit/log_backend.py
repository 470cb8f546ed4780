"""Port of k8s.io/apiserver/plugin/pkg/audit/log/backend.go (v1.36.0): events as lines of text.

Format ``json`` writes each event as one line of compact ``audit.k8s.io/v1`` JSON (JSON lines);
``legacy`` writes :func:`genericserver.audit.format.event_string`. The backend writes
synchronously, so ``run`` and ``shutdown`` have nothing to do; ``new_file_backend`` opens a file
for appending and closes it at ``shutdown`` (Go leaves the file to its rotating writer).
"""

from __future__ import annotations

import json
from typing import IO, Any, Optional

from genericserver import runtime as rt
from genericserver.audit.event import Event
from genericserver.audit.format import event_string
from genericserver.audit.metrics import handle_plugin_error
from genericserver.responsewriters import go_quote

FORMAT_LEGACY = "legacy"
FORMAT_JSON = "json"
PLUGIN_NAME = "log"
ALLOWED_FORMATS = (FORMAT_LEGACY, FORMAT_JSON)


def encode_event(ev: Event) -> str:
    """The JSON line Go's codec writes: compact, then a newline."""
    return json.dumps(ev.to_dict(), separators=(",", ":"), ensure_ascii=False) + "\n"


class LogBackend:
    def __init__(self, out: IO[str], fmt: str = FORMAT_JSON, *, close_on_shutdown: bool = False, metrics: Any = None):
        self._out = out
        # where failures are counted: the server's AuditMetrics (None: the process-wide one)
        self.metrics = metrics
        self._format = fmt
        self._close = close_on_shutdown
        # one line per write, never interleaved (Go's os.File writes are not split either)
        self._lock = rt.lock()

    def process_events(self, *events: Event) -> bool:
        ok = True
        for ev in events:
            ok = self._log_event(ev) and ok
        return ok

    def _log_event(self, ev: Event) -> bool:
        if self._format == FORMAT_LEGACY:
            line = event_string(ev) + "\n"
        elif self._format == FORMAT_JSON:
            try:
                line = encode_event(ev)
            except (TypeError, ValueError) as err:
                handle_plugin_error(PLUGIN_NAME, err, ev, metrics=self.metrics)
                return False
        else:
            err_text = f"log format {go_quote(self._format)} is not in list of known formats ({','.join(ALLOWED_FORMATS)})"
            handle_plugin_error(PLUGIN_NAME, err_text, ev, metrics=self.metrics)
            return False
        try:
            with self._lock:
                self._out.write(line)
                self._out.flush()
        except (OSError, ValueError) as err:
            handle_plugin_error(PLUGIN_NAME, err, ev, metrics=self.metrics)
            return False
        return True

    def run(self, stop: Any) -> None:
        pass

    def shutdown(self) -> None:
        if self._close:
            with self._lock:
                self._out.close()

    def name(self) -> str:
        return PLUGIN_NAME

    __str__ = name


def new_backend(out: IO[str], fmt: str = FORMAT_JSON) -> LogBackend:
    return LogBackend(out, fmt)


def new_file_backend(path: str, fmt: str = FORMAT_JSON, *, opener: Optional[Any] = None) -> LogBackend:
    """A log backend appending to ``path`` (created if missing), closed when shut down."""
    out = (opener or open)(path, "a", encoding="utf-8")
    return LogBackend(out, fmt, close_on_shutdown=True)

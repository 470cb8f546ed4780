"""Log lines as kube-apiserver prints them (no Go twin in apiserver: mirrors k8s.io/klog/v2 v2.140.0).

Go's apiserver logs through klog, with calls such as::

    klog.V(1).InfoS("[graceful-termination] shutdown event", "name", "ShutdownInitiated")
    klog.Infof("Serving securely on %s", addr)
    klog.Errorf("Failed to shutdown server: %v", err)

which read here ``klog.v(1).info_s("[graceful-termination] shutdown event", name="ShutdownInitiated")``,
``klog.info(f"Serving securely on {addr}")`` and ``klog.errorf("Failed to shutdown server: %s", err)``.
The line names the caller's file and line, as klog does; a helper that logs for its caller passes
``depth`` (Go's ``InfoSDepth``). Two output formats, picked by ``--logging-format``:

* ``text`` (the default): klog's header, ``I1122 02:15:04.123456   4242 genericapiserver.py:579] ``,
  then the message as is (``Info``, ``Infof``...) or quoted with its key/value pairs (``InfoS``):
  ``"[graceful-termination] shutdown event" name="ShutdownInitiated"``. Values follow klog's
  ``serialize`` package: strings (and errors and other objects, through ``str``, as a Go
  ``Stringer``) are quoted as Go's ``strconv.Quote`` does, a string with line breaks is written
  ``key=<`` + one tab-indented line each + `` >``; anything else is JSON (``7``, ``true``,
  ``null`` for Go's nil). A Go ``time.Duration`` is a ``Stringer``: pass
  ``godur.format_go_duration(seconds)`` and it prints ``duration="500ms"`` as Go's does.
* ``json``: k8s.io/component-base/logs/json (v0.36.0) through zapr: one object a line with
  ``ts`` (milliseconds since the epoch, a float), ``caller`` (the file's folder and name, as
  zap's ShortCallerEncoder: ``genericserver/genericapiserver.py:579``), ``msg``, then ``v`` (the
  verbosity, info lines only), the key/value pairs and, for an error, ``err``.

Verbosity works as klog's ``-v``: ``v(level)`` is enabled when ``level <= `` the verbosity set by
:func:`set_verbosity` (the ``-v``/``--v`` flag; 0 by default, as in Go, so the
``[graceful-termination]`` lines, logged at 1, need ``--v=1``). A disabled ``v(level)`` costs one
comparison. Lines go out through Python's :mod:`logging` (info as INFO, warnings WARNING, errors
ERROR, fatal CRITICAL) on the caller module's logger, so pytest's ``caplog`` sees them;
:func:`setup` installs the text or JSON formatter on the root logger. Go writes the process id
in the header where the thread id belongs (klog's TODO); so does this.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from datetime import datetime
from typing import Any, Callable, Iterator, NoReturn, Optional

_verbosity = 0

# seam: what fatalf ends the process with (klog's OsExit)
_exit: Callable[[int], Any] = os._exit


def set_verbosity(level: int) -> int:
    """Set ``-v``; returns the previous level."""
    global _verbosity
    previous, _verbosity = _verbosity, int(level)
    return previous


def verbosity() -> int:
    return _verbosity


@contextlib.contextmanager
def with_verbosity(level: int) -> Iterator[None]:
    """``-v`` set to ``level`` for the block (tests)."""
    previous = set_verbosity(level)
    try:
        yield
    finally:
        set_verbosity(previous)


# -- values, as klog's internal/serialize writes them ------------------------------------------

_SHORT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(s: str) -> str:
    """``strconv.Quote``: printable characters as they are, the rest escaped the way Go does."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return '"' + s + '"'  # the common case
    out = ['"']
    for ch in s:
        esc = _SHORT_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _json(v: Any) -> str:
    """Go's ``encoding/json`` for the plain values logged here (HTML characters escaped, as Go)."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))  # Go prints 2, not 2.0
    text = json.dumps(v, separators=(",", ":"), ensure_ascii=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _string_value(s: str) -> str:
    """``=value`` for a string: quoted on one line, or klog's ``=<`` block for several lines."""
    if "\n" not in s:
        return "=" + go_quote(s)
    lines = s.split("\n")
    if lines[-1] == "":  # ends with a line break: no extra line
        return "=<\n" + "".join(f"\t{line}\n" for line in lines[:-1]) + " >"
    return "=<\n" + "".join(f"\t{line}\n" for line in lines) + " >"


def format_value(v: Any) -> str:
    """``=<value>`` as klog's KVFormat writes it."""
    if isinstance(v, str):
        return _string_value(v)
    if v is None or isinstance(v, (bool, int, float, list, tuple, dict)):
        return "=" + _json(v)
    return _string_value(str(v))  # errors and Stringers


def format_s(msg: str, err: Any = None, **kv: Any) -> str:
    """``"msg" err="..." k1="v1" k2=2``: klog's structured line without the header."""
    parts = [go_quote(msg)]
    if err is not None:
        parts.append(f" err{format_value(err)}")
    parts += [f" {k}{format_value(v)}" for k, v in kv.items()]
    return "".join(parts)


# -- emitting ------------------------------------------------------------------------------------


def _emit(level: int, v: int, text: str, depth: int, msg: Optional[str] = None, kv: Optional[dict] = None, err: Any = None) -> None:
    """One line from the caller ``depth`` frames above the public function that called this."""
    frame = sys._getframe(2 + depth)
    name = frame.f_globals.get("__name__", "genericserver")
    logger = logging.getLogger(name)
    if not logger.isEnabledFor(level):
        return
    code = frame.f_code
    record = logger.makeRecord(name, level, code.co_filename, frame.f_lineno, text, None, None, code.co_name)
    # what the JSON format needs: Go's message and pairs as given, and the verbosity
    record.klog_v = v
    record.klog_msg = text if msg is None else msg
    record.klog_kv = kv
    record.klog_err = err
    logger.handle(record)


class Verbose:
    """What ``v(level)`` returns: logs only when enabled (klog's ``Verbose``)."""

    __slots__ = ("enabled", "level")

    def __init__(self, enabled: bool, level: int):
        self.enabled = enabled
        self.level = level

    def info(self, msg: str) -> None:
        if self.enabled:
            _emit(logging.INFO, self.level, msg, 0)

    def infof(self, fmt: str, *args: Any) -> None:
        if self.enabled:
            _emit(logging.INFO, self.level, fmt % args if args else fmt, 0)

    def info_s(self, msg: str, **kv: Any) -> None:
        if self.enabled:
            _emit(logging.INFO, self.level, format_s(msg, **kv), 0, msg, kv)

    def info_s_depth(self, depth: int, msg: str, **kv: Any) -> None:
        if self.enabled:
            _emit(logging.INFO, self.level, format_s(msg, **kv), depth, msg, kv)


def v(level: int) -> Verbose:
    """``klog.V(level)``."""
    return Verbose(level <= _verbosity, level)


def info(msg: str) -> None:
    _emit(logging.INFO, 0, msg, 0)


def infof(fmt: str, *args: Any) -> None:
    _emit(logging.INFO, 0, fmt % args if args else fmt, 0)


def info_s(msg: str, **kv: Any) -> None:
    _emit(logging.INFO, 0, format_s(msg, **kv), 0, msg, kv)


def info_s_depth(depth: int, msg: str, **kv: Any) -> None:
    _emit(logging.INFO, 0, format_s(msg, **kv), depth, msg, kv)


def warning(msg: str) -> None:
    _emit(logging.WARNING, 0, msg, 0)


def warningf(fmt: str, *args: Any) -> None:
    _emit(logging.WARNING, 0, fmt % args if args else fmt, 0)


def error(msg: str) -> None:
    _emit(logging.ERROR, 0, msg, 0)


def errorf(fmt: str, *args: Any) -> None:
    _emit(logging.ERROR, 0, fmt % args if args else fmt, 0)


def error_s(err: Any, msg: str, **kv: Any) -> None:
    """``klog.ErrorS(err, msg, kv...)``: ``err`` may be None (Go's nil)."""
    _emit(logging.ERROR, 0, format_s(msg, err, **kv), 0, msg, kv, err)


def error_s_depth(depth: int, err: Any, msg: str, **kv: Any) -> None:
    _emit(logging.ERROR, 0, format_s(msg, err, **kv), depth, msg, kv, err)


def fatalf(fmt: str, *args: Any) -> NoReturn:
    """``klog.Fatalf``: log at severity F, flush, and exit with status 255.

    With klog's default ``-logtostderr`` Go writes no goroutine stacks for a Fatal; neither does this.
    """
    _emit(logging.CRITICAL, 0, fmt % args if args else fmt, 0)
    flush()
    _exit(255)
    raise SystemExit(255)  # only reached when a test replaced _exit


def fatal_depth(depth: int, msg: str) -> NoReturn:
    """``klog.FatalDepth``: :func:`fatalf` for a helper that reports its caller's line."""
    _emit(logging.CRITICAL, 0, msg, depth)
    flush()
    _exit(255)
    raise SystemExit(255)


def flush() -> None:
    """``klog.Flush``: write out what the handlers buffer."""
    for handler in logging.getLogger().handlers:
        handler.flush()


# -- formats ---------------------------------------------------------------------------------------

_SEVERITY = {logging.DEBUG: "I", logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E", logging.CRITICAL: "F"}


class TextFormatter(logging.Formatter):
    """klog's text line: ``Lmmdd hh:mm:ss.uuuuuu PID file:line] message``."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created)
        head = f"{_SEVERITY.get(record.levelno, 'I')}{when:%m%d %H:%M:%S.%f} {os.getpid():>7} {record.filename}:{record.lineno}] "
        text = head + record.getMessage()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        # klog ends every line with one line break; the handler adds it
        return text[:-1] if text.endswith("\n") else text


def _zap_value(v: Any) -> Any:
    """How zap's ``Any`` encodes a value: plain JSON values as they are, errors and Stringers as text."""
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    if isinstance(v, (list, tuple)):
        return [_zap_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _zap_value(x) for k, x in v.items()}
    return str(v)


class JSONFormatter(logging.Formatter):
    """component-base's JSON line (``--logging-format=json``); see the module docstring."""

    def format(self, record: logging.LogRecord) -> str:
        caller = f"{os.path.basename(os.path.dirname(record.pathname))}/{record.filename}:{record.lineno}"
        entry: dict[str, Any] = {"ts": record.created * 1000.0, "caller": caller}
        msg = getattr(record, "klog_msg", None)
        if msg is None:  # a line logged with plain logging, not through klog
            msg = record.getMessage()
        if record.exc_info:
            msg += "\n" + self.formatException(record.exc_info)
        entry["msg"] = msg.rstrip("\n")
        is_error = record.levelno >= logging.ERROR and record.levelno != logging.CRITICAL
        if not is_error:
            entry["v"] = getattr(record, "klog_v", 0)
        for key, value in (getattr(record, "klog_kv", None) or {}).items():
            entry[key] = _zap_value(value)
        err = getattr(record, "klog_err", None)
        if is_error and err is not None:
            entry["err"] = str(err)
        return _json(entry)


FORMATS = ("json", "text")


def setup(stream: Any = None, logging_format: str = "text", level: Optional[int] = None) -> None:
    """Log to ``stream`` (stderr by default) in ``logging_format``; ``level`` sets ``-v`` too."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JSONFormatter() if logging_format == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    if level is not None:
        set_verbosity(level)

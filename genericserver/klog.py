"""Structured log lines in klog's ``InfoS`` format (no Go twin in apiserver: mirrors k8s.io/klog/v2).

Go logs ``klog.V(1).InfoS("[graceful-termination] shutdown event", "name", "ShutdownInitiated")``
as ``"[graceful-termination] shutdown event" name="ShutdownInitiated"``. Using the same message
and keys here means one grep finds the line in both code bases.
"""

from __future__ import annotations

import json
import logging
from typing import Any

log = logging.getLogger("genericserver")


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if v is None:
        return "<nil>"
    return json.dumps(str(v))


def format_s(msg: str, **kv: Any) -> str:
    """``"msg" k1="v1" k2=2``: klog's structured line (without the header)."""
    parts = [json.dumps(msg)]
    parts += [f"{k}={_value(v)}" for k, v in kv.items()]
    return " ".join(parts)


def info_s(msg: str, **kv: Any) -> None:
    log.info("%s", format_s(msg, **kv))


def error_s(err: Any, msg: str, **kv: Any) -> None:
    if err is not None:
        kv = {"err": str(err), **kv}
    log.error("%s", format_s(msg, **kv))

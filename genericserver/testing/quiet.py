"""Quieter tools: log lines a server rightly prints and a tool should not (no Go twin).

A scenario's server (:mod:`genericserver.testing.scenario`) has no authentication or
authorization, by design. Go's warnings that say so (``Authentication is disabled``,
``Authorization is disabled``) are right for a server a person runs, and noise on every
replay, fuzz run and lab check, each of which builds such a server.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator

_AUTH_LOGGERS = ("genericserver.endpoints.filters.authentication", "genericserver.endpoints.filters")
_AUTH_DISABLED = ("Authentication is disabled", "Authorization is disabled")


class _DropAuthDisabled(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in _AUTH_DISABLED


@contextlib.contextmanager
def without_disabled_auth_warnings() -> Iterator[None]:
    """While it lasts, the two warnings are dropped; everything else is logged as usual."""
    drop = _DropAuthDisabled()
    loggers = [logging.getLogger(name) for name in _AUTH_LOGGERS]
    for logger in loggers:
        logger.addFilter(drop)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(drop)

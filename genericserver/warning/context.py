"""Port of k8s.io/apiserver/pkg/warning/context.go (v1.36.0): the request's warning recorder, and AddWarning.

A handler that has something to warn the client of (a field its decoder did not know, an owner
reference given twice, a deprecated API) calls :func:`add_warning` with the request's environ, as
Go calls ``warning.AddWarning`` with the request's context. The recorder
:func:`~genericserver.endpoints.filters.warning.with_warning_recorder` put there turns each into
a ``Warning`` header of whatever answer the request gets, an error's too. Without a recorder (a
handler served outside the chain) the warning is dropped, as in Go.
"""

from __future__ import annotations

from typing import Optional, Protocol

WARNING_RECORDER_KEY = "genericserver.warning_recorder"


class Recorder(Protocol):
    def add_warning(self, agent: str, text: str) -> None: ...


def with_warning_recorder(environ: dict, recorder: Recorder) -> None:
    environ[WARNING_RECORDER_KEY] = recorder


def warning_recorder_from(environ: dict) -> Optional[Recorder]:
    return environ.get(WARNING_RECORDER_KEY)


def add_warning(environ: dict, agent: str, text: str) -> None:
    """``AddWarning``: through the request's recorder, if it has one."""
    recorder = warning_recorder_from(environ)
    if recorder is not None:
        recorder.add_warning(agent, text)


__all__ = ["Recorder", "WARNING_RECORDER_KEY", "add_warning", "warning_recorder_from", "with_warning_recorder"]

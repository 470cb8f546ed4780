"""Port of Go's net/http/internal/http2 package (Go 1.27): config.go's ``http2Config`` (the ``Server`` fields k8s.io/apiserver's secure serving sets, and Go's timeouts) and ``adjustHTTP1MaxHeaderSize``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

GO_AWAY_TIMEOUT = 1.0  # how long a connection lingers after its GOAWAY (Go issue 18701)
PREFACE_TIMEOUT = 10.0  # Go's prefaceTimeout
FIRST_SETTINGS_TIMEOUT = 2.0  # Go's firstSettingsTimeout: the first frame, after the preface
DEFAULT_MAX_HEADER_BYTES = 1 << 20  # net/http's DefaultMaxHeaderBytes


@dataclass
class Options:
    """The ``http2.Server`` fields secure_serving.go sets (its defaults where it sets none), and
    Go's timeouts, package constants there that its tests shorten with a fake clock."""

    max_concurrent_streams: int = 100
    max_upload_buffer_per_stream: int = 256 << 10
    max_upload_buffer_per_connection: int = (256 << 10) * 100
    max_read_frame_size: int = 256 << 10
    idle_timeout: Optional[float] = 90.0
    go_away_timeout: float = GO_AWAY_TIMEOUT
    preface_timeout: float = PREFACE_TIMEOUT
    first_settings_timeout: float = FIRST_SETTINGS_TIMEOUT


def options_for(max_streams_per_connection: int) -> Options:
    """secure_serving.go's: 256 KiB per stream and frame; the streams flag, else 100; the
    connection's buffer one stream's times the streams."""
    streams = max_streams_per_connection if max_streams_per_connection > 0 else 100
    return Options(max_concurrent_streams=streams, max_upload_buffer_per_connection=(256 << 10) * streams)


def adjust_http1_max_header_size(n: int) -> int:
    """Go's ``adjustHTTP1MaxHeaderSize``: HTTP/2 counts 32 bytes more per field; ten assumed."""
    return n + 10 * 32


__all__ = ["DEFAULT_MAX_HEADER_BYTES", "FIRST_SETTINGS_TIMEOUT", "GO_AWAY_TIMEOUT", "Options", "PREFACE_TIMEOUT",
           "adjust_http1_max_header_size", "options_for"]

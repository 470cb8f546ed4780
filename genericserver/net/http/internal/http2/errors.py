"""Port of Go's net/http/internal/http2 package (Go 1.27): errors.go's ``ErrCode`` names and the texts of the errors the server logs.

``%+v`` of a GOAWAY frame (frame.go's ``FrameHeader.String`` inside it) is spelled here too, for
the log line of a client's error GOAWAY.
"""

from __future__ import annotations

from typing import Any

import h2.errors

# Go's errors, by their texts (server.go)
ERR_CLIENT_DISCONNECTED = "client disconnected"
ERR_STREAM_CLOSED = "http2: stream closed"
ERR_HANDLER_COMPLETE = "http2: request body closed due to handler exiting"
ERR_PREFACE_TIMEOUT = "timeout waiting for client preface"


def err_code_string(code: int) -> str:
    """Go's ``ErrCode.String``."""
    try:
        return h2.errors.ErrorCodes(code).name
    except ValueError:
        return f"unknown error code 0x{int(code):x}"


def go_away_frame_string(ev: Any) -> str:
    """``%+v`` of the ``*GoAwayFrame`` a ConnectionTerminated event came from, as Go logs it."""
    debug = ev.additional_data or b""
    return (f"&{{FrameHeader:[FrameHeader GOAWAY len={8 + len(debug)}] LastStreamID:{ev.last_stream_id} "
            f"ErrCode:{err_code_string(ev.error_code)} debugData:[{' '.join(str(b) for b in debug)}]}}")


__all__ = ["ERR_CLIENT_DISCONNECTED", "ERR_HANDLER_COMPLETE", "ERR_PREFACE_TIMEOUT", "ERR_STREAM_CLOSED", "err_code_string", "go_away_frame_string"]

"""Port of k8s.io/apimachinery/pkg/util/net/http.go (v1.36.0): NewWarningHeader, the value of a ``Warning`` header.

RFC 7234's warn-code, warn-agent and quoted warn-text. Go refuses an agent with a space, a quote,
a backslash or a control character, and a text with a control character: the caller then drops
the warning rather than send a header that would not parse.
"""

from __future__ import annotations


def _is_control(c: str) -> bool:
    # Go's unicode.IsControl: C0, DEL and C1
    return ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F


def new_warning_header(code: int, agent: str, text: str) -> str:
    """``NewWarningHeader``: ``299 - "text"``; raises ValueError with Go's text where Go errs."""
    if code < 0 or code > 999:
        raise ValueError("code must be between 0 and 999")
    if not agent:
        agent = "-"
    elif any(c in '\\"' or c.isspace() or _is_control(c) for c in agent):
        raise ValueError("agent must be valid UTF-8 and must not contain spaces, quotes, backslashes, or control characters")
    if any(_is_control(c) for c in text):
        raise ValueError("text must be valid UTF-8 and must not contain control characters")
    return f"{code:03d} {agent} {make_quoted_string(text)}"


def make_quoted_string(s: str) -> str:
    """``makeQuotedString``: in double quotes, with only ``"`` and ``\\`` escaped."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


__all__ = ["make_quoted_string", "new_warning_header"]

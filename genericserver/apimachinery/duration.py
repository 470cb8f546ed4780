"""Port of k8s.io/apimachinery/pkg/util/duration/duration.go (v1.36.0): ``HumanDuration``, the AGE column.

Seconds up to two minutes, then minutes (with seconds below ten minutes), hours (with minutes
below eight hours), days (with hours below eight days), years (with days below eight years).
A time up to a second in the future reads ``0s`` (clocks differ a little); further is
``<invalid>``.
"""

from __future__ import annotations


def human_duration(seconds: float) -> str:
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"

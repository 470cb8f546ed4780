"""Why a request was lost: each failed outcome of the load client sorted by its cause (no Go twin).

The load client sees outcomes (``refused``, ``reset``, ``503``...); a learner needs the cause.
With what the client knows - which pod the connection was routed to, and the start of the
answer's body - every lost request falls in one of these:

========================  ===================================================================
``closed-but-routed``     refused: kube-proxy still sent the new connection to a pod whose
                          listener had already closed (the preStop hook plus the shutdown
                          delay ended before the endpoints controller and kube-proxy caught up)
``no-endpoints``          refused by the service's REJECT rule: no endpoint to route to at all
``dropped``               reset: the pod dropped a connection it had accepted (still queued
                          when its listener closed, or the process was killed)
``shutting-down``         503 from our server: the request reached the handler chain after
                          NotAcceptingNewRequest, in the instant before the listener closed
``envoy-upstream``        503 from Envoy: the server container behind it had stopped listening
``retry-later``           429 from our server in retry-after mode: "come back later"
``other``                 any other status, or a timeout
========================  ===================================================================

:func:`tally` turns the samples into an :class:`Outcome` (sent, ok, lost, lost by cause), the
numbers both the CLI and the workshop's checks read. Every refusal counts, however long it took:
a 503 or a reset that came late is still a request the server refused. (An earlier version excused
one that waited longer than a scenario's margin as "held up by the machine"; that hid hundreds of
503s a second while the server took its time to stop reading requests, walkthrough.md's "The
shutdown's hops under load".)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from genericserver.cluster.envoy import UPSTREAM_FAILURE
from genericserver.cluster.loadclient import Sample

CAUSES: dict[str, tuple[str, str]] = {
    # cause: (short label for a table cell, the explanation)
    "closed-but-routed": ("refused: listener closed, still routed",
                          "refused - kube-proxy still routed new connections to a pod whose listener had closed "
                          "(preStop + shutdown delay shorter than the endpoints + kube-proxy lags)"),
    "no-endpoints": ("refused: no endpoints",
                     "refused by the service's REJECT rule - no endpoint was ready or serving"),
    "dropped": ("reset: connection dropped",
                "reset - the pod dropped a connection it had accepted (queued when its listener closed, or SIGKILL)"),
    "shutting-down": ("503: shutting down",
                      "503 from the server - the request reached it after NotAcceptingNewRequest, before its listener closed"),
    "envoy-upstream": ("503 from Envoy",
                       "503 from Envoy - the server container behind it had stopped listening"),
    "retry-later": ("429: retry later",
                    "429 from the server in retry-after mode - the client is asked to come back later"),
    "other": ("other", "another status, or a timeout"),
}


def cause_of(s: Sample) -> str:
    """The cause of a failed sample (see the module docstring); "" for a success."""
    if s.outcome == "ok":
        return ""
    if s.outcome == "refused":
        return "closed-but-routed" if s.pod else "no-endpoints"
    if s.outcome == "reset":
        return "dropped"
    if s.outcome == "503":
        return "envoy-upstream" if s.detail.startswith(UPSTREAM_FAILURE[:20]) else "shutting-down"
    if s.outcome == "429":
        return "retry-later"
    return "other"


@dataclass
class Outcome:
    """What the load client saw: ``sent`` requests, ``ok`` answered 200, the rest ``lost``, by cause."""

    sent: int = 0
    ok: int = 0
    by_cause: Counter = field(default_factory=Counter)

    @property
    def lost(self) -> int:
        return self.sent - self.ok

    @property
    def loss_percent(self) -> float:
        return 100.0 * self.lost / self.sent if self.sent else 0.0

    def why(self) -> str:
        """``"41 refused: listener closed, still routed; 1 503: shutting down"`` (most first)."""
        return "; ".join(f"{n} {CAUSES[c][0]}" for c, n in self.by_cause.most_common())

    def as_dict(self) -> dict:
        return {"sent": self.sent, "ok": self.ok, "lost": self.lost, "by_cause": dict(self.by_cause)}


def tally(samples: Iterable[Sample]) -> Outcome:
    out = Outcome()
    for s in samples:
        out.sent += 1
        cause = cause_of(s)
        if cause:
            out.by_cause[cause] += 1
        else:
            out.ok += 1
    return out


def format_loss(o: Outcome) -> str:
    """``"12.3% (42 of 353)"``; ``"0% (0 of 353)"``."""
    pct = o.loss_percent
    text = "0%" if o.lost == 0 else (f"{pct:.1f}%" if pct >= 0.1 else f"{pct:.2f}%")
    return f"{text} ({o.lost} of {o.sent})"

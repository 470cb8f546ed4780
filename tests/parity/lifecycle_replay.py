"""The lifecycle corpus replayed against `genericserver serve` (tests/test_parity_lifecycle_*.py).

Each scenario runs our server with the flags Go's ran with (less the Go-only ones, each said in the
corpus), plays the same steps and compares: every answer (status, `Retry-After`, `Connection`, the
body or Status message; or refused, reset, closed), the exit code, and how many lines hold each of
lifecycle.COUNTED (the counts every Go run agreed on; for "Post-timeout activity", which nothing
orders before the exit, at most Go's: its absence is tests/test_filters_timeout.py's to catch) exactly; the
`[graceful-termination]` lines as a set, and in the order Go's code makes (happens_before.py: the
pairs a chain of program order and channel closes orders; the rest is Go's scheduler, which a
recording shows but does not make a rule of); the audit events exactly. A difference Go and we cannot share is listed in
`KNOWN_DIFFERENCES` with its reason (and in walkthrough.md's table "Where we differ from
kube-apiserver, measured"); a listed one that stops differing fails, so the list stays true.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import zygote
from parity import happens_before, lifecycle
from parity.lifecycle_corpus import BY_NAME

RECORDED = json.loads((Path(__file__).parent / "go-lifecycle.json").read_text())["scenarios"]

# scenario -> {what differs ("answer TAG", "exit", "lines", "audit"): why it cannot be the same}
KNOWN_DIFFERENCES: dict[str, dict[str, str]] = {}


def play_ours(name: str) -> dict:
    return lifecycle.run(BY_NAME[name], lambda flags: zygote.Process(
        ["serve", "--secure-port", "0", *flags], env={**os.environ, "PYTHONFAULTHANDLER": "1"}), go=False)


def line_problems(name: str, go: dict, ours: list[str]) -> list[str]:
    """Go's lines against ours: the same lines, in the order Go's code makes (happens_before.py).
    Go's process exits as soon as RunWithContext returns, while other goroutines may still be about
    to log: a line its code does not order before "apiserver is exiting" (InFlightRequestsDrained's
    and HTTPServerStoppedListening's are logged after their signals), or any line once
    RunWithContext returned an error (a failing or panicking hook), may be lost in Go, and the
    recording keeps only the lines every run logged. Ours waits for those goroutines (see
    genericapiserver.py), so such a line may be extra here; any other extra line is a difference.
    Once RunWithContext returned an error (Go's exit code is not 0), the lines its own goroutine
    logs only on the way to a clean return (the audit flush's, "apiserver is exiting") can never
    come, so those are a difference when extra."""
    retry_after = happens_before.is_retry_after(BY_NAME[name].flags)
    if go["exit"] == 0:
        must_not_be_extra = {a for a, b in happens_before.required_pairs(retry_after) if b == happens_before.EXITING}
        must_not_be_extra.add(happens_before.EXITING)
    else:
        must_not_be_extra = set(happens_before.MAIN_AFTER_HOOKS)
    problems = [f"missing: {l}" for l in go["lines"] if l not in ours]
    problems += [f"extra: {l}" for l in ours if l not in go["lines"] and l in must_not_be_extra]
    return problems + happens_before.order_problems(ours, retry_after)


def stale(name: str) -> str:
    """Why the recording of `name` cannot be replayed, or "": a scenario not recorded, or one whose
    flags or steps changed since it was recorded (the recording holds their digest)."""
    if name not in RECORDED:
        return f"{name} is not in go-lifecycle.json: record it (tests/parity/record_lifecycle.py --only {name})"
    if RECORDED[name].get("digest") != BY_NAME[name].digest():
        return (f"{name}: its flags or steps changed since it was recorded: re-record it "
                f"(tests/parity/record_lifecycle.py --only {name}, or `make parity`)")
    return ""


def differences(name: str, ours: dict) -> dict[str, str]:
    """What differs from Go's recording: a key per difference ("answer TAG", "exit", "counted",
    "lines", "audit") and a text showing both sides."""
    go = RECORDED[name]
    out: dict[str, str] = {}
    if "alternatives" in go and ours["answers"] in go["alternatives"]:
        go = {**go, "answers": ours["answers"]}  # one of the answers Go's race gives
    for tag in sorted(set(go["answers"]) | set(ours["answers"])):
        a, b = go["answers"].get(tag), ours["answers"].get(tag)
        if a != b:
            out[f"answer {tag}"] = f"Go: {json.dumps(a, sort_keys=True)}\n   ours: {json.dumps(b, sort_keys=True)}"
    if go["exit"] != ours["exit"]:
        out["exit"] = f"Go exited {go['exit']}, ours {ours['exit']}"
    counts = {k: (n, ours["counted"].get(k)) for k, n in go["counted"].items()
              if ours["counted"].get(k) != n and not (k in lifecycle.UNORDERED and ours["counted"].get(k, 0) < n)}
    if counts:
        out["counted"] = ", ".join(f"{k!r}: Go logged it {a} times, ours {b}" for k, (a, b) in counts.items())
    problems = line_problems(name, go, ours["lines"])
    if problems:
        out["lines"] = "\n   ".join(problems) + "\n   Go: " + "\n       ".join(go["lines"]) + "\n   ours: " + "\n         ".join(ours["lines"])
    if "audit" in go and go["audit"] != ours.get("audit"):
        out["audit"] = f"Go: {go['audit']}\n   ours: {ours.get('audit')}"
    return out


def check(name: str) -> None:
    why = stale(name)
    assert not why, why
    ours = play_ours(name)
    found = differences(name, ours)
    known = KNOWN_DIFFERENCES.get(name, {})
    unexpected = {k: v for k, v in found.items() if k not in known}
    gone = [k for k in known if k not in found]
    report = [f"{name}: {BY_NAME[name].about}"]
    report += [f"-- {k}:\n   {v}" for k, v in unexpected.items()]
    report += [f"-- {k} is listed in KNOWN_DIFFERENCES but no longer differs: drop it" for k in gone]
    if unexpected or gone:
        report.append("our server's log:\n" + "\n".join(ours["log"][-40:]))
    assert not unexpected and not gone, "\n".join(report)

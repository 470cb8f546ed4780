"""Invariants of the graceful shutdown, as named checks over one run's event stream (no Go twin).

Each check takes a :class:`~genericserver.testing.scenario.Run` and returns a list of problems
(empty: it holds). :func:`check` runs all of :data:`INVARIANTS`. They state the contract of
design.md section 6 and the timeline of the Go reference map section 3:

* ``signals_fire_once_after_prerequisites``: each signal at most once, only after what it
  depends on, and all six shutdown signals once a stop was asked for;
* ``delay_is_respected``: AfterShutdownDelayDuration not before ShutdownInitiated + delay;
* ``readyz_fails_from_shutdown_initiated``;
* ``no_tracked_work_admitted_after_wait``: a non-exempt, non-long-running request (or a watch,
  when watches are drained) reaches its handler only after a successful wait-group ``add``;
* ``answers_match_phase``: the design.md section 6 table;
* ``tracked_requests_complete_before_drained``;
* ``audit_complete_before_backend_shutdown``;
* ``listener_stops_as_the_mode_says``;
* ``watch_drain_within_grace_and_rate``;
* ``in_flight_limits_respected``;
* ``h2_streams_follow_goaway``: over HTTP/2, no stream admitted after its connection's GOAWAY
  above the last id, every admitted stream answered, a GOAWAY after each retry-after 429;
* ``run_with_context_returns``;
* ``no_deadlock_or_panic`` and ``no_goroutine_left``.

Messages abbreviate phases: SI ShutdownInitiated, ASD AfterShutdownDelayDuration, PHS
PreShutdownHooksStopped, NA NotAcceptingNewRequest, WAIT the non-long-running wait began, WWAIT
the watch wait began, IFD InFlightRequestsDrained, LC the listener closed, HSL
HTTPServerStoppedListening.

Phase-dependent answers are judged against the interval in which the server decided: from the
phase seen just before the request entered the handler chain (``dispatched``) to the phase
seen when its status line was set (``decided``); a refused dial is judged by the phase at the
dial. An answer is accepted if some moment in that interval allows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from genericserver.events import Event
from genericserver.filters.maxinflight import TOO_MANY_REQUESTS_MESSAGE
from genericserver.filters.waitgroup import SHUTTING_DOWN_MESSAGE
from genericserver.filters.with_retry_after import SHUTDOWN_MESSAGE
from genericserver.testing.scenario import EXEMPT_KINDS, LONG_RUNNING_KINDS, Run

SI, ASD, PHS, NA = "ShutdownInitiated", "AfterShutdownDelayDuration", "PreShutdownHooksStopped", "NotAcceptingNewRequest"
IFD, HSL = "InFlightRequestsDrained", "HTTPServerStoppedListening"
SHUTDOWN_SIGNALS = (SI, ASD, PHS, NA, IFD, HSL)
EPS = 1e-9


@dataclass(frozen=True)
class Violation:
    invariant: str
    message: str

    def __str__(self) -> str:
        return f"{self.invariant}: {self.message}"


class View:
    """One run's events, indexed for the checks."""

    def __init__(self, run: Run):
        self.run, self.sc = run, run.scenario
        self.events = run.events
        self.signals: dict[str, list[Event]] = {}
        self.by_rid: dict[str, dict[str, list[Event]]] = {}
        self.types: dict[str, str] = {}
        for e in run.events:
            if e.kind == "signal":
                self.signals.setdefault(e.name, []).append(e)
            rid = e.fields.get("rid")
            if rid:
                self.by_rid.setdefault(rid, {}).setdefault(f"{e.kind}:{e.name}", []).append(e)
                if e.kind == "client" and e.name == "send":
                    self.types[rid] = e.fields["type"]

    def signal(self, name: str) -> Optional[Event]:
        fired = self.signals.get(name)
        return fired[0] if fired else None

    def first(self, kind: str, name: str) -> Optional[Event]:
        for e in self.events:
            if e.kind == kind and e.name == name:
                return e
        return None

    def all(self, kind: str, name: Optional[str] = None) -> list[Event]:
        return [e for e in self.events if e.kind == kind and (name is None or e.name == name)]

    def of(self, rid: str, key: str) -> list[Event]:
        return self.by_rid.get(rid, {}).get(key, [])

    def stopped(self) -> bool:
        return self.first("driver", "stop") is not None

    def tracked(self, rid: str) -> bool:
        return bool(self.of(rid, "wg:add") or self.of(rid, "watch-wg:add"))

    def timed_out(self, rid: str) -> bool:
        return any(a.fields.get("outcome") == "timeout-504" for a in self.of(rid, "client:answer"))


def _before(a: Optional[Event], b: Optional[Event]) -> bool:
    return a is not None and b is not None and a.seq < b.seq


# -- the invariants ------------------------------------------------------------------------------


def signals_fire_once_after_prerequisites(v: View) -> list[str]:
    problems = [f"{name} fired {len(evs)} times" for name, evs in v.signals.items() if len(evs) > 1]
    stop = v.first("driver", "stop")
    hooks_done = v.all("hook", "pre-shutdown")
    needs: dict[str, list[Optional[Event]]] = {
        SI: [stop],
        ASD: [v.signal(SI)],
        PHS: [stop] + [e for e in hooks_done if e.fields.get("phase") == "end"][:1],
        NA: [v.signal(ASD), v.signal(PHS)],
        IFD: [v.signal(NA)],
        HSL: [v.signal(IFD) if v.sc.retry_after else v.signal(NA)],
    }
    for name, prerequisites in needs.items():
        sig = v.signal(name)
        if sig is None:
            if v.stopped() and v.run.error is None:
                problems.append(f"{name} never fired")
            continue
        for pre in prerequisites:
            if pre is None or pre.seq > sig.seq:
                what = "a prerequisite" if pre is None else "the stop" if pre is stop else (
                    "the pre-shutdown hooks ended" if pre.kind == "hook" else pre.name)
                problems.append(f"{name} fired at t={sig.at:g} (#{sig.seq}) before {what}" + ("" if pre is None else f" (#{pre.seq})"))
    hook_ends = [e for e in v.all("hook") if e.name.startswith("hook-") and e.fields.get("phase") == "end"]
    phs = v.signal(PHS)
    for e in hook_ends:
        if phs is not None and e.seq > phs.seq:
            problems.append(f"PreShutdownHooksStopped fired (#{phs.seq}) before {e.name} ended (#{e.seq})")
    return problems


def delay_is_respected(v: View) -> list[str]:
    si, asd = v.signal(SI), v.signal(ASD)
    if si is None or asd is None or asd.at + EPS >= si.at + v.sc.shutdown_delay:
        return []
    return [f"AfterShutdownDelayDuration at t={asd.at:g}, before ShutdownInitiated (t={si.at:g}) + {v.sc.shutdown_delay:g}s"]


def readyz_fails_from_shutdown_initiated(v: View) -> list[str]:
    problems = []
    for rid, typ in v.types.items():
        if typ != "readyz":
            continue
        for sent in v.of(rid, "conn:sent"):
            answer = next((a for a in v.of(rid, "client:answer") if a.seq > sent.seq), None)
            if answer is None or answer.fields.get("outcome") == "too-many-429":
                continue  # /readyz counts against max-in-flight like any read
            body = answer.fields.get("body") or ""
            lo, hi = sent.fields.get("dispatched") or (), sent.fields.get("decided") or ()
            if SI in lo and not (answer.fields["status"] == 500 and "[-]shutdown failed: reason withheld" in body):
                problems.append(f"/readyz request {rid} after ShutdownInitiated got {answer.fields['status']}: {body[:80]!r}")
            if SI not in hi and "[-]shutdown failed" in body:
                problems.append(f"/readyz request {rid} before ShutdownInitiated reported the shutdown check failed")
    return problems


def no_tracked_work_admitted_after_wait(v: View) -> list[str]:
    problems = []
    for start in v.all("handler", "start"):
        rid = start.fields["rid"]
        typ = v.types.get(rid, "ordinary")
        if typ in EXEMPT_KINDS:
            continue
        if typ not in LONG_RUNNING_KINDS:
            if not any(a.seq < start.seq for a in v.of(rid, "wg:add")):
                problems.append(f"{typ} request {rid} reached its handler at t={start.at:g} without a wait-group slot")
        elif typ == "watch" and v.sc.watch_grace > 0:
            if not any(a.seq < start.seq for a in v.of(rid, "watch-wg:add")):
                problems.append(f"watch {rid} reached its handler at t={start.at:g} without a watch wait-group slot")
    return problems


def _served(v: View, typ: str) -> set[str]:
    if typ == "readyz":
        return {"ok", "error-500"}
    return {"ok"}


def allowed_answers(v: View, rid: str, typ: str, lo: tuple, hi: tuple) -> set[str]:
    """What a request of ``typ`` may get if the server decided between phases ``lo`` and ``hi``."""
    sc = v.sc
    spec_duration = _duration(v, rid)
    served = _served(v, typ)
    if typ not in LONG_RUNNING_KINDS and typ != "readyz" and spec_duration / 2 > sc.request_timeout:
        served = {"timeout-504"}
    out: set[str] = set()
    tracked_by_wg = typ not in LONG_RUNNING_KINDS and typ not in EXEMPT_KINDS
    tracked_watch = typ == "watch" and sc.watch_grace > 0
    flag = "WaitBegan" if tracked_by_wg else "WatchWaitBegan"

    def through_wait_groups() -> None:
        if tracked_by_wg or tracked_watch:
            if flag not in lo:
                out.update(served)
            if flag in hi:
                out.add("shutting-down-503")
        else:
            out.update(served)

    if sc.retry_after and typ not in EXEMPT_KINDS:
        if NA in hi:
            out.add("retry-after-429")
        if NA not in lo:
            through_wait_groups()
    else:
        through_wait_groups()
    limited = sc.max_mutating_in_flight if typ == "mutating" else sc.max_in_flight
    if typ not in LONG_RUNNING_KINDS and limited and out & served:
        out.add("too-many-429")
    return out


def _duration(v: View, rid: str) -> float:
    if rid.startswith("h") or rid == "prime":
        return 0.0
    if rid.startswith("s"):
        sends = [a[1] for a in v.sc.actions if a[0] == "send"]
        return sends[int(rid[1:])].duration
    return v.sc.requests[int(rid)].duration


_SHAPES = {
    "retry-after-429": (("retry_after", "5"), ("connection", "close"), ("body", SHUTDOWN_MESSAGE + "\n")),
    "too-many-429": (("retry_after", "1"), ("body", TOO_MANY_REQUESTS_MESSAGE + "\n")),
    "shutting-down-503": (("retry_after", "1"),),
}


def answers_match_phase(v: View) -> list[str]:
    problems = []
    sc = v.sc
    refusing = IFD if sc.retry_after else NA
    for answer in v.all("client", "answer"):
        rid, typ, outcome = answer.fields["rid"], answer.fields["type"], answer.fields["outcome"]
        phase = answer.fields.get("phase") or ()
        if outcome in ("refused", "dropped"):
            if refusing in phase:
                continue
            if outcome == "dropped" and (v.of(rid, "conn:aborted") or (typ == "mutating" and answer.fields.get("reused"))):
                continue  # aborted mid-response, or a POST caught by an idle-connection close
            problems.append(f"{typ} request {rid} was {outcome} at t={answer.at:g} before {refusing} ({_phase(phase)})")
            continue
        if answer.fields.get("error"):
            problems.append(f"{typ} request {rid} failed: {answer.fields['error']}")
            continue
        sent = [s for s in v.of(rid, "conn:sent") if s.seq < answer.seq]
        if not sent:
            problems.append(f"{typ} request {rid} answered {answer.fields['status']} but the server never sent it")
            continue
        lo, hi = sent[-1].fields.get("dispatched") or (), sent[-1].fields.get("decided") or ()
        allowed = allowed_answers(v, rid, typ, lo, hi)
        if outcome not in allowed:
            problems.append(
                f"{typ} request {rid} ({sc.mode} mode) got {outcome} (status {answer.fields['status']}) at t={answer.at:g}; "
                f"decided between phases [{_phase(lo)}] and [{_phase(hi)}], expected one of {sorted(allowed)}"
            )
        for key, want in _SHAPES.get(outcome, ()):
            if key == "connection" and answer.fields.get("proto") == "HTTP/2.0":
                continue  # no such header in HTTP/2: a GOAWAY says it (h2_streams_follow_goaway)
            got = answer.fields.get(key)
            if got != want:
                problems.append(f"{typ} request {rid}: {outcome} with {key}={got!r}, expected {want!r}")
        if outcome == "shutting-down-503" and SHUTTING_DOWN_MESSAGE not in (answer.fields.get("body") or ""):
            problems.append(f"{typ} request {rid}: the 503 does not carry the Status message")
        if outcome == "ok" and typ != "readyz" and not v.of(rid, "handler:start"):
            problems.append(f"{typ} request {rid} answered 200 without reaching its handler")
    return problems


PHASE_ABBREVIATIONS = {
    SI: "SI", ASD: "ASD", PHS: "PHS", NA: "NA", "WaitBegan": "WAIT", "WatchWaitBegan": "WWAIT",
    IFD: "IFD", "ListenerClosed": "LC", HSL: "HSL",
}


def h2_streams_follow_goaway(v: View) -> list[str]:
    """Over HTTP/2: no stream admitted above its connection's GOAWAY, every admitted stream
    answered (or aborted), every dropped one above the last id, and a GOAWAY after each
    retry-after 429 (its ``Connection: close``)."""
    problems = []
    goaway = {e.fields["conn"]: e for e in v.all("h2", "goaway")}
    ended = {(e.fields["conn"], e.fields.get("stream")) for name in ("sent", "aborted", "panic") for e in v.all("conn", name)}
    for e in v.all("h2", "admitted"):
        conn, sid = e.fields["conn"], e.fields["stream"]
        g = goaway.get(conn)
        if g is not None and g.seq < e.seq and sid > g.fields["last"]:
            problems.append(f"conn {conn}: stream {sid} admitted after a GOAWAY with last stream {g.fields['last']}")
        if (conn, sid) not in ended:
            problems.append(f"conn {conn}: stream {sid} was admitted and never answered")
    for e in v.all("h2", "dropped"):
        if e.fields["stream"] <= e.fields["last"]:
            problems.append(f"conn {e.fields['conn']}: stream {e.fields['stream']} dropped at or below the last id {e.fields['last']}")
    for answer in v.all("client", "answer"):
        if answer.fields.get("proto") != "HTTP/2.0" or answer.fields["outcome"] != "retry-after-429":
            continue
        sent = [s for s in v.of(answer.fields["rid"], "conn:sent") if s.seq < answer.seq]
        g = goaway.get(sent[-1].fields["conn"]) if sent else None
        # (Shutdown's own GOAWAY may have come first: either covers the 429's stream)
        if g is None or g.fields["last"] < sent[-1].fields["stream"]:
            problems.append(f"request {answer.fields['rid']}: a 429 over HTTP/2 without the GOAWAY its Connection: close asks for")
    return problems


def _phase(phase: tuple) -> str:
    """A phase in short: ``SI,ASD,PHS,NA,WAIT`` (see :data:`PHASE_ABBREVIATIONS`); ``running`` if empty."""
    return ",".join(PHASE_ABBREVIATIONS.get(p, p) for p in phase) if phase else "running"


def tracked_requests_complete_before_drained(v: View) -> list[str]:
    drained = v.signal(IFD)
    if drained is None:
        return []
    problems = []
    watch_start = v.first("watch-wg", "wait-start")
    hard_stop = watch_start.at + v.sc.watch_grace if watch_start is not None else None
    for rid in v.by_rid:
        done = sorted(v.of(rid, "conn:sent") + v.of(rid, "conn:aborted"), key=lambda e: e.seq)
        if v.of(rid, "wg:add"):
            if not any(d.seq < drained.seq for d in done):
                problems.append(f"request {rid} held a wait-group slot but was not answered before InFlightRequestsDrained (#{drained.seq})")
        elif v.of(rid, "watch-wg:add"):
            gave_up = hard_stop is not None and drained.at + EPS >= hard_stop
            if not gave_up and not any(d.seq < drained.seq for d in done):
                problems.append(f"watch {rid} was still open at InFlightRequestsDrained (t={drained.at:g}), before the grace ended")
    return problems


def audit_complete_before_backend_shutdown(v: View) -> list[str]:
    problems = []
    shutdown = v.first("audit", "backend-shutdown")
    drained = v.signal(IFD)
    if shutdown is not None and not _before(drained, shutdown):
        problems.append(f"the audit backend began shutting down at t={shutdown.at:g} (#{shutdown.seq}) before InFlightRequestsDrained")
    owner: dict[str, str] = {}
    for e in v.all("handler", "start") + v.all("client", "answer"):
        if e.fields.get("audit_id"):
            owner.setdefault(e.fields["audit_id"], e.fields["rid"])
    completed = {e.fields["audit_id"]: e for e in v.events if e.kind == "audit" and e.name in ("ResponseComplete", "Panic")}
    for rid in v.by_rid:
        if not v.tracked(rid) or v.timed_out(rid):
            continue
        ids = {e.fields["audit_id"] for e in v.of(rid, "handler:start") + v.of(rid, "client:answer") if e.fields.get("audit_id")}
        for aid in sorted(ids):
            done = completed.get(aid)
            if done is None:
                problems.append(f"request {rid} held a wait-group slot but was never audited with ResponseComplete")
            elif shutdown is not None and done.seq > shutdown.seq:
                problems.append(f"request {rid} was audited (t={done.at:g}) after the audit backend began shutting down")
    if shutdown is not None:
        for e in v.events:
            if e.kind == "audit" and e.seq > shutdown.seq and e.fields.get("audit_id"):
                rid = owner.get(e.fields["audit_id"])
                if rid is None or (v.tracked(rid) and not v.timed_out(rid)):
                    problems.append(f"audit event {e.name} of request {rid or e.fields['audit_id']} after the backend shut down")
    return problems


def listener_stops_as_the_mode_says(v: View) -> list[str]:
    closed = v.first("transport", "listener-closed")
    cause = v.signal(IFD) if v.sc.retry_after else v.signal(NA)
    problems = []
    if closed is None:
        if v.stopped() and v.run.error is None:
            problems.append("the listener never closed")
        return problems
    if not _before(cause, closed):
        problems.append(f"the listener closed at t={closed.at:g} (#{closed.seq}) before {IFD if v.sc.retry_after else NA} ({v.sc.mode} mode)")
    stopped = v.signal(HSL)
    if stopped is not None and stopped.seq < closed.seq:
        problems.append("HTTPServerStoppedListening fired before the listener closed")
    return problems


def watch_drain_within_grace_and_rate(v: View) -> list[str]:
    start = v.first("watch-wg", "wait-start")
    if start is None or v.sc.watch_grace <= 0:
        return []
    qps, grace = start.fields["qps"], v.sc.watch_grace
    problems = []
    if abs(start.fields["grace"] - grace) > 1e-6:
        problems.append(f"the watch drain's hard stop is {start.fields['grace']:g}s, not the grace {grace:g}s")
    if qps < max(start.fields["count"] / grace, 200.0) - 1e-9:
        problems.append(f"the watch drain runs at {qps:g} QPS for {start.fields['count']} watches in {grace:g}s")
    hard_stop = start.at + grace
    last = None
    for d in v.all("watch-wg", "done"):
        if not d.fields.get("limited"):
            continue
        ended = v.of(d.fields["rid"], "handler:end")
        latest = max([hard_stop] + [e.at for e in ended])
        if d.at > latest + EPS:
            problems.append(f"watch {d.fields['rid']} left the drain at t={d.at:g}, after the grace ended (t={hard_stop:g})")
        # a token that would come after the hard stop is refused at once: the end may burst
        if last is not None and d.at - last < 1 / qps - 1e-6 and last + 1 / qps < hard_stop - 1e-6:
            problems.append(f"watch {d.fields['rid']} left the drain {d.at - last:.6f}s after the previous one (QPS {qps:g})")
        last = d.at
    return problems


def in_flight_limits_respected(v: View) -> list[str]:
    limits = {"mutating": v.sc.max_mutating_in_flight, "read-only": v.sc.max_in_flight}
    running: dict[str, set[str]] = {"mutating": set(), "read-only": set()}
    problems = []
    for e in v.events:
        if e.kind != "handler":
            continue
        rid = e.fields["rid"]
        typ = v.types.get(rid, "ordinary")
        if typ in LONG_RUNNING_KINDS:
            continue
        cls = "mutating" if typ == "mutating" else "read-only"
        if e.name == "start":
            running[cls].add(rid)
            if limits[cls] and len(running[cls]) > limits[cls]:
                problems.append(f"{len(running[cls])} {cls} requests in their handlers at t={e.at:g}, limit {limits[cls]}")
        else:
            running[cls].discard(rid)
    return problems


def run_with_context_returns(v: View) -> list[str]:
    if not v.stopped():
        return []
    returned = v.all("run", "returned")
    if len(returned) != 1:
        return [f"run_with_context returned {len(returned)} times"]
    r = returned[0]
    failing = [f"hook-{i}" for i, h in enumerate(v.sc.hooks) if h.fails]
    err = r.fields.get("error")
    if failing:
        if not err or failing[0] not in err:
            return [f"run_with_context returned {err!r}, expected the error of {failing[0]}"]
        return []
    if err:
        return [f"run_with_context raised {err}"]
    problems = []
    # it waits for the listener itself, not for the HTTPServerStoppedListening signal (nor does Go)
    for kind, name in (("signal", IFD), ("transport", "listener-closed"), ("audit", "backend-shutdown-done")):
        e = v.first(kind, name)
        if e is None or e.seq > r.seq:
            problems.append(f"run_with_context returned before {name}")
    return problems


def no_deadlock_or_panic(v: View) -> list[str]:
    problems = [f"the simulation ended with {type(v.run.error).__name__}: {v.run.error}"] if v.run.error is not None else []
    problems += [f"request {e.fields['rid']} panicked in the server: {e.fields['error']}" for e in v.all("conn", "panic")]
    if v.first("driver", "run-stuck") is not None:
        problems.append("run_with_context did not return within an hour of virtual time")
    return problems


def no_goroutine_left(v: View) -> list[str]:
    return [f"goroutines left blocked forever: {', '.join(v.run.leftover)}"] if v.run.leftover else []


INVARIANTS: tuple[Callable[[View], list[str]], ...] = (
    no_deadlock_or_panic,
    signals_fire_once_after_prerequisites,
    delay_is_respected,
    readyz_fails_from_shutdown_initiated,
    no_tracked_work_admitted_after_wait,
    answers_match_phase,
    tracked_requests_complete_before_drained,
    audit_complete_before_backend_shutdown,
    listener_stops_as_the_mode_says,
    watch_drain_within_grace_and_rate,
    in_flight_limits_respected,
    h2_streams_follow_goaway,
    run_with_context_returns,
    no_goroutine_left,
)


def check(run: Run, invariants: Any = INVARIANTS) -> list[Violation]:
    """Every violated invariant of ``run``, in :data:`INVARIANTS` order."""
    v = View(run)
    return [Violation(inv.__name__, msg) for inv in invariants for msg in inv(v)]

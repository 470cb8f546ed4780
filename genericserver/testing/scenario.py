"""Shutdown scenarios: what happens, Hypothesis strategies for them, and the driver that runs one (no Go twin).

A :class:`Scenario` is the configuration of a run (mode, shutdown delay, watch grace, hooks,
audit flush time, in-flight limits) and the requests clients send. Each request is anchored to
a moment: ``start``, or a lifecycle signal (it is sent when that signal fires, plus ``offset``
seconds), so "before, during and after each phase" is a matter of anchor and offset, and the
races at a phase boundary are left to the schedule.

:func:`run_scenario` runs one scenario under one schedule (a list of small integers for
:class:`~genericserver.testing.sim.Scripted`) on the simulation runtime: the real config, the
real handler chain and the real ``run_with_context``, served over the in-memory transport. It
returns a :class:`Run`: the event stream (``config.events``) and how the simulation ended.
The stream holds, besides what the server records itself (signals, hooks, audit shutdown,
listener stop):

=========  ==================================================================================
kind       names and fields
=========  ==================================================================================
client     ``send`` / ``answer`` (``rid``, ``type``, ``outcome``, ``status``, headers, ``phase``)
conn       ``sent`` / ``aborted`` / ``panic`` (from the transport; ``dispatched``
           and ``decided`` are the phases just before the app ran and when the status was set)
handler    ``start`` / ``end`` of the innermost test app (``rid``, ``audit_id``, ``verb``)
wg         ``add`` / ``add-refused`` / ``done`` / ``wait-start`` / ``wait-end`` (non-long-running)
watch-wg   the same for the watch wait group; ``wait-start`` has ``count``, ``qps``, ``grace``
audit      one event per audit stage (``audit_id``); ``backend-shutdown`` / ``-done`` around the flush
run        ``returned`` (``error``) when ``run_with_context`` returns; driver ``stop``, ``hook``
=========  ==================================================================================

A *phase* is the tuple of :data:`PHASE_FLAGS` that were set at one instant (signals, plus the
two wait groups' "wait began" and the listener being closed).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence
from urllib.parse import parse_qs

import genericserver.config  # noqa: F401  (imports every module with a module-level lock under the threads runtime)
from genericserver import request as reqctx, runtime as rt
from genericserver.apimachinery.waitgroup import AddAfterWaitError, RateLimitedSafeWaitGroup, SafeWaitGroup
from genericserver.audit.context import audit_id_from
from genericserver.audit.memory import MemoryBackend
from genericserver.config import new_config
from genericserver.context import context as gocontext
from genericserver.events import Event, EventStream
from genericserver.filters.with_retry_after import KUBE_APISERVER_USER_AGENT_PREFIX
from genericserver.secure_serving import SecureServingInfo
from genericserver.testing.choosers import Chooser, Scripted, deep_schedules, spell_out  # noqa: F401 - the last two re-exported
from genericserver.testing.memclient import MemoryClient
from genericserver.testing.quiet import without_disabled_auth_warnings
from genericserver.testing.sim import Simulation, SimulationError
from genericserver.testing.transport import REQUEST_ID_HEADER, MemoryListener, NoLock, memory_server_factory
from genericserver.testing.variants import Variant

KINDS = ("ordinary", "mutating", "watch", "long-running", "exempt", "loopback", "readyz")
EXEMPT_KINDS = frozenset({"exempt", "loopback", "readyz"})
LONG_RUNNING_KINDS = frozenset({"watch", "long-running"})
ANCHORS = (
    "start", "ShutdownInitiated", "AfterShutdownDelayDuration", "PreShutdownHooksStopped",
    "NotAcceptingNewRequest", "InFlightRequestsDrained", "HTTPServerStoppedListening",
)
PHASE_FLAGS = (
    "ShutdownInitiated", "AfterShutdownDelayDuration", "PreShutdownHooksStopped", "NotAcceptingNewRequest",
    "WaitBegan", "WatchWaitBegan", "InFlightRequestsDrained", "ListenerClosed", "HTTPServerStoppedListening",
)
LOOPBACK_USER_AGENT = KUBE_APISERVER_USER_AGENT_PREFIX + "v1.36.0 (linux/amd64) kubernetes/fuzz"
CLIENT_PATIENCE = 3600.0  # virtual seconds a client or the driver waits before calling it stuck


@dataclass(frozen=True)
class HookSpec:
    """A pre-shutdown hook: runs ``duration`` seconds, optionally makes a loopback request, may fail."""

    duration: float = 0.0
    loopback: bool = False
    fails: bool = False


@dataclass(frozen=True)
class RequestSpec:
    """One client request: sent ``offset`` seconds after ``anchor``; its handler takes ``duration``."""

    kind: str = "ordinary"
    anchor: str = "start"
    offset: float = 0.0
    duration: float = 0.0
    conn: str = "new"  # "new": a fresh connection; "reused": the keep-alive pool (primed by request "prime" at 0)


@dataclass(frozen=True)
class Scenario:
    """Everything a run depends on, besides the schedule. ``actions`` (stateful tests) replaces
    the default director script ``sleep(shutdown_at); stop``."""

    retry_after: bool = False
    shutdown_delay: float = 0.0
    watch_grace: float = 0.0
    hooks: tuple[HookSpec, ...] = ()
    requests: tuple[RequestSpec, ...] = ()
    audit_flush: float = 0.0
    max_in_flight: int = 0
    max_mutating_in_flight: int = 0
    request_timeout: float = 60.0
    shutdown_at: float = 1.0
    actions: tuple[tuple, ...] = ()
    http2: bool = False  # clients speak HTTP/2 (the in-memory model of h2transport)

    @property
    def mode(self) -> str:
        return "retry-after" if self.retry_after else "default"

    def director(self) -> tuple[tuple, ...]:
        return self.actions or (("sleep", self.shutdown_at), ("stop",))

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["actions"] = [[a[0], dataclasses.asdict(a[1])] if a[0] == "send" else list(a) for a in self.actions]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Scenario":
        d = dict(d)
        d["hooks"] = tuple(HookSpec(**h) for h in d.get("hooks", ()))
        d["requests"] = tuple(RequestSpec(**r) for r in d.get("requests", ()))
        d["actions"] = tuple(("send", RequestSpec(**a[1])) if a[0] == "send" else tuple(a) for a in d.get("actions", ()))
        return cls(**d)


# -- recorders: what the server does not record itself ---------------------------------------


class SimEventStream(EventStream):
    """The event stream for a simulated run, without its lock.

    Under the simulation only one goroutine runs at a time and ``record`` makes no runtime call
    inside its critical section, so nothing can interleave with it: the lock would add two
    scheduling decisions per event (a fifth of a run's cost) and protect nothing (see
    :func:`genericserver.testing.transport.new_lock`).
    """

    def __init__(self) -> None:
        super().__init__()
        self._lock = NoLock()


_current = threading.local()  # the request a connection goroutine is serving (wait-group events)


def current_rid() -> str:
    return getattr(_current, "rid", "")


class RecordingAudit(MemoryBackend):
    """The in-memory audit backend, recording each stage and the shutdown into the stream.

    It keeps no copies of the events: the checks need only the stage and the audit ID, and
    deep-copying each event took a seventh of a run.
    """

    def __init__(self, events: EventStream, flush: float = 0.0):
        super().__init__()
        self._stream, self.flush = events, flush

    def process_events(self, *evs: Any) -> bool:
        for e in evs:
            self._stream.record("audit", str(e.stage), audit_id=e.audit_id)
        return True

    def shutdown(self) -> None:
        self._stream.record("audit", "backend-shutdown")
        if self.flush:
            rt.sleep(self.flush)  # flushing buffered events takes this long
        super().shutdown()
        self._stream.record("audit", "backend-shutdown-done")


class _RecordingAdds:
    """Records each ``add`` (or its refusal) under ``_kind``, with the request it is for."""

    _kind = "wg"
    _stream: EventStream

    def add(self, delta: int) -> None:
        try:
            super().add(delta)  # type: ignore[misc]
        except AddAfterWaitError:
            self._stream.record(self._kind, "add-refused", rid=current_rid())
            raise
        self._stream.record(self._kind, "add" if delta > 0 else "done", rid=current_rid())


class RecordingWaitGroup(_RecordingAdds, SafeWaitGroup):
    """The non-long-running wait group, recording adds, dones and the wait."""

    def __init__(self, events: EventStream):
        super().__init__()
        self._stream = events

    def done(self) -> None:
        super().done()
        self._stream.record("wg", "done", rid=current_rid())

    def wait(self) -> None:
        self._stream.record("wg", "wait-start")
        super().wait()
        self._stream.record("wg", "wait-end")


class RecordingWatchWaitGroup(_RecordingAdds, RateLimitedSafeWaitGroup):
    """Records adds, each ``done`` (``limited``: it certainly met the rate limiter) and the wait."""

    _kind = "watch-wg"

    def __init__(self, events: EventStream):
        super().__init__()
        self._stream = events

    def done(self) -> None:
        limited = self._wait  # set: the wait began, so this done takes a token (it never unsets)
        super().done()
        self._stream.record("watch-wg", "done", rid=current_rid(), limited=limited)

    def wait(self, limiter_factory: Any) -> tuple[int, int, Optional[Exception]]:
        def factory(count: int) -> Any:
            limiter, ctx, cancel = limiter_factory(count)
            # called under the group's lock, just before the wait begins: no done() in between
            self._stream.record("watch-wg", "wait-start", count=count, qps=limiter.limit(), grace=ctx.deadline() - rt.now())
            return limiter, ctx, cancel

        before, after, err = super().wait(factory if limiter_factory is not None else None)
        self._stream.record("watch-wg", "wait-end", before=before, after=after, error=None if err is None else str(err))
        return before, after, err


def recording_app(events: EventStream) -> Callable:
    """The innermost handler: records start and end; ``?d=`` seconds; watches end at shutdown."""

    def app(environ: dict, start_response: Callable) -> Any:
        rid = environ.get("HTTP_X_SCENARIO_REQUEST", "")
        d = float(parse_qs(environ.get("QUERY_STRING", "")).get("d", ["0"])[0])
        info = reqctx.request_info_from(environ)
        watch = info is not None and info.verb == "watch"
        events.record("handler", "start", rid=rid, audit_id=audit_id_from(environ)[0], verb=info.verb if info else "")
        ended = [False]

        def end() -> None:
            if not ended[0]:
                ended[0] = True
                events.record("handler", "end", rid=rid)

        try:
            if watch:
                start_response("200 OK", [("Content-Type", "application/json")])
                signal = reqctx.server_shutdown_signal_from(environ)
                return _Body(_watch_chunks(signal, d), end)
            rt.sleep(d / 2)
            start_response("200 OK", [("Content-Type", "text/plain")])
            return _Body(_chunks(d / 2), end)
        except BaseException:
            end()
            raise

    return app


def _chunks(gap: float):  # type: ignore[no-untyped-def]
    yield b"first\n"
    rt.sleep(gap)  # the body is still being sent: a slot released now is released too early
    yield b"last\n"


def _watch_chunks(signal: Any, d: float):  # type: ignore[no-untyped-def]
    yield b'{"type":"ADDED"}\n'
    cases = [rt.after(d, name="watch-timeout")]
    if signal is not None:
        cases.insert(0, signal.shutting_down())  # the watch loop ends when the server shuts down
    rt.select(*cases)
    yield b'{"type":"BOOKMARK"}\n'


class _Body:
    def __init__(self, chunks: Any, on_close: Callable[[], None]):
        self._chunks, self._on_close = chunks, on_close

    def __iter__(self) -> Any:
        return self._chunks

    def close(self) -> None:
        try:
            self._chunks.close()
        finally:
            self._on_close()


class StepChooser(Chooser):
    """For stateful tests: ``0`` unless a ``step(k)`` action queued ``k`` for the next decision."""

    def __init__(self) -> None:
        self.pending: deque[int] = deque()

    def choose(self, runnable: Sequence[Any], current: Any) -> int:
        return self.pending.popleft() % len(runnable) if self.pending else 0


# -- the run -----------------------------------------------------------------------------------


@dataclass
class Run:
    """What one run produced; ``fingerprint()`` is equal for two runs that went the same way."""

    scenario: Scenario
    schedule: list[int]
    variant: str
    events: list[Event] = field(default_factory=list)
    error: Optional[BaseException] = None  # how the simulation ended, if not cleanly
    leftover: list[str] = field(default_factory=list)
    choices: list[int] = field(default_factory=list)
    decisions: int = 0
    trace: list[tuple] = field(default_factory=list, repr=False)  # Simulation.trace

    def fingerprint(self) -> tuple:
        evs = tuple((e.seq, e.at, e.kind, e.name, tuple(sorted((k, repr(v)) for k, v in e.fields.items()))) for e in self.events)
        return evs, repr(self.error), tuple(self.leftover), tuple(self.choices)

    def of(self, kind: str, name: Optional[str] = None) -> list[Event]:
        return [e for e in self.events if e.kind == kind and (name is None or e.name == name)]


def request_target(kind: str, rid: str, duration: float) -> tuple[str, str, dict[str, str]]:
    """Method, target and headers of a request of ``kind``."""
    d = f"d={duration:g}"
    headers = {REQUEST_ID_HEADER: rid}
    if kind == "loopback":
        headers["User-Agent"] = LOOPBACK_USER_AGENT
    targets = {
        "ordinary": ("GET", f"/api/v1/namespaces/default/pods/p{rid}?{d}"),
        "mutating": ("POST", f"/api/v1/namespaces/default/configmaps?{d}"),
        "watch": ("GET", f"/api/v1/namespaces/default/pods?watch=true&{d}"),
        "long-running": ("GET", f"/debug/pprof/profile?{d}"),
        "exempt": ("GET", f"/metrics/fuzz?{d}"),  # exempt by its /metrics prefix, served by the test app
        "loopback": ("GET", f"/api/v1/namespaces/default/pods/p{rid}?{d}"),
        "readyz": ("GET", "/readyz"),
    }
    method, target = targets[kind]
    return method, target, headers


def classify(result: Any) -> str:
    """A short name for what the client got."""
    if result.error is not None:
        return {"ConnectionRefused": "refused", "ConnectionDropped": "dropped"}.get(type(result.error).__name__, "client-error")
    code, retry = result.status, result.header("Retry-After")
    if code == 429:
        return "retry-after-429" if retry == "5" else "too-many-429"
    if code == 503 and b"apiserver is shutting down" in result.body:
        return "shutting-down-503"
    return {200: "ok", 500: "error-500", 504: "timeout-504"}.get(code, f"status-{code}")


class _Driver:
    """Builds the server inside the simulation and plays the scenario against it."""

    def __init__(self, scenario: Scenario, variant: Variant, chooser: Chooser):
        self.sc, self.variant, self.chooser = scenario, variant, chooser
        self.events: Optional[EventStream] = None
        self.collected: list[Event] = []  # the stream, read after the run without its lock

    def probe(self) -> tuple[str, ...]:
        flags = self._flags
        return tuple(name for name, is_set in flags if is_set())

    def main(self) -> None:
        sc = self.sc
        events = self.events = SimEventStream()
        events.subscribe(self.collected.append)
        c = new_config()
        c.events = events
        c.shutdown_delay_duration = sc.shutdown_delay
        c.shutdown_send_retry_after = sc.retry_after
        c.shutdown_watch_termination_grace_period = sc.watch_grace
        c.max_requests_in_flight = sc.max_in_flight
        c.max_mutating_requests_in_flight = sc.max_mutating_in_flight
        c.request_timeout = sc.request_timeout
        wg, wwg = RecordingWaitGroup(events), RecordingWatchWaitGroup(events)
        c.non_long_running_request_wait_group, c.watch_request_wait_group = wg, wwg
        signals = c.lifecycle_signals
        audit = RecordingAudit(events, sc.audit_flush)
        c.audit_backend = c.audit_policy_rule_evaluator = audit
        self.listener = listener = MemoryListener(probe=self.probe, events=events, locking=False)
        self._flags = [(s, signals.by_name(s).signaled().is_set) for s in PHASE_FLAGS[:4]] + [
            ("WaitBegan", lambda: wg._wait), ("WatchWaitBegan", lambda: wwg._wait),
        ] + [
            ("InFlightRequestsDrained", signals.in_flight_requests_drained.signaled().is_set),
            ("ListenerClosed", lambda: listener.closed),
            ("HTTPServerStoppedListening", signals.http_server_stopped_listening.signaled().is_set),
        ]
        factory = memory_server_factory(events, self.probe, locking=False)
        c.secure_serving = SecureServingInfo(listener=listener, server_factory=lambda app, **kw: factory(_tagging(app), **kw))
        s = c.complete().new("fuzz")
        app = recording_app(events)
        mux = s.handler.non_go_restful_mux
        mux.handle_prefix("/api/", app)
        mux.handle_prefix("/debug/pprof/", app)
        mux.handle("/metrics/fuzz", app)  # beside the server's own /metrics, not instead of it
        for i, hook in enumerate(sc.hooks):
            s.add_pre_shutdown_hook(f"hook-{i}", self._hook(i, hook))
        prepared = s.prepare_run()
        self.signals = signals
        self.pool = MemoryClient(listener, locking=False, http2=sc.http2)
        ctx, cancel = gocontext.with_cancel(gocontext.background())
        run_done = rt.event("run-returned")

        def run() -> None:
            err = None
            try:
                prepared.run_with_context(ctx)
            except Exception as exc:
                err = exc
            events.record("run", "returned", error=None if err is None else f"{type(err).__name__}: {err}")
            run_done.set()

        rt.go(run, name="run-with-context")
        if any(r.conn == "reused" for r in sc.requests) or any(a[0] == "send" and a[1].conn == "reused" for a in sc.actions):
            self.request("prime", "ordinary", 0.0, "reused", self.pool)  # leaves a kept-alive connection
        clients = [self._client(str(i), r) for i, r in enumerate(sc.requests)]
        sent = 0
        for action in (*sc.director(), ("stop",)):
            op = action[0]
            if op == "sleep":
                rt.sleep(action[1])
            elif op == "stop" and not ctx.done().is_set():
                events.record("driver", "stop")
                cancel()
            elif op == "send":
                clients.append(self._client(f"s{sent}", action[1]))
                sent += 1
            elif op == "step":
                if isinstance(self.chooser, StepChooser):
                    self.chooser.pending.append(action[1])
                rt.sleep(0)  # a decision point in the same place whether replayed or not
        if not run_done.wait(CLIENT_PATIENCE):
            events.record("driver", "run-stuck")
        for h in clients:
            h.join(CLIENT_PATIENCE)
        self.pool.close_idle_connections()

    def _client(self, rid: str, spec: RequestSpec) -> rt.Goroutine:
        def send() -> None:
            if spec.anchor != "start" and not self.signals.by_name(spec.anchor).signaled().wait(CLIENT_PATIENCE):
                return
            if spec.offset:
                rt.sleep(spec.offset)
            client = self.pool if spec.conn == "reused" else self._new_connection_client()
            self.request(rid, spec.kind, spec.duration, spec.conn, client)

        return rt.go(send, name=f"client-{rid}")

    def _new_connection_client(self, **kw: Any) -> MemoryClient:
        return MemoryClient(self.listener, new_connection=True, locking=False, http2=self.sc.http2, **kw)

    def request(self, rid: str, kind: str, duration: float, conn: str, client: MemoryClient) -> Any:
        method, target, headers = request_target(kind, rid, duration)
        events = self.events
        assert events is not None
        events.record("client", "send", rid=rid, type=kind, conn=conn, phase=self.probe())
        result = client.do(method, target, headers=headers, timeout=CLIENT_PATIENCE)
        phase = getattr(result.error, "phase", None) or self.probe()
        events.record(
            "client", "answer", rid=rid, type=kind, outcome=classify(result), status=result.status,
            retry_after=result.header("Retry-After"), connection=result.header("Connection"),
            audit_id=result.header("Audit-ID"), body=result.body[:1000].decode("utf-8", "replace"),
            reused=result.reused, error=None if result.error is None else str(result.error), phase=phase,
            proto="HTTP/2.0" if self.sc.http2 else "HTTP/1.1",
        )
        return result

    def _hook(self, i: int, spec: HookSpec) -> Callable[[], None]:
        def hook() -> None:
            assert self.events is not None
            self.events.record("hook", f"hook-{i}", phase="start")
            try:
                if spec.duration:
                    rt.sleep(spec.duration)
                if spec.loopback:
                    loopback = self._new_connection_client(user_agent=LOOPBACK_USER_AGENT)
                    self.request(f"h{i}", "loopback", 0.0, "new", loopback)
                if spec.fails:
                    raise RuntimeError(f"hook-{i} failed on purpose")
            finally:
                self.events.record("hook", f"hook-{i}", phase="end")

        return hook


def _tagging(app: Callable) -> Callable:
    """Note which request this connection goroutine serves, for the wait-group events."""

    def tagged(environ: dict, start_response: Callable) -> Any:
        _current.rid = environ.get("HTTP_X_SCENARIO_REQUEST", "")
        return app(environ, start_response)

    return tagged


def run_scenario(scenario: Scenario, schedule: Sequence[int] = (), variant: Optional[Variant] = None, *,
                 chooser: Optional[Chooser] = None, watchdog: Optional[float] = 10.0) -> Run:
    """Run ``scenario`` under ``schedule`` (or ``chooser``); never raises for what the run did."""
    variant = variant if variant is not None else Variant()
    chooser = chooser if chooser is not None else Scripted(schedule)
    driver = _Driver(scenario, variant, chooser)
    sim = Simulation(chooser=chooser, watchdog=watchdog)
    run = Run(scenario, list(schedule), variant.name)
    try:
        with variant.switched_in(), without_disabled_auth_warnings():
            sim.run(driver.main)
    except SimulationError as err:
        run.error = err
    except Exception as err:  # the driver itself failed: report it like a panic
        run.error = err
    run.events = _stable_audit_ids(sorted(driver.collected, key=lambda e: e.seq))
    run.leftover, run.choices, run.decisions, run.trace = sim.leftover(), list(sim.choices), len(sim.trace), sim.trace
    return run


def _stable_audit_ids(events: list[Event]) -> list[Event]:
    """Audit IDs are random UUIDs; name them ``audit-1``, ``audit-2``... by first appearance, so
    that two runs of the same schedule produce equal streams."""
    names: dict[str, str] = {}
    out = []
    for e in events:
        aid = e.fields.get("audit_id")
        if aid:
            fields = dict(e.fields)
            fields["audit_id"] = names.setdefault(aid, f"audit-{len(names) + 1}")
            e = Event(e.seq, e.at, e.kind, e.name, fields)
        out.append(e)
    return out


# -- Hypothesis strategies (imported lazily: hypothesis is a test dependency) -------------------

DELAYS = (0.0, 0.5, 70.0)
OFFSETS = (0.0, 0.001, 0.5, 2.0, 69.9, 75.0)
DURATIONS = (0.0, 0.2, 3.0, 130.0)


def scenarios(max_requests: int = 6, max_hooks: int = 2, kinds: Sequence[str] = KINDS,
              flags: Sequence[tuple[str, tuple]] = ()) -> Any:
    """Swarm-style scenarios: each example first enables a random subset of request kinds,
    anchors and connection types, then draws every request from those, so that some examples
    pile up on one kind of request and others mix them. Everything shrinks towards the
    simplest value (default mode, no delay, ordinary requests at the start). ``kinds`` and
    ``flags`` narrow the draw (a lab's family, :class:`genericserver.testing.hunt.Family`):
    requests of those kinds only, and each flag named, ``("watch_grace", (2.0,))``, drawn from
    its own values (shrinking towards the first)."""
    from hypothesis import strategies as st

    # Every strategy is built once, here: a request is drawn as positions in the example's
    # subsets (position i is the subset's i-th, wrapping round, so it shrinks towards the first).
    # Building them per example, from the subsets, cost twice the run it fed.
    subset = lambda values: st.lists(st.sampled_from(values), min_size=1, unique=True)  # noqa: E731
    kinds_s, anchors_s, conns_s = subset(tuple(kinds)), subset(ANCHORS), subset(("new", "reused"))
    request = st.tuples(st.integers(0, len(KINDS) - 1), st.integers(0, len(ANCHORS) - 1), st.sampled_from(OFFSETS),
                        st.sampled_from(DURATIONS), st.integers(0, 1))
    requests = st.lists(request, max_size=max_requests)
    hooks = st.lists(st.builds(HookSpec, duration=st.sampled_from((0.0, 0.5, 5.0)), loopback=st.booleans(), fails=st.booleans()),
                     max_size=max_hooks)
    head_flags = dict(retry_after=st.booleans(), shutdown_delay=st.sampled_from(DELAYS), watch_grace=st.sampled_from((0.0, 2.0)))
    rest = dict(audit_flush=st.sampled_from((0.0, 0.1, 3.0)), max_in_flight=st.sampled_from((0, 2, 1)),
                max_mutating_in_flight=st.sampled_from((0, 1)), http2=st.booleans())
    for name, values in flags:
        (head_flags if name in head_flags else rest)[name] = st.sampled_from(values)

    @st.composite
    def build(draw: Any) -> Scenario:
        kinds, anchors, conns = draw(kinds_s), draw(anchors_s), draw(conns_s)
        head = {name: draw(s) for name, s in head_flags.items()}
        drawn_hooks = tuple(draw(hooks))
        drawn = tuple(RequestSpec(kinds[k % len(kinds)], anchors[a % len(anchors)], offset, duration, conns[c % len(conns)])
                      for k, a, offset, duration, c in draw(requests))
        return Scenario(**head, hooks=drawn_hooks, requests=drawn, **{name: draw(s) for name, s in rest.items()})

    return build()

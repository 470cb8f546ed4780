"""The lifecycle corpus's scenarios (tests/parity/lifecycle.py plays them; README.md in this folder).

Each runs one server from start to exit. The phases are found by the server's own lines: the signal,
`ShutdownInitiated`, `NotAcceptingNewRequest`, `InFlightRequestsDrained`, "Stopped listening". A
request's tag says where it is sent (`before`, `delay`, `draining`, `after`).
"""

from __future__ import annotations

from parity.lifecycle import Scenario, event, exits, get, join, line, rest, settle, signal, stall, start

STOPPED = r"Stopped listening on"
# a handler that must not answer early sends nothing: a request sent this long before the signal is in flight
IN_FLIGHT = 0.5
# Go logs "Stopped listening" as Serve returns; Shutdown closes the idle connections a moment later
CLOSED = 0.3
# a stalled POST reaches its handler, which returns, and the server starts reading the rest of the
# body to write the header: no line says so, and a signal before it would turn keep-alives off (the
# header would go out at once, with Connection: close), so this is generous for a loaded machine
REACHED = 1.0
# past the retry-after mode's 2 s shutdown timeout, counted from InFlightRequestsDrained (which comes at once)
PAST_SHUTDOWN_TIMEOUT = 3.0

SCENARIOS = [
    Scenario("default-no-delay", "the default mode, no delay: an idle keep-alive connection and a new "
             "connection after the listener closed", ["--shutdown-delay-duration=0s"], [
                 get("before", "/echo?message=a", conn="A"),
                 signal(),
                 line(STOPPED), settle(CLOSED, "the idle connections close after the line"),
                 get("after-new", "/echo?message=b"),
                 get("after-idle", "/echo?message=c", conn="A"),
                 exits(),
             ], group="default"),
    Scenario("default-delay", "the default mode with a delay: /readyz red at once, the rest served "
             "through the delay, then refused", ["--shutdown-delay-duration=1s"], [
                 get("before-readyz", "/readyz"),
                 get("before", "/echo?message=a", conn="A"),
                 signal(),
                 event("ShutdownInitiated"),
                 get("delay-readyz", "/readyz"),
                 get("delay-readyz-verbose", "/readyz?verbose"),
                 get("delay-healthz", "/healthz"),
                 get("delay-livez", "/livez"),
                 get("delay-new", "/echo?message=b"),
                 get("delay-idle", "/echo?message=c", conn="A"),
                 line(STOPPED), settle(CLOSED, "the idle connections close after the line"),
                 get("after-new", "/echo?message=d"),
                 get("after-idle", "/echo?message=e", conn="A"),
                 exits(),
             ], group="default"),
    Scenario("default-in-flight", "a request in flight finishes; the listener closes while it runs",
             ["--shutdown-delay-duration=0s"], [
                 start("slow", "/slow?seconds=2&flush=1"),
                 signal(),
                 line(STOPPED),
                 get("draining-new", "/echo?message=b"),
                 join("slow"),
                 exits(),
             ], group="default"),
    Scenario("default-delay-in-flight", "a request in flight through the delay and the drain",
             ["--shutdown-delay-duration=1s"], [
                 start("slow", "/slow?seconds=3&flush=1"),
                 signal(),
                 event("ShutdownInitiated"),
                 get("delay-new", "/echo?message=a"),
                 line(STOPPED),
                 get("draining-new", "/echo?message=b"),
                 join("slow"),
                 exits(),
             ], group="default"),
    Scenario("retry-after", "--shutdown-send-retry-after: 429 with Retry-After while in-flight requests "
             "drain, exempt paths served, refused once drained",
             ["--shutdown-delay-duration=1s", "--shutdown-send-retry-after=true"], [
                 start("slow", "/slow?seconds=3&flush=1"),
                 signal(),
                 event("NotAcceptingNewRequest"),
                 get("draining-new", "/echo?message=a"),
                 get("draining-readyz", "/readyz"),
                 get("draining-healthz", "/healthz"),
                 get("draining-livez", "/livez"),
                 # the metric families differ: kube's registry holds many more (the status is compared)
                 get("draining-metrics", "/metrics", user="admin", body=False),
                 join("slow"),
                 line(STOPPED), settle(CLOSED, "the idle connections close after the line"),
                 get("after-new", "/echo?message=b"),
                 exits(),
             ], group="retry_after"),
    Scenario("retry-after-keep-alive", "--shutdown-send-retry-after on a kept-alive connection: the 429 "
             "closes it", ["--shutdown-delay-duration=0s", "--shutdown-send-retry-after=true"], [
                 get("before", "/echo?message=a", conn="A"),
                 start("slow", "/slow?seconds=2&flush=1"),
                 signal(),
                 event("NotAcceptingNewRequest"),
                 get("draining-kept", "/echo?message=b", conn="A"),
                 get("draining-kept-again", "/echo?message=c", conn="A"),
                 join("slow"),
                 exits(),
             ], group="retry_after"),
    Scenario("retry-after-no-requests", "--shutdown-send-retry-after with nothing in flight",
             ["--shutdown-delay-duration=0s", "--shutdown-send-retry-after=true"], [
                 get("before", "/echo?message=a"),
                 signal(),
                 line(STOPPED), settle(CLOSED, "the idle connections close after the line"),
                 get("after-new", "/echo?message=b"),
                 exits(),
             ], group="retry_after"),
    Scenario("sigint", "SIGINT shuts down as SIGTERM does", ["--shutdown-delay-duration=0s"], [
                 get("before", "/echo?message=a"),
                 signal("INT"),
                 exits(),
             ], group="default"),
    Scenario("second-signal", "a second signal during the delay exits at once, with code 1",
             ["--shutdown-delay-duration=5s"], [
                 signal(),
                 event("ShutdownInitiated"),
                 get("delay-new", "/echo?message=a"),
                 signal(),
                 exits(),
             ], group="default"),
    Scenario("hook-ok", "a pre-shutdown hook that returns at once",
             ["--shutdown-delay-duration=0s", "--sample-pre-shutdown-hook=ok"], [
                 signal(),
                 exits(),
             ], group="hooks"),
    Scenario("hook-fail", "a pre-shutdown hook that fails: its error is logged and the shutdown goes on",
             ["--shutdown-delay-duration=0s", "--sample-pre-shutdown-hook=fail"], [
                 signal(),
                 exits(),
             ], group="hooks"),
    Scenario("hook-fail-retry-after", "a failing hook in the retry-after mode: RunWithContext returns its "
             "error at once, the request in flight goes with the process",
             ["--shutdown-delay-duration=0s", "--shutdown-send-retry-after=true", "--sample-pre-shutdown-hook=fail"], [
                 start("slow", "/slow?seconds=2&flush=1"),
                 signal(),
                 exits(),
                 join("slow"),
             ], group="retry_after"),
    Scenario("hook-panic", "a pre-shutdown hook that panics: HandleCrash panics again, the process dies",
             ["--shutdown-delay-duration=0s", "--sample-pre-shutdown-hook=panic"], [
                 signal(),
                 exits(),
             ], group="hooks"),
    Scenario("hook-sleep", "a hook slower than the delay holds NotAcceptingNewRequest back",
             ["--shutdown-delay-duration=1s", "--sample-pre-shutdown-hook=sleep:2s"], [
                 signal(),
                 event("AfterShutdownDelayDuration"),
                 get("hook-running", "/echo?message=a"),
                 exits(),
             ], group="hooks"),
    Scenario("max-in-flight", "--max-requests-inflight=1: a second read is refused 429; system:masters "
             "is exempt", ["--shutdown-delay-duration=0s", "--max-requests-inflight=1"], [
                 start("slow", "/slow?seconds=2&flush=1"),
                 get("limited", "/echo?message=a"),
                 get("limited-master", "/echo?message=b", user="admin"),
                 signal(),
                 join("slow"),
                 exits(),
             ], group="limits"),
    Scenario("max-mutating-in-flight", "--max-mutating-requests-inflight=1: a second write is refused",
             ["--shutdown-delay-duration=0s", "--max-mutating-requests-inflight=1"], [
                 start("slow", "/slow?seconds=2&flush=1", method="POST"),
                 get("limited-write", "/echo?message=a", method="POST"),
                 get("read", "/echo?message=b"),
                 signal(),
                 join("slow"),
                 exits(),
             ], group="limits"),
    Scenario("request-timeout", "--request-timeout=1s: a slower request is answered 504",
             ["--shutdown-delay-duration=0s", "--request-timeout=1s"], [
                 get("timed-out", "/slow?seconds=3"),
                 signal(),
                 exits(),
             ], racy="the handler sees its context end when the timeout filter does; if it writes its "
                "503 first, the filter finds the response begun and aborts it (the client sees a reset), "
                "else the filter's 504 goes out", group="limits"),
    Scenario("request-timeout-in-flight", "the timeout ends a request in flight during the drain",
             ["--shutdown-delay-duration=0s", "--request-timeout=2s"], [
                 start("slow", "/slow?seconds=5", head=False),
                 settle(IN_FLIGHT, "the request reaches its handler, which must not answer before the timeout"),
                 signal(),
                 line(STOPPED),
                 join("slow"),
                 exits(),
             ], racy="the handler sees its context end when the timeout filter does, as in request-timeout: "
                "the filter's 504 or, if the handler wrote its 503 first, an aborted response (a reset)", group="limits"),
    Scenario("request-timeout-head-sent", "the request timeout ends a request whose head went out, during the "
             "drain: the timeout filter aborts the connection without a panic line, and the handler's end is "
             "post-timeout activity", ["--shutdown-delay-duration=0s", "--request-timeout=2s"], [
                 start("slow", "/slow?seconds=5&flush=1"),
                 # Shutdown's own timeout (2 s from the signal) then ends a second after the abort: Go
                 # polls its connections at most 500 ms apart, this server wakes on their change
                 settle(1.0, "the request's deadline comes a second into the drain"),
                 signal(),
                 line(STOPPED),
                 join("slow"),
                 exits(),
             ], group="limits"),
    Scenario("watch-grace", "--shutdown-watch-termination-grace-period=2s: a watch in flight ends "
             "with the shutdown signal, drained before the listener's end",
             ["--shutdown-delay-duration=0s", "--shutdown-watch-termination-grace-period=2s"], [
                 start("watch", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=20"),
                 signal(),
                 join("watch"),
                 exits(),
             ], group="limits"),
    Scenario("watch-grace-retry-after", "the watch grace in the retry-after mode: a new watch gets 429",
             ["--shutdown-delay-duration=0s", "--shutdown-send-retry-after=true",
              "--shutdown-watch-termination-grace-period=2s"], [
                 start("watch", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=20"),
                 start("slow", "/slow?seconds=2&flush=1"),
                 signal(),
                 event("NotAcceptingNewRequest"),
                 get("draining-watch", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=20"),
                 join("watch"),
                 join("slow"),
                 exits(),
             ], group="retry_after"),
    Scenario("watch-no-grace", "no watch grace: the shutdown does not wait for a watch; the server's "
             "Shutdown gives up on it at its timeout", ["--shutdown-delay-duration=0s", "--request-timeout=2s"], [
                 start("watch", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=20"),
                 signal(),
                 join("watch"),
                 exits(),
             ], group="limits"),
    Scenario("anonymous", "an anonymous request is served, and refused when --anonymous-auth=false",
             ["--shutdown-delay-duration=0s", "--anonymous-auth=false"], [
                 get("anonymous", "/echo?message=a", user="anonymous"),
                 get("anonymous-healthz", "/healthz", user="anonymous"),
                 get("reader", "/echo?message=b"),
                 signal(),
                 exits(),
             ], group="hooks"),
    Scenario("audit", "the audit log: every request's events, flushed after the drain",
             ["--shutdown-delay-duration=0s", "--audit-log-path={audit}"], [
                 get("before", "/echo?message=a"),
                 start("slow", "/slow?seconds=1&flush=1"),
                 signal(),
                 join("slow"),
                 exits(),
             ], go_flags=["--audit-policy-file={policy}"], audit=True, group="hooks"),
]

# a POST to /echo whose body stalls: the handler leaves the body unread and returns, and net/http
# reads the rest before it writes the header (finishRequest), so the client holds its connection
# and not the wait group
SCENARIOS += [
    Scenario("stalled-body", "a POST whose body stalls: the drain ends at once, the HTTP server's Shutdown "
             "gives up on the connection at its timeout (the request timeout), the process exits 0 and the "
             "client is left unanswered", ["--shutdown-delay-duration=0s", "--request-timeout=2s"], [
                 stall("stalled", "/echo?message=a"),
                 settle(REACHED, "the handler returns and the header waits for the body (a signal first would turn keep-alives off)"),
                 signal(),
                 event("InFlightRequestsDrained"),
                 exits(),
                 join("stalled"),
             ], group="stalled"),
    Scenario("stalled-body-retry-after", "a POST whose body stalls, in the retry-after mode: drained at once, "
             "the listener closes, Shutdown gives up after 2 s",
             ["--shutdown-delay-duration=0s", "--shutdown-send-retry-after=true"], [
                 stall("stalled", "/echo?message=a"),
                 settle(REACHED, "the handler returns and the header waits for the body (a signal first would turn keep-alives off)"),
                 signal(),
                 event("InFlightRequestsDrained"),
                 line(STOPPED),
                 get("after-new", "/echo?message=b"),
                 exits(),
                 join("stalled"),
             ], group="stalled"),
    Scenario("late-body-retry-after", "the rest of the body comes after the retry-after mode's 2 s: the "
             "server is gone, the client unanswered",
             ["--shutdown-delay-duration=0s", "--shutdown-send-retry-after=true"], [
                 stall("late", "/echo?message=a"),
                 settle(REACHED, "the handler returns and the header waits for the body (a signal first would turn keep-alives off)"),
                 signal(),
                 event("InFlightRequestsDrained"),
                 settle(PAST_SHUTDOWN_TIMEOUT, "past the shutdown timeout: there is no line for a server that holds on"),
                 rest("late"),
                 exits(),
                 join("late"),
             ], group="stalled"),
    Scenario("body-in-time-retry-after", "the rest of the body comes within the retry-after mode's 2 s: "
             "answered, with Connection: close, and the server exits as the connection closes",
             ["--shutdown-delay-duration=0s", "--shutdown-send-retry-after=true"], [
                 stall("in-time", "/echo?message=a"),
                 settle(REACHED, "the handler returns and the header waits for the body (a signal first would turn keep-alives off)"),
                 signal(),
                 event("InFlightRequestsDrained"),
                 line(STOPPED),  # Shutdown has begun: keep-alives are off
                 rest("in-time"),
                 join("in-time"),
                 exits(),
             ], group="stalled"),
]

GROUPS = ("default", "retry_after", "hooks", "limits", "stalled")
BY_NAME = {s.name: s for s in SCENARIOS}


def named(group: str) -> list[str]:
    """The scenarios tests/test_parity_lifecycle_<group>.py replays, in the corpus's order."""
    return [s.name for s in SCENARIOS if s.group == group]


assert len(BY_NAME) == len(SCENARIOS)
assert all(s.group in GROUPS for s in SCENARIOS)

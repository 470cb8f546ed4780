"""Which `[graceful-termination]` lines Go's code orders, and which only its scheduler does.

`RunWithContext` (k8s.io/apiserver v0.36.0 pkg/server/genericapiserver.go L536-L747) and `RunServer`
(secure_serving.go L196-L265) log from eight goroutines. Two lines are ordered by the code only when a
chain of program order and channel closes leads from one to the other: a goroutine's steps run in
order, and a step after `<-ch` runs after `close(ch)`. Everything else is a race that Go's scheduler
happens to decide the same way most times: the recorded runs show, for instance, ShutdownInitiated
before "pre-shutdown hooks completed" every time, yet both goroutines are woken by the same close of
stopCh (L574 and L718), and Go logs each lifecycle signal's line just *after* the `Signal()` that
wakes its waiters (L577, L610, L703, L721), so a waiter may log first.

`GOROUTINES` writes the code down as steps (`wait X`, `signal X`, `log LINE`); `required_pairs` gives
the pairs the replay holds our server to. `tests/test_parity_lifecycle_model.py` checks this model
against the recordings: every pair it requires held in every Go run.
"""

from __future__ import annotations

from typing import Iterable

G = "[graceful-termination] "
WAITING = G + "waiting for shutdown to be initiated"
RETRY_AFTER_TIMEOUT = G + "using HTTP Server shutdown timeout"
SHUTDOWN_INITIATED = G + "shutdown event name=ShutdownInitiated"
AFTER_DELAY = G + "shutdown event name=AfterShutdownDelayDuration"
HOOKS_COMPLETED = G + "pre-shutdown hooks completed name=PreShutdownHooksStopped"
NOT_ACCEPTING = G + "shutdown event name=NotAcceptingNewRequest"
NON_LR_DRAINED = G + "in-flight non long-running request(s) have drained"
NO_WATCH_WAIT = G + "not going to wait for active watch request(s) to drain"
WATCHES_DRAINED = G + "active watch request(s) have drained"
DRAINED = G + "shutdown event name=InFlightRequestsDrained"
STOPPED_LISTENING = G + "shutdown event name=HTTPServerStoppedListening"
AUDIT = G + "audit backend shutdown completed"
EXITING = G + "apiserver is exiting"
# what RunWithContext's own goroutine logs after the pre-shutdown hooks ran, only on its way to a
# clean return: after a hook's error (returned at once) or panic, Go never logs these
MAIN_AFTER_HOOKS = (AUDIT, EXITING)


def goroutines(retry_after: bool) -> dict[str, list[tuple[str, str]]]:
    """RunWithContext's goroutines as steps; `retry_after` picks what stops the HTTP server."""
    return {
        # the test's driver: it sends the signal once the server says it waits for one
        "driver": [("wait", "log:" + WAITING), ("signal", "stop")],
        "main": [("log", RETRY_AFTER_TIMEOUT), ("log", WAITING), ("wait", "stop"),
                 ("signal", "PreShutdownHooksStopped"), ("log", HOOKS_COMPLETED),
                 ("wait", "InFlightRequestsDrained"), ("log", AUDIT),
                 ("wait", "listenerStopped"), ("wait", "serverShutdown"), ("log", EXITING)],
        # L571-L580: the defers run last in, first out: the line, then the signal
        "delayed-stop": [("wait", "stop"), ("signal", "ShutdownInitiated"), ("log", SHUTDOWN_INITIATED),
                         ("log", AFTER_DELAY), ("signal", "AfterShutdownDelayDuration")],
        "stop-http-server": [("wait", "InFlightRequestsDrained" if retry_after else "NotAcceptingNewRequest"),
                             ("signal", "stopHTTPServer")],
        # RunServer: Serve returns once Shutdown closed the listener
        "serve": [("wait", "stopHTTPServer"), ("log", "Stopped listening"), ("signal", "listenerStopped")],
        "shutdown": [("wait", "stopHTTPServer"), ("signal", "serverShutdown")],
        "listener-stopped": [("wait", "listenerStopped"), ("signal", "HTTPServerStoppedListening"),
                             ("log", STOPPED_LISTENING)],
        "not-accepting": [("wait", "AfterShutdownDelayDuration"), ("wait", "PreShutdownHooksStopped"),
                          ("signal", "NotAcceptingNewRequest"), ("log", NOT_ACCEPTING)],
        "drain-non-long-running": [("wait", "NotAcceptingNewRequest"), ("log", NON_LR_DRAINED),
                                   ("signal", "nonLongRunningDrained")],
        "drain-watches": [("wait", "NotAcceptingNewRequest"), ("log", NO_WATCH_WAIT), ("log", WATCHES_DRAINED),
                          ("signal", "watchesDrained")],
        "drained": [("wait", "nonLongRunningDrained"), ("wait", "watchesDrained"),
                    ("signal", "InFlightRequestsDrained"), ("log", DRAINED)],
    }


def _nodes(model: dict[str, list[tuple[str, str]]]) -> dict[tuple[str, int], set[tuple[str, int]]]:
    """Each step's direct successors: the next step of its goroutine, and for a signal every wait on it."""
    succ: dict[tuple[str, int], set[tuple[str, int]]] = {}
    waits: dict[str, list[tuple[str, int]]] = {}
    for g, steps in model.items():
        for i, (kind, what) in enumerate(steps):
            succ[(g, i)] = {(g, i + 1)} if i + 1 < len(steps) else set()
            if kind == "wait":
                waits.setdefault(what, []).append((g, i))
    for g, steps in model.items():
        for i, (kind, what) in enumerate(steps):
            if kind == "signal":
                succ[(g, i)] |= set(waits.get(what, []))
            if kind == "log":  # a line can be waited on too (the driver waits for one)
                succ[(g, i)] |= set(waits.get("log:" + what, []))
    return succ


def required_pairs(retry_after: bool) -> set[tuple[str, str]]:
    """(a, b): Go's code logs line a before line b, whatever the scheduler does."""
    model = goroutines(retry_after)
    succ = _nodes(model)
    line_of = {(g, i): what for g, steps in model.items() for i, (kind, what) in enumerate(steps)
               if kind == "log" and what.startswith(G)}
    pairs = set()
    for start, a in line_of.items():
        seen, todo = set(), list(succ[start])
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo.extend(succ[n])
        pairs |= {(a, line_of[n]) for n in seen if n in line_of and line_of[n] != a}
    return pairs


def order_problems(ours: list[str], retry_after: bool) -> list[str]:
    """Each pair Go's code orders that `ours` logged the other way round."""
    problems = []
    for a, b in sorted(required_pairs(retry_after)):
        if a in ours and b in ours and ours.index(a) > ours.index(b):
            problems.append(f"out of order: {b!r} before {a!r}, where Go's code orders {a!r} first")
    return problems


def is_retry_after(flags: Iterable[str]) -> bool:
    return any(f.startswith("--shutdown-send-retry-after") and not f.endswith("=false") for f in flags)

"""Port of k8s.io/apiserver/pkg/endpoints/handlers/watch.go (v1.36.0): the watch server.

A watch answers 200 at once (the header is flushed before any event, as Go's ``WatchServer``
does), then one event per change (``{"type":"ADDED","object":{...}}``, one JSON document a line,
or the negotiated framing), until the first of:

* the server says it is shutting down (the request's shutdown signal; watch termination),
* the request's context is done (the client went away, the timeout filter gave up),
* the watch's own timeout: ``timeoutSeconds``, else a random time in [min, 2*min) of
  ``--min-request-timeout`` so that watches end spread out (get.go's ``handleWatch``).

Without ``resourceVersion`` (or with ``0``) it starts with an ``ADDED`` event for each object
that exists; with one it sends what changed after it (410 Expired if that is older than the
kept history; an ``ERROR`` event with the Status if the watch falls behind while running).
Events are filtered by the label and field selectors on the object as it is after the change
(Go's cacher also turns a change that leaves the selection into DELETED; this store keeps no
old object to tell). With ``sendInitialEvents=true`` (a watch-list, client-go's reflectors ask for
it) the current objects come first as ADDED, then, with ``allowWatchBookmarks``, a BOOKMARK
annotated ``k8s.io/initial-events-end``; no periodic bookmarks are sent.
"""

from __future__ import annotations

import collections
import re
from typing import Any, Callable, Iterable, Iterator, Optional

from genericserver import request
from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.endpoints.handlers.response import watch_encoder
from genericserver.endpoints.handlers.rest import Request, RequestScope, StartResponse, bool_param, selectors, truthy
from genericserver.metrics import APISERVER_COMPONENT
from genericserver.wsgi import on_close

Encoder = Callable[[str, dict], bytes]


def watch_timeout(scope: RequestScope, req: Request) -> float:
    """``timeoutSeconds`` if given and not 0, else a random time in [min, 2*min); 0: none."""
    given = req.args.get("timeoutSeconds", "")
    if given:
        if not re.fullmatch(r"[+-]?[0-9]+", given):
            raise errors.new_bad_request(f"strconv.ParseInt: parsing {errors._q(given)}: invalid syntax")
        if int(given) != 0:
            return float(int(given))
    if scope.min_request_timeout > 0:
        return scope.min_request_timeout * (scope.rand() + 1.0)
    return 0.0


def events(store: Any, namespace: Optional[str], pending: collections.deque, rv: int, stops: list[rt.Event],
           deadline: Optional[float], matches: Callable[[dict], bool], encode: Encoder) -> Iterator[bytes]:
    """Encoded events until a stop event fires or the deadline passes (Go's ``ServeHTTP`` loop)."""
    yield b""  # flush the header at once, as Go's watch server does
    while True:
        if any(ev.is_set() for ev in stops) or (deadline is not None and rt.now() >= deadline):
            return
        if pending:
            typ, obj = pending.popleft()
            if typ == "BOOKMARK" or matches(obj):
                yield encode(typ, obj)
            continue
        try:
            changes, rv, changed = store.events_after(rv, namespace)
        except errors.StatusError as err:  # fell behind the history: say why, then end
            yield encode("ERROR", err.status)
            return
        if changes:
            pending.extend(changes)
            continue
        timeout = None if deadline is None else max(0.0, deadline - rt.now())
        if rt.select(*stops, changed, timeout=timeout) is not changed:
            return  # shutting down, the request is over, or timed out


def serve_watch(scope: RequestScope, req: Request, start_response: StartResponse, namespace: Optional[str],
                name: Optional[str] = None) -> Iterable[bytes]:
    timeout = watch_timeout(scope, req)
    matches = selectors(scope, req, name)
    send_initial = bool_param(req, "sendInitialEvents")
    bookmarks = truthy(req.args.getlist("allowWatchBookmarks"))
    if send_initial:  # a watch-list: the current state first, whatever the resource version
        initial, rv = scope.store.watch_start(namespace, "")
    else:
        initial, rv = scope.store.watch_start(namespace, req.args.get("resourceVersion", ""))
    stops = []
    sig = request.server_shutdown_signal_from(req.environ)
    if sig is not None:
        stops.append(sig.shutting_down())
    stops.append(request.context_from(req.environ).done())
    deadline = rt.now() + timeout if timeout > 0 else None
    pending = collections.deque(("ADDED", obj) for obj in initial)
    if send_initial and bookmarks:
        # the end of the initial events, as the watch cache marks it for a watch-list
        pending.append(("BOOKMARK", {"kind": scope.kind, "apiVersion": scope.resource.group_version, "metadata": {
            "resourceVersion": str(rv), "annotations": {"k8s.io/initial-events-end": "true"}}}))
    content_type, encode = watch_encoder(scope, req.environ, req.args)
    stream: Iterable[bytes] = events(scope.store, namespace, pending, rv, stops, deadline, matches, encode)
    if scope.metrics is not None:  # a long-running request until its stream is closed
        done = scope.metrics.long_running_started(req.environ, request.request_info_from(req.environ), APISERVER_COMPONENT)
        stream = on_close(stream, done)
    start_response("200 OK", [("Content-Type", content_type), ("Transfer-Encoding", "chunked")])
    return stream

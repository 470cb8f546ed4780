"""Port of k8s.io/apiserver/pkg/endpoints/handlers/watch.go (v1.36.0): the watch server.

get.go's ``handleWatch`` (:func:`genericserver.endpoints.handlers.get.handle_watch`) starts the
store's watch and calls :func:`serve_watch_handler` (``serveWatchHandler``): the stream
serializer for the negotiated media type (406 for one without: ``NegotiateOutputMediaTypeStream``)
and the event encoder (response.go's ``watchEncoder``), making a :class:`WatchServer`. Its
:meth:`WatchServer.handle_http` (``HandleHTTP``) answers 200 at once (the header is flushed
before any event), then one event per change (``{"type":"ADDED","object":{...}}``, one JSON
document a line, or the negotiated framing), until the first of:

* the server says it is shutting down (the request's shutdown signal; watch termination),
* the request's context is done (the client went away, the timeout filter gave up),
* the watch's own timeout (``timeoutSeconds``, or the spread default of ``handleWatch``).

Without ``resourceVersion`` (or with ``0``) it starts with an ``ADDED`` event for each object
that exists; with one it sends what changed after it (410 Expired if that is older than the
kept history; an ``ERROR`` event with the Status if the watch falls behind while running).
Events are filtered by the selection predicate on the object as it is after the change
(Go's cacher also turns a change that leaves the selection into DELETED; this store keeps no
old object to tell). With ``sendInitialEvents=true`` (a watch-list, client-go's reflectors ask for
it) the current objects come first as ADDED, then, with ``allowWatchBookmarks``, a BOOKMARK
annotated ``k8s.io/initial-events-end``; no periodic bookmarks are sent.
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Iterable, Iterator, Optional

from genericserver import request
from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.endpoints.handlers.response import watch_encoder
from genericserver.endpoints.handlers.rest import Request, RequestScope, StartResponse
from genericserver.storage.selection_predicate import SelectionPredicate

Encoder = Callable[[str, dict], bytes]


class WatchServer:
    """``WatchServer``: one watch's source, its stops and deadline, and its encoder."""

    def __init__(self, store: Any, namespace: Optional[str], pending: collections.deque, rv: int, stops: list[rt.Event],
                 deadline: Optional[float], predicate: SelectionPredicate, content_type: str, encode: Encoder):
        self.store, self.namespace, self.pending, self.rv = store, namespace, pending, rv
        self.stops, self.deadline, self.predicate = stops, deadline, predicate
        self.content_type, self.encode = content_type, encode

    def handle_http(self, start_response: StartResponse) -> Iterable[bytes]:
        """``HandleHTTP``: the header, then :meth:`events` as the body."""
        start_response("200 OK", [("Content-Type", self.content_type), ("Transfer-Encoding", "chunked")])
        return self.events()

    def events(self) -> Iterator[bytes]:
        """Encoded events until a stop event fires or the deadline passes (``HandleHTTP``'s loop)."""
        yield b""  # flush the header at once, as Go's watch server does
        pending, rv = self.pending, self.rv
        while True:
            if any(ev.is_set() for ev in self.stops) or (self.deadline is not None and rt.now() >= self.deadline):
                return
            if pending:
                typ, obj = pending.popleft()
                if typ == "BOOKMARK" or self.predicate.matches(obj):
                    yield self.encode(typ, obj)
                continue
            try:
                changes, rv, changed = self.store.events_after(rv, self.namespace)
            except errors.StatusError as err:  # fell behind the history: say why, then end
                yield self.encode("ERROR", err.status)
                return
            if changes:
                pending.extend(changes)
                continue
            timeout = None if self.deadline is None else max(0.0, self.deadline - rt.now())
            if rt.select(*self.stops, changed, timeout=timeout) is not changed:
                return  # shutting down, the request is over, or timed out


def serve_watch_handler(scope: RequestScope, media_type: negotiate.MediaTypeOptions, req: Request, start_response: StartResponse,
                        timeout: float, namespace: Optional[str], initial: list[dict], rv: int, predicate: SelectionPredicate,
                        *, send_initial_events: bool = False, bookmarks: bool = False) -> Iterable[bytes]:
    """``serveWatchHandler``, then the server's ``HandleHTTP``."""
    content_type, encode = watch_encoder(scope, media_type, req.args)
    stops = []
    sig = request.server_shutdown_signal_from(req.environ)
    if sig is not None:
        stops.append(sig.shutting_down())
    stops.append(request.context_from(req.environ).done())
    deadline = rt.now() + timeout if timeout > 0 else None
    pending = collections.deque(("ADDED", obj) for obj in initial)
    if send_initial_events and bookmarks:
        # the end of the initial events, as the watch cache marks it for a watch-list
        pending.append(("BOOKMARK", {"kind": scope.kind, "apiVersion": scope.resource.group_version, "metadata": {
            "resourceVersion": str(rv), "annotations": {"k8s.io/initial-events-end": "true"}}}))
    server = WatchServer(scope.store, namespace, pending, rv, stops, deadline, predicate, content_type, encode)
    return server.handle_http(start_response)

"""Port of k8s.io/apiserver/pkg/server/filters/timeout.go (v1.36.0).

``with_timeout_for_non_long_running_requests`` answers 504 when a request outlives its deadline.
The deadline is the request context's (``request.context_from(environ)``, set by the
request-deadline filter); its done event fires on the deadline or when the context is
cancelled for another reason.

How it runs on WSGI. Go runs the inner handler in a new goroutine and waits for whichever comes
first, the handler returning or the context ending. Here the goroutine ("timeout-handler") runs
the inner app *and* iterates its body; ``start_response``, the chunks and the end go through a
short queue to the calling thread, which forwards them to the server and, between items, waits
with ``rt.select`` on (next item, context done); a generator body that calls ``start_response``
at its first step has it forwarded ahead of that step's chunk. A response the app returns as a
list (alone or under inner filters' ``on_close`` wrappers) goes over in one piece. When the context ends
first:

* nothing started yet (the inner app has not called ``start_response``): the caller answers
  **504** with the error's Status as JSON plus a newline. Go sets no Content-Type; net/http then
  sniffs the body as ``text/plain; charset=utf-8``, which is sent here explicitly.
* the response already started: the caller raises net/http's :class:`AbortHandler` (Go's
  ``panic(http.ErrAbortHandler)``), the only way to cut a response short; the HTTP server drops
  the connection without a log line, and ``with_panic_recovery`` logs
  "Timeout or abort while handling".

Afterwards the handler's writes fail with :class:`ErrHandlerTimeout`: a call to the ``write``
returned by ``start_response`` raises it, and a generator body gets it thrown in at its
``yield``. ``start_response`` after the timeout is silently ignored, as Go ignores
``WriteHeader``. Threads cannot be killed: the inner goroutine runs on until the handler
returns, and its end is logged as "Post-timeout activity" once, by whichever side sees it last
(the goroutine, or the caller that gave up after the handler had queued its end: Go's post-timeout
goroutine reads the handler's result whenever it comes). What the handler queued at or after the
deadline (woken by it, as ``/slow`` is) loses to the deadline, at the start as in the body: Go's
filter, woken by the same deadline, almost always answers first (genericserver-go aborted in 14 of
14 runs). If the server closes the response early, the handler's writes fail the same way (with
``BrokenPipeError``).

A panic (exception) in the handler is re-raised in the calling thread, where Go re-panics. The
handler gets a shallow copy of the environ (Go clones the request), so it can keep changing its
own request while the caller answers. The inner app's response is closed by the caller when
the server closes this filter's response (so the slots of the filters inside this one last as
long as the response), or by the goroutine if the caller gave up first. The queue holds at most
``_Handoff.LIMIT`` items, so a fast handler cannot run far ahead of a slow client.
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Iterable, Optional

from genericserver import klog, request, runtime as rt
from genericserver import metrics as epmetrics
from genericserver.apimachinery.api import errors as apierrors
from genericserver.godur import format_go_duration
from genericserver.net.http.server import AbortHandler  # http.ErrAbortHandler's type: the server drops the connection quietly
from genericserver.requestinfo import LongRunningRequestCheck, url_path
from genericserver.responsewriters import encode_status
from genericserver.runtime.goroutines import stack_of_panic
from genericserver.wsgi import close_iterable, known_chunks, on_close



class ErrHandlerTimeout(Exception):
    """``http.ErrHandlerTimeout``: a write by a handler whose request already timed out."""

    def __init__(self) -> None:
        super().__init__("http: Handler timeout")


# Go: func(*http.Request) (req, longRunning, postTimeoutFunc, *StatusError)
TimeoutFunc = Callable[[dict], tuple[dict, bool, Optional[Callable[[], None]], Optional[dict]]]


def err_status(err: apierrors.StatusError) -> dict:
    """``err.ErrStatus`` as the filter encodes it: the Status without ``kind`` and ``apiVersion``
    (Go encodes the struct itself, whose TypeMeta no encoder filled in)."""
    return {k: v for k, v in err.status.items() if k not in ("kind", "apiVersion")}


def new_timeout_error(message: str, retry_after_seconds: int) -> dict:
    """``apierrors.NewTimeoutError(...).ErrStatus``: a 504 Status (no kind/apiVersion)."""
    return err_status(apierrors.new_timeout_error(message, retry_after_seconds))


def new_internal_error(err: str) -> dict:
    """``apierrors.NewInternalError(err).ErrStatus``."""
    return err_status(apierrors.new_internal_error(err))


def _nothing() -> None:
    """The post-timeout function when the chain is built wrong (Go's ``func() {}``)."""


def with_timeout_for_non_long_running_requests(
    app: Callable, long_running: Optional[LongRunningRequestCheck], *, metrics: Optional[epmetrics.Metrics] = None
) -> Callable:
    """Time out everything but long-running requests at the request context's deadline.

    ``metrics``: the server's (Go: package globals; None: ``metrics.LEGACY``); a timeout is
    counted in ``apiserver_request_terminations_total`` with code 504.
    """
    if long_running is None:
        return app
    metrics = metrics if metrics is not None else epmetrics.LEGACY

    # Go builds these per request; they never change, and nothing writes to them
    timeout_error = new_timeout_error("request did not complete within the allotted timeout", 0)
    no_info_error = new_internal_error("no request info found for request during timeout")

    def timeout_func(environ: dict) -> tuple[dict, bool, Optional[Callable[[], None]], Optional[dict]]:
        info = request.request_info_from(environ)
        if info is None:
            # the chain is built wrong; used only if the context then ends
            return environ, False, _nothing, no_info_error
        if long_running(environ, info):
            return environ, True, None, None

        def post_timeout_fn() -> None:
            metrics.record_request_termination(environ, info, epmetrics.APISERVER_COMPONENT, 504)

        return environ, False, post_timeout_fn, timeout_error

    return with_timeout(app, timeout_func, metrics=metrics)


def with_timeout(app: Callable, timeout_func: TimeoutFunc, *, metrics: Optional[epmetrics.Metrics] = None) -> Callable:
    """Run ``app`` under the timeout ``timeout_func`` describes for each request.

    A handler that returns after its request timed out is counted in
    ``apiserver_request_post_timeout_total`` in ``metrics`` (None: ``metrics.LEGACY``).
    """
    metrics = metrics if metrics is not None else epmetrics.LEGACY

    def timeout_filter(environ: dict, start_response: Callable) -> Iterable[bytes]:
        environ, long_running, post_timeout_fn, err = timeout_func(environ)
        if long_running:
            return app(environ, start_response)
        tw = _TimeoutWriter(request.context_from(environ), start_response, environ, metrics)
        rt.go(tw.serve, app, dict(environ), name="timeout-handler")
        return tw.answer(post_timeout_fn, err)

    return timeout_filter


class _Handoff:
    """A short queue from the handler goroutine to the caller.

    ``put`` returns at once while fewer than ``LIMIT`` items wait (a handler that writes a
    small response then costs one thread switch, not one per write), and blocks beyond that so
    a fast handler cannot run ahead of a slow client. It returns False once the caller gave up
    (``abandon``), which also wakes a ``put`` that is waiting for room. Events are made only
    when somebody waits on them: most requests put one item and never block.
    """

    LIMIT = 8
    __slots__ = ("lock", "_items", "_ready", "_room", "abandoned", "first_put_at", "taken_put_at")

    def __init__(self) -> None:
        self.lock = rt.lock()  # also guards _TimeoutWriter's close of the inner response
        self._items: collections.deque = collections.deque()
        self._ready: Optional[rt.Event] = None  # set when an item is queued
        self._room: Optional[rt.Event] = None  # set when the caller took an item, or gave up
        self.abandoned = False
        self.first_put_at: Optional[float] = None
        self.taken_put_at = 0.0  # when the item ``take`` returned last was queued

    def put(self, item: Any, wait: bool = True) -> bool:
        """Queue ``item``; ``wait=False`` never blocks (for the handler's last item)."""
        room = None
        with self.lock:
            if self.abandoned:
                return False
            now = rt.now()
            if self.first_put_at is None:
                self.first_put_at = now
            self._items.append((item, now))
            ready = self._ready
            if wait and len(self._items) >= self.LIMIT:
                room = self._room = rt.event("timeout-handoff-room")
        if ready is not None:
            ready.set()
        if room is None:
            return True
        room.wait()
        return not self.abandoned

    def ready(self) -> rt.Event:
        """An event set once an item is queued (already set if one is)."""
        with self.lock:
            if self._ready is None:
                self._ready = rt.event("timeout-handoff-ready")
                if self._items:
                    self._ready.set()
            return self._ready

    def pending(self) -> bool:
        """Whether an item is queued (only the caller takes items, so it stays queued)."""
        return bool(self._items)

    def take(self) -> Any:
        with self.lock:
            item, self.taken_put_at = self._items.popleft()
            if not self._items:
                self._ready = None
            room, self._room = self._room, None
        if room is not None:
            room.set()
        return item

    def abandon(self) -> None:
        with self.lock:
            self.abandoned = True
            room, self._room = self._room, None
        if room is not None:
            room.set()


class _TimeoutWriter:
    """Go's timeoutWriter and the two sides of ServeHTTP: ``serve`` (goroutine), ``answer`` (caller)."""

    __slots__ = ("_ctx", "_done", "_start_response", "_environ", "_metrics", "_handoff", "_started", "_timed_out",
                 "_timed_out_at", "_pending_start", "_inner", "_done_iterating", "_result", "_post_timeout_logged")

    def __init__(self, ctx: Any, start_response: Callable, environ: dict, metrics: epmetrics.Metrics):
        self._ctx = ctx
        self._done = ctx.done()
        self._start_response = start_response
        self._environ = environ  # for the post-timeout log line only
        self._metrics = metrics
        self._handoff = _Handoff()
        self._started = False  # the caller forwarded start_response (Go: wroteHeader)
        self._timed_out = False
        self._timed_out_at = 0.0
        self._pending_start: Optional[tuple] = None
        self._inner: Any = None  # the handler's response iterable, until closed
        self._done_iterating = False
        self._result: Optional[BaseException] = None  # how the handler ended, once _done_iterating
        self._post_timeout_logged = False

    # -- the handler goroutine --------------------------------------------------------------
    def serve(self, app: Callable, environ: dict) -> None:
        result: Optional[BaseException] = None
        try:
            body = app(environ, self._handler_start_response)
            self._inner = body
            chunks = known_chunks(body)
            if chunks is not None and self._pending_start is not None:
                # The whole response is known: hand it over in one piece. (PEP 3333 sends
                # nothing before the first body chunk, so holding the start back until now
                # changes nothing the client could see; it saves thread switches.) The body
                # is closed with the caller's response, or here if the caller gave up.
                start, self._pending_start = self._pending_start, None
                self._done_iterating = True
                if not self._handoff.put(("full", start, list(chunks)), wait=False):
                    self.close_inner()
                    if self._timed_out:
                        self._log_post_timeout_once(None)
                return
            self._flush_start()
            self._pump(body)
        except (ErrHandlerTimeout, BrokenPipeError) as exc:
            # a failed write the handler did not catch: an ordinary end once we gave up
            result = None if self._handoff.abandoned else exc
        except BaseException as exc:  # Go recovers the panic and hands it to ServeHTTP
            result = exc
        # From here on this goroutine no longer touches the body. The caller closes it when the
        # server closes the response (so slots held by inner filters last as long as the
        # response); if the caller gave up already, nobody else will, so close it here.
        self._result = result
        self._done_iterating = True
        if not self._flush_start_or_false() or not self._handoff.put(("done", result), wait=False):
            self.close_inner()
            if self._timed_out:
                self._log_post_timeout_once(result)

    def close_inner(self) -> None:
        """Close the handler's response once, from whichever side is last to need it."""
        with self._handoff.lock:
            body, self._inner = self._inner, None
        close_iterable(body)

    def _log_post_timeout_once(self, result: Optional[BaseException]) -> None:
        # the handler finished after the client got its 504 (or its abort): counted, and logged as
        # Go's HandleError does (a panic's value followed by its stack, as Go's recover gives it).
        # Go's post-timeout goroutine reads the handler's result whenever it comes; here whichever
        # side sees the end last logs it (the handler, or the caller that gave up after it ended)
        with self._handoff.lock:
            if self._post_timeout_logged:
                return
            self._post_timeout_logged = True
        status = epmetrics.POST_TIMEOUT_HANDLER_OK if result is None else epmetrics.POST_TIMEOUT_HANDLER_PANIC
        self._metrics.record_request_post_timeout(epmetrics.POST_TIMEOUT_SOURCE_TIMEOUT_HANDLER, status)
        klog.error_s(
            None,
            "Post-timeout activity",
            logger="UnhandledError",
            timeElapsed=format_go_duration(rt.now() - self._timed_out_at),
            method=self._environ.get("REQUEST_METHOD", ""),
            path=url_path(self._environ),
            result=None if result is None else f"{result}\n{stack_of_panic(result)}",
        )

    def _handler_start_response(self, status: str, headers: list, exc_info: Any = None) -> Callable:
        # held back until the body is known (see serve); after a timeout nothing is sent, as
        # Go ignores WriteHeader then
        if exc_info is not None and self._pending_start is None:
            self._handoff.put(("start", status, list(headers), exc_info))
        else:
            self._pending_start = ("start", status, list(headers), exc_info)
        return self._handler_write

    def _flush_start(self) -> None:
        if self._pending_start is not None:
            start, self._pending_start = self._pending_start, None
            if not self._handoff.put(start):
                raise self._write_error()

    def _flush_start_or_false(self) -> bool:
        try:
            self._flush_start()
        except (ErrHandlerTimeout, BrokenPipeError):
            return False
        return True

    def _handler_write(self, data: bytes) -> None:
        self._flush_start()
        if not self._handoff.put(("chunk", data)):
            raise self._write_error()

    def _write_error(self) -> Exception:
        if self._timed_out:
            return ErrHandlerTimeout()
        return BrokenPipeError("the response was closed before the handler finished")

    def _pump(self, body: Iterable[bytes]) -> None:
        it = iter(body)
        for chunk in _chunks(it):
            # a generator may call start_response at its first step (PEP 3333 allows it up to
            # the first chunk): the start goes before the chunk it came with
            while not (self._flush_start_or_false() and self._handoff.put(("chunk", chunk))):
                # the write failed: let a generator see it at its yield, as a Go handler sees Write fail
                throw = getattr(it, "throw", None)
                if throw is None:
                    return
                try:
                    chunk = throw(self._write_error())
                except StopIteration:
                    return

    # -- the calling thread -----------------------------------------------------------------
    def _next(self) -> Any:
        handoff = self._handoff
        if handoff.pending() and not self._done.is_set():
            return handoff.take()  # already queued: no need to wait on anything
        ready = handoff.ready()
        if rt.select(ready, self._done) is ready:
            return handoff.take()
        return _TIMEOUT

    def answer(self, post_timeout_fn: Optional[Callable[[], None]], err: Optional[dict]) -> Iterable[bytes]:
        """Wait for the response to start, the handler to end, or the deadline."""
        while True:
            item = self._next()
            kind = item[0]
            if kind != "timeout" and self._answered_after_deadline():
                # both happened by the time we woke: the deadline came first, so the client
                # gets the 504 (Go's select would most likely see the deadline first too)
                return self.timeout(post_timeout_fn, err)
            if kind == "full":
                self._start(item[1])
                if hasattr(self._inner, "close"):  # inner filters hold slots until the response closes
                    return on_close(item[2], self.close_inner)
                return item[2]
            if kind == "start":
                self._start(item)
                return _TimeoutBody(self, post_timeout_fn, err)
            if kind == "done":
                self.close_inner()
                if item[1] is not None:
                    raise item[1]
                # the handler wrote nothing at all: net/http sends an empty 200
                self._start_response("200 OK", [("Content-Length", "0")])
                return []
            if kind == "timeout":
                return self.timeout(post_timeout_fn, err)
            # a chunk before start_response breaks WSGI; drop it rather than send it headless

    def _answered_after_deadline(self) -> bool:
        if not self._done.is_set():
            return False
        deadline = self._ctx.deadline()
        first = self._handoff.first_put_at
        return deadline is not None and first is not None and first >= deadline

    def _queued_after_deadline(self) -> bool:
        """Whether the item just taken was queued once the request's deadline had passed."""
        if not self._done.is_set():
            return False
        deadline = self._ctx.deadline()
        return deadline is not None and self._handoff.taken_put_at >= deadline

    def _start(self, item: tuple) -> None:
        _, status, headers, exc_info = item
        self._start_response(status, headers, exc_info)
        self._started = True

    def timeout(self, post_timeout_fn: Optional[Callable[[], None]], err: Optional[dict]) -> Iterable[bytes]:
        """Go's ``timeoutWriter.timeout``: a 504 if nothing was sent yet, else abort."""
        self._timed_out = True
        self._timed_out_at = rt.now()
        self._handoff.abandon()
        if self._done_iterating:
            # the handler ended and queued its last item before we gave up: it will not close
            # its response nor log its post-timeout activity any more, so we do
            self.close_inner()
            self._log_post_timeout_once(self._result)
        try:
            if not self._started:
                body = encode_status(err or new_timeout_error("request did not complete within the allotted timeout", 0))
                self._start_response(
                    "504 Gateway Timeout",
                    [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))],
                )
                return [body]
            raise AbortHandler()
        finally:
            if post_timeout_fn is not None:
                post_timeout_fn()

    def abandon(self) -> None:
        self._handoff.abandon()


_TIMEOUT = ("timeout",)


def _chunks(it: Any) -> Iterable[bytes]:
    while True:
        try:
            yield next(it)
        except StopIteration:
            return


class _TimeoutBody:
    """The response the server iterates: the handler's chunks, until its end or the deadline."""

    def __init__(self, tw: _TimeoutWriter, post_timeout_fn: Optional[Callable[[], None]], err: Optional[dict]):
        self._tw = tw
        self._post_timeout_fn = post_timeout_fn
        self._err = err
        self._finished = False

    def __iter__(self) -> "_TimeoutBody":
        return self

    def __next__(self) -> bytes:
        while not self._finished:
            item = self._tw._next()
            kind = item[0]
            if kind != "timeout" and self._tw._queued_after_deadline():
                # the handler wrote or returned only once the deadline had passed (woken by it, as
                # /slow is): Go's filter, woken by the same deadline, aborts first
                item = _TIMEOUT
                kind = "timeout"
            if kind == "chunk":
                return item[1]
            if kind == "start":  # a second start_response (with exc_info): the server decides
                self._tw._start(item)
                continue
            self._finished = True
            if kind == "done" and item[1] is not None:
                raise item[1]
            if kind == "timeout":
                self._tw.timeout(self._post_timeout_fn, self._err)  # raises AbortHandler
        raise StopIteration

    def close(self) -> None:
        if not self._finished:
            self._finished = True
            self._tw.abandon()
        if self._tw._done_iterating:
            # the handler goroutine is through with the body: closing it is ours to do
            self._tw.close_inner()

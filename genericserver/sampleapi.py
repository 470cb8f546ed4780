"""A sample API to shut down under load: configmaps, /echo and /slow (no Go twin).

:func:`install` serves, on a :class:`genericserver.mux.PathRecorderMux`:

* **configmaps** through the project's port of the apiserver's REST machinery
  (:mod:`genericserver.apigroups`, :mod:`genericserver.endpoints.installer` and
  :mod:`genericserver.endpoints.handlers`), as kube-apiserver serves them: discovery at
  ``/api`` and ``/api/v1`` (aggregated discovery too), get, list, watch, create, update, patch,
  delete and deletecollection under ``/api/v1/namespaces/{namespace}/configmaps[/{name}]``, list
  and watch across namespaces at ``/api/v1/configmaps``. The objects live in the generic store
  (:class:`genericserver.registry.generic.registry.store.Store`) with the ConfigMap strategy
  (:mod:`genericserver.registry.core.configmap_strategy`): a configmap is validated as the core
  API validates it (:mod:`genericserver.apis.core.validation`: its metadata, its keys,
  ``immutable``), and finalizers and ``propagationPolicy`` hold its deletion up as the generic
  store's do.
* ``/echo?message=x``: 200 with the response header ``echo: x`` and no body (the handler of Go's
  graceful-termination test).
* ``/slow?seconds=N``: an ordinary (not long-running) request that answers 200 after N seconds
  of runtime time (with ``&flush=1``, it sends the 200 header at once and its outcome as the body,
  so that a client knows when the handler runs), so a shutdown has something in flight to wait for; it stops waiting when its
  request context ends (a thread cannot be killed, so it should not outlive a request the
  timeout filter has answered): then it answers 503.

With ``--sample-pre-shutdown-hook`` (:class:`SampleAPIOptions`) the server has one more
pre-shutdown hook, ``sample-pre-shutdown-hook``, that returns at once (``ok``), fails (``fail``),
panics (``panic``) or sleeps (``sleep:DURATION``): the lifecycle corpus's hook cases, recorded
from reference/genericserver-go, which takes the same flag.

``/echo`` and ``/slow`` are a werkzeug ``routing.Map`` (:data:`URLS`) with werkzeug's request and
response objects; they stand for handlers on Go's non-go-restful mux.
"""

from __future__ import annotations

import json
import random
import uuid
from typing import Any, Callable, Iterable, Optional

import werkzeug.wrappers
from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule

from genericserver import request, responsewriters
from genericserver import runtime as rt
from genericserver.api.core.v1.types import CONFIG_MAP, CONFIG_MAP_LIST
from genericserver.apigroups import APIGroups
from genericserver.apimachinery.api.errors import StatusError
from genericserver.endpoints.handlers.rest import MAX_REQUEST_BODY_BYTES, RequestScope
from genericserver.godur import format_go_duration
from genericserver.printers.internalversion.printers import CONFIG_MAP_TABLE
from genericserver.registry import reviews
from genericserver.registry.core import configmap_strategy
from genericserver.registry.generic.registry import store as generic_store
from genericserver.registry.rest.rest import Resource

__all__ = ["CONFIGMAPS", "MAX_REQUEST_BODY_BYTES", "SampleAPIOptions", "Store", "StatusError", "URLS", "echo", "install", "slow"]

StartResponse = Callable[..., Any]

KIND = "ConfigMap"
API_VERSION = "v1"
DEFAULT_HISTORY = generic_store.DEFAULT_HISTORY

CONFIGMAPS = Resource("", "v1", "configmaps", KIND, CONFIG_MAP, CONFIG_MAP_LIST, short_names=("cm",), table=CONFIG_MAP_TABLE)

_META_ORDER = generic_store._META_ORDER


HOOK_NAME = "sample-pre-shutdown-hook"


class SampleAPIOptions:
    """The sample API's own flag (no kube-apiserver flag): ``--sample-pre-shutdown-hook MODE``."""

    def __init__(self) -> None:
        self.pre_shutdown_hook = ""

    def add_flags(self, parser: Any) -> None:
        from genericserver.options import add_bound_flag

        add_bound_flag(parser, self, "pre_shutdown_hook", "sample-pre-shutdown-hook", "string",
                       "A pre-shutdown hook that returns at once (ok), fails (fail), panics (panic) or "
                       "sleeps first (sleep:DURATION, e.g. sleep:2s); none unless given.")

    def validate(self) -> list[str]:
        try:
            self.hook()
        except ValueError as err:
            return [f"--sample-pre-shutdown-hook: {err}"]
        return []

    def hook(self) -> Optional[Callable[[], None]]:
        """The hook the flag asks for, or None."""
        mode = self.pre_shutdown_hook
        if not mode:
            return None
        if mode == "ok":
            return lambda: None
        if mode == "fail":
            def fail() -> None:
                raise RuntimeError("sample pre-shutdown hook failed")
            return fail
        if mode == "panic":
            def panic() -> None:
                from genericserver.apimachinery.utilruntime import Panic

                raise Panic("sample pre-shutdown hook panicked")
            return panic
        if mode.startswith("sleep:"):
            from genericserver.godur import parse_go_duration

            seconds, err = parse_go_duration(mode[len("sleep:"):])
            if err is not None:
                raise ValueError(str(err))
            return lambda: rt.sleep(seconds)
        raise ValueError(f"want ok, fail, panic or sleep:DURATION, got {_q(mode)}")

    def apply_to(self, server: Any) -> None:
        hook = self.hook()
        if hook is not None:
            server.add_pre_shutdown_hook_or_die(HOOK_NAME, hook)


def Store(*, history: int = DEFAULT_HISTORY, new_uid: Callable[[], str] = lambda: str(uuid.uuid4())) -> generic_store.Store:
    """A generic store of configmaps, with their strategy."""
    return generic_store.Store(CONFIGMAPS, history=history, new_uid=new_uid, strategy=configmap_strategy.STRATEGY)


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


# -- /echo and /slow, on werkzeug ----------------------------------------------------------------


class Request(werkzeug.wrappers.Request):
    """werkzeug's request with the query as Go's ``URL.Query()`` parses it."""

    @property
    def go_args(self) -> dict[str, list[str]]:
        return request.query(self.environ)

    def arg(self, key: str) -> str:
        values = self.go_args.get(key)
        return values[0] if values else ""


class Response(werkzeug.wrappers.Response):
    """werkzeug's response; like a Go handler's, it has no Content-Type unless one is given."""

    default_mimetype = None

    def get_app_iter(self, environ: dict) -> Iterable[bytes]:
        """A body that is at hand as one list, as a Go handler's output is still in its buffer when
        it returns: werkzeug's own iterator would hand the server a first chunk (an empty one for
        ``/echo``), which the server sends at once as Go's ``Flush`` does, header and all. Go
        writes the header after the handler returned, when an unread request body is read to its
        end: a client that stalls its body then holds the connection, not the wait group."""
        app_iter = super().get_app_iter(environ)
        if not self.is_sequence or self.direct_passthrough:
            return app_iter
        try:
            return [b"".join(app_iter)]
        finally:
            app_iter.close()


URLS = Map([Rule("/echo", endpoint="echo"), Rule("/slow", endpoint="slow")], merge_slashes=False)


def _http_error(message: str, code: int) -> Response:
    """net/http's ``http.Error``: plain text, ``nosniff``, the message and a newline."""
    return Response(message + "\n", status=responsewriters.status_line(code), content_type="text/plain; charset=utf-8",
                    headers={"X-Content-Type-Options": "nosniff"})


def echo(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
    """200, the ``message`` query parameter in the ``echo`` response header, no body."""
    # werkzeug refuses a newline in a header value; Go's header writer sends it as a space
    # (genericserver.net.http.response does too): do that here, so the answer is Go's either way
    message = Request(environ).arg("message").replace("\r", " ").replace("\n", " ")
    return Response(b"", headers={"echo": message})(environ, start_response)


def slow(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
    """200 after ``seconds`` seconds (runtime time); 503 if the request's context ends first."""
    text = Request(environ).arg("seconds")
    try:
        seconds = float(text)
        if not seconds >= 0 or seconds == float("inf"):
            raise ValueError
    except ValueError:
        return _http_error(f"invalid seconds {_q(text)}: want a number >= 0", 400)(environ, start_response)
    ctx = request.context_from(environ)
    if Request(environ).arg("flush") == "1":
        return _slow_flushed(ctx, seconds, start_response)
    if rt.select(ctx.done(), timeout=seconds) is not None:
        return _http_error(f"gave up waiting: {ctx.err()}", 503)(environ, start_response)
    return Response(f"slept {format_go_duration(seconds)}\n", content_type="text/plain; charset=utf-8")(environ, start_response)


def _slow_flushed(ctx: Any, seconds: float, start_response: StartResponse) -> Iterable[bytes]:
    """``/slow?flush=1``: the 200 header first (so a client knows the handler is running), the
    outcome as the body."""
    start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
    return _slow_flushed_body(ctx, seconds)


def _slow_flushed_body(ctx: Any, seconds: float) -> Iterable[bytes]:
    yield b""  # flushes the header
    if rt.select(ctx.done(), timeout=seconds) is not None:
        yield f"gave up waiting: {ctx.err()}\n".encode()
    else:
        yield f"slept {format_go_duration(seconds)}\n".encode()


def install(mux: Any, store: Optional[generic_store.Store] = None, *, min_request_timeout: float = 1800,
            rand: Callable[[], float] = random.random, metrics: Any = None,
            api_groups: Optional[APIGroups] = None, external_address: str = "", authorizer: Any = None) -> generic_store.Store:
    """Serve configmaps (with discovery), ``/echo`` and ``/slow`` on ``mux``; returns the store
    (a new one unless given). ``min_request_timeout`` (seconds) sets the watch timeout range,
    ``rand`` picks within it; ``metrics`` (the server's ``Metrics``) instruments the REST routes;
    ``api_groups`` is the server's (a new one on ``mux`` unless given); with the server's
    ``authorizer``, ``kubectl auth can-i`` is answered too (:mod:`genericserver.registry.reviews`)."""
    store = store if store is not None else Store()
    groups = api_groups if api_groups is not None else APIGroups(mux, external_address=external_address)
    scope = RequestScope(CONFIGMAPS, store, min_request_timeout=min_request_timeout, rand=rand, metrics=metrics)
    groups.install_legacy_api_group([scope])
    reviews.install(groups, authorizer)
    for path, app in (("/echo", echo), ("/slow", slow)):
        mux.handle(path, app)
    return store

"""A sample API to shut down under load: configmaps in memory, /echo and /slow (no Go twin).

The REST shapes and error texts follow k8s.io/apiserver/pkg/endpoints/handlers (v1.36.0).

:func:`install` registers on a :class:`genericserver.mux.PathRecorderMux`:

* ``/api/v1/namespaces/{namespace}/configmaps``: ``GET`` lists (``ConfigMapList``), ``POST``
  creates (201; 409 ``AlreadyExists``; 422 without a name); with ``?watch=true`` (or ``1``) the
  ``GET`` streams watch events instead.
* ``/api/v1/namespaces/{namespace}/configmaps/{name}``: ``GET``, ``PUT`` (409 ``Conflict`` on a
  stale ``metadata.resourceVersion``), ``DELETE`` (a ``Success`` Status); 404 ``NotFound`` for a
  missing name. Errors are ``metav1.Status`` JSON with Go's reasons and messages.
* ``/api/v1/configmaps``: list and watch across all namespaces.
* ``/echo?message=x``: 200 with the response header ``echo: x`` and no body (the handler of Go's
  graceful-termination test).
* ``/slow?seconds=N``: an ordinary (not long-running) request that answers 200 after N seconds
  of runtime time, so a shutdown has something in flight to wait for.

It is built on werkzeug, the project's WSGI toolkit: a ``routing.Map`` picks the handler
(:data:`URLS`), a :class:`Request` (werkzeug's, with the query parsed as Go's ``URL.Query()``
does and Go's 3 MiB ``--max-request-body-bytes``) and a :class:`Response` carry each exchange,
and werkzeug's exceptions become what the apiserver answers: ``NotFound`` the server's not-found
handler, ``MethodNotAllowed`` go-restful's ``405: Method Not Allowed``, ``RequestEntityTooLarge`` a
413 ``RequestEntityTooLarge`` Status. A body cut off or malformed on the wire is a 500 Status with
no reason, which is what Go's ``ErrorToAPIStatus`` makes of an error no handler converted.

A watch streams one JSON event per line (``{"type":"ADDED","object":{...}}``), with
``Transfer-Encoding: chunked`` as Go's watch server. Without ``resourceVersion`` (or with
``0``) it starts with an ``ADDED`` event for each object that exists; with a resource version it
sends what changed after it (410 ``Expired`` if that is older than the kept history). Like Go's
watch loop it ends when the server says it is shutting down (the request's shutdown signal, see
:func:`genericserver.request.server_shutdown_signal_from`), when the request's context is done,
or at its timeout: ``?timeoutSeconds=N``, else a random time between ``min_request_timeout`` and
twice that. It waits on the runtime (``rt.select``), never polls.

Left out of the real API: label and field selectors, paging, PATCH, ``deletecollection``,
``binaryData``, ``immutable``, managed fields, namespaces as objects (any namespace exists),
protobuf and content negotiation. The messages for undecodable bodies and parameters follow
Go's shapes but carry Python's parser texts. The watch stream starts with an empty chunk, which the
project's HTTP server takes as Go's ``Flush``: the header goes out at once even when there is
nothing to report yet. ``/slow`` stops waiting when its request context ends (a thread cannot be killed, so it
should not outlive a request the timeout filter has answered): then it answers 503.
"""

from __future__ import annotations

import collections
import copy
import json
import logging
import random
import re
import uuid
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, Optional

import werkzeug.wrappers
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.utils import cached_property

from genericserver import http1, request, responsewriters
from genericserver import runtime as rt
from genericserver.godur import format_go_duration
from genericserver.metrics import APISERVER_COMPONENT
from genericserver.apimachinery.api.errors import StatusError
from genericserver.wsgi import on_close
from genericserver.mux import not_found

log = logging.getLogger("genericserver.sampleapi")
StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict, StartResponse], Iterable[bytes]]

RESOURCE = "configmaps"
KIND = "ConfigMap"
API_VERSION = "v1"
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024  # Go's default --max-request-body-bytes
DEFAULT_HISTORY = 1000
_META_ORDER = ("name", "generateName", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels", "annotations")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_DNS1123_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # generateName's alphabet: no vowels, no look-alikes


def _details(name: Optional[str] = None, kind: str = RESOURCE, **more: Any) -> dict:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    d["kind"] = kind
    d.update(more)
    return d


def new_not_found(name: str) -> StatusError:
    return StatusError(responsewriters.status(404, "NotFound", f'{RESOURCE} {_q(name)} not found', _details(name)))


def new_already_exists(name: str) -> StatusError:
    return StatusError(responsewriters.status(409, "AlreadyExists", f"{RESOURCE} {_q(name)} already exists", _details(name)))


def new_conflict(name: str, why: str) -> StatusError:
    msg = f"Operation cannot be fulfilled on {RESOURCE} {_q(name)}: {why}"
    return StatusError(responsewriters.status(409, "Conflict", msg, _details(name)))


def new_bad_request(msg: str) -> StatusError:
    return StatusError(responsewriters.status(400, "BadRequest", msg))


def new_invalid(name: str, fld: str, cause_type: str, detail: str) -> StatusError:
    msg = f"{KIND} {_q(name)} is invalid: {fld}: {detail}"
    cause = {"reason": cause_type, "message": detail, "field": fld}
    return StatusError(responsewriters.status(422, "Invalid", msg, _details(name, KIND, causes=[cause])))


def new_resource_expired(msg: str) -> StatusError:
    return StatusError(responsewriters.status(410, "Expired", msg))


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _json_line(obj: Any) -> bytes:
    # Go's JSON encoder: compact, one newline after each value
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def _timestamp() -> str:
    return datetime.fromtimestamp(rt.wall(), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- the store -----------------------------------------------------------------------------------


class Store:
    """Configmaps by (namespace, name), a resource version counter and a bounded event history.

    Every change bumps the resource version, appends ``(rv, type, object)`` to the history and
    sets the current *changed* event (then replaces it), which is what watches wait on. Reads
    hand out deep copies, so nobody shares an object with the store.
    """

    def __init__(self, *, history: int = DEFAULT_HISTORY, new_uid: Callable[[], str] = lambda: str(uuid.uuid4())):
        self._lock = rt.lock()
        self._objects: dict[tuple[str, str], dict] = {}
        self._rv = 1
        self._history: collections.deque = collections.deque()
        self._max_history = history
        self._oldest = self._rv  # a watch may resume from any version >= this
        self._changed = rt.event("configmaps-changed")
        self._new_uid = new_uid

    def _commit(self, typ: str, key: tuple[str, str], obj: dict) -> dict:
        # the caller holds the lock; a DELETED object keeps the deletion's version, as in etcd
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        obj = _ordered(obj)
        if typ == "DELETED":
            self._objects.pop(key, None)
        else:
            self._objects[key] = obj
        self._history.append((self._rv, typ, copy.deepcopy(obj)))
        while len(self._history) > self._max_history:
            self._oldest = self._history.popleft()[0]
        changed, self._changed = self._changed, rt.event("configmaps-changed")
        changed.set()
        return copy.deepcopy(obj)

    def resource_version(self) -> int:
        with self._lock:
            return self._rv

    def list(self, namespace: Optional[str] = None) -> tuple[list[dict], int]:
        """The objects (of one namespace, or all), sorted by namespace and name, and the version."""
        with self._lock:
            keys = sorted(k for k in self._objects if namespace is None or k[0] == namespace)
            return [copy.deepcopy(self._objects[k]) for k in keys], self._rv

    def get(self, namespace: str, name: str) -> dict:
        with self._lock:
            obj = self._objects.get((namespace, name))
            if obj is None:
                raise new_not_found(name)
            return copy.deepcopy(obj)

    def create(self, namespace: str, obj: dict) -> dict:
        with self._lock:
            meta = obj["metadata"]
            key = (namespace, meta["name"])
            if key in self._objects:
                raise new_already_exists(meta["name"])
            meta.update(namespace=namespace, uid=self._new_uid(), creationTimestamp=_timestamp())
            return self._commit("ADDED", key, obj)

    def update(self, namespace: str, name: str, obj: dict) -> dict:
        with self._lock:
            current = self._objects.get((namespace, name))
            if current is None:
                raise new_not_found(name)
            meta = obj["metadata"]
            if meta.get("resourceVersion") and meta["resourceVersion"] != current["metadata"]["resourceVersion"]:
                raise new_conflict(name, "the object has been modified; please apply your changes to the latest version and try again")
            # what the server owns stays as it was
            for k in ("generateName", "namespace", "uid", "creationTimestamp"):
                meta.pop(k, None)
                if k in current["metadata"]:
                    meta[k] = current["metadata"][k]
            return self._commit("MODIFIED", (namespace, name), obj)

    def delete(self, namespace: str, name: str) -> dict:
        """Remove the object; returns its last state (with the deletion's resource version)."""
        with self._lock:
            obj = self._objects.get((namespace, name))
            if obj is None:
                raise new_not_found(name)
            return self._commit("DELETED", (namespace, name), copy.deepcopy(obj))

    def watch_start(self, namespace: Optional[str], resource_version: str) -> tuple[list[dict], int]:
        """Where a watch begins: the objects to send as ADDED and the version to follow from."""
        with self._lock:
            if resource_version in ("", "0"):
                keys = sorted(k for k in self._objects if namespace is None or k[0] == namespace)
                return [copy.deepcopy(self._objects[k]) for k in keys], self._rv
            if not resource_version.isdigit():
                raise new_bad_request(f"invalid resource version {_q(resource_version)}")
            rv = int(resource_version)
            if rv < self._oldest:
                raise new_resource_expired(f"too old resource version: {rv} ({self._oldest})")
            return [], rv

    def events_after(self, rv: int, namespace: Optional[str]) -> tuple[list[tuple[str, dict]], int, rt.Event]:
        """The changes after ``rv`` (of one namespace, or all), the newest version, and the
        event set by the next change; taken together so that no change slips in between."""
        with self._lock:
            if rv < self._oldest:
                raise new_resource_expired(f"too old resource version: {rv} ({self._oldest})")
            events = [(typ, copy.deepcopy(obj)) for erv, typ, obj in self._history
                      if erv > rv and (namespace is None or obj["metadata"]["namespace"] == namespace)]
            return events, max(rv, self._rv), self._changed


def _ordered(obj: dict) -> dict:
    # Go's field order: kind, apiVersion, metadata (ObjectMeta's order), data (left out when empty)
    meta = {k: obj["metadata"][k] for k in _META_ORDER if obj["metadata"].get(k)}
    out: dict[str, Any] = {"kind": KIND, "apiVersion": API_VERSION, "metadata": meta}
    if obj.get("data"):
        out["data"] = dict(obj["data"])
    return out


# -- decoding request bodies ---------------------------------------------------------------------

_JSON_TYPES = {bool: "bool", int: "number", float: "number", str: "string", list: "array", dict: "object", type(None): "null"}


def _cannot_unmarshal(value: Any, fld: str, go_type: str) -> str:
    return f"json: cannot unmarshal {_JSON_TYPES.get(type(value), 'value')} into Go struct field {fld} of type {go_type}"


def _string_map(value: Any, fld: str) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, dict):
        return _cannot_unmarshal(value, fld, "map[string]string")
    for v in value.values():
        if not isinstance(v, str):
            return _cannot_unmarshal(v, fld, "string")
    return None


def decode_config_map(body: bytes) -> dict:
    """A request body as a ConfigMap (``kind`` and ``apiVersion`` default to the endpoint's)."""
    try:
        raw = json.loads(body)
        if not isinstance(raw, dict):
            raise ValueError(f"cannot unmarshal {_JSON_TYPES.get(type(raw), 'value')} into a ConfigMap")
    except ValueError as err:
        more = " ..." if len(body) > 30 else ""
        if not body:
            summary = "<empty>"
        elif body[:1] == b"{":
            summary = body[:30].decode("utf-8", "replace") + more
        else:
            summary = body[:30].hex() + more
        raise new_bad_request(f"the object provided is unrecognized (must be of type {KIND}): {err} ({summary})") from None
    kind, api_version = raw.get("kind") or KIND, raw.get("apiVersion") or API_VERSION
    version = api_version.rsplit("/", 1)[-1] if isinstance(api_version, str) else API_VERSION

    def fail(why: str) -> StatusError:
        return new_bad_request(f"{kind} in version {_q(version)} cannot be handled as a {KIND}: {why}")

    if api_version != API_VERSION:
        raise fail(f"no kind {_q(kind)} is registered for version {_q(api_version)} in scheme \"pkg/api/legacyscheme/scheme.go:30\"")
    if kind != KIND:
        raise fail(f"converting (v1.{kind}) to (core.{KIND}): unknown conversion")
    meta = raw.get("metadata") or {}
    if not isinstance(meta, dict):
        raise fail(_cannot_unmarshal(meta, "ConfigMap.metadata", "v1.ObjectMeta"))
    for k in ("name", "generateName", "namespace", "resourceVersion", "uid", "creationTimestamp"):
        if k in meta and meta[k] is not None and not isinstance(meta[k], str):
            raise fail(_cannot_unmarshal(meta[k], f"ObjectMeta.metadata.{k}", "string"))
    problem = (_string_map(meta.get("labels"), "ObjectMeta.metadata.labels")
               or _string_map(meta.get("annotations"), "ObjectMeta.metadata.annotations")
               or _string_map(raw.get("data"), "ConfigMap.data"))
    if problem:
        raise fail(problem)
    return {"metadata": {k: v for k, v in meta.items() if k in _META_ORDER and v}, "data": raw.get("data") or {}}


# -- the handlers, on werkzeug ------------------------------------------------------------------


class Request(werkzeug.wrappers.Request):
    """werkzeug's request with two of the apiserver's rules: the query as Go's ``URL.Query()``
    parses it (:func:`genericserver.request.query`), and the body limit of Go's default
    ``--max-request-body-bytes``."""

    max_content_length = MAX_REQUEST_BODY_BYTES

    @cached_property
    def args(self) -> MultiDict:  # type: ignore[override]
        return MultiDict([(k, v) for k, values in request.query(self.environ).items() for v in values])


class Response(werkzeug.wrappers.Response):
    """werkzeug's response; like a Go handler's, it has no Content-Type unless one is given.
    Statuses are given as Go's status lines (werkzeug's own are upper case)."""

    default_mimetype = None


URLS = Map(
    [
        Rule("/api/v1/namespaces/<namespace>/" + RESOURCE, endpoint="collection", methods=["GET", "POST"]),
        Rule("/api/v1/namespaces/<namespace>/" + RESOURCE + "/<name>", endpoint="item", methods=["GET", "PUT", "DELETE"]),
        Rule("/api/v1/" + RESOURCE, endpoint="collection", methods=["GET"]),
        Rule("/echo", endpoint="echo"),
        Rule("/slow", endpoint="slow"),
    ],
    merge_slashes=False,  # "a//b" is not "a/b" to the apiserver: no redirect, a 404
)


def _object(code: int, obj: Any) -> Response:
    return Response(_json_line(obj), status=responsewriters.status_line(code), content_type="application/json")


def _status(st: dict) -> Response:
    """A ``metav1.Status`` as Go's error writers send it (``responsewriters.write_status``)."""
    return Response(responsewriters.encode_status(st), status=responsewriters.status_line(st["code"]), content_type="application/json",
                    headers={"X-Content-Type-Options": "nosniff"})


def _method_not_allowed() -> Response:
    # what go-restful answers for a known path and an unknown method
    return Response(b"405: Method Not Allowed", status="405 Method Not Allowed", content_type="text/plain; charset=utf-8")


def _not_a_status(err: BaseException) -> Response:
    """Go's ``ErrorToAPIStatus`` for an error no handler turned into a Status: 500, no reason."""
    log.error("apiserver received an error that is not an metav1.Status: %r: %s", err, err)
    return _status({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": str(err), "code": 500})


def _read_body(req: Request) -> bytes:
    """Go's ``limitedReadBody``: read one byte more than the limit, so a body over it shows.

    werkzeug refuses a declared Content-Length over ``max_content_length`` before anything is
    read; the body itself is read from ``wsgi.input`` (the server ends it at its length, or at
    the last chunk), not through werkzeug's limited stream, which would cut a chunked body at the
    limit without a word and turn a read error into its own 400.
    """
    limit = req.max_content_length or MAX_REQUEST_BODY_BYTES
    too_large = StatusError(responsewriters.status(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}"))
    if (req.content_length or 0) > limit:
        raise too_large
    if req.content_length is None and not req.environ.get("wsgi.input_terminated"):
        return b""  # no length and no server to end the stream: no body (werkzeug's safe fallback)
    data = req.environ["wsgi.input"].read(limit + 1)
    if len(data) > limit:
        raise too_large
    return data


def _truthy(values: list[str]) -> bool:
    # absent, "0" and "false" are false; anything else is true (Go's query-to-bool conversion)
    return bool(values) and values[0] != "0" and values[0].lower() != "false"


def _watch_stream(store: Store, namespace: Optional[str], pending: collections.deque, rv: int,
                  stops: list[rt.Event], deadline: Optional[float]) -> Iterator[bytes]:
    """Events until a stop event fires or the deadline passes (Go's WatchServer.HandleHTTP loop)."""
    yield b""  # flush the header at once, as Go's watch server does
    while True:
        if any(ev.is_set() for ev in stops) or (deadline is not None and rt.now() >= deadline):
            return
        if pending:
            typ, obj = pending.popleft()
            yield _json_line({"type": typ, "object": obj})
            continue
        try:
            events, rv, changed = store.events_after(rv, namespace)
        except StatusError as err:  # fell behind the history: say why, then end
            yield _json_line({"type": "ERROR", "object": err.status})
            return
        if events:
            pending.extend(events)
            continue
        timeout = None if deadline is None else max(0.0, deadline - rt.now())
        if rt.select(*stops, changed, timeout=timeout) is not changed:
            return  # shutting down, the request is over, or timed out


def route_metrics(endpoint: str, method: str, namespace: Optional[str]) -> Optional[tuple[str, str]]:
    """The verb and scope Go's installer registers a route's metrics with (installer.go), or None
    for what go-restful does not serve (``/echo`` and ``/slow`` stand for handlers on the
    non-go-restful mux, which Go does not instrument)."""
    verb = {("collection", "GET"): "LIST", ("collection", "POST"): "POST", ("item", "GET"): "GET",
            ("item", "PUT"): "PUT", ("item", "DELETE"): "DELETE"}.get((endpoint, method))
    if verb is None:
        return None
    if endpoint == "item" or verb == "POST":
        return verb, "resource"
    return verb, "namespace" if namespace is not None else "cluster"


class SampleAPI:
    """The WSGI app :func:`install` registers: werkzeug's URL map picks the endpoint method.

    With ``metrics`` (the server's :class:`genericserver.metrics.Metrics`) each REST route is
    instrumented as Go's installer instruments it (``InstrumentRouteFunc``: the requests, their
    codes and latencies), and a watch counts as long-running while it streams
    (``RecordLongRunning``).
    """

    def __init__(self, store: Store, min_request_timeout: float, rand: Callable[[], float], not_found_app: WSGIApp,
                 metrics: Any = None):
        self.store = store
        self.min_request_timeout = min_request_timeout
        self.rand = rand
        self.not_found_app = not_found_app
        self.metrics = metrics

    def __call__(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        req = Request(environ)
        route = None
        try:
            endpoint, args = URLS.bind_to_environ(environ).match()
            if req.method == "HEAD" and endpoint in ("collection", "item"):
                raise MethodNotAllowed()  # werkzeug lets HEAD in wherever GET is; go-restful does not
            route = route_metrics(endpoint, req.method, args.get("namespace"))
            resp = getattr(self, endpoint)(req, **args)
        except NotFound:
            return self.not_found_app(environ, start_response)
        except MethodNotAllowed:
            resp = _method_not_allowed()
        except StatusError as err:
            resp = _status(err.status)
        except http1.BodyError as err:  # the body was cut off or malformed
            resp = _not_a_status(err)
        if self.metrics is None or route is None:
            return resp(environ, start_response)
        verb, scope = route
        instrumented = self.metrics.instrument_handler_func(
            verb, "", API_VERSION, RESOURCE, "", scope, APISERVER_COMPONENT, False, "", resp)
        return instrumented(environ, start_response)

    def watch_timeout(self, args: MultiDict) -> float:
        """``timeoutSeconds`` if given, else a random time in [min, 2*min) so watches end spread out."""
        given = args.get("timeoutSeconds", "")
        if given:
            if not re.fullmatch(r"[+-]?[0-9]+", given):
                raise new_bad_request(f"strconv.ParseInt: parsing {_q(given)}: invalid syntax")
            if int(given) != 0:
                return float(int(given))
        if self.min_request_timeout > 0:
            return self.min_request_timeout * (self.rand() + 1.0)
        return 0.0  # no timeout

    def collection(self, req: Request, namespace: Optional[str] = None) -> Response:
        if req.method == "GET" and _truthy(req.args.getlist("watch")):
            return self.watch(req, namespace)
        if req.method == "GET":
            items, rv = self.store.list(namespace)
            for item in items:  # items of a typed list carry no kind of their own
                del item["kind"], item["apiVersion"]
            return _object(200, {"kind": KIND + "List", "apiVersion": API_VERSION, "metadata": {"resourceVersion": str(rv)}, "items": items})
        obj = decode_config_map(_read_body(req))  # POST
        meta = obj["metadata"]
        if meta.get("namespace") and meta["namespace"] != namespace:
            raise new_bad_request("the namespace of the provided object does not match the namespace sent on the request")
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(random.choice(_NAME_CHARS) for _ in range(5))
        if not meta.get("name"):
            raise new_invalid("", "metadata.name", "FieldValueRequired", "Required value: name or generateName is required")
        if len(meta["name"]) > 253 or not _DNS1123_SUBDOMAIN.match(meta["name"]):
            raise new_invalid(meta["name"], "metadata.name", "FieldValueInvalid", f"Invalid value: {_q(meta['name'])}: {_DNS1123_MSG}")
        meta.pop("resourceVersion", None)
        return _object(201, self.store.create(namespace, obj))  # type: ignore[arg-type]

    def item(self, req: Request, namespace: str, name: str) -> Response:
        if req.method == "GET":
            return _object(200, self.store.get(namespace, name))
        if req.method == "PUT":
            obj = decode_config_map(_read_body(req))
            meta = obj["metadata"]
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise new_bad_request("the namespace of the provided object does not match the namespace sent on the request")
            if meta.get("name", "") != name:
                raise new_bad_request(f"the name of the object ({meta.get('name', '')}) does not match the name on the URL ({name})")
            return _object(200, self.store.update(namespace, name, obj))
        gone = self.store.delete(namespace, name)  # DELETE
        details = {"name": name, "kind": RESOURCE, "uid": gone["metadata"]["uid"]}
        return _object(200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})

    def watch(self, req: Request, namespace: Optional[str]) -> Response:
        timeout = self.watch_timeout(req.args)
        initial, rv = self.store.watch_start(namespace, req.args.get("resourceVersion", ""))
        stops = []
        sig = request.server_shutdown_signal_from(req.environ)
        if sig is not None:
            stops.append(sig.shutting_down())
        stops.append(request.context_from(req.environ).done())
        deadline = rt.now() + timeout if timeout > 0 else None
        pending = collections.deque(("ADDED", obj) for obj in initial)
        events: Iterable[bytes] = _watch_stream(self.store, namespace, pending, rv, stops, deadline)
        if self.metrics is not None:  # a long-running request until its stream is closed
            done = self.metrics.long_running_started(req.environ, request.request_info_from(req.environ), APISERVER_COMPONENT)
            events = on_close(events, done)
        return Response(events, status=200, content_type="application/json", headers={"Transfer-Encoding": "chunked"})

    @staticmethod
    def echo(req: Request) -> Response:
        """200, the ``message`` query parameter in the ``echo`` response header, no body."""
        # werkzeug refuses a newline in a header value; Go's header writer sends it as a space
        # (genericserver.httpresponse does too): do that here, so the answer is Go's either way
        message = req.args.get("message", "").replace("\r", " ").replace("\n", " ")
        return Response(b"", headers={"echo": message})

    @staticmethod
    def slow(req: Request) -> Response:
        """200 after ``seconds`` seconds (runtime time); 503 if the request's context ends first."""
        text = req.args.get("seconds", "")
        try:
            seconds = float(text)
            if not seconds >= 0 or seconds == float("inf"):
                raise ValueError
        except ValueError:
            return _http_error(f"invalid seconds {_q(text)}: want a number >= 0", 400)
        ctx = request.context_from(req.environ)
        if rt.select(ctx.done(), timeout=seconds) is not None:
            return _http_error(f"gave up waiting: {ctx.err()}", 503)
        return Response(f"slept {format_go_duration(seconds)}\n", content_type="text/plain; charset=utf-8")


def _http_error(message: str, code: int) -> Response:
    """net/http's ``http.Error``: plain text, ``nosniff``, the message and a newline."""
    return Response(message + "\n", status=responsewriters.status_line(code), content_type="text/plain; charset=utf-8", headers={"X-Content-Type-Options": "nosniff"})


def echo(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
    """``/echo`` on its own, as a WSGI app (the graceful-termination tests mount it alone)."""
    return SampleAPI.echo(Request(environ))(environ, start_response)


def slow(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
    """``/slow`` on its own, as a WSGI app."""
    return SampleAPI.slow(Request(environ))(environ, start_response)


def install(mux: Any, store: Optional[Store] = None, *, min_request_timeout: float = 1800,
            rand: Callable[[], float] = random.random, not_found_app: WSGIApp = not_found, metrics: Any = None) -> Store:
    """Register the sample API on ``mux``; returns the store (a new one unless given).

    ``min_request_timeout`` (seconds) sets the watch timeout range; ``rand`` picks within it;
    ``metrics`` (the server's ``Metrics``) instruments the REST routes.
    """
    store = store if store is not None else Store()
    api = SampleAPI(store, min_request_timeout, rand, not_found_app, metrics)
    mux.handle_prefix("/api/v1/namespaces/", api)
    for path in ("/api/v1/" + RESOURCE, "/echo", "/slow"):
        mux.handle(path, api)
    return store

"""Port of k8s.io/apiserver/pkg/endpoints/handlers/get.go (v1.36.0): GET of one object, and LIST (or WATCH).

``get_resource`` answers the object (or, for a storage that reads options of its own from the
query, Go's ``GetResourceWithOptions``, what it answers: ``pods/log`` a stream). ``list_resource`` reads Go's ``ListOptions`` from the query
(``labelSelector``, ``fieldSelector``, ``watch``, ``resourceVersion``, ``timeoutSeconds``,
``limit``, ``continue``, ``allowWatchBookmarks``, ``resourceVersionMatch``) and either serves a
watch (:mod:`.watch`) or answers the list: items filtered by the selectors, sorted by
namespace and name as etcd's keys sort, cut at ``limit`` with a ``continue`` token (etcd3's
format: base64 of ``{"v":"meta.k8s.io/v1","rv":N,"start":"KEY\\u0000"}``) and the count of
what is left.

A list here always reads the current state: a memory store keeps no snapshots, so a
``continue`` from an older version continues over what is there now (Go's etcd would serve
the old snapshot, or 410 once it is compacted).
"""

from __future__ import annotations

import base64
import json
from typing import Iterable, Optional

from genericserver.apimachinery.api import errors
from genericserver.apimachinery.apis.meta.internalversion.validation import validate_list_options
from genericserver.endpoints.handlers import response, watch
from genericserver.endpoints.handlers.rest import Request, RequestScope, StartResponse, bool_param, int_param, selectors, truthy

LIST_OPTIONS_FIELDS = ("labelSelector", "fieldSelector", "watch", "allowWatchBookmarks", "resourceVersion",
                       "resourceVersionMatch", "timeoutSeconds", "limit", "continue", "sendInitialEvents")


def get_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str, name: str) -> Iterable[bytes]:
    # a GetterWithOptions (pods/log) reads its own options from the query (GetResourceWithOptions)
    getter = scope.extra.get("get_with_options")
    obj = getter(namespace, name, req) if getter is not None else scope.store.get(namespace, name)
    return response.write_object(scope, req.environ, start_response, 200, obj, args=req.args)


def encode_continue(key: tuple[str, str], rv: int) -> str:
    start = f"{key[0]}/{key[1]}\x00" if key[0] else f"{key[1]}\x00"
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_continue(token: str) -> tuple[str, int]:
    """The key to start after and the version, or Go's 400 for a token it cannot read."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
        start, rv = data["start"], int(data["rv"])
        if not isinstance(start, str) or not start:
            raise ValueError("continue key is not valid: encoded start key is empty")
        return start, rv
    except (ValueError, KeyError, TypeError) as err:
        raise errors.new_bad_request(f"invalid continue token: {err}") from None


def list_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: Optional[str]) -> Iterable[bytes]:
    is_watch = truthy(req.args.getlist("watch"))
    validate_list_options(is_watch, req.args.get("resourceVersion", ""), req.args.get("resourceVersionMatch", ""),
                          req.args.get("continue", ""), bool_param(req, "sendInitialEvents"))
    if is_watch:
        return watch.serve_watch(scope, req, start_response, namespace)
    matches = selectors(scope, req)
    limit = int_param(req, "limit") or 0
    token = req.args.get("continue", "")
    items, rv = scope.store.list(namespace)
    items = [i for i in items if matches(i)]
    if token:
        start, _ = decode_continue(token)
        items = [i for i in items if _key_string(i) >= start]
    meta: dict = {"resourceVersion": str(rv)}
    if limit > 0 and len(items) > limit:
        last = items[limit - 1]["metadata"]
        meta["continue"] = encode_continue((last.get("namespace", ""), last["name"]), rv)
        meta["remainingItemCount"] = len(items) - limit
        items = items[:limit]
    for item in items:  # the items of a typed list carry no kind of their own
        item.pop("kind", None)
        item.pop("apiVersion", None)
    lst = {"kind": scope.resource.list_struct.short_name if scope.resource.list_struct else scope.kind + "List",
           "apiVersion": scope.resource.group_version, "metadata": meta, "items": items}
    return response.write_object(scope, req.environ, start_response, 200, lst, is_list=True, args=req.args)


def _key_string(obj: dict) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]

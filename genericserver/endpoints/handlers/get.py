"""Port of k8s.io/apiserver/pkg/endpoints/handlers/get.go (v1.36.0): GET of one object, and LIST (or WATCH).

In Go's order. ``get_resource`` (``getResourceHandler``): the output media type is negotiated
(406 before the store is read), then the getter runs: ``export=true`` refused (400: gone since
v1.14), then the object at the given ``resourceVersion`` (one that does not parse is the storage's
error, which answers 500 with its text), or, for a storage that reads options of its own from the
query, Go's ``GetResourceWithOptions``, what it answers (``pods/log`` a stream), written by
``transformResponseObject``.

``list_resource`` (``ListResource``): the media type (406), then :func:`list_opts` reads Go's
``ListOptions`` from the query as ``listOpts`` does: the parameters decoded by the parameter
codec (:mod:`genericserver.apimachinery.apis.meta.v1.conversion`; 400: a number that does not
parse, then a label or field selector that does not; a bool is true unless ``0`` or ``false``),
defaulted (``SetListOptionsDefaults``: a watch from no version or ``0`` asks for its initial
events), checked (``ValidateListOptions``: 422 on ``ListOptions.meta.k8s.io``), the field
selector's labels converted as the resource allows (400), and a name in the path made a
``metadata.name`` term. Then either :func:`handle_watch`
(the watch timeout, the store's watch, :mod:`.watch`) or :func:`handle_list`: the generic
store's ``List`` (:func:`genericserver.registry.generic.registry.store.list_predicate`: the
selection, ``limit`` and ``continue``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

from genericserver import request
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.apis.meta.internalversion.defaults import set_list_options_defaults
from genericserver.apimachinery.apis.meta.internalversion.validation import validate_list_options
from genericserver.apimachinery.apis.meta.v1 import conversion as metav1conversion
from genericserver.apimachinery.fields import selector as field_selector
from genericserver.apimachinery.labels import selector as label_selector
from genericserver.apimachinery.runtime.conversion import ConversionError, convert_slice_string_to_bool
from genericserver.endpoints.handlers import response, watch
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.endpoints.handlers.rest import Request, RequestScope, StartResponse
from genericserver.metrics import APISERVER_COMPONENT
from genericserver.registry.generic.registry import store as generic_store
from genericserver.storage.interfaces import InvalidError
from genericserver.storage.selection_predicate import SelectionPredicate, with_field_labels
from genericserver.wsgi import on_close

LIST_OPTIONS_FIELDS = ("labelSelector", "fieldSelector", "watch", "allowWatchBookmarks", "resourceVersion",
                       "resourceVersionMatch", "timeoutSeconds", "limit", "continue", "sendInitialEvents")
FIELD_LABELS = ("metadata.name", "metadata.namespace")


@dataclass
class ListOptions:
    """metainternalversion's ``ListOptions``, as far as the handlers here read them."""

    label_selector: Any
    field_selector: Any
    watch: bool = False
    allow_watch_bookmarks: bool = False
    resource_version: str = ""
    resource_version_match: str = ""
    timeout_seconds: Optional[int] = None
    limit: int = 0
    continue_: str = ""
    send_initial_events: Optional[bool] = None

    def predicate(self, scope: RequestScope) -> SelectionPredicate:
        """The generic store's ``PredicateFunc`` of these options: what a list or watch selects."""
        return SelectionPredicate(self.label_selector, self.field_selector, with_field_labels(scope.resource.field_labels),
                                  self.limit, self.continue_)


def get_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str, name: str) -> Iterable[bytes]:
    media_type = response.negotiate_output(scope, req.environ)
    # a GetterWithOptions (pods/log) reads its own options from the query (GetResourceWithOptions)
    getter = scope.extra.get("get_with_options")
    if getter is not None:
        result = getter(namespace, name, req)
    else:
        try:
            result = scope.store.get(namespace, name, resource_version=_get_options(req))
        except InvalidError as err:  # not an API error: ErrorToAPIStatus makes it a 500 with its text
            return response.write_error(scope, req.environ, start_response, err)
    return response.transform_response_object(scope, req, start_response, 200, media_type, result)


def _get_options(req: Request) -> str:
    """``GetResource``'s getter before the store: ``export`` (gone since v1.14) refused as a bool
    parameter reads it (any value but "0" or "false" is true), then ``GetOptions`` decoded (its
    ``resourceVersion``, which the storage parses)."""
    values = request.query(req.environ)
    if values.get("export") and convert_slice_string_to_bool(values["export"]):
        raise errors.new_bad_request("the export parameter, deprecated since v1.14, is no longer supported")
    return metav1conversion.convert_url_values_to_v1_get_options(values).get("resourceVersion", "")


def list_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: Optional[str],
                  name: Optional[str] = None, *, force_watch: bool = False) -> Iterable[bytes]:
    """``ListResource``; ``force_watch`` for the deprecated ``/watch/`` routes, which watch
    without ``?watch``."""
    media_type = response.negotiate_output(scope, req.environ)
    opts = list_opts(scope, req, name)
    if opts.watch or force_watch:
        return handle_watch(scope, req, start_response, namespace, opts, media_type)
    return handle_list(scope, req, start_response, namespace, opts, media_type)


def decode_list_options(scope: RequestScope, req: Request) -> ListOptions:
    """The query decoded into ``ListOptions`` (400 for what does not parse), checked (422), and
    the field selector's labels converted (400): the steps get.go's ``listOpts`` and
    delete.go's ``DeleteCollection`` share."""
    try:  # url.Values to v1.ListOptions (the numbers), then to the internal version (the selectors)
        v1 = metav1conversion.convert_url_values_to_v1_list_options(request.query(req.environ))
        labels = label_selector.parse(v1["labelSelector"])
        fields = field_selector.parse(v1["fieldSelector"])
    except (ConversionError, label_selector.SelectorError, field_selector.SelectorError) as err:
        raise errors.new_bad_request(str(err)) from None
    opts = ListOptions(labels, fields, v1["watch"], v1["allowWatchBookmarks"], v1["resourceVersion"],
                       v1["resourceVersionMatch"], v1.get("timeoutSeconds"), v1["limit"], v1["continue"],
                       v1.get("sendInitialEvents"))
    set_list_options_defaults(opts)
    validate_list_options(opts.watch, opts.resource_version, opts.resource_version_match, opts.continue_, opts.send_initial_events)
    field_labels = scope.resource.field_labels
    known = FIELD_LABELS + tuple(field_labels({})) if field_labels else FIELD_LABELS
    for term in fields.terms:
        if term.field not in known:
            # ConvertFieldLabel: a kind with a conversion of its own (pods, events) answers with it, the rest with metav1's
            raise errors.new_bad_request(f"field label not supported: {term.field}" if field_labels else
                                         f'"{term.field}" is not a known field selector: only "metadata.name", "metadata.namespace"')
    return opts


def list_opts(scope: RequestScope, req: Request, name: Optional[str] = None) -> ListOptions:
    """``listOpts``: :func:`decode_list_options`, and a name in the path (a watch of one
    object) as a ``metadata.name`` term that a given field selector must agree with."""
    opts = decode_list_options(scope, req)
    if name is not None:
        if not opts.field_selector.empty():
            if opts.field_selector.requires_exact_match("metadata.name") != name:
                raise errors.new_bad_request("fieldSelector metadata.name doesn't match requested name")
        else:
            opts.field_selector = field_selector.Selector((field_selector.Term("metadata.name", name),))
    return opts


def handle_watch(scope: RequestScope, req: Request, start_response: StartResponse, namespace: Optional[str],
                 opts: ListOptions, media_type: negotiate.MediaTypeOptions) -> Iterable[bytes]:
    """``handleWatch``: ``timeoutSeconds`` if given and not 0, else a random time in [min,
    2*min) of ``--min-request-timeout`` so that watches end spread out; the store's watch
    (a watch-list starts from the current state whatever the version); the watch server,
    counted as a long-running request until its stream is closed."""
    timeout = watch_timeout(scope, opts.timeout_seconds)
    initial, rv = scope.store.watch_start(namespace, "" if opts.send_initial_events else opts.resource_version)
    stream = watch.serve_watch_handler(scope, media_type, req, start_response, timeout, namespace, initial, rv,
                                       opts.predicate(scope), send_initial_events=bool(opts.send_initial_events),
                                       bookmarks=opts.allow_watch_bookmarks)
    if scope.metrics is not None:
        done = scope.metrics.long_running_started(req.environ, request.request_info_from(req.environ), APISERVER_COMPONENT)
        stream = on_close(stream, done)
    return stream


def watch_timeout(scope: RequestScope, timeout_seconds: Optional[int]) -> float:
    """The watch's timeout: ``timeoutSeconds`` unless 0, else [min, 2*min) of the minimum; 0: none."""
    timeout = float(timeout_seconds or 0)
    if timeout == 0 and scope.min_request_timeout > 0:
        timeout = scope.min_request_timeout * (scope.rand() + 1.0)
    return timeout


def handle_list(scope: RequestScope, req: Request, start_response: StartResponse, namespace: Optional[str],
                opts: ListOptions, media_type: negotiate.MediaTypeOptions) -> Iterable[bytes]:
    """``handleList``: the store's ``List``, written."""
    result = generic_store.list_predicate(scope.store, scope.resource, namespace, opts.predicate(scope),
                                          opts.resource_version, opts.resource_version_match)
    return response.transform_response_object(scope, req, start_response, 200, media_type, result, is_list=True)

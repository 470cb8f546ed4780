"""Port of k8s.io/apiserver/pkg/endpoints/request/requestinfo.go (v1.36.0).

:class:`RequestInfoFactory` reads a request's URL and method and says what the request is about:
a resource request (``/api/v1/namespaces/ns/pods/foo``) with its verb, group, version,
namespace, resource, subresource and name, or a non-resource request (``/healthz``) whose verb
is the lower-cased HTTP method. Every filter from ``with_request_info`` inwards decides on this
(long-running or not, mutating or not, watch or not).

Go's rules kept here:

* a GET on a collection is ``list``, or ``watch`` when ``?watch`` is present and not ``0`` /
  ``false``; a ``/watch/`` (or ``/proxy/``) path segment after the version sets the verb itself;
* a DELETE on a collection is ``deletecollection``;
* ``?fieldSelector=metadata.name=x`` on a list or watch names the object (when ``x`` could be a
  path segment);
* the raw ``fieldSelector`` and ``labelSelector`` are recorded for list, watch and
  deletecollection (the AuthorizeWithSelectors gate is GA and locked on in v1.36).

Go decodes the whole query into ``ListOptions``; a decode error only drops the name taken from
the field selector (the verb is then re-read from ``watch`` alone). Here the parameters that can
fail to decode are checked: the parameter codec's (:mod:`genericserver.apimachinery.apis.meta.v1.conversion`:
``timeoutSeconds`` and ``limit``, base-10 int64) and ``fieldSelector`` (Go's grammar, below). Label selectors are not parsed (deviation: a malformed
``labelSelector`` with a ``metadata.name`` field selector keeps the name here, Go drops it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Protocol

from genericserver import klog, request
from genericserver.apimachinery.api.validate.content import is_path_segment_name
from genericserver.apimachinery.apis.meta.v1 import conversion as metav1conversion
from genericserver.responsewriters import request_uri

log = logging.getLogger("genericserver.requestinfo")

# REST path words that are verbs rather than resources (Go keeps the same two)
SPECIAL_VERBS = frozenset({"proxy", "watch"})
# of those, the ones after which a third path part is *not* a subresource
SPECIAL_VERBS_NO_SUBRESOURCES = frozenset({"proxy"})
# /namespaces/{name}/{x}: these x are subresources of the namespace, anything else is a resource
NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
VERBS_WITH_SELECTORS = frozenset({"list", "watch", "deletecollection"})


@dataclass
class RequestInfo:
    """What a request is about; for a non-resource request only ``path`` and ``verb`` are set."""

    is_resource_request: bool = False
    path: str = ""
    # the kube verb (list, watch, create, ...) for API requests; the lower-cased method otherwise
    verb: str = ""
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    # path parts from the resource on: resource, name, subresource, then anything further
    parts: list[str] = field(default_factory=list)
    field_selector: str = ""
    label_selector: str = ""


# Go: func(r *http.Request, requestInfo *RequestInfo) bool
LongRunningRequestCheck = Callable[[dict, RequestInfo], bool]


class RequestInfoResolver(Protocol):
    def new_request_info(self, environ: dict) -> tuple[RequestInfo, Optional[Exception]]: ...


def url_path(environ: dict) -> str:
    """Go's ``req.URL.Path``: the decoded path (WSGI hands it over as latin-1 of the raw bytes)."""
    raw = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
    try:
        return raw.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return raw


def _query(environ: dict) -> dict[str, list[str]]:
    return request.query(environ)


def _split_path(path: str) -> list[str]:
    path = path.strip("/")
    return path.split("/") if path else []


_VERB_BY_METHOD = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


class RequestInfoFactory:
    """Go's ``RequestInfoFactory``; prefixes are given without slashes."""

    def __init__(self, api_prefixes: Iterable[str] = ("api", "apis"), groupless_api_prefixes: Iterable[str] = ("api",)):
        self.api_prefixes = frozenset(api_prefixes)
        self.groupless_api_prefixes = frozenset(groupless_api_prefixes)

    def new_request_info(self, environ: dict) -> tuple[RequestInfo, Optional[Exception]]:
        """Resolve ``environ``; on error the info holds what was known before it (as in Go)."""
        method = environ.get("REQUEST_METHOD", "GET")
        path = url_path(environ)
        # a non-resource request until the path proves otherwise
        info = RequestInfo(path=path, verb=method.lower())

        parts = _split_path(path)
        if len(parts) < 3 or parts[0] not in self.api_prefixes:
            return info, None
        info.api_prefix = parts[0]
        parts = parts[1:]
        if info.api_prefix not in self.groupless_api_prefixes:
            # the prefix is consumed already: a group needs group/version/resource after it
            if len(parts) < 3:
                return info, None
            info.api_group = parts[0]
            parts = parts[1:]

        info.is_resource_request = True
        info.api_version = parts[0]
        parts = parts[1:]

        verb_via_path_prefix = False
        if parts[0] in SPECIAL_VERBS:
            if len(parts) < 2:
                return info, ValueError(f"unable to determine kind and namespace from url, {request_uri(environ)}")
            info.verb = parts[0]
            parts = parts[1:]
            verb_via_path_prefix = True
        else:
            info.verb = _VERB_BY_METHOD.get(method, "")

        if parts[0] == "namespaces":
            if len(parts) > 1:
                info.namespace = parts[1]
                # /namespaces/{ns}/{resource}/...: re-anchor the parts on the namespaced resource
                if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
                    parts = parts[2:]
        else:
            info.namespace = ""  # metav1.NamespaceNone
        info.parts = parts

        # parts: resource / name / subresource / anything we do not interpret
        if len(parts) >= 3 and info.verb not in SPECIAL_VERBS_NO_SUBRESOURCES:
            info.subresource = parts[2]
        if len(parts) >= 2:
            info.name = parts[1]
        if len(parts) >= 1:
            info.resource = parts[0]

        query = _query(environ)
        if not info.name and info.verb == "get":
            _resolve_collection_get(info, query)
        if not info.name and info.verb == "delete":
            info.verb = "deletecollection"

        # selectors are read straight from the query (not from the decoded options, which a
        # decode error would lose), and never for the deprecated /watch/ path form
        if not verb_via_path_prefix and info.verb in VERBS_WITH_SELECTORS:
            info.field_selector = query.get("fieldSelector", [""])[0]
            info.label_selector = query.get("labelSelector", [""])[0]
        return info, None


def _resolve_collection_get(info: RequestInfo, query: dict[str, list[str]]) -> None:
    """A GET without a name is a list or a watch; a metadata.name field selector names it."""
    name_selected: Optional[str] = None
    try:
        watch, name_selected = _decode_list_options(query)
    except ValueError as err:
        # Go logs the decode error and keeps only the watch flag, read with strings.ToLower (the
        # codec itself compares with EqualFold: "falſe" is false there, true here)
        log.error("%s", klog.format_s("Couldn't parse request", err=str(err), request=query))
        values = query.get("watch")
        watch, name_selected = bool(values) and values[0].lower() not in ("false", "0"), None
    info.verb = "watch" if watch else "list"
    if name_selected is not None and not is_path_segment_name(name_selected):
        info.name = name_selected


def _decode_list_options(query: dict[str, list[str]]) -> tuple[bool, Optional[str]]:
    """The parts of ListOptions decoding that can fail (the parameter codec's numbers, then the
    field selector); the watch flag and the metadata.name the selector requires."""
    opts = metav1conversion.convert_url_values_to_v1_list_options(query)  # ConversionError is a ValueError
    terms = parse_field_selector(opts["fieldSelector"])
    for fld, op, value in terms:
        if fld == "metadata.name" and op != "!=":
            return opts["watch"], value
    return opts["watch"], None


def _split_terms(selector: str) -> list[str]:
    # commas split terms unless escaped; the backslash stays in the term
    if not selector:
        return []
    terms, start, in_slash = [], 0, False
    for i, c in enumerate(selector):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(selector[start:i])
            start = i + 1
    terms.append(selector[start:])
    return terms


def _unescape(value: str) -> str:
    out, in_slash = [], False
    for c in value:
        if in_slash:
            if c not in "\\,=":
                raise ValueError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c in ",=":
            raise ValueError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if in_slash:
        raise ValueError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(selector: str) -> list[tuple[str, str, str]]:
    """``fields.ParseSelector``: sorted ``(field, op, value)`` terms; ``ValueError`` with Go's text."""
    terms = []
    for part in sorted(_split_terms(selector)):
        if not part:
            continue
        # the first operator occurrence splits; "!=" and "==" are tried before "="
        for i in range(len(part)):
            op = next((o for o in ("!=", "==", "=") if part.startswith(o, i)), None)
            if op is not None:
                lhs, rhs = part[:i], part[i + len(op) :]
                break
        else:
            raise ValueError(f"invalid selector: '{selector}'; can't understand '{part}'")
        value = _unescape(rhs)
        if lhs or value:  # an empty term transforms into "everything" and drops out
            terms.append((lhs, op, value))
    return terms

"""Port of k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/{errors,status,writers}.go (v1.36.0): the filters' error answers.

The few response shapes the filters share, byte for byte as Go writes them. Go's package is one
namespace its callers use as ``responsewriters.X``, and the filters use a function or two of each
file, so one module holds them:

* errors.go: :func:`internal_error` (``InternalError``), :func:`forbidden` (``Forbidden``, with
  :func:`forbidden_status_error` and its message);
* writers.go: :func:`error_negotiated` (``ErrorNegotiated``: the Status in the serializer the
  request's Accept negotiates, JSON unless it prefers protobuf or YAML, a ``Retry-After`` header
  when the status carries ``retryAfterSeconds``, and no ``nosniff``);
* status.go: :func:`status` and :func:`write_status`, a ``metav1.Status`` as compact JSON plus a
  newline (``nosniff`` unless told not to), and :func:`error_to_status` (``ErrorToAPIStatus``: the
  Status an error is answered with; the REST handlers' errors go through it);
* and net/http's ``http.Error`` (:func:`http_error`: ``text/plain; charset=utf-8``,
  ``X-Content-Type-Options: nosniff``, the message and a newline) and ``StatusText``
  (:func:`status_line`), which they write with.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Callable, Iterable, Optional

from genericserver.apimachinery.api import errors as apierrors
from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.authz import AttributesRecord
from genericserver.net.http.response import STATUS_TEXT

log = logging.getLogger("genericserver.responsewriters")

StartResponse = Callable[..., Any]
Headers = list[tuple[str, str]]


def status_line(code: int) -> str:
    """A WSGI status for ``code`` with Go's ``StatusText`` (Python's phrases differ for a few
    codes, and change between Python versions)."""
    text = STATUS_TEXT.get(code)
    return f"{code} {text}" if text else f"{code:03d} status code {code}"


def http_error(start_response: StartResponse, message: str, code: int, headers: Optional[Headers] = None) -> Iterable[bytes]:
    """net/http's ``http.Error``: plain text, ``nosniff``, the message and a newline."""
    body = (message + "\n").encode()
    hs = [h for h in headers or [] if h[0].lower() != "content-length"]
    # no length of its own (server.go's Error drops one): the server sets it if the body fits its buffer
    hs += [
        ("Content-Type", "text/plain; charset=utf-8"),
        ("X-Content-Type-Options", "nosniff"),
    ]
    start_response(status_line(code), hs)
    return [body]


def status(code: int, reason: str, message: str, details: Optional[dict] = None, *, kind: bool = True) -> dict:
    """A ``metav1.Status`` failure as an ordered dict, keys in Go's field order."""
    st: dict[str, Any] = {}
    if kind:
        st["kind"] = "Status"
        st["apiVersion"] = "v1"
    st["metadata"] = {}
    st["status"] = "Failure"
    st["message"] = message
    st["reason"] = reason
    if details is not None:
        st["details"] = details
    st["code"] = code
    return st


def encode_status(st: dict) -> bytes:
    """Compact JSON followed by a newline, as Go's json encoder writes it."""
    return (json.dumps(st, separators=(",", ":")) + "\n").encode()


def write_status(
    start_response: StartResponse, st: dict, headers: Optional[Headers] = None, *, trailer: bytes = b"", nosniff: bool = True
) -> Iterable[bytes]:
    """Write a Status as JSON; ``trailer`` is appended after the encoder's newline.

    ``nosniff=False`` leaves out ``X-Content-Type-Options``, as Go's ``ErrorNegotiated`` does
    (only ``RespondWithError`` and hand-written responses set it).
    """
    body = encode_status(st) + trailer
    hs = list(headers or [])
    hs.append(("Content-Type", "application/json"))
    if nosniff:
        hs.append(("X-Content-Type-Options", "nosniff"))
    # no Content-Length: Go writes the body and lets net/http frame it (a length if it fits the
    # 2 KiB response buffer, chunked past it)
    start_response(status_line(st["code"]), hs)
    return [body]


def _sanitize(text: str) -> str:
    # keep error text from ever looking like HTML
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def go_quote(text: str) -> str:
    """Go's ``%q`` for the plain ASCII strings used here."""
    return json.dumps(text)


def internal_error(start_response: StartResponse, environ: dict, err: str) -> Iterable[bytes]:
    """``InternalError``: 500 ``Internal Server Error: "<RequestURI>": <err>`` (and the error logged)."""
    log.error("%s", err)
    return http_error(start_response, _sanitize(f"Internal Server Error: {go_quote(request_uri(environ))}: {err}"), 500)


def request_uri(environ: dict) -> str:
    """The request target as the client sent it (Go's ``req.RequestURI``)."""
    uri = environ.get("REQUEST_URI") or environ.get("RAW_URI")
    if uri:
        return uri
    path = environ.get("PATH_INFO", "")
    qs = environ.get("QUERY_STRING", "")
    return path + ("?" + qs if qs else "")


def error_to_status(err: BaseException) -> dict:
    """Go's ``ErrorToAPIStatus``: an API error's Status, else a 500 without a reason."""
    if isinstance(err, apierrors.StatusError):
        return err.status
    logging.getLogger("genericserver.endpoints.handlers").error("apiserver received an error that is not an metav1.Status: %r: %s", err, err)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": str(err), "code": 500}


def error_negotiated(start_response: Callable, st: dict, headers: Optional[list] = None, *, nosniff: bool = False,
                     environ: Optional[dict] = None) -> Iterable[bytes]:
    """``ErrorNegotiated``: the Status in what the request's Accept asks for (a protobuf Status to
    a client that prefers protobuf, as kubectl does), JSON when it asks for nothing the server
    writes or no request is given; ``Retry-After`` if the Status asks for a delay."""
    hs = list(headers or [])
    retry = (st.get("details") or {}).get("retryAfterSeconds", 0)
    if retry > 0:
        hs.append(("Retry-After", str(retry)))
    if st["code"] == 204:
        start_response(status_line(204), hs)
        return []
    options = negotiate.negotiate_media_type_options((environ or {}).get("HTTP_ACCEPT", ""), codec_factory.SUPPORTED,
                                                     negotiate.DEFAULT_ENDPOINT_RESTRICTIONS)
    info = options.accepted if options is not None and options.accepted is not None else codec_factory.JSON
    if info is codec_factory.JSON:
        return write_status(start_response, st, hs, nosniff=nosniff)
    body = codec_factory.encode(info, {"kind": "Status", "apiVersion": "v1", **st})
    start_response(status_line(st["code"]), hs + [("Content-Type", info.media_type)] + ([("X-Content-Type-Options", "nosniff")] if nosniff else []))
    return [body]


def _forbidden_message(a: AttributesRecord) -> str:
    username = a.user.name if a.user is not None else ""
    if not a.resource_request:
        return f"User {go_quote(username)} cannot {a.verb} path {go_quote(a.path)}"
    resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    if a.namespace:
        return (f"User {go_quote(username)} cannot {a.verb} resource {go_quote(resource)} in API group "
                f"{go_quote(a.api_group)} in the namespace {go_quote(a.namespace)}")
    return (f"User {go_quote(username)} cannot {a.verb} resource {go_quote(resource)} in API group "
            f"{go_quote(a.api_group)} at the cluster scope")


def forbidden_status_error(a: AttributesRecord, reason: str) -> dict:
    """The Status ``Forbidden`` writes: who cannot do what, and the authorizer's reason."""
    msg = _sanitize(_forbidden_message(a))
    err = f"{msg}: {reason}" if reason else msg
    gr = f"{a.resource}.{a.api_group}" if a.api_group and a.resource else a.resource
    return apierrors.new_forbidden(gr, a.name, err).status


def forbidden(a: AttributesRecord, environ: dict, start_response: Callable, reason: str) -> Iterable[bytes]:
    """``responsewriters.Forbidden``: a 403 Status, negotiated, with ``X-Content-Type-Options: nosniff``."""
    return error_negotiated(start_response, forbidden_status_error(a, reason), nosniff=True, environ=environ)

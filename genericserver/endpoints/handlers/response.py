"""Port of k8s.io/apiserver/pkg/endpoints/handlers/response.go (v1.36.0): how an object becomes the answer.

Go's ``transformResponseObject`` asks the negotiated media type what the client wants: the
object itself (JSON, YAML, protobuf), or a transformation of it (``as=Table``: a
``meta.k8s.io/v1`` Table of the printer's columns; ``as=PartialObjectMetadata``: the metadata
alone), then writes it with the status code. :func:`write_object` is that, and
:func:`write_error` Go's ``scope.err`` (``ErrorNegotiated``: the error as a negotiated Status,
with ``Retry-After`` when the Status asks for one).

Both take the negotiation from ``scope.negotiate`` when the server has one (the codec factory:
JSON, YAML and protobuf); without one, JSON is the only form, which is what Go's JSON-only
clients see anyway.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from genericserver import responsewriters
from genericserver.endpoints.handlers.rest import RequestScope, StartResponse, error_to_status


def encode_json(obj: Any) -> bytes:
    """Go's ``json.Encoder``: compact, one newline after the value."""
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def negotiate_output(scope: RequestScope, environ: dict) -> None:
    """``NegotiateOutputMediaType`` up front: a 406 before anything is read or changed."""
    negotiate = scope.extra.get("negotiate")
    if negotiate is not None:
        negotiate.output_media_type(scope, environ)


def with_warnings(start_response: StartResponse, warnings: list[str]) -> StartResponse:
    """``start_response`` that adds a ``Warning: 299 - "text"`` header per warning (Go's
    warning recorder writes them with the answer's header)."""
    if not warnings:
        return start_response

    def start(status: str, headers: list, *rest: Any) -> Any:
        extra = [("Warning", f'299 - {json.dumps(w, ensure_ascii=False)}') for w in warnings]
        return start_response(status, list(headers) + extra, *rest)
    return start


def write_object(scope: RequestScope, environ: dict, start_response: StartResponse, code: int, obj: dict,
                 *, is_list: bool = False) -> Iterable[bytes]:
    """``transformResponseObject`` then ``WriteObjectNegotiated``."""
    negotiate = scope.extra.get("negotiate")
    if negotiate is not None:
        return negotiate.write_object(scope, environ, start_response, code, obj, is_list=is_list)
    body = encode_json(obj)
    start_response(responsewriters.status_line(code), [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


def write_error(scope: RequestScope, environ: dict, start_response: StartResponse, err: BaseException) -> Iterable[bytes]:
    """Go's ``ErrorNegotiated``: the Status, negotiated; ``Retry-After`` from its details."""
    st = error_to_status(err)
    negotiate = scope.extra.get("negotiate")
    if negotiate is not None:
        return negotiate.write_status(scope, environ, start_response, st)
    headers = []
    retry = (st.get("details") or {}).get("retryAfterSeconds")
    if retry:
        headers.append(("Retry-After", str(retry)))
    body = encode_json(st)
    start_response(responsewriters.status_line(st["code"]),
                   headers + [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]

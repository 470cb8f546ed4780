"""The reflecting WSGI app of the parity replay, twin of ``goserver/main.go`` (no Go twin).

It answers what the Go reference server's handlers answer, computed from the WSGI environ:

* ``/probe-alive``: 200 ``probe-alive\\n`` (the client's probe that the connection is open).
* ``/echo``: the sample API's own :func:`genericserver.sampleapi.echo`.
* anything else: the reflection, 200 ``application/json`` with an explicit Content-Length, or the
  response the query asks for (``status``, ``header``, ``body``, ``cl``, ``flush``, ``sniff``;
  ``read=0`` leaves the body unread); see ``reflect`` in main.go.

How the environ maps onto the fields of Go's reflection (the normalisations; README.md):

* ``method``, ``proto``, ``raw_query``, ``path``: ``REQUEST_METHOD``, ``SERVER_PROTOCOL``,
  ``QUERY_STRING``, ``PATH_INFO``; ``request_uri``: ``REQUEST_URI`` (``RAW_URI``).
* ``host``: ``HTTP_HOST`` (Go's ``r.Host``), and Host is not among the headers: Go moves it out
  of ``r.Header`` too.
* ``headers``: each ``HTTP_*`` key back to Go's canonical name (``HTTP_X_FOO_BAR`` ->
  ``X-Foo-Bar``; ``CONTENT_TYPE``, ``CONTENT_LENGTH``), one joined value per name.
* ``Transfer-Encoding`` is not among the headers but in ``transfer_encoding`` (its tokens,
  lower case), as Go's ``r.TransferEncoding``; on HTTP/1.0 neither, as Go ignores it there.
  With a Transfer-Encoding (HTTP/1.1), ``Trailer`` is left out of the headers (Go moves it to
  ``r.Trailer``).
* ``content_length``: -1 with a Transfer-Encoding (HTTP/1.1), else ``CONTENT_LENGTH``, else 0.
* ``body``: ``wsgi.input.read(4096)`` until it returns nothing, as ``io.ReadAll`` reads (the
  bytes before a failure are kept: the error's ``partial``); ``body_error`` the text of what it raised; ``trailers`` is
  always null (WSGI has no trailers).
* strings hold the bytes, one character per byte (latin-1), as WSGI's and main.go's do; the query
  parameters are decoded as latin-1 so that a header or body asked for goes out byte for byte.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import parse_qs

from genericserver import sampleapi

SHAPING_PARAMS = ("status", "header", "body", "flush", "cl", "sniff")
# Go's http.StatusText where Python's phrase differs
GO_STATUS_TEXT = {413: "Request Entity Too Large", 414: "Request URI Too Long", 416: "Requested Range Not Satisfiable",
                  422: "Unprocessable Entity"}


def status_line(code: int) -> str:
    try:
        text = GO_STATUS_TEXT.get(code) or HTTPStatus(code).phrase
    except ValueError:
        text = ""
    return f"{code} {text}"


def go_canonical(key: str) -> str:
    """A WSGI environ key as Go's CanonicalMIMEHeaderKey spells the header name."""
    name = key[5:] if key.startswith("HTTP_") else key
    return "-".join(part[:1].upper() + part[1:].lower() for part in name.split("_"))


def app(environ: dict, start_response: Callable) -> Iterable[bytes]:
    path = environ.get("PATH_INFO", "")
    if path == "/probe-alive":
        start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "12")])
        return [b"probe-alive\n"]
    if path == "/echo":
        return sampleapi.echo(environ, start_response)
    return reflect(environ, start_response)


def reflect(environ: dict, start_response: Callable) -> Iterable[bytes]:
    query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True, encoding="latin-1")
    body, body_error = b"", None
    if query.get("read", [""])[0] != "0":
        data = bytearray()
        try:  # io.ReadAll: piece by piece, keeping what arrived before an error
            while chunk := environ["wsgi.input"].read(4096):
                data += chunk
        except Exception as err:  # what Go's io.ReadAll would return as its error
            body_error = str(err) or type(err).__name__
            data += getattr(err, "partial", b"")  # the bytes the failed read got first
        body = bytes(data)
    if any(p in query for p in SHAPING_PARAMS):
        return shaped(query, start_response)
    data = json.dumps(reflection(environ, body, body_error), sort_keys=True).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


def reflection(environ: dict, body: bytes, body_error: Any) -> dict:
    # Go ignores Transfer-Encoding on HTTP/1.0 (issue 12785), and so does genericserver.net.http.request
    chunked = "HTTP_TRANSFER_ENCODING" in environ and environ.get("SERVER_PROTOCOL") != "HTTP/1.0"
    headers = {}
    for key, value in environ.items():
        if key in ("HTTP_HOST", "HTTP_TRANSFER_ENCODING") or (chunked and key == "HTTP_TRAILER"):
            continue
        if key.startswith("HTTP_") or key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            headers[go_canonical(key)] = [value]
    te = None
    if chunked:
        te = [t.strip().lower() for t in environ["HTTP_TRANSFER_ENCODING"].split(",")]
        length = -1
    else:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -2  # not a number: no server should have passed it on
    return {
        "method": environ.get("REQUEST_METHOD", ""),
        "request_uri": environ.get("REQUEST_URI", environ.get("RAW_URI", "")),
        "path": environ.get("PATH_INFO", ""),
        "raw_query": environ.get("QUERY_STRING", ""),
        "proto": environ.get("SERVER_PROTOCOL", ""),
        "host": environ.get("HTTP_HOST", ""),
        "headers": headers,
        "content_length": length,
        "transfer_encoding": te,
        "body": body.decode("latin-1"),
        "body_error": body_error,
        "trailers": None,
    }


def shaped(query: dict, start_response: Callable) -> Iterable[bytes]:
    def get(k: str) -> str:
        return query.get(k, [""])[0]

    headers = [tuple(nv.split(":", 1)) if ":" in nv else (nv, "") for nv in query.get("header", [])]
    body = get("body").encode("latin-1")
    if body and get("sniff") != "1" and not any(n.lower() == "content-type" for n, _ in headers):
        headers.append(("Content-Type", "text/plain; charset=utf-8"))
    if get("cl"):
        headers = [(n, v) for n, v in headers if n.lower() != "content-length"] + [("Content-Length", get("cl"))]
    try:
        code = int(get("status") or 200)
    except ValueError:
        code = 200
    if not 100 <= code <= 999:
        code = 200
    start_response(status_line(code), headers)
    if get("flush") == "1":
        return _flushed(body)
    return [body]


def _flushed(body: bytes) -> Iterator[bytes]:
    yield b""  # genericserver.net.http.request sends the header at an empty chunk, as Go's Flush does
    yield body

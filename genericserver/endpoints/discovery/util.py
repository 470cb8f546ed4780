"""Port of k8s.io/apiserver/pkg/endpoints/discovery/util.go (v1.36.0): how discovery documents are written.

Discovery answers through ``WriteObjectNegotiated`` like every API answer. The legacy group's
documents (``/api``, ``/api/v1``) go through Go's ``stripVersionNegotiatedSerializer``, which
leaves ``apiVersion`` out: ``{"kind":"APIVersions",...}``; the others carry ``"apiVersion":"v1"``.
:func:`write` is that: the server's negotiation when it has one, else JSON.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Optional

from genericserver import responsewriters

StartResponse = Callable[..., Any]


def write(negotiate: Optional[Any], environ: dict, start_response: StartResponse, obj: dict,
          headers: Optional[list] = None, content_type: str = "application/json") -> Iterable[bytes]:
    if negotiate is not None:
        return negotiate.write_discovery(environ, start_response, obj, headers or [])
    body = (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
    start_response(responsewriters.status_line(200), list(headers or []) + [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [body]

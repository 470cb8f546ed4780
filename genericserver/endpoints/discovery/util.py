"""Port of k8s.io/apiserver/pkg/endpoints/discovery/util.go (v1.36.0): how discovery documents are written.

Discovery answers through ``WriteObjectNegotiated`` like every API answer (JSON, YAML or
protobuf by the Accept header; 406 when none fits). The legacy group's documents (``/api``,
``/api/v1``) go through Go's ``stripVersionNegotiatedSerializer``, which leaves ``apiVersion``
out: ``{"kind":"APIVersions",...}``; the others carry ``"apiVersion":"v1"``.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from genericserver.apimachinery.runtime.serializer import codec_factory
from genericserver.endpoints.handlers import response
from genericserver.endpoints.handlers.negotiation import negotiate

StartResponse = Callable[..., Any]


def write(environ: dict, start_response: StartResponse, obj: dict, headers: Optional[list] = None,
          restrictions: Any = negotiate.DEFAULT_ENDPOINT_RESTRICTIONS, content_type: Optional[str] = None) -> Iterable[bytes]:
    try:
        options = negotiate.negotiate_output_media_type(environ, codec_factory.SUPPORTED, restrictions)
    except Exception as err:  # a 406 StatusError
        return response.write_error(None, environ, start_response, err)
    if content_type and options.accepted is not codec_factory.JSON:
        content_type = options.accepted.media_type + content_type.partition(";")[1] + content_type.partition(";")[2]
    return response.write_encoded(environ, start_response, 200, obj, options, headers, content_type)

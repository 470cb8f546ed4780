"""Port of k8s.io/apiserver/pkg/endpoints/handlers/negotiation/negotiate.go and errors.go (v1.36.0).

Which serializer reads a request body (its Content-Type) and which writes the answer (its
Accept header):

* the Accept header is read by goautoneg's ``ParseAccept``
  (:mod:`genericserver.github_com.munnerz.goautoneg.autoneg`): its clauses in goautoneg's order,
  a clause with ``q=0`` kept;
* :func:`negotiate_media_type_options` tries each clause against each supported media type, in
  that order; a clause's parameters ask for a transformation (``as``, ``g``, ``v``: a Table, the
  metadata alone, the aggregated discovery document), a stream (``stream=watch``), a server
  version (``sv``, which the endpoint's ``AllowsServerVersion`` must accept) or pretty output,
  and the endpoint's restrictions say which of those it can give;
* :func:`negotiate_output_media_type` is the 406 ``only the following media types are
  accepted: ...`` when nothing fits; :func:`negotiate_input_serializer` the 415 ``the body of
  the request was in an unknown format - accepted media types include: ...``.

An empty Accept gets the first supported type (JSON). ``pretty`` comes from the media type, the
``pretty`` query parameter, or a curl, Wget or browser User-Agent, as in Go.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Protocol

from genericserver import request
from genericserver.apimachinery.api import errors
from genericserver.github_com.munnerz.goautoneg.autoneg import parse_accept  # also openapi's handler's


@dataclass(frozen=True)
class SerializerInfo:
    """One supported media type (Go's ``runtime.SerializerInfo``)."""

    media_type: str  # "application/json"
    streams: bool = True  # has a stream serializer (watch)
    pretty: bool = False  # has a pretty serializer

    @property
    def type(self) -> str:
        return self.media_type.partition("/")[0]

    @property
    def subtype(self) -> str:
        return self.media_type.partition("/")[2]


@dataclass(frozen=True)
class GroupVersionKind:
    group: str = ""
    version: str = ""
    kind: str = ""


@dataclass
class MediaTypeOptions:
    pretty: bool = False
    stream: str = ""
    convert: Optional[GroupVersionKind] = None
    use_server_version: str = ""
    export: bool = False
    profile: str = ""
    unrecognized: list[str] = field(default_factory=list)
    accepted: Optional[SerializerInfo] = None


class EndpointRestrictions(Protocol):
    def allows_media_type_transform(self, mime_type: str, mime_subtype: str, gvk: Optional[GroupVersionKind]) -> bool: ...

    def allows_server_version(self, version: str) -> bool: ...

    def allows_stream_schema(self, schema: str) -> bool: ...


class DefaultEndpointRestrictions:
    """No transformation, no other server version; watch streams allowed."""

    def allows_media_type_transform(self, mime_type: str, mime_subtype: str, gvk: Optional[GroupVersionKind]) -> bool:
        return gvk is None

    def allows_server_version(self, version: str) -> bool:
        return False

    def allows_stream_schema(self, schema: str) -> bool:
        return schema == "watch"


DEFAULT_ENDPOINT_RESTRICTIONS = DefaultEndpointRestrictions()


def _accept_media_type_options(params: dict, accepts: SerializerInfo, endpoint: EndpointRestrictions) -> Optional[MediaTypeOptions]:
    options = MediaTypeOptions()
    for k, v in (params or {}).items():
        if k in ("as", "g", "v"):
            current = options.convert or GroupVersionKind()
            options.convert = GroupVersionKind(
                v if k == "g" else current.group, v if k == "v" else current.version, v if k == "as" else current.kind)
        elif k == "stream":
            if v and (not accepts.streams or not endpoint.allows_stream_schema(v)):
                return None
            options.stream = v
        elif k == "sv":
            if v and not endpoint.allows_server_version(v):
                return None
            options.use_server_version = v
        elif k == "export":
            options.export = v == "1"
        elif k == "pretty":
            options.pretty = v == "1"
        elif k == "profile":
            options.profile = v
        else:
            options.unrecognized.append(k)
    if not endpoint.allows_media_type_transform(accepts.type, accepts.subtype, options.convert):
        return None
    options.accepted = accepts
    return options


def negotiate_media_type_options(header: str, accepted: list[SerializerInfo], endpoint: EndpointRestrictions) -> Optional[MediaTypeOptions]:
    if not header and accepted:
        return MediaTypeOptions(accepted=accepted[0])
    for clause in parse_accept(header):
        for accepts in accepted:
            if (clause.type == accepts.type and clause.subtype in (accepts.subtype, "*")) or (clause.type, clause.subtype) == ("*", "*"):
                options = _accept_media_type_options(clause.params, accepts, endpoint)
                if options is not None:
                    return options
    return None


def media_types(accepted: list[SerializerInfo]) -> tuple[list[str], list[str]]:
    """``MediaTypesForSerializer``: the media types, and their watch-stream forms."""
    return [i.media_type for i in accepted], [i.media_type + ";stream=watch" for i in accepted if i.streams]


def is_pretty_print(environ: dict) -> bool:
    if "pretty" in environ.get("QUERY_STRING", ""):
        values = request.query(environ).get("pretty")
        if values and values[0]:
            return values[0] in ("1", "t", "T", "true", "TRUE", "True")
    agent = environ.get("HTTP_USER_AGENT", "")
    return agent.startswith(("curl", "Wget", "Mozilla/5.0"))


def negotiate_output_media_type(environ: dict, accepted: list[SerializerInfo], endpoint: EndpointRestrictions) -> MediaTypeOptions:
    """The answer's media type, or Go's 406."""
    options = negotiate_media_type_options(environ.get("HTTP_ACCEPT", ""), accepted, endpoint)
    if options is None:
        raise new_not_acceptable_error(media_types(accepted)[0])
    if is_pretty_print(environ):
        options.pretty = True
    return options


def negotiate_input_serializer(content_type: str, accepted: list[SerializerInfo], *, streaming: bool = False) -> SerializerInfo:
    """The serializer of a request body by its Content-Type (the first one when none), or 415."""
    media_type = content_type or accepted[0].media_type
    base = media_type.split(";")[0].strip().lower()
    if base and "/" in base:
        for info in accepted:
            if info.media_type == base:
                return info
    supported, stream_supported = media_types(accepted)
    raise new_unsupported_media_type_error(stream_supported if streaming else supported)


def new_not_acceptable_error(accepted: list[str]) -> errors.StatusError:
    return errors.new_not_acceptable(f"only the following media types are accepted: {', '.join(accepted)}")


def new_unsupported_media_type_error(accepted: list[str]) -> errors.StatusError:
    return errors.new_unsupported_media_type(
        f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}")



"""Port of k8s.io/kubernetes/pkg/registry/core/pod/rest/log.go (v1.36.0): ``pods/log``, with strategy.go's ``LogLocation``.

``kubectl logs POD`` is a GET of the pod's ``log`` subresource. ``LogREST.Get`` reads the
``PodLogOptions`` from the query (``container``, ``follow``, ``previous``, ``timestamps``,
``tailLines``, ``limitBytes``, ``sinceSeconds``, ``sinceTime``) and checks them as
``ValidatePodLogOptions`` does (a 422 naming ``PodLogOptions``); ``LogLocation`` then finds the
pod (404), its container (a pod of one has a default; of several, a 400 listing them; an unknown
name, a 400) and its node (none yet: an empty answer, 204), and the kubelet's log of that
container is streamed back as ``text/plain``, flushed line by line when following. What the
kubelet says is ``locate``'s: the container's log, or the kubelet's 400 (the container has not
started yet; ``previous`` of a container that never restarted).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Iterable, Optional, Sequence

from genericserver import runtime as rt
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.field import errors as field
from genericserver.apimachinery.runtime import conversion as rc
from genericserver.registry.rest.rest import ResourceStreamer

IS_NEGATIVE = "must be greater than or equal to 0"
# LogREST.ProducesMIMETypes: what its GET route produces besides the serializer's types
PRODUCES_MIME_TYPES = ("text/plain",)


class PodLogOptions:
    """The query's options, as the parameter codec reads them (``Convert_url_Values_To_v1_PodLogOptions``,
    in its order: a number that does not parse, or a bad ``sinceTime``, is a 400; a bool is true
    unless ``0`` or ``false``, :mod:`genericserver.apimachinery.runtime.conversion`)."""

    def __init__(self, req: Any):
        values = {key: req.args.getlist(key) for key in req.args}  # url.Values (the handlers' args are Go's query)

        def given(key: str) -> Optional[list[str]]:
            return values.get(key) or None

        try:
            self.container = rc.convert_slice_string_to_string(given("container") or [])
            self.follow = rc.convert_slice_string_to_bool(given("follow") or [])
            self.previous = rc.convert_slice_string_to_bool(given("previous") or [])
            self.since_seconds = rc.convert_slice_string_to_pointer_int64(given("sinceSeconds") or [])
            since_time = rc.convert_slice_string_to_string(given("sinceTime") or [])
            try:
                self.since_time = datetime.fromisoformat(since_time).timestamp() if since_time else None
            except ValueError:
                raise errors.new_bad_request(f'parsing time "{since_time}" as "2006-01-02T15:04:05Z07:00": cannot parse') from None
            self.timestamps = rc.convert_slice_string_to_bool(given("timestamps") or [])
            self.tail_lines = rc.convert_slice_string_to_pointer_int64(given("tailLines") or [])
            self.limit_bytes = rc.convert_slice_string_to_pointer_int64(given("limitBytes") or [])
        except rc.ConversionError as err:
            raise errors.new_bad_request(str(err)) from None

    def validate(self) -> list[field.Error]:
        """``ValidatePodLogOptions``."""
        errs = []
        if self.tail_lines is not None and self.tail_lines < 0:
            errs.append(field.invalid("tailLines", self.tail_lines, IS_NEGATIVE))
        if self.limit_bytes is not None and self.limit_bytes < 1:
            errs.append(field.invalid("limitBytes", self.limit_bytes, "must be greater than 0"))
        if self.since_seconds is not None and self.since_time is not None:
            errs.append(field.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
        elif self.since_seconds is not None and self.since_seconds < 1:
            errs.append(field.invalid("sinceSeconds", self.since_seconds, "must be greater than 0"))
        return errs

    def since(self) -> Optional[float]:
        """The wall time the log starts at (None: its beginning)."""
        if self.since_seconds is not None:
            return rt.wall() - self.since_seconds
        return self.since_time


def container_for(pod: dict, container: str) -> str:
    """``LogLocation``'s choice of container: the named one if the pod has it, else the only one."""
    names = [c["name"] for c in pod["spec"].get("containers", [])]
    name = pod["metadata"]["name"]
    if container:
        if container not in names:
            raise errors.new_bad_request(f"container {container} is not valid for pod {name}")
        return container
    if len(names) == 1:
        return names[0]
    if not names:
        raise errors.new_bad_request(f"a container name must be specified for pod {name}")
    raise errors.new_bad_request(f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]")


# locate(namespace, pod, container, previous) -> the container's log on its node; raises the kubelet's errors
Locate = Callable[[str, str, str, bool], Any]


def new_log_getter(get_pod: Callable[[str, str], dict], locate: Locate) -> Callable[[str, str, Any], Optional[ResourceStreamer]]:
    """``LogREST.Get`` for the pods ``get_pod(namespace, name)`` answers (the API's view)."""

    def get(namespace: str, name: str, req: Any) -> ResourceStreamer:
        opts = PodLogOptions(req)
        errs = opts.validate()
        if errs:
            raise errors.new_invalid("PodLogOptions", name, field.to_causes(errs))
        pod = get_pod(namespace, name)
        container = container_for(pod, opts.container)
        if not pod["spec"].get("nodeName"):  # not scheduled: nowhere to ask, nothing to say
            return ResourceStreamer(lambda stops: None)
        log = locate(namespace, name, container, opts.previous)

        def input_stream(stops: Sequence[Any]) -> Iterable[bytes]:
            lines = log.read(tail=opts.tail_lines, timestamps=opts.timestamps, follow=opts.follow,
                             since=opts.since(), stops=stops)
            return lines if opts.limit_bytes is None else _limited(lines, opts.limit_bytes)

        return ResourceStreamer(input_stream, content_type="text/plain", flush=opts.follow)

    return get


def _limited(pieces: Iterable[bytes], limit: int) -> Iterable[bytes]:
    """The first ``limit`` bytes (the kubelet cuts the log there, mid-line if it must)."""
    for piece in pieces:
        if len(piece) >= limit:
            yield piece[:limit]
            return
        limit -= len(piece)
        yield piece

"""Port of k8s.io/apimachinery/pkg/api/errors/errors.go (v1.36.0): API errors that carry a metav1.Status.

Go's ``StatusError`` wraps a ``metav1.Status``; the handlers write it as the answer, with its
``code`` as the HTTP status. The constructors build Go's messages word for word, because clients
match on them (kubectl prints them; ``kubectl apply`` reads the reason). ``resource`` is Go's
``schema.GroupResource`` written as ``String()`` writes it: ``configmaps``, or
``deployments.apps`` for a named group; ``kind`` is the details' kind (Go puts the resource there
for most errors, and the kind for Invalid).
"""

from __future__ import annotations

import json
from typing import Any, Optional


class StatusError(Exception):
    """An API error carrying its ``metav1.Status`` (``status["code"]`` is the HTTP status)."""

    def __init__(self, st: dict):
        super().__init__(st["message"])
        self.status = st

    @property
    def code(self) -> int:
        return self.status["code"]

    @property
    def reason(self) -> str:
        return self.status.get("reason", "")


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def status(code: int, reason: str, message: str, details: Optional[dict] = None) -> dict:
    """A ``metav1.Status`` failure with Go's field order (``reason`` left out when empty)."""
    st: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message}
    if reason:
        st["reason"] = reason
    if details is not None:
        st["details"] = details
    st["code"] = code
    return st


def _split(resource: str) -> tuple[str, str]:
    # "deployments.apps" -> ("apps", "deployments"); "configmaps" -> ("", "configmaps")
    res, _, group = resource.partition(".")
    return group, res


def _details(resource: str, name: str = "", **more: Any) -> dict:
    group, res = _split(resource)
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    d["kind"] = res
    d.update(more)
    return d


def new_not_found(resource: str, name: str) -> StatusError:
    return StatusError(status(404, "NotFound", f"{resource} {_q(name)} not found", _details(resource, name)))


def new_already_exists(resource: str, name: str) -> StatusError:
    return StatusError(status(409, "AlreadyExists", f"{resource} {_q(name)} already exists", _details(resource, name)))


def new_conflict(resource: str, name: str, why: str) -> StatusError:
    msg = f"Operation cannot be fulfilled on {resource} {_q(name)}: {why}"
    return StatusError(status(409, "Conflict", msg, _details(resource, name)))


def new_forbidden(resource: str, name: str, err: str) -> StatusError:
    """Go's ``NewForbidden``: the message names the group-resource and the object when known
    (``forbidden: ...`` with neither); the details leave out what is empty."""
    group, res = _split(resource)
    details: dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    if res:
        details["kind"] = res
    if not resource:
        message = f"forbidden: {err}"
    else:
        message = f"{resource} {_q(name)} is forbidden: {err}" if name else f"{resource} is forbidden: {err}"
    return StatusError(status(403, "Forbidden", message, details))


def new_too_many_requests(msg: str, retry_after_seconds: int) -> StatusError:
    """Go's ``NewTooManyRequests``: 429, the delay in the details (and so in ``Retry-After``)."""
    details = {"retryAfterSeconds": retry_after_seconds} if retry_after_seconds else {}
    return StatusError(status(429, "TooManyRequests", msg, details))


def new_unauthorized(reason: str) -> StatusError:
    """Go's ``NewUnauthorized``: 401, the reason as the message (``not authorized`` if empty)."""
    return StatusError(status(401, "Unauthorized", reason or "not authorized"))


def new_timeout_error(message: str, retry_after_seconds: int) -> StatusError:
    """Go's ``NewTimeoutError``: 504, the delay in the details (which are there even when 0)."""
    details = {"retryAfterSeconds": retry_after_seconds} if retry_after_seconds else {}
    return StatusError(status(504, "Timeout", f"Timeout: {message}", details))


def new_bad_request(msg: str) -> StatusError:
    return StatusError(status(400, "BadRequest", msg))


def new_invalid(group_kind: str, name: str, causes: list[dict]) -> StatusError:
    """Go's ``NewInvalid``: ``group_kind`` is ``Kind`` or ``Kind.group`` (GroupKind's String());
    each cause is ``{"reason", "message", "field"}``; the message joins them as
    ``Kind "name" is invalid: field: detail`` (several in brackets, as an aggregate prints; an
    empty field path prints empty, ``is invalid: : Forbidden: ...``, as a field.Error's Error()
    does), and a cause's empty field is left out of the Status (``omitempty``)."""
    kind, _, group = group_kind.partition(".")
    parts = list(dict.fromkeys(f"{c.get('field', '')}: {c['message']}" for c in causes))
    msg = f"{group_kind} {_q(name)} is invalid"
    if parts:
        msg += ": " + (parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]")
    details: dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [{k: v for k, v in c.items() if v != "" or k != "field"} for c in causes]
    return StatusError(status(422, "Invalid", msg, details))


def new_resource_expired(msg: str) -> StatusError:
    return StatusError(status(410, "Expired", msg))


def new_gone(msg: str) -> StatusError:
    return StatusError(status(410, "Gone", msg))


def new_method_not_supported(resource: str, action: str) -> StatusError:
    group, res = _split(resource)
    details = {"group": group, "kind": res} if group else {"kind": res}
    return StatusError(status(405, "MethodNotAllowed", f"{action} is not supported on resources of kind {_q(resource)}", details))


def new_unsupported_media_type(msg: str) -> StatusError:
    return StatusError(status(415, "UnsupportedMediaType", msg))


def new_not_acceptable(msg: str) -> StatusError:
    return StatusError(status(406, "NotAcceptable", msg))


def new_request_entity_too_large(msg: str) -> StatusError:
    return StatusError(status(413, "RequestEntityTooLarge", f"Request entity too large: {msg}"))


def new_internal_error(err: str) -> StatusError:
    st = status(500, "InternalError", f"Internal error occurred: {err}", {"causes": [{"message": err}]})
    return StatusError(st)


def reason_for(err: BaseException) -> str:
    """Go's ``ReasonForError``: the Status reason of an API error, "" for anything else."""
    return err.reason if isinstance(err, StatusError) else ""


def is_not_found(err: BaseException) -> bool:
    return reason_for(err) == "NotFound"


def is_conflict(err: BaseException) -> bool:
    return reason_for(err) == "Conflict"


def is_already_exists(err: BaseException) -> bool:
    return reason_for(err) == "AlreadyExists"

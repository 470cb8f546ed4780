"""Port of k8s.io/apimachinery/pkg/util/validation/field/errors.go (v1.36.0): one validation error per field.

An :class:`Error` names the field (a JSON path such as ``metadata.name``), the kind of problem
(Go's ``ErrorType`` strings: "Required value", "Invalid value", "Unsupported value", ...), the
bad value and a detail. Its text is Go's ``Error()``: ``field: Type: value: detail``, with the
value written as Go writes it (strings quoted, numbers and bools bare, anything else as JSON).
:func:`to_causes` gives the ``StatusCause`` list a 422 Invalid carries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from genericserver import klog

REQUIRED, INVALID, NOT_SUPPORTED, FORBIDDEN, TOO_LONG, DUPLICATE, NOT_FOUND = (
    "Required value", "Invalid value", "Unsupported value", "Forbidden", "Too long", "Duplicate value", "Not found")
# the Go ErrorType names StatusCause.reason carries
_REASONS = {REQUIRED: "FieldValueRequired", INVALID: "FieldValueInvalid", NOT_SUPPORTED: "FieldValueNotSupported",
            FORBIDDEN: "FieldValueForbidden", TOO_LONG: "FieldValueTooLong", DUPLICATE: "FieldValueDuplicate",
            NOT_FOUND: "FieldValueNotFound"}
OMIT = object()  # Go's omitValue: the message leaves the value out
NULL = object()  # a nil pointer as the bad value: json.Marshal writes it null


def go_quote(s: str) -> str:
    """A string as Go's ``%q`` writes it (``strconv.Quote``: a control character as ``\\x01``)."""
    return klog.go_quote(s)


@dataclass(frozen=True)
class Error:
    type: str
    field: str
    bad_value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        """Go's ``ErrorBody``: the type, the value where it has one, the detail."""
        s = self.type
        if self.type not in (REQUIRED, FORBIDDEN, TOO_LONG) and self.bad_value is not OMIT:
            v = self.bad_value
            if v is NULL:
                s += ": null"
            elif isinstance(v, bool):
                s += f": {'true' if v else 'false'}"
            elif isinstance(v, (int, float)):
                s += f": {v}"
            elif isinstance(v, str):
                s += f": {go_quote(v)}"
            else:
                s += f": {json.dumps(v, separators=(',', ':'), ensure_ascii=False)}"
        if self.detail:
            s += f": {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def required(field: str, detail: str = "") -> Error:
    return Error(REQUIRED, field, detail=detail)


def invalid(field: str, value: Any, detail: str) -> Error:
    return Error(INVALID, field, value, detail)


def not_supported(field: str, value: Any, valid: list[str]) -> Error:
    detail = "supported values: " + ", ".join(json.dumps(v) for v in valid) if valid else ""
    return Error(NOT_SUPPORTED, field, value, detail)


def forbidden(field: str, detail: str) -> Error:
    return Error(FORBIDDEN, field, detail=detail)


def too_long(field: str, max_length: int) -> Error:
    unit = "byte" if max_length == 1 else "bytes"
    return Error(TOO_LONG, field, detail=f"may not be more than {max_length} {unit}")


def to_causes(errs: list[Error]) -> list[dict]:
    """The ``StatusCause`` s of a 422 (Go's ``NewInvalid``): reason, message (the body), field."""
    return [{"reason": _REASONS.get(e.type, e.type), "message": e.body(), "field": e.field} for e in errs]

"""Port of Go's encoding/json package (decode.go, Go 1.26): ``Unmarshal``'s check of the document and ``UnmarshalTypeError``'s text.

``json.Unmarshal`` refuses a document that is not JSON before it decodes any of it, with the
scanner's text (:mod:`genericserver.encoding.json.scanner`); a document that is JSON but does not
fit the Go type it is read into is an :class:`UnmarshalTypeError`, ``json: cannot unmarshal
object into Go value of type []handlers.jsonPatchOp``. :func:`loads` is Python's ``json.loads``
with Go's verdict on what it refuses.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from genericserver.encoding.json import scanner


class UnmarshalTypeError(ValueError):
    """A JSON value of a kind the Go type cannot hold: ``value`` says what it was (``object``,
    ``number``...), ``go_type`` the Go type (as reflect writes it), ``struct`` and ``field``
    where it stood when it was a struct's field."""

    def __init__(self, value: str, go_type: str, struct: str = "", field: str = "") -> None:
        if struct or field:
            text = f"json: cannot unmarshal {value} into Go struct field {struct}.{field} of type {go_type}"
        else:
            text = f"json: cannot unmarshal {value} into Go value of type {go_type}"
        super().__init__(text)


def kind_of(value: Any) -> str:
    """How Go's decoder names a JSON value in a type error (the literal's kind)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "null")


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def loads(data: bytes, **kw: Any) -> Any:
    """The document ``data`` as Python values, or :class:`scanner.SyntaxError` with Go's text.
    Bytes that are not UTF-8 stand for U+FFFD inside a string, as Go's decoder reads them; the
    scanner runs only when Python's parser refuses the document."""
    try:
        return json.loads(data.decode("utf-8", "replace"), parse_constant=_refuse_constant, **kw)
    except (ValueError, RecursionError) as err:
        found = scanner.check_valid(data)
        if found is None:  # deeper than Python's parser goes, within Go's limit
            raise scanner.SyntaxError(str(err), len(data)) from None
        raise found from None

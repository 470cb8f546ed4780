"""Port of k8s.io/apimachinery/pkg/util/intstr/intstr.go (v1.36.0): ``IntOrString``, a field that holds a number or a name.

A port may be given as ``8080`` or as the container port's name ``"http"``; a Deployment's
``maxSurge`` as ``1`` or ``"25%"``. In JSON the value is just the number or the string; in
protobuf it is a small message with a ``type`` (0 for the int, 1 for the string) and both values,
the one not in use at its zero: Go's generated marshaller writes all three fields every time.
"""

from __future__ import annotations

from typing import Any, Union

from genericserver.apimachinery.structs import Field, Struct

INT_TYPE, STRING_TYPE = 0, 1

INT_OR_STRING = Struct(
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    "A number or a string: a port number or its name, a count or a percentage.",
    (Field("type", 1, "int64"), Field("intVal", 2, "int32"), Field("strVal", 3, "string")),
    json_form={"type": "string", "format": "int-or-string"},
)


def to_message_fields(value: Union[int, str]) -> dict[str, Any]:
    """The protobuf message's fields for a JSON value."""
    if isinstance(value, int) and not isinstance(value, bool):
        return {"type": INT_TYPE, "intVal": value, "strVal": ""}
    return {"type": STRING_TYPE, "intVal": 0, "strVal": str(value)}


def from_message_fields(typ: int, int_val: int, str_val: str) -> Union[int, str]:
    """The JSON value of a protobuf message."""
    return str_val if typ == STRING_TYPE else int_val

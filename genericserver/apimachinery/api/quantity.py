"""Port of k8s.io/apimachinery/pkg/api/resource/quantity.go (v1.36.0): ``Quantity``, as data.

A container's ``resources`` say how much CPU and memory it asks for and may use: ``"250m"``,
``"64Mi"``. In JSON a quantity is that string; in protobuf a message whose field 1 is the string.
Go parses it and writes it back in canonical form (``"1000m"`` becomes ``"1"``); here it is kept
as given, since nothing in this server schedules or limits by it.
"""

from __future__ import annotations

from genericserver.apimachinery.structs import Field, Struct

QUANTITY = Struct(
    "io.k8s.apimachinery.pkg.api.resource.Quantity", "k8s.io.apimachinery.pkg.api.resource.Quantity",
    "An amount of a resource: CPU in cores (250m is a quarter), memory in bytes (64Mi).",
    (Field("string", 1, "string"),),
    json_form={"type": "string"},
)

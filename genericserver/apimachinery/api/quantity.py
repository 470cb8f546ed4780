"""Port of k8s.io/apimachinery/pkg/api/resource/quantity.go (v1.36.0): ``Quantity``, as data.

A container's ``resources`` say how much CPU and memory it asks for and may use: ``"250m"``,
``"64Mi"``. In JSON a quantity is that string; in protobuf a message whose field 1 is the string.
Go parses it and writes it back in canonical form (``"1000m"`` becomes ``"1"``); here it is kept
as given, and parsed where it is used (:func:`parse_quantity`: the JSON decoder refuses a string
that is not a quantity, and the cluster's scheduler adds up the pods' requests).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from genericserver.apimachinery.structs import Field, Struct

QUANTITY = Struct(
    "io.k8s.apimachinery.pkg.api.resource.Quantity", "k8s.io.apimachinery.pkg.api.resource.Quantity",
    "An amount of a resource: CPU in cores (250m is a quarter), memory in bytes (64Mi).",
    (Field("string", 1, "string"),),
    json_form={"type": "string"},
)


# ParseQuantity's grammar: a signed decimal number, then a suffix: binary (Ki...Ei), decimal
# (n, u, m, "", k, M...E) or a power of ten (e3, E-2)
FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_WRONG = "unable to parse quantity's suffix"
_NUMBER = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?")
_SUFFIX_SHAPE = re.compile(r"[eEinumkKMGTP]*[-+]?[0-9]*")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def parse_quantity(text: str) -> Fraction:
    """``ParseQuantity``: the amount ``text`` means, exactly; ValueError with Go's words if it
    is not a quantity (the API refuses such a body, the scheduler never sees one)."""
    m = _NUMBER.match(text)
    if not text or m is None or not (m.group(2) or m.group(3)):
        raise ValueError(FORMAT_WRONG)
    sign, whole, fraction = m.group(1), m.group(2), m.group(3) or ""
    suffix = text[m.end():]
    if not _SUFFIX_SHAPE.fullmatch(suffix):
        raise ValueError(FORMAT_WRONG)
    number = Fraction(int(whole or "0") * 10 ** len(fraction) + int(fraction or "0"), 10 ** len(fraction))
    if suffix in _BINARY:
        number *= 1024 ** _BINARY[suffix]
    elif suffix in _DECIMAL:
        number *= Fraction(10) ** _DECIMAL[suffix]
    elif suffix[:1] in ("e", "E") and re.fullmatch(r"[-+]?[0-9]+", suffix[1:]):
        number *= Fraction(10) ** int(suffix[1:])
    else:
        raise ValueError(SUFFIX_WRONG)
    return -number if sign == "-" else number


def milli_value(text: str) -> int:
    """``MilliValue``: thousandths, rounded up (a CPU request: ``"50m"`` is 50, ``"1"`` 1000)."""
    return math.ceil(parse_quantity(text) * 1000)


def value(text: str) -> int:
    """``Value``: whole units, rounded up (a memory request in bytes: ``"64Mi"`` is 67108864)."""
    return math.ceil(parse_quantity(text))

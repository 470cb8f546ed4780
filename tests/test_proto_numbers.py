"""The served types' protobuf field numbers are Go's generated.proto's (no Go twin).

tests/data/generated-proto-v1.36.0.json holds, for each message the served types reach, the
numbers of k8s.io/api v0.36.0's and apimachinery's generated.proto (tests/record_proto_numbers.py
writes it from the mirrors). A number that differs, or a field Go's message does not have, is
what made ``kubectl describe pod`` fail on a probe whose embedded handler had been flattened.
"""

from __future__ import annotations

import json
import pathlib

import genericserver.api.apidiscovery.v2.types  # noqa: F401 - each module registers its kinds
import genericserver.api.apps.v1.types  # noqa: F401
import genericserver.api.authentication.v1.types  # noqa: F401
import genericserver.api.authorization.v1.types  # noqa: F401
import genericserver.api.autoscaling.v1.types  # noqa: F401
import genericserver.api.coordination.v1.types  # noqa: F401
import genericserver.api.core.v1.types  # noqa: F401
import genericserver.api.discovery.v1.types  # noqa: F401
import genericserver.api.policy.v1.types  # noqa: F401
from genericserver.apimachinery.apis.meta.v1.types import WATCH_EVENT
from genericserver.apimachinery.structs import KINDS, ListOf, MapOf, Struct

RECORDING = pathlib.Path(__file__).parent / "data" / "generated-proto-v1.36.0.json"


def recorded() -> dict[str, dict[str, int]]:
    return json.loads(RECORDING.read_text())


def served_structs() -> list[Struct]:
    """Every struct a registered kind (or a watch event) reaches, each once."""
    found: dict[str, Struct] = {}

    def walk(s: Struct) -> None:
        if s.proto in found:
            return
        found[s.proto] = s
        for f in s.fields:
            t = f.type
            while isinstance(t, (ListOf, MapOf)):
                t = t.item if isinstance(t, ListOf) else t.value
            if isinstance(t, Struct):
                walk(t)

    for s in [*KINDS.values(), WATCH_EVENT]:
        walk(s)
    return list(found.values())


def test_every_served_struct_has_gos_field_numbers():
    wrong, go_messages = [], recorded()
    for s in served_structs():
        go = go_messages.get(s.proto)
        if go is None:
            wrong.append(f"{s.proto}: not recorded (python tests/record_proto_numbers.py)")
            continue
        for f in s.fields:
            if go.get(f.json) != f.number:
                wrong.append(f"{s.proto}.{f.json}: {f.number}, Go's {go.get(f.json, 'no such field')}")
    assert not wrong, "\n".join(wrong)


def test_the_recording_covers_what_is_served_and_no_more():
    assert sorted(recorded()) == sorted(s.proto for s in served_structs())

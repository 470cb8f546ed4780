"""Tests for genericserver.apimachinery.runtime.converter: DeepCopyJSONValue."""

from __future__ import annotations

import dataclasses

import pytest

from genericserver.apimachinery.runtime.converter import deep_copy_json, deep_copy_json_value
from genericserver.cluster.handlers import SleepAction


def test_a_copy_shares_nothing_that_can_change():
    pod = {"metadata": {"name": "web-0", "labels": {"app": "web"}}, "spec": {"containers": [{"args": ["serve"]}]},
           "status": {"ready": True, "restarts": 0, "started": 1.5, "ip": None}}
    out = deep_copy_json(pod)
    assert out == pod
    out["metadata"]["labels"]["app"] = "other"
    out["spec"]["containers"][0]["args"].append("--v=3")
    assert pod["metadata"]["labels"] == {"app": "web"} and pod["spec"]["containers"][0]["args"] == ["serve"]


def test_a_frozen_dataclass_is_shared_and_anything_else_that_is_not_json_is_refused():
    action = SleepAction(5)
    assert deep_copy_json_value({"preStop": action})["preStop"] is action

    @dataclasses.dataclass
    class Mutable:
        n: int

    for bad in ({1, 2}, (1, 2), Mutable(1), b"x"):
        with pytest.raises(TypeError, match=f"cannot deep copy {type(bad).__name__}"):
            deep_copy_json_value({"x": [bad]})

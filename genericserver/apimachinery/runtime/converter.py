"""Port of k8s.io/apimachinery/pkg/runtime/converter.go (v1.36.0): DeepCopyJSON, DeepCopyJSONValue.

The in-memory stores keep objects as the API's JSON decodes them (dicts, lists, strings, numbers,
booleans, None) and hand out copies. A copy that knows it walks JSON is a few times cheaper than
``copy.deepcopy``, which keeps a memo of every object it meets and looks up a copier per type;
the stores copy on every read, write and watch event, so the cluster simulation spent a third
of its time there with ``deepcopy``. As in Go, a value that is not JSON is a programming error,
with one Python addition: a frozen dataclass cannot change, so it is shared, not copied (the
cluster simulation keeps its containers' options and preStop handlers in a pod's spec).
"""

from __future__ import annotations

import dataclasses
from typing import Any

# what json.loads produces besides dicts and lists (int stands for Go's int64 and json.Number)
_SCALARS = (str, int, float, bool, type(None))


def deep_copy_json(x: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a JSON object."""
    return deep_copy_json_value(x)


def deep_copy_json_value(x: Any) -> Any:
    """A deep copy of a JSON value; a TypeError for anything json.loads would not produce."""
    if type(x) is dict:
        return {k: deep_copy_json_value(v) for k, v in x.items()}
    if type(x) is list:
        return [deep_copy_json_value(v) for v in x]
    if isinstance(x, _SCALARS):
        return x
    if dataclasses.is_dataclass(x) and type(x).__dataclass_params__.frozen:  # type: ignore[attr-defined]
        return x
    raise TypeError(f"cannot deep copy {type(x).__name__}")

"""Port of k8s.io/apimachinery/pkg/util/strategicpatch/patch.go (v1.36.0): applying a strategic merge patch.

``kubectl apply``, ``edit``, ``label``, ``annotate``, ``patch`` (its default type), ``set image``
and ``rollout restart`` send ``application/strategic-merge-patch+json``: a JSON merge patch that
knows, from the Go struct's tags, which lists to merge instead of replace. Applied to a map:

* a key whose patch value is ``null`` is deleted; a map is merged into a map, key by key;
* a list whose field has ``patchStrategy:"merge"`` is merged: by its ``patchMergeKey`` (a list
  of objects: an item with the same key is merged into the original's, a new one appended, one
  marked ``$patch: delete`` removed), or as a set (a list of scalars: new values appended once);
  any other list is replaced;
* directives: ``$patch: replace`` (the map or list is the patch's, not a merge), ``$patch:
  delete`` (the map is emptied), ``$retainKeys`` (keys not listed are dropped),
  ``$deleteFromPrimitiveList/<field>`` (values removed from a set), ``$setElementOrder/<field>``
  (the merged list in that order, items the patch does not name after them). Any other
  ``$patch`` in a map is mergepatch's ``unknown patch type`` (a 500: patch.go passes it on), and
  a value for a key the original lacks is taken as it is, less every object holding a ``$patch``
  (``removeDirectives``).

The patch meta of a field (strategy and merge key) comes from the kind's
:class:`~genericserver.apimachinery.structs.Struct`, as Go's ``PatchMetaFromStruct`` reads it
from the struct tags. A field the struct does not know is merged as plain JSON (Go fails the
lookup; the decoding after the patch then reports the field as unknown, as Go's does for fields
it can look up). Errors carry Go's texts (mergepatch's ``ErrBadPatchFormat...``).
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any, Optional

from genericserver.apimachinery.structs import Field, ListOf, MapOf, Struct

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"


class PatchError(ValueError):
    """A patch Go refuses; ``bad_request`` when Go answers 400, else 422; ``internal`` for an
    error patch.go's ``interpretStrategicMergePatchError`` passes on as it is (a 500)."""

    def __init__(self, message: str, bad_request: bool = True, internal: bool = False):
        super().__init__(message)
        self.bad_request = bad_request and not internal
        self.internal = internal


def go_sprint_s(value: Any) -> str:
    """fmt's ``%s`` of a decoded JSON value: a string as it is, anything else as Go's bad verb."""
    if isinstance(value, str):
        return value
    if value is None:
        return "%!s(<nil>)"
    if isinstance(value, bool):
        return f"%!s(bool={go_sprint(value)})"
    if isinstance(value, int):
        return f"%!s(int64={value})"
    if isinstance(value, float):
        return f"%!s(float64={go_sprint(value)})"
    return go_sprint(value)


ERR_NO_LIST_OF_LISTS = "lists of lists are not supported"
ERR_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
ERR_BAD_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"


def _field(struct: Optional[Struct], key: str) -> Optional[Field]:
    return struct.field(key) if struct is not None else None


def _elem_struct(t: Any) -> Optional[Struct]:
    while isinstance(t, (ListOf, MapOf)):
        t = t.item if isinstance(t, ListOf) else t.value
    return t if isinstance(t, Struct) and t.json_form is None else None


def strategic_merge_patch(original: dict, patch: dict, struct: Optional[Struct]) -> dict:
    """``StrategicMergeMapPatch``: ``patch`` applied to a copy of ``original``."""
    if not isinstance(patch, dict):
        raise PatchError("invalid JSON document")
    return _merge_map(copy.deepcopy(original), patch, struct)


def _merge_map(original: dict, patch: dict, struct: Optional[Struct]) -> dict:
    if DIRECTIVE in patch and patch[DIRECTIVE] not in ("replace", "delete"):
        # handleDirectiveInMergeMap: mergepatch.ErrBadPatchType, with the patch map as it came
        raise PatchError(f"unknown patch type: {go_sprint_s(patch[DIRECTIVE])} in map: {go_sprint(patch)}", internal=True)
    patch = dict(patch)
    directive = patch.pop(DIRECTIVE, None)
    if directive == "replace":
        return _strip(patch)
    if directive == "delete":
        return {}
    retain = patch.pop(RETAIN_KEYS, None)
    if retain is not None:
        if not isinstance(retain, list):
            raise PatchError("invalid patch format of retainKeys")
        original = {k: v for k, v in original.items() if k in retain}
    orders = {k[len(SET_ELEMENT_ORDER) + 1:]: patch.pop(k) for k in list(patch) if k.startswith(SET_ELEMENT_ORDER + "/")}
    deletions = {k[len(DELETE_FROM_PRIMITIVE_LIST) + 1:]: patch.pop(k) for k in list(patch) if k.startswith(DELETE_FROM_PRIMITIVE_LIST + "/")}
    for key, values in deletions.items():
        if not isinstance(values, list):
            raise PatchError(ERR_BAD_PRIMITIVE_LIST)
        if isinstance(original.get(key), list):
            original[key] = [v for v in original[key] if v not in values]
    for key, value in patch.items():
        f = _field(struct, key)
        if value is None:
            original.pop(key, None)
            continue
        current = original.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            sub = _elem_struct(f.type) if f is not None else None
            if f is not None and isinstance(f.type, MapOf) and not isinstance(f.type.value, Struct):
                sub = None  # a map of scalars: plain keys
            original[key] = _merge_map(current, value, sub)
        elif isinstance(value, list) and isinstance(current, list) and f is not None and "merge" in f.patch_strategy.split(","):
            original[key] = _merge_list(current, value, f)
        elif isinstance(value, list) and any(isinstance(v, list) for v in value):
            raise PatchError(ERR_NO_LIST_OF_LISTS, bad_request=False)
        elif key not in original or type(current) is not type(value):
            # mergeMap takes the patch's value as it is, less removeDirectives' cut: an object
            # holding a $patch (of any kind) goes, so the key goes too
            kept, keep = _remove_directives(value)
            if keep:
                original[key] = kept
            else:
                original.pop(key, None)
        else:
            original[key] = _strip(value)
    for key, order in orders.items():
        if not isinstance(order, list):
            raise PatchError(ERR_BAD_SET_ELEMENT_ORDER)
        if isinstance(original.get(key), list):
            f = _field(struct, key)
            original[key] = _reorder(original[key], order, f.patch_merge_key if f else "")
    return original


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """``removeDirectives``: the value without the objects that hold a ``$patch`` (a list's such
    items dropped), and whether anything is left to keep (not when the value itself holds one)."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        out = {}
        for k, v in value.items():
            kept, keep = _remove_directives(v)
            if keep:
                out[k] = kept
        return out, True
    if isinstance(value, list):
        return [kept for kept, keep in map(_remove_directives, value) if keep], True
    return value, True


def _strip(value: Any) -> Any:
    """The value with any directives left in it removed (a new key or a replaced value)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip(v) for v in value if not (isinstance(v, dict) and v.get(DIRECTIVE) == "delete")]
    return value


def _merge_list(original: list, patch: list, f: Field) -> list:
    key = f.patch_merge_key
    if any(isinstance(item, dict) and item.get(DIRECTIVE) == "replace" for item in patch):
        return [_strip(item) for item in patch if not (isinstance(item, dict) and DIRECTIVE in item)]
    if not key:  # a set of scalars
        out = list(original)
        for item in patch:
            if isinstance(item, (dict, list)):
                raise PatchError(ERR_BAD_PRIMITIVE_LIST)
            if item not in out:
                out.append(item)
        return out
    sub = _elem_struct(f.type)
    out = list(original)
    for item in patch:
        if not isinstance(item, dict):
            raise PatchError(f"unable to find map key {key!r} in a list item that is not a map")
        if key not in item:
            raise PatchError(f"map: {go_sprint(item)} does not contain declared merge key: {key}")
        index = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(key) == item[key]), None)
        if item.get(DIRECTIVE) == "delete":
            if index is not None:
                del out[index]
            continue
        if index is None:
            out.append(_strip(item))
        else:
            out[index] = _merge_map(out[index], item, sub)
    return out


def _reorder(items: list, order: list, key: str) -> list:
    """``$setElementOrder``: the items named by ``order`` first, in its order; the others after."""
    def ident(item: Any) -> Any:
        return item.get(key) if key and isinstance(item, dict) else item
    wanted = [o.get(key) if key and isinstance(o, dict) else o for o in order]
    named = sorted((i for i in items if ident(i) in wanted), key=lambda i: wanted.index(ident(i)))
    return named + [i for i in items if ident(i) not in wanted]


def go_sprint(value: Any) -> str:
    """fmt's ``%v`` of a decoded JSON value, as Go's errors print one: ``map[k:v ...]`` with the
    keys sorted, ``[a b]``, ``<nil>``; integers as read, other numbers as ``%g`` does (1e+06)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_sprint(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_sprint(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    return str(value)


def _go_float(x: float) -> str:
    # strconv's shortest 'g': the exponent form below 1e-4 or from 1e+06 on (its precision 6)
    if x != x or x in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[repr(x)]
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    exp = len(digits) + exponent - 1  # of the first digit
    if x == 0:
        return "-0" if sign else "0"
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{'-' if sign else ''}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return ("-" if sign else "") + format(Decimal(repr(abs(x))).normalize(), "f")

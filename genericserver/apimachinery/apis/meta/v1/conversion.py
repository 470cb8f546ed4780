"""Port of k8s.io/apimachinery/pkg/apis/meta/v1/conversion.go and zz_generated.conversion.go (v1.36.0): a request's query as the options of each verb.

What ``metainternalversionscheme.ParameterCodec.DecodeParameters`` gives the REST handlers: the
``Convert_url_Values_To_v1_*`` functions, one per options kind, each reading the keys its struct's
JSON tags name and nothing else. A key counts only when the query holds it with a value
(``?limit`` is the value ``""``, ``?`` alone holds nothing); a key that is absent leaves its field
at the zero value (a pointer field: nil, ``None`` here). Each value is read by
:mod:`genericserver.apimachinery.runtime.conversion`: a number that does not parse raises its
:class:`~genericserver.apimachinery.runtime.conversion.ConversionError`, which the handlers answer
400 (``errors.NewBadRequest(err.Error())``); nothing else fails here. What a value means is
checked later (:mod:`.validation`, :mod:`..internalversion.validation`: 422).

The options are dicts keyed by the JSON names, as the API's JSON would hold them; a nil pointer
is left out. ``DeleteOptions`` from a query also takes ``uid`` and ``resourceVersion`` as its
preconditions (conversion.go's own ``Convert_url_Values_To_v1_DeleteOptions``), and never takes
``ignoreStoreReadErrorWithClusterBreakingPotential``'s value further: delete.go clears it unless
the ``AllowUnsafeMalformedObjectDeletion`` gate is on, which it is not by default (the handler's
business, not this module's).
"""

from __future__ import annotations

from typing import Callable, Optional

from genericserver.apimachinery.runtime import conversion as rc

Values = dict[str, list[str]]  # url.Values, as genericserver.request.query gives it


def _given(values: Values, key: str) -> Optional[list[str]]:
    """The key's values when the query holds it with at least one (the generated code's test)."""
    got = values.get(key)
    return got if got else None


def _read(values: Values, out: dict, key: str, convert: Callable[[list[str]], object], zero: object) -> None:
    got = _given(values, key)
    value = convert(got) if got is not None else zero
    if value is not None:
        out[key] = value


def convert_slice_string_to_pointer_v1_deletion_propagation(values: list[str]) -> str:
    """``Convert_Slice_string_To_Pointer_v1_DeletionPropagation``: the first value, "" for none."""
    return values[0] if values else ""


def convert_slice_string_to_v1_resource_version_match(values: list[str]) -> str:
    return values[0] if values else ""


def convert_slice_string_to_v1_include_object_policy(values: list[str]) -> str:
    return values[0] if values else ""


def convert_url_values_to_v1_list_options(values: Values) -> dict:
    out: dict = {}
    _read(values, out, "labelSelector", rc.convert_slice_string_to_string, "")
    _read(values, out, "fieldSelector", rc.convert_slice_string_to_string, "")
    _read(values, out, "watch", rc.convert_slice_string_to_bool, False)
    _read(values, out, "allowWatchBookmarks", rc.convert_slice_string_to_bool, False)
    _read(values, out, "resourceVersion", rc.convert_slice_string_to_string, "")
    _read(values, out, "resourceVersionMatch", convert_slice_string_to_v1_resource_version_match, "")
    _read(values, out, "timeoutSeconds", rc.convert_slice_string_to_pointer_int64, None)
    _read(values, out, "limit", rc.convert_slice_string_to_int64, 0)
    _read(values, out, "continue", rc.convert_slice_string_to_string, "")
    _read(values, out, "sendInitialEvents", rc.convert_slice_string_to_pointer_bool, None)
    _read(values, out, "shardSelector", rc.convert_slice_string_to_string, "")
    return out


def convert_url_values_to_v1_get_options(values: Values) -> dict:
    out: dict = {}
    _read(values, out, "resourceVersion", rc.convert_slice_string_to_string, "")
    return out


def _dry_run(values: Values, out: dict) -> None:
    # a []string field is the values as they are (the generated code's unsafe cast)
    got = _given(values, "dryRun")
    if got is not None:
        out["dryRun"] = list(got)


def convert_url_values_to_v1_delete_options(values: Values) -> dict:
    """The generated conversion, then the preconditions from ``uid`` and ``resourceVersion``
    (each only when not empty)."""
    out: dict = {}
    _read(values, out, "gracePeriodSeconds", rc.convert_slice_string_to_pointer_int64, None)
    _read(values, out, "orphanDependents", rc.convert_slice_string_to_pointer_bool, None)
    _read(values, out, "propagationPolicy", convert_slice_string_to_pointer_v1_deletion_propagation, None)
    _dry_run(values, out)
    _read(values, out, "ignoreStoreReadErrorWithClusterBreakingPotential", rc.convert_slice_string_to_pointer_bool, None)
    uid = (_given(values, "uid") or [""])[0]
    resource_version = (_given(values, "resourceVersion") or [""])[0]
    if uid or resource_version:
        pre = out.setdefault("preconditions", {})
        if uid:
            pre["uid"] = uid
        if resource_version:
            pre["resourceVersion"] = resource_version
    return out


def _write_options(values: Values) -> dict:
    out: dict = {}
    _dry_run(values, out)
    _read(values, out, "fieldManager", rc.convert_slice_string_to_string, "")
    _read(values, out, "fieldValidation", rc.convert_slice_string_to_string, "")
    return out


def convert_url_values_to_v1_create_options(values: Values) -> dict:
    return _write_options(values)


def convert_url_values_to_v1_update_options(values: Values) -> dict:
    return _write_options(values)


def convert_url_values_to_v1_patch_options(values: Values) -> dict:
    out: dict = {}
    _dry_run(values, out)
    _read(values, out, "force", rc.convert_slice_string_to_pointer_bool, None)
    out.update(_write_options({k: v for k, v in values.items() if k != "dryRun"}))
    return out


def convert_url_values_to_v1_table_options(values: Values) -> dict:
    """``TableOptions``: ``includeObject`` (its ``NoHeaders`` has the JSON name ``-``, so the
    generated code reads the key ``-``)."""
    out: dict = {}
    _read(values, out, "-", rc.convert_slice_string_to_bool, False)
    _read(values, out, "includeObject", convert_slice_string_to_v1_include_object_policy, "")
    return out

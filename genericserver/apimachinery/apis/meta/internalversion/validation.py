"""Port of k8s.io/apimachinery/pkg/apis/meta/internalversion/validation/validation.go (v1.36.0).

``ValidateListOptions``: which combinations of ``resourceVersion``, ``resourceVersionMatch``,
``continue`` and ``sendInitialEvents`` a list or a watch may ask for. A failure is a 422 on
``ListOptions.meta.k8s.io`` (get.go's ``listOpts``). The WatchList feature is on, as in
v1.36's defaults, so a watch may ask for its initial events (``sendInitialEvents``).
"""

from __future__ import annotations

from typing import Optional

from genericserver.apimachinery.apis.meta.v1.validation import invalid_options
from genericserver.apimachinery.field import errors as field

EXACT, NOT_OLDER_THAN = "Exact", "NotOlderThan"


def validate_list_options(watch: bool, resource_version: str, match: str, cont: str,
                          send_initial_events: Optional[bool]) -> None:
    errs = (_watch_errors if watch else _list_errors)(resource_version, match, cont, send_initial_events)
    if errs:
        raise invalid_options("ListOptions", errs)


def _list_errors(resource_version: str, match: str, cont: str, send_initial_events: Optional[bool]) -> list[field.Error]:
    errs = []
    if match:
        if not resource_version:
            errs.append(field.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if cont:
            errs.append(field.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
        if match not in (EXACT, NOT_OLDER_THAN):
            errs.append(field.not_supported("resourceVersionMatch", match, [EXACT, NOT_OLDER_THAN, ""]))
        if match == EXACT and resource_version == "0":
            errs.append(field.forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if send_initial_events is not None:
        errs.append(field.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return errs


def _watch_errors(resource_version: str, match: str, cont: str, send_initial_events: Optional[bool]) -> list[field.Error]:
    errs = []
    if send_initial_events is not None and match != NOT_OLDER_THAN:
        errs.append(field.forbidden("resourceVersionMatch", f"sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}"))
    if match:
        if send_initial_events is None:
            errs.append(field.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
        if match != NOT_OLDER_THAN:
            errs.append(field.not_supported("resourceVersionMatch", match, [NOT_OLDER_THAN]))
        if cont:
            errs.append(field.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
    return errs

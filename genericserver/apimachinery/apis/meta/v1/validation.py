"""Port of k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go (v1.36.0): the options' checks.

Create, update, patch and delete options are checked before anything is stored: ``dryRun`` may
only be ``All``, ``fieldManager`` at most 128 printable characters, ``fieldValidation`` one of
Go's four values, a delete's ``propagationPolicy`` one of Go's three. A failure is a 422 Invalid
on the options' kind (``CreateOptions.meta.k8s.io "" is invalid: ...``), as Go's handlers make it.
"""

from __future__ import annotations

from typing import Optional, Sequence

from genericserver.apimachinery.api import errors
from genericserver.apimachinery.field import errors as field

FIELD_MANAGER_MAX_LENGTH = 128
_FIELD_VALIDATION_VALUES = ["", "Ignore", "Strict", "Warn"]
_PROPAGATION = ["Foreground", "Background", "Orphan", "nil"]


def validate_dry_run(dry_run: list[str]) -> list[field.Error]:
    if any(v != "All" for v in dry_run):
        return [field.not_supported("dryRun", dry_run, ["All"])]
    return []


def validate_field_manager(manager: str) -> list[field.Error]:
    errs = []
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        errs.append(field.too_long("fieldManager", FIELD_MANAGER_MAX_LENGTH))
    for i, ch in enumerate(manager):
        if not ch.isprintable():
            errs.append(field.invalid("fieldManager", manager, f"invalid character U+{ord(ch):04X} (at position {i})"))
    return errs


def validate_field_validation(value: str) -> list[field.Error]:
    if value not in _FIELD_VALIDATION_VALUES:
        return [field.not_supported("fieldValidation", value, _FIELD_VALIDATION_VALUES)]
    return []


def validate_write_options(kind: str, dry_run: list[str], field_manager: str = "", field_validation: str = "",
                           first: Sequence[field.Error] = ()) -> None:
    """``ValidateCreateOptions`` / ``ValidateUpdateOptions`` / ``ValidatePatchOptions`` (``kind``
    names which): raises Go's 422 when any check fails, with every error found; ``first`` are the
    errors of the checks ``ValidatePatchOptions`` makes before the common ones (``force`` on a
    patch that is no apply)."""
    errs = list(first) + validate_field_manager(field_manager) + validate_dry_run(dry_run) + validate_field_validation(field_validation)
    if errs:
        raise invalid_options(kind, errs)


def validate_delete_options(dry_run: list[str], propagation_policy: Optional[str], orphan_dependents: Optional[bool]) -> None:
    errs = []
    if orphan_dependents is not None and propagation_policy is not None:
        errs.append(field.invalid("propagationPolicy", propagation_policy, "orphanDependents and deletionPropagation cannot be both set"))
    if propagation_policy is not None and propagation_policy not in _PROPAGATION[:3]:
        errs.append(field.not_supported("propagationPolicy", propagation_policy, _PROPAGATION))
    errs += validate_dry_run(dry_run)
    if errs:
        raise invalid_options("DeleteOptions", errs)


def invalid_options(kind: str, errs: list[field.Error]) -> errors.StatusError:
    return errors.new_invalid(f"{kind}.meta.k8s.io", "", field.to_causes(errs))

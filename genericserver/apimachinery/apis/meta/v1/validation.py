"""Port of k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go (v1.36.0): the options' checks, and labels.

Create, update, patch and delete options are checked before anything is stored: ``dryRun`` may
only be ``All``, ``fieldManager`` at most 128 printable characters, ``fieldValidation`` one of
Go's four values, a delete's ``propagationPolicy`` one of Go's three. A failure is a 422 Invalid
on the options' kind (``CreateOptions.meta.k8s.io "" is invalid: ...``), as Go's handlers make it.

:func:`validate_labels` (``ValidateLabels``): each key a qualified name, each value a label value,
both in pkg/api/validate/content's words; the errors name the ``labels`` field itself.
"""

from __future__ import annotations

from typing import Optional, Sequence

from genericserver.apimachinery.api import errors
from genericserver.apimachinery.api.validate.content import is_label_value, is_qualified_name
from genericserver.apimachinery.field import errors as field

FIELD_MANAGER_MAX_LENGTH = 128
_FIELD_VALIDATION_VALUES = ["", "Ignore", "Strict", "Warn"]
_PROPAGATION = ["Foreground", "Background", "Orphan", "nil"]


def validate_label_name(name: str, path: str) -> list[field.Error]:
    return [field.invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_labels(labels: dict, path: str) -> list[field.Error]:
    """``ValidateLabels``: each key, then its value, in the order the object holds them."""
    errs: list[field.Error] = []
    for k, v in labels.items():
        errs.extend(validate_label_name(k, path))
        errs.extend(field.invalid(path, v, msg) for msg in is_label_value(v))
    return errs


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
                           force: Optional[bool] = None) -> None:
    """``ValidateCreateOptions`` / ``ValidateUpdateOptions`` / ``ValidatePatchOptions`` (``kind``
    names which; a patch here is never an apply patch, so ``force``, given at all, is forbidden):
    raises Go's 422 naming every check that fails."""
    errs = []
    if kind == "PatchOptions" and force is not None:
        errs.append(field.forbidden("force", "may not be specified for non-apply patch"))
    errs += validate_field_manager(field_manager) + validate_dry_run(dry_run) + validate_field_validation(field_validation)
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

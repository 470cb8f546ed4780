"""Port of k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget/strategy.go (v1.36.0): a budget as written by a client.

``kubectl create pdb`` and ``kubectl apply -f deploy/pdb.yaml`` POST a budget; the strategy
keeps what the client owns:

* ``PrepareForCreate``: the status is the disruption controller's, so a new budget starts with
  none, and at generation 1;
* ``PrepareForUpdate``: an update keeps the stored status, and a changed spec bumps the
  generation (so the eviction answers 429 until the controller has counted it again);
* ``Validate`` is pkg/apis/policy/validation's ``ValidatePodDisruptionBudgetSpec``: at most one
  of ``minAvailable`` and ``maxUnavailable``, each a count of 0 or more or a percentage of at
  most 100%, a selector whose terms parse, a known ``unhealthyPodEvictionPolicy``; and the name
  a DNS-1123 subdomain, as every object's.
"""

from __future__ import annotations

import copy
import re
from typing import Optional

from genericserver.apimachinery.api.objectmeta import validate_object_meta_name
from genericserver.apimachinery.apis.meta.v1.helpers import label_selector_as_selector
from genericserver.apimachinery.field import errors as field
from genericserver.registry.rest.update import take_spec

UNHEALTHY_POD_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]
_PERCENT = re.compile(r"[0-9]+%")


def prepare_for_create(obj: dict) -> dict:
    out = copy.deepcopy(obj)
    out["status"] = {}
    out["metadata"]["generation"] = 1
    return out


def prepare_for_update(current: dict, new: dict, old_api: dict) -> dict:
    """The stored budget with a client's change: its spec and the metadata it owns; the status
    stays the controller's; a new spec is a new generation."""
    return take_spec(current, new)


def _int_or_percent_errors(value: object, path: str) -> list[field.Error]:
    """apps validation's ``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [field.invalid(path, value, "must be greater than or equal to 0")] if value < 0 else []
    text = str(value)
    if not _PERCENT.fullmatch(text):
        return [field.invalid(path, text, "a valid percent string must be a numeric string followed by an ending '%' "
                                          "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]
    if int(text[:-1]) > 100:
        return [field.invalid(path, text, "must not be greater than 100%")]
    return []


def validate(obj: dict, old: Optional[dict]) -> list[field.Error]:
    errs = validate_object_meta_name(obj.get("metadata") or {})
    if errs and errs[0].type == field.REQUIRED:
        return errs
    spec = obj.get("spec") or {}
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        # Go marshals the internal spec, whose fields have no JSON names: its Go names
        internal = {"MinAvailable": spec["minAvailable"], "Selector": spec.get("selector"), "MaxUnavailable": spec["maxUnavailable"],
                    "UnhealthyPodEvictionPolicy": spec.get("unhealthyPodEvictionPolicy")}
        errs.append(field.invalid("spec", internal, "minAvailable and maxUnavailable cannot be both set"))
    for key in ("minAvailable", "maxUnavailable"):
        if spec.get(key) is not None:
            errs += _int_or_percent_errors(spec[key], f"spec.{key}")
    try:
        label_selector_as_selector(spec.get("selector"))
    except ValueError as err:
        errs.append(field.invalid("spec.selector.matchExpressions.operator", "", str(err)))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(field.not_supported("spec.unhealthyPodEvictionPolicy", policy, UNHEALTHY_POD_EVICTION_POLICIES))
    return errs

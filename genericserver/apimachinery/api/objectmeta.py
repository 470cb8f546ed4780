"""Port of k8s.io/apimachinery/pkg/api/validation/objectmeta.go (v1.36.0): a new object's name.

``ValidateObjectMeta`` with ``NameIsDNSSubdomain``, the name rule of most kinds (a ConfigMap, a
PodDisruptionBudget): a name is required (or a ``generateName`` to make one from), and must be a
DNS-1123 subdomain. A ``generateName`` is checked too, as a prefix (objectmeta.go:185-189), and
the name made from it (``BeforeCreate`` makes it first): a bad prefix is two errors, one for each
field, as kube-apiserver reports it. The other checks of object metadata (labels, annotations, owner
references) are left to the kinds that have any here.
"""

from __future__ import annotations

from genericserver.apimachinery.field import errors as field
from genericserver.apimachinery.validation import DNS1123_SUBDOMAIN_MSG, is_dns1123_subdomain


def validate_object_meta_name(meta: dict) -> list[field.Error]:
    """The errors of ``generateName`` and of the name (none, one or two)."""
    errs = []
    generate_name = meta.get("generateName", "")
    # NameIsDNSSubdomain(prefix=true): the prefix may end in a dash (generic.go:43)
    if generate_name and not is_dns1123_subdomain(mask_trailing_dash(generate_name)):
        errs.append(field.invalid("metadata.generateName", generate_name, DNS1123_SUBDOMAIN_MSG))
    name = meta.get("name", "")
    if not name:
        errs.append(field.required("metadata.name", "name or generateName is required"))
    elif not is_dns1123_subdomain(name):
        errs.append(field.invalid("metadata.name", name, DNS1123_SUBDOMAIN_MSG))
    return errs


def mask_trailing_dash(name: str) -> str:
    """generic.go's ``maskTrailingDash``: a prefix's final dash (its last two characters, as Go
    cuts them) stands in as ``a``, so ``demo-`` checks as ``dema``."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name

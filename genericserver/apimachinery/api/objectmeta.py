"""Port of k8s.io/apimachinery/pkg/api/validation/objectmeta.go (v1.36.0): a new object's name.

``ValidateObjectMeta`` with ``NameIsDNSSubdomain``, the name rule of most kinds (a ConfigMap, a
PodDisruptionBudget): a name is required (or a ``generateName`` to make one from), and must be a
DNS-1123 subdomain. The other checks of object metadata (labels, annotations, owner
references) are left to the kinds that have any here.
"""

from __future__ import annotations

from genericserver.apimachinery.field import errors as field
from genericserver.apimachinery.validation import DNS1123_SUBDOMAIN_MSG, is_dns1123_subdomain


def validate_object_meta_name(meta: dict) -> list[field.Error]:
    """The name's errors (none, or one)."""
    name = meta.get("name", "")
    if not name:
        return [field.required("metadata.name", "name or generateName is required")]
    if not is_dns1123_subdomain(name):
        return [field.invalid("metadata.name", name, DNS1123_SUBDOMAIN_MSG)]
    return []

"""Ports of k8s.io/apimachinery/pkg/api/validation/{objectmeta,generic}.go (v1.36.0): the checks every object's metadata passes.

:func:`validate_object_meta_accessor` (``ValidateObjectMetaAccessor``, a new object's) checks, in
Go's order: ``generateName`` as a prefix and the name with the kind's name rule (``nameFn``, given
the name and whether it is a prefix, answering Go's messages), the namespace (required for a
namespaced kind, a DNS-1123 label; forbidden on a cluster-scoped one), a negative ``generation``,
the labels (keys and values), the annotations (keys, and 256 KiB in all), the owner references
(apiVersion, kind, name and uid each non-empty, no Event as owner, one controller at most) and the
finalizers (qualified names, not both ``orphan`` and ``foregroundDeletion``).
:func:`validate_object_meta_accessor_update` (``ValidateObjectMetaAccessorUpdate``) adds what an
update may not do: add a finalizer to an object being deleted, leave out the resourceVersion,
lower the generation, change the name, namespace, uid, creation or deletion timestamps; and
checks the labels, annotations and owner references again. Both return field errors
(:mod:`genericserver.apimachinery.field.errors`); a map's entries are checked in the order the
object holds them (Go ranges over a map in random order, so with two bad keys Go's order of the
two errors changes from call to call).

From generic.go: the name rules (:func:`name_is_dns_subdomain`, :func:`name_is_dns_label`, with
:func:`mask_trailing_dash` for a prefix) and :func:`validate_nonnegative_field`.
"""

from __future__ import annotations

from typing import Any, Callable

from genericserver.apimachinery.apis.meta.v1 import validation as v1validation
from genericserver.apimachinery.field import errors as field
from genericserver.apimachinery.validation import dns1123_label_errors, dns1123_subdomain_errors, is_qualified_name

NameFunc = Callable[[str, bool], list]

FIELD_IMMUTABLE_ERROR_MSG = "field is immutable"
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)  # 256 kB
IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"
FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS = "orphan", "foregroundDeletion"
# BannedOwners: kinds that may not own an object, as (group, version, kind)
BANNED_OWNERS = {("", "v1", "Event")}


# -- generic.go ---------------------------------------------------------------------------------


def mask_trailing_dash(name: str) -> str:
    """``maskTrailingDash``: a prefix's final dash (its last two characters, as Go cuts them)
    stands in as ``a``, so ``demo-`` checks as ``dema``."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return dns1123_subdomain_errors(mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return dns1123_label_errors(mask_trailing_dash(name) if prefix else name)


validate_namespace_name = name_is_dns_label


def validate_nonnegative_field(value: int, path: str) -> list[field.Error]:
    return [field.invalid(path, value, IS_NEGATIVE_ERROR_MSG)] if value < 0 else []


# -- objectmeta.go ------------------------------------------------------------------------------


def _len(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def validate_annotations(annotations: dict, path: str) -> list[field.Error]:
    """``ValidateAnnotations``: each key a qualified name (in lower case: case does not matter
    here), and the keys and values 256 KiB at most together."""
    errs = [field.invalid(path, k, msg) for k in annotations for msg in is_qualified_name(k.lower())]
    if sum(_len(k) + _len(v) for k, v in annotations.items()) > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(field.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


def _group_version_kind(api_version: str, kind: str) -> tuple[str, str, str]:
    # schema.FromAPIVersionAndKind: "v1" is the core group's, "g/v" a group's, anything else no version
    if api_version.count("/") == 0:
        return "", api_version, kind
    if api_version.count("/") == 1:
        group, version = api_version.split("/")
        return group, version, kind
    return "", "", kind


def _gvk_string(gvk: tuple[str, str, str]) -> str:
    # GroupVersionKind.String(): group/version, Kind=kind
    return f"{gvk[0]}/{gvk[1]}, Kind={gvk[2]}"


def validate_owner_reference(ref: dict, path: str) -> list[field.Error]:
    errs = []
    gvk = _group_version_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
    if not gvk[1]:
        errs.append(field.invalid(f"{path}.apiVersion", ref.get("apiVersion", ""), "version must not be empty"))
    if not gvk[2]:
        errs.append(field.invalid(f"{path}.kind", ref.get("kind", ""), "must not be empty"))
    if not ref.get("name"):
        errs.append(field.invalid(f"{path}.name", ref.get("name", ""), "must not be empty"))
    if not ref.get("uid"):
        errs.append(field.invalid(f"{path}.uid", ref.get("uid", ""), "must not be empty"))
    if gvk in BANNED_OWNERS:
        errs.append(field.invalid(path, _owner_reference_json(ref), f"{_gvk_string(gvk)} is disallowed from being an owner"))
    return errs


def _owner_reference_json(ref: dict) -> dict:
    # the reference as json.Marshal writes an OwnerReference: its fields in the struct's order
    # (apiVersion, kind, name, uid always; controller and blockOwnerDeletion when set)
    out = {k: ref.get(k, "") for k in ("apiVersion", "kind", "name", "uid")}
    out.update((k, ref[k]) for k in ("controller", "blockOwnerDeletion") if ref.get(k) is not None)
    return out


def validate_owner_references(refs: list, path: str) -> list[field.Error]:
    errs: list[field.Error] = []
    first_controller = ""
    for ref in refs:
        errs.extend(validate_owner_reference(ref, path))
        if ref.get("controller"):
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if first_controller:
                errs.append(field.invalid(path, [_owner_reference_json(r) for r in refs],
                                          'Only one reference can have Controller set to true. Found "true" in references for '
                                          f"{first_controller} and {current}"))
            else:
                first_controller = current
    return errs


def validate_finalizer_name(name: str, path: str) -> list[field.Error]:
    return [field.invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_finalizers(finalizers: list, path: str) -> list[field.Error]:
    errs = [e for f in finalizers for e in validate_finalizer_name(f, path)]
    if FINALIZER_ORPHAN_DEPENDENTS in finalizers and FINALIZER_DELETE_DEPENDENTS in finalizers:
        errs.append(field.invalid(path, list(finalizers),
                                  f"finalizer {FINALIZER_ORPHAN_DEPENDENTS} and {FINALIZER_DELETE_DEPENDENTS} cannot be both set"))
    return errs


def go_string_slice(values: list[str]) -> str:
    """A ``[]string`` as ``%#v`` prints it: ``[]string{"a", "b"}``."""
    return "[]string{" + ", ".join(field.go_quote(v) for v in values) + "}"


def validate_no_new_finalizers(new: list, old: list, path: str) -> list[field.Error]:
    extra = sorted(set(new) - set(old))
    if extra:
        return [field.forbidden(path, f"no new finalizers can be added if the object is being deleted, found new finalizers "
                                      f"{go_string_slice(extra)}")]
    return []


def validate_immutable_field(new: Any, old: Any, path: str) -> list[field.Error]:
    """``ValidateImmutableField``: ``new`` and ``old`` as the object holds them (a string field
    left out is "", a pointer field left out is None, which Go prints ``null``)."""
    if new != old:
        return [field.invalid(path, field.NULL if new is None else new, FIELD_IMMUTABLE_ERROR_MSG)]
    return []


def _common(meta: dict, requires_namespace: bool, path: str) -> list[field.Error]:
    """``validateObjectMetaAccessorWithOptsCommon``."""
    errs: list[field.Error] = []
    namespace = meta.get("namespace", "")
    if requires_namespace:
        if not namespace:
            errs.append(field.required(f"{path}.namespace", ""))
        else:
            errs.extend(field.invalid(f"{path}.namespace", namespace, msg) for msg in validate_namespace_name(namespace, False))
    elif namespace:
        errs.append(field.forbidden(f"{path}.namespace", "not allowed on this type"))
    errs.extend(validate_nonnegative_field(meta.get("generation", 0), f"{path}.generation"))
    errs.extend(v1validation.validate_labels(meta.get("labels") or {}, f"{path}.labels"))
    errs.extend(validate_annotations(meta.get("annotations") or {}, f"{path}.annotations"))
    errs.extend(validate_owner_references(meta.get("ownerReferences") or [], f"{path}.ownerReferences"))
    errs.extend(validate_finalizers(meta.get("finalizers") or [], f"{path}.finalizers"))
    return errs


def validate_object_meta_accessor(meta: dict, requires_namespace: bool, name_fn: NameFunc, path: str = "metadata") -> list[field.Error]:
    """``ValidateObjectMeta`` / ``ValidateObjectMetaAccessor``: a new object's metadata (its name
    already made from a ``generateName``)."""
    errs: list[field.Error] = []
    generate_name, name = meta.get("generateName", ""), meta.get("name", "")
    if generate_name:
        errs.extend(field.invalid(f"{path}.generateName", generate_name, msg) for msg in name_fn(generate_name, True))
    if not name:
        errs.append(field.required(f"{path}.name", "name or generateName is required"))
    else:
        errs.extend(field.invalid(f"{path}.name", name, msg) for msg in name_fn(name, False))
    return errs + _common(meta, requires_namespace, path)


validate_object_meta = validate_object_meta_accessor


def validate_object_meta_accessor_update(new: dict, old: dict, path: str = "metadata") -> list[field.Error]:
    """``ValidateObjectMetaUpdate`` / ``ValidateObjectMetaAccessorUpdate``."""
    errs: list[field.Error] = []
    if old.get("deletionTimestamp") is not None:
        errs.extend(validate_no_new_finalizers(new.get("finalizers") or [], old.get("finalizers") or [], f"{path}.finalizers"))
    if not new.get("resourceVersion"):
        errs.append(field.invalid(f"{path}.resourceVersion", new.get("resourceVersion", ""), "must be specified for an update"))
    if new.get("generation", 0) < old.get("generation", 0):
        errs.append(field.invalid(f"{path}.generation", new.get("generation", 0), "must not be decremented"))
    for key in ("name", "namespace", "uid", "creationTimestamp"):  # strings, and a metav1.Time (zero: "")
        errs.extend(validate_immutable_field(new.get(key) or "", old.get(key) or "", f"{path}.{key}"))
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds"):  # pointers
        errs.extend(validate_immutable_field(new.get(key), old.get(key), f"{path}.{key}"))
    errs.extend(v1validation.validate_labels(new.get("labels") or {}, f"{path}.labels"))
    errs.extend(validate_annotations(new.get("annotations") or {}, f"{path}.annotations"))
    errs.extend(validate_owner_references(new.get("ownerReferences") or [], f"{path}.ownerReferences"))
    return errs


validate_object_meta_update = validate_object_meta_accessor_update


def validate_object_meta_name(meta: dict) -> list[field.Error]:
    """The name checks alone (``generateName`` as a prefix, then the name) with the DNS-1123
    subdomain rule: what kinds served without their full metadata checks use."""
    errs = []
    generate_name = meta.get("generateName", "")
    if generate_name:
        errs.extend(field.invalid("metadata.generateName", generate_name, msg) for msg in name_is_dns_subdomain(generate_name, True))
    name = meta.get("name", "")
    if not name:
        errs.append(field.required("metadata.name", "name or generateName is required"))
    else:
        errs.extend(field.invalid("metadata.name", name, msg) for msg in name_is_dns_subdomain(name, False))
    return errs

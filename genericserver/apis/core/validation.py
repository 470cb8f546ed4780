"""Port of k8s.io/kubernetes/pkg/apis/core/validation/validation.go (v1.36.0): the core API's checks of a ConfigMap, and of any core object's metadata.

:func:`validate_object_meta` and :func:`validate_object_meta_update` are apimachinery's
(:mod:`genericserver.apimachinery.api.objectmeta`) plus the core API's own rule for finalizers: a
finalizer without a ``/`` must be one of the standard names (``kubernetes``, ``orphan``,
``foregroundDeletion``: pkg/apis/core/helper/helpers.go's ``IsStandardFinalizerName``), else
``name is neither a standard finalizer name nor is it fully qualified``.

:func:`validate_config_map` (``ValidateConfigMap``): the metadata (the name a DNS-1123 subdomain,
``ValidateConfigMapName``), each key of ``data`` a config key and not also a key of
``binaryData``, each key of ``binaryData`` a config key, and the values 1 MiB at most in all
(``MaxSecretSize``; a ``binaryData`` value counts its decoded bytes). :func:`validate_config_map_update`
(``ValidateConfigMapUpdate``): the metadata's update rules, then, when the stored ConfigMap is
``immutable``, Go's ``field is immutable when `immutable` is set`` for the flag dropped and for a
changed ``data`` or ``binaryData``; then the ConfigMap as new.

Go ranges over ``data`` and ``binaryData`` as maps, in random order: with two bad keys its two
errors come in either order. Here they come in the order the object holds them.
"""

from __future__ import annotations

import base64
import binascii

from genericserver.apimachinery.api import objectmeta
from genericserver.apimachinery.field import errors as field
from genericserver.apimachinery.validation import config_map_key_errors

MAX_SECRET_SIZE = 1 * 1024 * 1024  # core.MaxSecretSize
IMMUTABLE_MSG = "field is immutable when `immutable` is set"
# helpers.go's standardFinalizers: core.FinalizerKubernetes and metav1's two garbage collector finalizers
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})

validate_config_map_name = objectmeta.name_is_dns_subdomain


def is_standard_finalizer_name(name: str) -> bool:
    return name in STANDARD_FINALIZERS


def validate_kube_finalizer_name(name: str, path: str) -> list[field.Error]:
    if len(name.split("/")) == 1 and not is_standard_finalizer_name(name):
        return [field.invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified")]
    return []


def _finalizer_names(meta: dict, path: str) -> list[field.Error]:
    return [e for i, f in enumerate(meta.get("finalizers") or []) for e in validate_kube_finalizer_name(f, f"{path}.finalizers[{i}]")]


def validate_object_meta(meta: dict, requires_namespace: bool, name_fn: objectmeta.NameFunc, path: str = "metadata") -> list[field.Error]:
    return objectmeta.validate_object_meta(meta, requires_namespace, name_fn, path) + _finalizer_names(meta, path)


def validate_object_meta_update(new: dict, old: dict, path: str = "metadata") -> list[field.Error]:
    return objectmeta.validate_object_meta_update(new, old, path) + _finalizer_names(new, path)


def _size(value: str, binary: bool) -> int:
    if binary:  # a []byte: what the base64 in the JSON decodes to
        try:
            return len(base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            return len(value)
    return len(value.encode("utf-8", "surrogatepass"))


def validate_config_map(cfg: dict) -> list[field.Error]:
    errs = validate_object_meta(cfg.get("metadata") or {}, True, validate_config_map_name, "metadata")
    data, binary = cfg.get("data") or {}, cfg.get("binaryData") or {}
    total = 0
    for key, value in data.items():
        errs.extend(field.invalid(f"data[{key}]", key, msg) for msg in config_map_key_errors(key))
        if key in binary:
            errs.append(field.invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += _size(value, False)
    for key, value in binary.items():
        errs.extend(field.invalid(f"binaryData[{key}]", key, msg) for msg in config_map_key_errors(key))
        total += _size(value, True)
    if total > MAX_SECRET_SIZE:
        # the whole object: field.NewPath(""), which Path.String() writes as an empty index, "[]"
        errs.append(field.too_long("[]", MAX_SECRET_SIZE))
    return errs


def validate_config_map_update(new: dict, old: dict) -> list[field.Error]:
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {}, "metadata")
    if old.get("immutable"):
        if not new.get("immutable"):
            errs.append(field.forbidden("immutable", IMMUTABLE_MSG))
        # reflect.DeepEqual of the maps: an empty map and none differ, but a ConfigMap's data is
        # never none (SetDefaults_ConfigMap, pkg/apis/core/v1/defaults.go, makes it empty)
        if (new.get("data") or {}) != (old.get("data") or {}):
            errs.append(field.forbidden("data", IMMUTABLE_MSG))
        if new.get("binaryData") != old.get("binaryData"):
            errs.append(field.forbidden("binaryData", IMMUTABLE_MSG))
    return errs + validate_config_map(new)

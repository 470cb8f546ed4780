"""Port of k8s.io/kubernetes/pkg/registry/core/configmap/strategy.go (v1.36.0): what the generic store does with a ConfigMap.

The strategy the generic store (:mod:`genericserver.registry.generic.registry.store`) and
registry/rest's ``BeforeCreate`` and ``BeforeUpdate`` ask: a ConfigMap is namespaced; nothing is
dropped or defaulted before a create or an update; a new one is checked by
``ValidateConfigMap`` and a changed one by ``ValidateConfigMapUpdate``
(:mod:`genericserver.apis.core.validation`); an update need not name a
``resourceVersion`` (``AllowUnconditionalUpdate``) and never creates (``AllowCreateOnUpdate``);
no warnings. It has no graceful deletion (no ``CheckGracefulDelete``) and no garbage collection
policy of its own, so a delete is at once unless a finalizer holds the ConfigMap.
"""

from __future__ import annotations

from genericserver.apimachinery.field import errors as field
from genericserver.apis.core import validation
from genericserver.storage.names import generate_name


class Strategy:
    """``configmap.Strategy``."""

    def namespace_scoped(self) -> bool:
        return True

    def prepare_for_create(self, obj: dict) -> None:
        """``PrepareForCreate``: ``dropDisabledFields`` drops nothing."""

    def prepare_for_update(self, obj: dict, old: dict) -> None:
        """``PrepareForUpdate``: nothing either."""

    def validate(self, obj: dict) -> list[field.Error]:
        return validation.validate_config_map(obj)

    def validate_update(self, obj: dict, old: dict) -> list[field.Error]:
        return validation.validate_config_map_update(obj, old)

    def warnings_on_create(self, obj: dict) -> list[str]:
        return []

    def warnings_on_update(self, obj: dict, old: dict) -> list[str]:
        return []

    def canonicalize(self, obj: dict) -> None:
        pass

    def allow_create_on_update(self) -> bool:
        return False

    def allow_unconditional_update(self) -> bool:
        return True

    def generate_name(self, base: str) -> str:
        return generate_name(base)


STRATEGY = Strategy()

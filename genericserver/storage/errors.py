"""Port of k8s.io/apiserver/pkg/storage/errors.go (v1.36.0): the storage's own errors, before the registry words them for a client.

A :class:`StorageError` carries a code, the etcd key, a resource version and a message, and reads
``StorageError: invalid object, Code: 4, Key: /registry/configmaps/ns/a, ResourceVersion: 0,
AdditionalErrorMsg: ...``; the generic store turns an invalid object (a failed precondition)
into a 409 Conflict whose message holds that text (storage/errors/storage.go's
``InterpretUpdateError``). :data:`ERR_RESOURCE_VERSION_SET_ON_CREATE` is no API error: a create
that names a resourceVersion gets it unwrapped, as a 500.
"""

from __future__ import annotations

ERR_CODE_KEY_NOT_FOUND, ERR_CODE_KEY_EXISTS, ERR_CODE_RESOURCE_VERSION_CONFLICTS, ERR_CODE_INVALID_OBJ = 1, 2, 3, 4
_MESSAGES = {ERR_CODE_KEY_NOT_FOUND: "key not found", ERR_CODE_KEY_EXISTS: "key exists",
             ERR_CODE_RESOURCE_VERSION_CONFLICTS: "resource version conflicts", ERR_CODE_INVALID_OBJ: "invalid object"}


class UnwrappedError(Exception):
    """An error a storage call returns that no registry turns into an API error (Go's
    ``errors.New``, strconv's): the handler writes it as ``ErrorToAPIStatus`` does, a 500 with
    its text and no reason."""


class ResourceVersionSetOnCreateError(UnwrappedError):
    """``ErrResourceVersionSetOnCreate``."""


ERR_RESOURCE_VERSION_SET_ON_CREATE = "resourceVersion should not be set on objects to be created"


class StorageError(Exception):
    def __init__(self, code: int, key: str, resource_version: int = 0, err: str = ""):
        self.code, self.key, self.resource_version, self.err = code, key, resource_version, err
        super().__init__(f"StorageError: {_MESSAGES[code]}, Code: {code}, Key: {key}, ResourceVersion: {resource_version}, "
                         f"AdditionalErrorMsg: {err if err else '<nil>'}")


def new_invalid_obj_error(key: str, msg: str) -> StorageError:
    return StorageError(ERR_CODE_INVALID_OBJ, key, 0, msg)


def is_invalid_obj(err: BaseException) -> bool:
    return isinstance(err, StorageError) and err.code == ERR_CODE_INVALID_OBJ

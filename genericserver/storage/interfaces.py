"""Port of k8s.io/apiserver/pkg/storage/interfaces.go (v1.36.0): ValidateListOptions, the list's resourceVersion rules, and a write's preconditions.

``Preconditions.Check`` (:func:`check_preconditions`): a write that names a uid or a
resourceVersion the stored object does not have fails with the storage's invalid-object error
(:mod:`genericserver.storage.errors`), ``Precondition failed: UID in precondition: ..., UID in
object meta: ...``.

What a storage checks before it lists: a ``continue`` token must decode (400 ``invalid continue
token: ...``) and comes without a ``resourceVersion`` (other than "0"), and its version is the
one to read at; else a ``resourceVersion`` must parse (400 ``invalid resource version: ...``),
and it is read at exactly with ``resourceVersionMatch=Exact``, or, with no match given, for a
list cut at a ``limit``. The generic store here keeps no snapshots, so it reads the current
state whatever version this asks for (a continued list continues over what is there now, where
etcd would serve the old revision, or 410 once compacted). These are etcd3's rules; kube-apiserver's
watch cache, which serves most lists, parses the version first and answers one it cannot parse
with a 500, as a get does: the cacher's ``Get`` parses a given version before it looks the object up.
"""

from __future__ import annotations

from genericserver.apimachinery.api import errors
from genericserver.storage import storage_continue
from genericserver.storage.errors import new_invalid_obj_error


class InvalidError(ValueError):
    """The storage's ``InvalidError`` (Go's pkg/storage/errors.go): not an API error, so a handler
    that gets it unwrapped answers 500 with its text (``ErrorToAPIStatus``)."""


def parse_resource_version(resource_version: str) -> int:
    """The ``APIObjectVersioner``'s ``ParseResourceVersion``: "" and "0" are 0, else a uint64
    (its storage :class:`InvalidError`, which a list wraps as a 400 and a get does not)."""
    if resource_version in ("", "0"):
        return 0
    if not (resource_version.isascii() and resource_version.isdigit()) or int(resource_version) >= 1 << 64:
        why = "value out of range" if resource_version.isascii() and resource_version.isdigit() else "invalid syntax"
        raise InvalidError(f"resourceVersion: Invalid value: {errors._q(resource_version)}: "
                         f"strconv.ParseUint: parsing {errors._q(resource_version)}: {why}")
    return int(resource_version)


def validate_list_options(key_prefix: str, resource_version: str, resource_version_match: str, limit: int,
                          continue_token: str, recursive: bool = True) -> tuple[int, str]:
    """``ValidateListOptions``: the revision to read at (0: the newest) and the key to start
    from ("" : the first)."""
    if recursive and continue_token:
        try:
            continue_key, continue_rv = storage_continue.decode_continue(continue_token, key_prefix)
        except storage_continue.ContinueError as err:
            raise errors.new_bad_request(f"invalid continue token: {err}") from None
        if resource_version and resource_version != "0":
            raise errors.new_bad_request("specifying resource version is not allowed when using continue")
        return (continue_rv if continue_rv > 0 else 0), continue_key
    if not resource_version:
        return 0, ""
    try:
        parsed = parse_resource_version(resource_version)
    except ValueError as err:
        raise errors.new_bad_request(f"invalid resource version: {err}") from None
    if resource_version_match == "Exact":
        return parsed, ""
    if resource_version_match == "" and recursive and limit > 0 and parsed > 0:
        return parsed, ""
    if resource_version_match not in ("", "NotOlderThan"):
        raise errors.new_bad_request(f"unknown ResourceVersionMatch value: {resource_version_match}")
    return 0, ""


def check_preconditions(preconditions, key: str, obj: dict) -> None:
    """``Preconditions.Check``: ``preconditions`` is ``{"uid"?, "resourceVersion"?}`` or None;
    ``obj`` the stored object (``{}`` when there is none)."""
    if not preconditions:
        return
    meta = obj.get("metadata") or {}
    uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
    if uid is not None and uid != meta.get("uid", ""):
        raise new_invalid_obj_error(key, f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.get('uid', '')}")
    if rv is not None and rv != meta.get("resourceVersion", ""):
        raise new_invalid_obj_error(key, f"Precondition failed: ResourceVersion in precondition: {rv}, "
                                         f"ResourceVersion in object meta: {meta.get('resourceVersion', '')}")

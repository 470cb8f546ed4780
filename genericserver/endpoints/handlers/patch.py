"""Port of k8s.io/apiserver/pkg/endpoints/handlers/patch.go (v1.36.0): PATCH of an object.

``PatchResource``'s steps, in Go's order (patch.go at v1.36.0):

1. the patch's type is its Content-Type: anything but the types here is Go's 415 listing them,
   before anything else (lines 77-89);
2. the output media type: 406 (104);
3. the body is read: 413 over the limit (110);
4. the ``PatchOptions`` decoded (400) and checked (``dryRun``, ``fieldManager``,
   ``fieldValidation``; ``force`` only for an apply: 422 on ``PatchOptions.meta.k8s.io``) (119-128);
5. the finisher (within the 34 s upper bound) runs the storage's update with the patcher's
   transformers: the patch applied to the object as stored (a missing object is 404), the
   namespace and ``checkName`` (400), mutating admission (a no-op: no plugin is configured),
   repeated owner references dropped with a warning; then the strategy's check (422) and the
   store (409 for a stale ``metadata.resourceVersion``).

The three patch types:

* ``application/json-patch+json`` (RFC 6902 as gopkg.in/evanphx/json-patch.v4 applies it,
  :func:`apply_json_patch`: ``replace`` of a missing key sets it, a path without its leading
  slash names a key of the root, which kube-apiserver then warns of as an unknown field): a patch that does not
  decode is 400 with the decoder's text (``error decoding patch: json: cannot unmarshal object
  into Go value of type []handlers.jsonPatchOp`` unless ``fieldValidation=Ignore``); more than 10,000 operations is 413; one that does not
  apply (a failed ``test``, a missing path) is Go's 422 ``the server rejected our request due
  to an error in our request``;
* ``application/merge-patch+json`` (RFC 7386, as evanphx/json-patch's ``MergePatch``): a patch
  that is not a JSON object is 400 ``error decoding patch: ...`` (``Invalid JSON Patch`` with
  ``fieldValidation=Ignore``, and for ``null``);
* ``application/strategic-merge-patch+json``
  (:mod:`genericserver.apimachinery.strategicpatch.patch`).

The result is read back into the kind's struct as a body would be (a strategic patch's by the
unstructured converter, whose words differ: ``cannot convert string to int32``): unknown fields
are warnings, or with ``fieldValidation=Strict`` a 422 on the field ``patch``, as is a value of the
wrong type; its value is what Go shows (:func:`shown`: the strategic patch as fmt prints a map,
else the patched object as evanphx/json-patch wrote it). A write that comes between the read
and the store (a controller's) is not the client's conflict: the patch is applied again to the
object as it now is, as Go applies it inside the storage's ``GuaranteedUpdate``; only a patch
that names a ``resourceVersion`` of its own is held to it (409).

Server-side apply is not served (walkthrough section 9): its Content-Type is answered 415.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterable

from genericserver import request
from genericserver.apimachinery.api import errors
from genericserver.apimachinery.apis.meta.v1 import conversion as metav1conversion
from genericserver.apimachinery.apis.meta.v1 import validation
from genericserver.apimachinery.field import errors as field
from genericserver.apimachinery.runtime.serializer import json as jsonserializer
from genericserver.apimachinery.strategicpatch.patch import PatchError, go_sprint, strategic_merge_patch
from genericserver.context import context as gocontext
from genericserver.encoding.json import decode as gojson
from genericserver.encoding.json import scanner
from genericserver.endpoints.handlers import response
from genericserver.endpoints.handlers.finisher import finisher
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.endpoints.handlers.rest import (REQUEST_TIMEOUT_UPPER_BOUND, Request, RequestScope, StartResponse,
                                                   add_strict_decoding_warnings, check_name,
                                                   dedup_owner_references_and_add_warning, field_validation, limited_read_body,
                                                   validate_new)
from genericserver.registry.rest import meta as restmeta

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH]
MAX_JSON_PATCH_OPERATIONS = 10000


def _rejected() -> errors.StatusError:
    # NewGenericServerResponse(422, ...): Go's words, the details empty
    return errors.StatusError(errors.status(422, "Invalid", "the server rejected our request due to an error in our request", {}))


def merge_patch(doc: Any, patch: Any) -> Any:
    """RFC 7386: ``null`` deletes, an object merges into an object, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(doc) if isinstance(doc, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _load(body: bytes, decoding: str = "") -> Any:
    # Go's json.Unmarshal of the patch: the scanner's text for what is not JSON ("decoding" is
    # the handler's prefix where it decodes the patch itself)
    try:
        return gojson.loads(body)
    except scanner.SyntaxError as err:
        raise errors.new_bad_request(f"{decoding}{err}") from None


def json_patch_ops(body: bytes) -> list:
    """applyJSPatch's strict decoding of a JSON patch into ``[]jsonPatchOp`` (patch.go:380-397):
    a list of objects whose ``op``, ``path`` and ``from`` are strings; otherwise 400 ``error
    decoding patch:`` and encoding/json's text."""
    ops = _load(body, "error decoding patch: ")
    try:
        if ops is None:
            return []
        if not isinstance(ops, list):
            raise gojson.UnmarshalTypeError(gojson.kind_of(ops), "[]handlers.jsonPatchOp")
        for op in ops:
            if op is not None and not isinstance(op, dict):
                raise gojson.UnmarshalTypeError(gojson.kind_of(op), "handlers.jsonPatchOp")
            for key in ("op", "path", "from"):
                value = (op or {}).get(key)
                if value is not None and not isinstance(value, str):
                    raise gojson.UnmarshalTypeError(gojson.kind_of(value), "string", "jsonPatchOp", key)
    except gojson.UnmarshalTypeError as err:
        raise errors.new_bad_request(f"error decoding patch: {err}") from None
    return ops


def apply_patch(patch_type: str, current: dict, body: bytes, scope: RequestScope, directive: str = "Warn") -> dict:
    """The object after the patch, as JSON (not yet read into the struct). With the ``Strict``
    and ``Warn`` directives (Warn is the default) Go first decodes a JSON or merge patch itself,
    which words what it refuses as ``error decoding patch: ...`` (patch.go:389-426)."""
    strict_decoding = directive in ("Strict", "Warn")
    if patch_type == JSON_PATCH:
        if strict_decoding:
            json_patch_ops(body)
        ops = _load(body)  # jsonpatch.DecodePatch: null is a patch of no operations
        if ops is None:
            ops = []
        if not isinstance(ops, list):
            raise errors.new_bad_request(f"json: cannot unmarshal {gojson.kind_of(ops)} into Go value of type jsonpatch.Patch")
        if len(ops) > MAX_JSON_PATCH_OPERATIONS:
            raise errors.new_request_entity_too_large(
                f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}")
        try:
            return apply_json_patch(current, ops)
        except _PatchFailed:
            raise _rejected() from None
    if patch_type == MERGE_PATCH:
        if strict_decoding:  # into a map[string]interface{}: null is no error here
            patch = _load(body, "error decoding patch: ")
            if patch is not None and not isinstance(patch, dict):
                raise errors.new_bad_request(f"error decoding patch: json: cannot unmarshal {gojson.kind_of(patch)} "
                                             "into Go value of type map[string]interface {}")
        try:
            patch = gojson.loads(body)
        except scanner.SyntaxError:
            raise errors.new_bad_request("Invalid JSON Patch") from None
        if not isinstance(patch, dict):
            raise errors.new_bad_request("Invalid JSON Patch")
        return merge_patch(current, patch)
    patch = _load(body)
    if patch is None:  # json.Unmarshal of null into the patch's map leaves it empty
        patch = {}
    if not isinstance(patch, dict):
        raise errors.new_bad_request(f"json: cannot unmarshal {gojson.kind_of(patch)} into Go value of type map[string]interface {{}}")
    try:
        return strategic_merge_patch(current, patch, scope.resource.struct)
    except PatchError as err:
        if err.internal:  # no API error: ErrorToAPIStatus makes it a 500 with its text and no reason
            raise errors.StatusError(errors.status(500, "", str(err))) from None
        if err.bad_request:
            raise errors.new_bad_request(str(err)) from None
        raise errors.StatusError(errors.status(422, "Invalid", str(err), {})) from None


# -- RFC 6902 as gopkg.in/evanphx/json-patch.v4 (v4.13.0) applies it, the library patch.go calls ---------
#
# It is more lenient than the RFC, and kube-apiserver is with it: ``replace`` of a key an object
# lacks sets it; a path without its leading slash names a key of the document's root (its first
# segment is dropped: "data/x" is "/x"); ``copy`` from a key an object lacks copies null; a
# negative array index counts from the end. Anything it cannot do fails the whole patch.


class _PatchFailed(Exception):
    pass


def _decode_patch_key(k: str) -> str:
    return k.replace("~1", "/").replace("~0", "~")


def _index(key: str, length: int) -> int:
    """An array index of an array of ``length`` items (negative: from the end)."""
    try:
        idx = int(key)
    except ValueError:
        raise _PatchFailed(f"value was not a proper array index: {key!r}") from None
    if idx < 0:
        if idx < -length:
            raise _PatchFailed(f"Unable to access invalid index: {idx}")
        idx += length
    if idx >= length:
        raise _PatchFailed(f"Unable to access invalid index: {idx}")
    return idx


def _get(con: Any, key: str) -> Any:
    """``get``: an object's missing key is None (no error), an array's bad index is one."""
    if isinstance(con, dict):
        return con.get(key)
    return con[_index(key, len(con))]


def _add(con: Any, key: str, value: Any) -> None:
    if isinstance(con, dict):
        con[key] = value
    elif key == "-":
        con.append(value)
    else:  # an index of the array as it will be, one longer
        con.insert(_index(key, len(con) + 1), value)


def _remove(con: Any, key: str) -> None:
    if isinstance(con, dict):
        if key not in con:
            raise _PatchFailed(f"Unable to remove nonexistent key: {key}")
        del con[key]
    else:
        del con[_index(key, len(con))]


def _find_object(doc: Any, path: str) -> tuple[Any, str]:
    """``findObject``: the container of the path's last segment, and that segment (None when a
    segment on the way is missing or no container)."""
    split = path.split("/")
    if len(split) < 2:
        return None, ""
    for part in split[1:-1]:
        try:
            nxt = _get(doc, _decode_patch_key(part))
        except _PatchFailed:
            return None, ""
        if not isinstance(nxt, (dict, list)):
            return None, ""
        doc = nxt
    return doc, _decode_patch_key(split[-1])


def apply_json_patch(doc: Any, ops: list) -> Any:
    """``Patch.Apply``: each operation in turn on a copy of ``doc``; :class:`_PatchFailed` (Go's
    422) for the first that cannot be done."""
    doc = copy.deepcopy(doc)
    for op in ops:
        op = op if isinstance(op, dict) else {}
        kind = op.get("op") if isinstance(op.get("op"), str) else "unknown"
        path, value = op.get("path"), copy.deepcopy(op.get("value"))
        if kind not in ("add", "remove", "replace", "move", "test", "copy"):
            raise _PatchFailed(f"Unexpected kind: {kind}")
        if not isinstance(path, str):
            raise _PatchFailed(f"{kind} operation failed to decode path")
        if kind == "replace" and path == "":
            if not isinstance(value, (dict, list)):
                raise _PatchFailed("replace operation value must be object or array")
            doc = value
            continue
        if kind == "test" and path == "":
            if doc != value:
                raise _PatchFailed(f"testing value {path} failed")
            continue
        if kind in ("move", "copy"):
            source = op.get("from")
            if not isinstance(source, str):
                raise _PatchFailed(f"{kind} operation failed to decode from")
            con, key = _find_object(doc, source)
            if con is None:
                raise _PatchFailed(f"{kind} operation does not apply: doc is missing from path: {source}")
            value = copy.deepcopy(_get(con, key))
            if kind == "move":
                _remove(con, key)
        con, key = _find_object(doc, path)
        if con is None:
            raise _PatchFailed(f"{kind} operation does not apply: doc is missing path: {path}")
        if kind in ("add", "move", "copy"):
            _add(con, key, value)
        elif kind == "remove":
            _remove(con, key)
        elif kind == "replace":
            _get(con, key)  # an array's index must exist; an object's key need not
            if isinstance(con, dict):
                con[key] = value
            else:
                con[_index(key, len(con))] = value
        elif _get(con, key) != value:  # test: a missing key equals null
            raise _PatchFailed(f"testing value {path} failed")
    return doc


def patch_resource(scope: RequestScope, req: Request, start_response: StartResponse, namespace: str, name: str) -> Iterable[bytes]:
    patch_type = req.headers.get("Content-Type", "")
    if patch_type.find(";") > 0:  # "; charset=" and the like
        patch_type = patch_type[:patch_type.index(";")]
    if patch_type not in PATCH_TYPES:
        raise negotiate.new_unsupported_media_type_error(PATCH_TYPES)
    ctx, cancel = gocontext.with_timeout(request.context_from(req.environ), REQUEST_TIMEOUT_UPPER_BOUND)
    try:
        media_type = response.negotiate_output(scope, req.environ)
        body = limited_read_body(req)
        options = metav1conversion.convert_url_values_to_v1_patch_options(request.query(req.environ))
        dry_run = options.get("dryRun") or []
        validation.validate_write_options("PatchOptions", dry_run, options["fieldManager"], options["fieldValidation"],
                                          force=options.get("force"))
        directive = field_validation(options["fieldValidation"])

        def store() -> dict:
            while True:
                current = scope.store.get(namespace, name)
                obj = patched_object(scope, patch_type, current, body, directive, namespace, name, req.environ)
                try:
                    return scope.store.update(namespace, name, obj, dry_run=bool(dry_run))
                except errors.StatusError as err:
                    # Go applies the patch inside the storage's GuaranteedUpdate: a write that came between
                    # the read and this one (a controller's status) is read again and patched again; only
                    # a patch that names a resourceVersion of its own is held to it (409)
                    if not errors.is_conflict(err) or obj["metadata"].get("resourceVersion") != current["metadata"].get("resourceVersion"):
                        raise

        result = finisher.finish_request(ctx, store, metrics=scope.metrics)
        return response.transform_response_object(scope, req, start_response, 200, media_type, result)
    finally:
        cancel()


def patched_object(scope: RequestScope, patch_type: str, current: dict, body: bytes, directive: str,
                   namespace: str, name: str, environ: dict) -> dict:
    """The object ``body`` makes of ``current``, read back into the kind's struct and checked as
    an update; under Warn its strict errors are the request's warnings (a patch applied again
    after a conflict warns the same, which the recorder keeps once)."""
    patched = apply_patch(patch_type, current, body, scope, directive)
    try:
        # Go reads a strategic patch's result with the unstructured converter, the others' with encoding/json
        _, obj, strict = jsonserializer.decode(jsonserializer.encode(patched), scope.resource.struct,
                                               unstructured=patch_type == STRATEGIC_MERGE_PATCH)
    except jsonserializer.DecodeError as err:
        raise errors.new_invalid("", "", field.to_causes([field.invalid("patch", shown(patch_type, current, body, scope), str(err))])) from None
    # the patch's own strict errors come first (its duplicate fields: kjson.UnmarshalStrict of the
    # body, under Strict and Warn), then the result's
    if directive in ("Strict", "Warn"):
        prefix = "json patch " if patch_type == JSON_PATCH else ""
        strict = [prefix + e for e in jsonserializer.duplicate_fields(body)] + strict
    if strict:
        if directive == "Strict":
            raise errors.new_invalid("", "", field.to_causes([field.invalid("patch", shown(patch_type, current, body, scope),
                                                                            "strict decoding error: " + ", ".join(strict))]))
        if directive == "Warn":
            add_strict_decoding_warnings(environ, strict)
    obj = {"kind": current.get("kind"), "apiVersion": current.get("apiVersion"),
           **{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}}
    meta = obj.setdefault("metadata", {})
    restmeta.ensure_object_namespace_matches_request_namespace(
        restmeta.expected_namespace_for_resource(namespace, scope.resource.group, scope.resource.name), meta)
    check_name(obj, name, namespace)
    # applyAdmission: mutating admission would run here (no plugin is configured); then the dedup
    dedup_owner_references_and_add_warning(obj, environ, True)
    validate_new(scope, obj, current)
    return obj


# -- what a refused patch shows as its value, as Go shows it --------------------------------------
# A strategic patch's error prints the patch as fmt prints a map. The other two print the object
# evanphx/json-patch (v4) wrote: its documents are Go maps of lazily decoded nodes, so an object
# the patch reached is written with its keys sorted, and what it did not reach keeps the bytes it
# had (the stored object as Go encodes it: its fields' order, empty ones left out). A merge patch
# decodes every object on its way down, and all of a value it adds (to drop its nulls); a JSON
# patch the containers on each operation's path.


def shown(patch_type: str, current: dict, body: bytes, scope: RequestScope) -> str:
    """The value of the ``patch`` field in the 422 of a patch whose result does not decode."""
    patch = json.loads(body)
    if patch_type == STRATEGIC_MERGE_PATCH:
        return go_sprint(patch)
    _, base, _ = jsonserializer.decode(jsonserializer.encode(current), scope.resource.struct)
    sorted_at: set[tuple] = {()}
    deep_at: set[tuple] = set()
    if patch_type == MERGE_PATCH:
        _merge_reached(base, patch, (), sorted_at, deep_at)
        return _written(merge_patch(base, patch), sorted_at, deep_at)
    for op in patch:
        for key in ("path", "from"):
            tokens = [t.replace("~1", "/").replace("~0", "~") for t in str(op.get(key, "")).split("/")[1:]]
            sorted_at.update(tuple(tokens[:i]) for i in range(len(tokens)))
    return _written(apply_json_patch(base, patch), sorted_at, deep_at)


def _merge_reached(doc: dict, patch: dict, at: tuple, sorted_at: set, deep_at: set) -> None:
    # mergeDocs: an object met by an object is decoded and merged into; a new value, or one that
    # replaces what is no object, has its nulls pruned (decoded all the way down); an object
    # replaced by anything else is the patch's value as sent
    sorted_at.add(at)
    for k, v in patch.items():
        if v is None:
            continue
        if isinstance(doc.get(k), dict) and isinstance(v, dict):
            _merge_reached(doc[k], v, at + (k,), sorted_at, deep_at)
        elif not isinstance(doc.get(k), dict):
            deep_at.add(at + (k,))


def _written(value: Any, sorted_at: set, deep_at: set, at: tuple = (), deep: bool = False) -> str:
    """``value`` as json.Marshal writes the nodes: compact, keys sorted where decoded."""
    deep = deep or at in deep_at
    if isinstance(value, dict):
        keys = sorted(value) if deep or at in sorted_at else list(value)
        return "{" + ",".join(f"{_scalar(k)}:{_written(value[k], sorted_at, deep_at, at + (k,), deep)}" for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_written(v, sorted_at, deep_at, at + (str(i),), deep) for i, v in enumerate(value)) + "]"
    return _scalar(value)


def _scalar(value: Any) -> str:
    return jsonserializer.escape_html(json.dumps(value, ensure_ascii=False))

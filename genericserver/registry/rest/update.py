"""Port of k8s.io/apiserver/pkg/registry/rest/update.go (v1.36.0): what of a client's metadata an update takes.

``BeforeUpdate`` starts from the client's object and puts the old one's system fields back (the
generation, the uid, the creation and deletion timestamps): what is left of the client's metadata
is what a client owns. The registries here start from the stored object instead (it also holds
what the simulation keeps beside the API's fields), so they take the client's owned fields into
it: :func:`take_client_metadata`. A field the client left out or empty is removed, as an update
replaces the whole object. Then the kind's ``PrepareForUpdate`` has its say (a changed spec is a
new generation: :func:`take_spec`).
"""

from __future__ import annotations

import copy

# the metadata a client writes (the rest is the server's: BeforeUpdate keeps the old values)
CLIENT_METADATA = ("labels", "annotations", "finalizers")


def take_client_metadata(stored: dict, new: dict, keys: tuple[str, ...] = CLIENT_METADATA) -> dict:
    """A copy of ``stored`` with the client's ``keys`` of ``new``'s metadata."""
    out = copy.deepcopy(stored)
    for k in keys:
        value = (new.get("metadata") or {}).get(k)
        if value:
            out["metadata"][k] = copy.deepcopy(value)
        else:
            out["metadata"].pop(k, None)
    return out


def take_spec(stored: dict, new: dict) -> dict:
    """The ``PrepareForUpdate`` of a kind with a status of its controller's (a Deployment, a
    PodDisruptionBudget): the client's metadata and spec, the stored status, and the generation
    bumped when the spec changed."""
    out = take_client_metadata(stored, new)
    spec = copy.deepcopy(new.get("spec") or {})
    if spec != stored.get("spec"):
        out["spec"] = spec
        out["metadata"]["generation"] = stored["metadata"].get("generation", 1) + 1
    return out

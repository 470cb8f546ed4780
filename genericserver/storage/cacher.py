"""Port of k8s.io/apiserver/pkg/storage/cacher/cacher.go (v1.36.0): how the watch cache cuts a list.

kube-apiserver v1.36 serves lists from its watch cache (a consistent read, ``resourceVersion=""``,
as well as ``resourceVersion=0``), and the cache has rules of its own, which the generic store's
list (:func:`genericserver.registry.generic.registry.store.list_predicate`) follows:

* :func:`compute_list_limit` (``computeListLimit``): ``limit`` is ignored when
  ``resourceVersion=0`` (the cache has no history to page through); such a list is whole, with
  no ``continue``;
* :func:`select_page` (``GetList``'s loop): items are taken in key order while they match the
  selection, until the limit; the list has more (a ``continue`` token) when any key follows the
  last one taken, whether or not it would match: a selector that narrows the page still gets a
  token, and the next page may be empty. (etcd's own list, which the cache hands an exact
  ``resourceVersion`` with a limit to, decides the same way: it stops at the next key.)
"""

from __future__ import annotations

from typing import Any, Callable


def compute_list_limit(limit: int, resource_version: str) -> int:
    """``computeListLimit``: the limit the cache applies (0: none)."""
    if limit <= 0 or resource_version == "0":
        return 0
    return limit


def select_page(keyed: list[tuple[str, Any]], matches: Callable[[Any], bool], limit: int) -> tuple[list[tuple[str, Any]], bool]:
    """The (key, item) pairs a list answers, and whether more keys follow the last one taken."""
    selected: list[tuple[str, Any]] = []
    for i, (key, item) in enumerate(keyed):
        if matches(item):
            selected.append((key, item))
        if limit > 0 and len(selected) >= limit:
            return selected, i < len(keyed) - 1
    return selected, False

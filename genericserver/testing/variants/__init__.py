"""Known-bad variants of the server, for tests and workshops: deliberate bugs the checks must catch (no Go twin).

Nothing in the server has a flag for these, and no file is edited to make one. Each variant is
a named object that says what it breaks and swaps the broken piece in through a seam the code
already has, for the duration of a ``with`` block::

    from genericserver.testing.variants import variant

    with variant("once-runs-twice").switched_in():
        ...  # every sync.Once in the process now runs its function twice under a race

The swap is a context manager over attributes (:meth:`Variant.patches`): a method of a class
(``SafeWaitGroup.add``), a goroutine method of ``PreparedGenericAPIServer``, or a filter that
``chain.handler_chain_steps`` looks up when it builds the chain. Leaving the block puts the
real ones back. Two kinds:

* ``lifecycle`` variants (:mod:`.lifecycle`) break a step of the shutdown; the invariants of
  :mod:`genericserver.testing.invariants` over a whole run catch them;
* ``primitive`` variants (:mod:`.primitives`) plant a classic concurrency bug in one primitive;
  :mod:`genericserver.testing.lincheck` catches them on the primitive's ``target``.

``VARIANTS`` maps each name to its class, in the order of the table in walkthrough.md section 7:
the sixteen the fuzzers are measured against.

Besides those, the labs (:mod:`genericserver.labs`) switch in bugs from the real history of the
shutdown, each named after the upstream issue or pull request that fixed it: lifecycle ones in
:mod:`.history` (kube-apiserver) and ``kind = "cluster"`` ones in :mod:`.cluster` (the kubelet,
kubectl, Contour). ``HISTORY_VARIANTS`` maps their names; :func:`variant` knows every name, so a
replay file of a lab's bug replays like any other.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator


class Variant:
    """The interface, and the server as it is (``name == "real"``, nothing swapped).

    ``name`` (used in replay files), ``story`` (one line: what goes wrong), ``breaks`` (the
    primitive or lifecycle step), ``bug_class`` (check outside the lock, lost wake-up...),
    ``kind`` ("lifecycle" or "primitive") and, for a primitive one, ``target``: the
    :data:`genericserver.testing.lincheck_targets.TARGETS` entry whose checks catch it.
    """

    name = "real"
    story = "the server as it is"
    breaks = ""
    bug_class = ""
    kind = "real"
    target = ""

    def patches(self) -> list[tuple[Any, str, Any]]:
        """``(owner, attribute, replacement)`` for each piece swapped in (made when switched in)."""
        return []

    @contextlib.contextmanager
    def switched_in(self) -> Iterator["Variant"]:
        """Swap the broken pieces in for the block; the real ones are back afterwards."""
        saved: list[tuple[Any, str, bool, Any]] = []
        try:
            for owner, attr, replacement in self.patches():
                own = attr in vars(owner)
                saved.append((owner, attr, own, vars(owner)[attr] if own else None))
                setattr(owner, attr, replacement)
            yield self
        finally:
            for owner, attr, own, old in reversed(saved):
                if own:
                    setattr(owner, attr, old)
                else:
                    delattr(owner, attr)

    def describe(self) -> str:
        return f"{self.name}: {self.story} [{self.kind}; {self.bug_class}; breaks {self.breaks}]"

    def __repr__(self) -> str:
        return f"<variant {self.name}>"


from genericserver.testing.variants.lifecycle import (  # noqa: E402  (they subclass Variant)
    AuditShutdownBeforeDrain,
    ExemptionRulesDiffer,
    ListenerStoppedAtNotAccepting,
    NotAcceptingWithoutHooks,
    SlotReleasedBeforeBody,
)
from genericserver.testing.variants.primitives import PRIMITIVE_VARIANTS  # noqa: E402

LIFECYCLE_VARIANTS: tuple[type[Variant], ...] = (
    AuditShutdownBeforeDrain, ListenerStoppedAtNotAccepting, NotAcceptingWithoutHooks, SlotReleasedBeforeBody,
    ExemptionRulesDiffer,
)

VARIANTS: dict[str, type[Variant]] = {v.name: v for v in (*LIFECYCLE_VARIANTS, *PRIMITIVE_VARIANTS)}

from genericserver.testing.variants.cluster import CLUSTER_VARIANTS  # noqa: E402
from genericserver.testing.variants.history import HISTORY_VARIANTS as _HISTORY  # noqa: E402

HISTORY_VARIANTS: dict[str, type[Variant]] = {v.name: v for v in (*_HISTORY, *CLUSTER_VARIANTS)}


def variant(name: str) -> Variant:
    """The variant called ``name`` (one of the sixteen or of history); ``"real"`` (or ``""``) is
    the server as it is. An unknown name raises ``KeyError``."""
    if name in ("", "real"):
        return Variant()
    return (VARIANTS.get(name) or HISTORY_VARIANTS[name])()


def registry() -> list[Variant]:
    """One instance of every known-bad variant, lifecycle ones first."""
    return [cls() for cls in VARIANTS.values()]


__all__ = [
    "Variant", "VARIANTS", "HISTORY_VARIANTS", "LIFECYCLE_VARIANTS", "PRIMITIVE_VARIANTS", "variant", "registry",
    "AuditShutdownBeforeDrain", "ExemptionRulesDiffer", "ListenerStoppedAtNotAccepting",
    "NotAcceptingWithoutHooks", "SlotReleasedBeforeBody",
]

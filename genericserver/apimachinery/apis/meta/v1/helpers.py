"""Port of k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go (v1.36.0): a LabelSelector as a selector, and as text.

An object's ``selector`` (a Deployment's, a PodDisruptionBudget's) is structured:
``matchLabels`` pairs and ``matchExpressions`` terms. ``LabelSelectorAsSelector`` turns it into
the selector ``-l`` parses to, so both match by the same code: a missing selector selects nothing,
an empty one everything (callers that want "nothing" for empty check :meth:`Selector.empty`).
"""

from __future__ import annotations

import json
from typing import Optional

from genericserver.apimachinery.labels.selector import Selector, new_requirement

# the structured operators, as the parsed selector spells them
_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def label_selector_as_selector(ps: Optional[dict]) -> Optional[Selector]:
    """``LabelSelectorAsSelector``: None for a missing selector (Go's ``labels.Nothing()``);
    a term with an operator Go does not know raises ``ValueError`` with Go's message."""
    if ps is None:
        return None
    if not ps.get("matchLabels") and not ps.get("matchExpressions"):
        return Selector()  # labels.Everything()
    requirements = [new_requirement(k, "=", [v]) for k, v in (ps.get("matchLabels") or {}).items()]
    for expr in ps.get("matchExpressions") or []:
        op = _OPERATORS.get(expr.get("operator", ""))
        if op is None:
            raise ValueError(f"{json.dumps(expr.get('operator', ''))} is not a valid label selector operator")
        requirements.append(new_requirement(expr.get("key", ""), op, list(expr.get("values") or [])))
    return Selector(tuple(sorted(requirements, key=lambda r: r.key)))


def format_label_selector(selector: Optional[dict]) -> str:
    """``FormatLabelSelector``, for a selector of matchLabels only (what the served kinds' printers
    meet): ``k=v,...`` sorted by key as a selector's String() is, ``<none>`` when empty."""
    labels = (selector or {}).get("matchLabels") or {}
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels)) or "<none>"

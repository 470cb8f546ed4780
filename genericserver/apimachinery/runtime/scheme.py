"""Ports of k8s.io/apimachinery/pkg/runtime/{scheme,error}.go (v1.36.0): a scheme's name, and the error for a kind it does not know.

A Go ``Scheme`` is named when ``NewScheme`` makes it, after the code that called it
(``naming.GetNameFromCallsite``, skipping scheme.go itself), and the name is in the text of
``notRegisteredErr``: ``no kind "ConfigMap" is registered for version "v2" in scheme "..."``.
Which name that is depends on how the binary was built. scheme.go's own file is to be skipped
by its path ``k8s.io/apimachinery/pkg/runtime/scheme.go``; a kube-apiserver built in the
Kubernetes repository (staging sources, ``-trimpath``) has that path, and its legacy scheme is
``pkg/api/legacyscheme/scheme.go:30``. The reference kube-apiserver this project is measured
against (reference/kube-apiserver, built with ``-trimpath`` from the module cache) has
``k8s.io/apimachinery@v0.36.0/pkg/runtime/scheme.go`` instead: the skip misses it, and every
scheme there is named after ``NewScheme``'s own line, ``pkg/runtime/scheme.go:111``, which is what
kube-apiserver answers in the API surface corpus. The frames below are that build's.
"""

from __future__ import annotations

import json

from genericserver.apimachinery import from_stack

# the files whose frames do not name a scheme: NewScheme's own
INTERNAL_PACKAGES = ("k8s.io/apimachinery/pkg/runtime/scheme.go",)
# the reference build's frame of NewScheme (the line that asks for the name), as -trimpath writes it
NEW_SCHEME_FRAME = ("k8s.io/apimachinery@v0.36.0/pkg/runtime/scheme.go", 111)


def scheme_name(caller: tuple[str, int]) -> str:
    """The name ``NewScheme`` gives a scheme made at ``caller`` (file, line) in the reference build."""
    return from_stack.get_name_from_callsite([NEW_SCHEME_FRAME, caller], *INTERNAL_PACKAGES)


# k8s.io/kubernetes/pkg/api/legacyscheme's Scheme: every built-in kind's (create.go's decoding)
LEGACY_SCHEME_NAME = scheme_name(("k8s.io/kubernetes@v1.36.0/pkg/api/legacyscheme/scheme.go", 30))
# k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme's: the options' (delete.go's DeleteOptions)
META_INTERNAL_VERSION_SCHEME_NAME = scheme_name(("k8s.io/apimachinery@v0.36.0/pkg/apis/meta/internalversion/scheme/register.go", 27))


class NotRegisteredErr(ValueError):
    """``notRegisteredErr`` for a kind: none is registered under this group version (``gv``
    as ``GroupVersion.String()`` writes it, ``v1`` or ``apps/v1``)."""

    def __init__(self, scheme_name: str, kind: str, gv: str) -> None:
        if not kind:
            text = f"no version {_q(gv)} has been registered in scheme {_q(scheme_name)}"
        elif gv.endswith("__internal"):
            text = (f"no kind {_q(kind)} is registered for the internal version of group "
                    f"{_q(gv.rpartition('/')[0])} in scheme {_q(scheme_name)}")
        else:
            text = f"no kind {_q(kind)} is registered for version {_q(gv)} in scheme {_q(scheme_name)}"
        super().__init__(text)


def _q(s: str) -> str:
    # Go's %q of the texts here (ASCII names)
    return json.dumps(s)

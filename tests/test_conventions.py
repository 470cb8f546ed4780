"""The project's conventions, checked on the source (``make check`` runs just this file).

* every module has a docstring whose first line names its Go twin (``Port of k8s.io/... (v1.36.0).``)
  or says it has none;
* server code reaches threads, sleeps and clocks only through ``genericserver.runtime``;
* goroutines get a name;
* modules stay small enough to read beside their Go twin.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "genericserver"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)

# where real threads and clocks are the point: the seam itself and the test support
SEAM_EXEMPT = {"runtime.py"}
SEAM_EXEMPT_DIRS = {"testing", "demo"}

BARE = re.compile(
    r"\btime\.(sleep|monotonic|time|perf_counter)\(|threading\.(Thread|Event|Condition|Lock|RLock|Semaphore|BoundedSemaphore|Timer)\("
)
PORT_LINE = re.compile(r"^Port of k8s\.io/(apiserver|apimachinery)/\S+\.go\b.*\(v1\.36\.0\)|^Port of Go's \S+ package|^Ports of k8s\.io/")
MAX_LINES = 600


def rel(p: pathlib.Path) -> str:
    return str(p.relative_to(ROOT))


def is_server_code(p: pathlib.Path) -> bool:
    parts = p.relative_to(PACKAGE).parts
    return p.name not in SEAM_EXEMPT and not (set(parts[:-1]) & SEAM_EXEMPT_DIRS)


def test_there_are_modules_to_check():
    assert len(MODULES) > 5


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_module_docstring_first_line_names_the_go_twin(path: pathlib.Path):
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc, f"{rel(path)} has no module docstring"
    first = doc.splitlines()[0]
    if first.startswith("Port"):
        assert PORT_LINE.match(first), f"{rel(path)}: first line should read 'Port of k8s.io/<repo>/<file>.go (v1.36.0).': {first!r}"
    else:
        assert "no Go twin" in first or "(package)" in first, (
            f"{rel(path)}: first line neither names a Go file nor says there is none: {first!r}"
        )


@pytest.mark.parametrize("path", [p for p in MODULES if is_server_code(p)], ids=rel)
def test_server_code_uses_the_runtime_seam(path: pathlib.Path):
    offending = [
        f"{rel(path)}:{n}: {line.strip()}"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if BARE.search(line) and not line.lstrip().startswith("#")
    ]
    assert not offending, "bare threading/time outside the runtime seam:\n" + "\n".join(offending)


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_goroutines_are_named(path: pathlib.Path):
    tree = ast.parse(path.read_text())
    unnamed = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            owner = getattr(fn.value, "id", "") if isinstance(fn, ast.Attribute) else ""
            if called == "go" and owner in {"rt", "runtime"}:
                if not any(k.arg == "name" for k in node.keywords):
                    unnamed.append(node.lineno)
    assert not unnamed, f"{rel(path)}: goroutines started without a name at lines {unnamed}"


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_module_size_budget(path: pathlib.Path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{rel(path)} has {n} lines (budget {MAX_LINES}): split it"


def test_the_seam_check_catches_a_bare_sleep():
    # the check itself must be able to fail
    assert BARE.search("    time.sleep(1)")
    assert BARE.search("t = threading.Thread(target=f)")
    assert not BARE.search("rt.sleep(1)")

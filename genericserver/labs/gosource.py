"""``make go-source``: the Go files the workshop's route and the labs link to, copied from the Go module cache for offline reading (no Go twin).

Every Go link of docs/workshop.md and of the labs (:data:`genericserver.labs.registry.LABS`)
names a file of kubernetes/kubernetes at v1.36.0. The machine that ran ``make reference`` holds
those files in its Go module cache (``$GOMODCACHE``, else ``~/go/pkg/mod``): a file under
``staging/src/k8s.io/NAME/`` is in module ``k8s.io/NAME@v0.36.0``, any other in
``k8s.io/kubernetes@v1.36.0``. ``python -m genericserver.labs.gosource`` copies each into
:data:`FOLDER` (``go-source/``, ignored by git) at the path its link names after ``v1.36.0/``,
so ``https://github.com/.../blob/v1.36.0/staging/src/k8s.io/apiserver/pkg/server/genericapiserver.go#L569``
is ``go-source/staging/src/k8s.io/apiserver/pkg/server/genericapiserver.go`` line 569 (the files are
read-only in the cache; the copies are writable, for notes). ``genericserver lab show`` prints that
path beside each link. Links to other repositories (Contour's pull request) have no copy.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import sys
from typing import Optional

FOLDER = "go-source"
KUBERNETES_AT = "https://github.com/kubernetes/kubernetes/blob/v1.36.0/"
LINK = re.compile(re.escape(KUBERNETES_AT) + r"([^)#\s]+\.go)(?:#L(\d+)(?:-L\d+)?)?")
ROOT = pathlib.Path(__file__).resolve().parent.parent.parent  # the clone (docs/ is beside genericserver/)


def offline(url: str) -> Optional[str]:
    """``go-source/PATH:LINE`` (or ``go-source/PATH``) for a kubernetes v1.36.0 Go link, else None."""
    m = LINK.fullmatch(url)
    if m is None:
        return None
    return f"{FOLDER}/{m.group(1)}" + (f":{m.group(2)}" if m.group(2) else "")


def module_file(path: str, cache: pathlib.Path) -> pathlib.Path:
    """Where the module cache holds ``path`` (a path of the kubernetes repository)."""
    staging = re.fullmatch(r"staging/src/k8s\.io/([^/]+)/(.+)", path)
    if staging:
        return cache / "k8s.io" / f"{staging.group(1)}@v0.36.0" / staging.group(2)
    return cache / "k8s.io" / "kubernetes@v1.36.0" / path


def linked_paths() -> list[str]:
    """The kubernetes paths the workshop's page and the labs link to, each once."""
    from genericserver.labs.registry import LABS

    texts = [(ROOT / "docs" / "workshop.md").read_text()] + [the_lab.go_url for the_lab in LABS]
    return sorted({m.group(1) for text in texts for m in LINK.finditer(text)})


def module_cache() -> pathlib.Path:
    return pathlib.Path(os.environ.get("GOMODCACHE") or pathlib.Path.home() / "go" / "pkg" / "mod")


def copy(into: pathlib.Path, cache: pathlib.Path) -> list[str]:
    """Copy every linked file from ``cache`` into ``into``; the paths not found there."""
    missing = []
    for path in linked_paths():
        source = module_file(path, cache)
        if not source.is_file():
            missing.append(path)
            continue
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return missing


def main() -> int:
    cache, into = module_cache(), ROOT / FOLDER
    paths = linked_paths()
    missing = copy(into, cache)
    print(f"{FOLDER}/: {len(paths) - len(missing)} of {len(paths)} Go files the workshop and the labs link to, "
          f"from {cache}")
    for path in missing:
        print(f"  not in the module cache: {path} ({module_file(path, cache)}; 'make reference' fetches it)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())

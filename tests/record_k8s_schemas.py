"""Writes tests/data/kubernetes-1.36-strict-schemas.json: the strict Kubernetes 1.36 JSON schemas of the kinds deploy/ uses (no Go twin: a recorder).

``make k8s-schemas`` installs kubernetes-validate (which bundles every Kubernetes release's
schemas, 108 MB) into the venv and runs this: for each kind a manifest under deploy/ has, its
``v1.36.0-local-strict`` schema, and of the shared ``_definitions.json`` only the definitions
those schemas reach, ref by ref. tests/test_cluster_manifest.py validates deploy/ against the
file with jsonschema, as kubernetes-validate does (Draft 2020-12, a registry of the two), so
``make test`` needs neither the package nor its 108 MB. A manifest of a kind not recorded here
fails that test, naming this command.
"""

from __future__ import annotations

import importlib.metadata
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "data" / "kubernetes-1.36-strict-schemas.json"
VERSION = "v1.36.0-local-strict"
REF = re.compile(r"#/\$defs/([^\"]+)")


def schema_name(doc: dict) -> str:
    """kubernetes-validate's file name for a document's kind: ``deployment-apps-v1``."""
    group_version = re.sub(r"^([^./]*)(?:[.][^/]*)?/", r"\1-", doc["apiVersion"])  # networking.k8s.io/v1: networking-v1
    return f"{doc['kind'].lower()}-{group_version}"


def main() -> int:
    import kubernetes_validate

    from genericserver.cluster.manifest import load_documents

    folder = pathlib.Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / VERSION
    names = sorted({schema_name(doc) for path in (ROOT / "deploy").rglob("*.yaml") for doc in load_documents(path)})
    kinds = {name: json.loads((folder / f"{name}.json").read_text()) for name in names}
    every = json.loads((folder / "_definitions.json").read_text())["$defs"]
    reached: dict[str, dict] = {}
    todo = [m for schema in kinds.values() for m in REF.findall(json.dumps(schema))]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached[name] = every[name]
            todo += REF.findall(json.dumps(every[name]))
    doc = {"source": f"kubernetes-validate {importlib.metadata.version('kubernetes-validate')}, {VERSION}",
           "kinds": kinds, "definitions": {"$defs": dict(sorted(reached.items()))}}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    print(f"{OUT.relative_to(ROOT)}: {len(kinds)} kinds ({', '.join(names)}), {len(reached)} definitions, "
          f"{OUT.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

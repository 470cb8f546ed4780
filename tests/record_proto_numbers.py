"""Write tests/data/generated-proto-v1.36.0.json: Go's protobuf field numbers of the served types (no Go twin).

The served types are written out by hand (genericserver/apimachinery/structs.py); their field
numbers must be those of the generated.proto files Go's clients decode with, or a client reads a
value into the wrong field or fails (kubectl describe pod did, on a probe). This reads those
files from the staging mirrors at the pinned versions and keeps, for each message the served
types reach, its fields' names and numbers. tests/test_proto_numbers.py compares the structs
with it, without the mirrors.

    python tests/record_proto_numbers.py API_MIRROR APIMACHINERY_MIRROR

where the mirrors are git clones of kubernetes/api and kubernetes/apimachinery (the search
tool's ``fetch``; ../shared/design.md section 2). A type added to the served ones needs a new
recording.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "generated-proto-v1.36.0.json"
API_TAG = "v0.36.0"
APIMACHINERY_COMMIT = "debe1eba03a0c4134fd07a8f7586c44bb94ec7b0"  # v0.36.0 (design.md section 2)
PACKAGES = [("api", API_TAG, d, "k8s.io.api." + d.replace("/", "."))
            for d in ("core/v1", "apps/v1", "discovery/v1", "autoscaling/v1", "authentication/v1", "authorization/v1",
                      "coordination/v1", "policy/v1", "apidiscovery/v2")] + [
           ("apimachinery", APIMACHINERY_COMMIT, d, "k8s.io.apimachinery." + d.replace("/", "."))
            for d in ("pkg/apis/meta/v1", "pkg/util/intstr", "pkg/runtime", "pkg/api/resource")]
MESSAGE = re.compile(r"^message (\w+) \{(.*?)^\}", re.S | re.M)
FIELD = re.compile(r"^\s+(?:optional|repeated)?\s*(?:map<[^>]+>|[\w.]+)\s+(\w+) = (\d+);", re.M)


def messages(mirrors: dict[str, str]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for repo, rev, folder, package in PACKAGES:
        text = subprocess.run(["git", "-C", mirrors[repo], "show", f"{rev}:{folder}/generated.proto"],
                              capture_output=True, text=True, check=True).stdout
        for m in MESSAGE.finditer(text):
            out[f"{package}.{m.group(1)}"] = {f.group(1): int(f.group(2)) for f in FIELD.finditer(m.group(2))}
    return out


def main() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_proto_numbers import served_structs

    if len(sys.argv) != 3:
        sys.exit("usage: python tests/record_proto_numbers.py API_MIRROR APIMACHINERY_MIRROR")
    go = messages({"api": sys.argv[1], "apimachinery": sys.argv[2]})
    wanted = sorted(s.proto for s in served_structs())
    missing = [name for name in wanted if name not in go]
    if missing:
        sys.exit(f"not in the mirrors' generated.proto: {', '.join(missing)}")
    OUT.write_text(json.dumps({name: go[name] for name in wanted}, indent=1) + "\n")
    print(f"{OUT.relative_to(ROOT)}: {len(wanted)} messages")


if __name__ == "__main__":
    main()

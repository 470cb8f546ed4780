"""Record the HTTP/2 shutdown corpus into go-h2shutdown.json (no Go twin).

    python tests/parity/record_h2.py --go .venv-go-1.27.3/bin/go

The toolchain builds ``h2shutdown/`` offline as ``record.py`` builds the HTTP/1 server; the
binary runs every scenario of :mod:`parity.h2corpus` (a Go HTTP/2 server over TLS, shut down
while Go's HTTP/2 client talks to it) and prints what the client saw. ``--repeat N`` runs them N
times and keeps, for each time, the largest value seen, and fails if anything else varies: the
replay compares times within a tolerance (tests/parity/README.md). ``make parity`` runs this.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))  # tests/, so that "parity" imports as under pytest

from parity.h2corpus import SCENARIOS  # noqa: E402
from parity.record import BUILD, go_env, go_version  # noqa: E402

ANSWERS = HERE / "go-h2shutdown.json"
CERT, KEY = ROOT / "tests" / "data" / "localhost-cert.pem", ROOT / "tests" / "data" / "localhost-key.pem"


def build(go: str, version: str) -> pathlib.Path:
    BUILD.mkdir(exist_ok=True)
    binary = BUILD / f"h2shutdown-{version}"
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=HERE / "h2shutdown", env=go_env(), check=True)
    return binary


def run(binary: pathlib.Path) -> dict:
    script = json.dumps([{"id": s.id, "steps": list(s.steps)} for s in SCENARIOS])
    out = subprocess.run([str(binary), "-cert", str(CERT), "-key", str(KEY)], input=script, capture_output=True,
                         text=True, check=True, timeout=120)
    return {rec["id"]: rec for rec in map(json.loads, out.stdout.splitlines())}


def without_times(answer: dict) -> dict:
    strip = lambda d: {k: v for k, v in d.items() if k != "at_ms"}  # noqa: E731
    return {"requests": {k: strip(v) for k, v in answer["requests"].items()},
            "shutdown": strip(answer["shutdown"]) if answer.get("shutdown") else None}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--go", required=True, help="the go binary")
    parser.add_argument("--repeat", type=int, default=3, help="run the scenarios this many times (default: %(default)s)")
    args = parser.parse_args(argv)
    go = shutil.which(args.go)
    if not go:
        parser.error(f"argument --go: not an executable: {args.go}")
    version = go_version(go)
    binary = build(str(pathlib.Path(go).resolve()), version)
    runs = [run(binary) for _ in range(max(1, args.repeat))]
    scenarios = {}
    for s in SCENARIOS:
        answers = [r[s.id] for r in runs]
        if any(without_times(a) != without_times(answers[0]) for a in answers):
            raise SystemExit(f"record_h2.py: {s.id}: Go's answers vary between runs:\n" + "\n".join(map(json.dumps, answers)))
        answer = answers[0]
        for rid, req in answer["requests"].items():
            req["at_ms"] = max(a["requests"][rid]["at_ms"] for a in answers)
        if answer.get("shutdown"):
            answer["shutdown"]["at_ms"] = max(a["shutdown"]["at_ms"] for a in answers)
        del answer["id"]
        scenarios[s.id] = {"description": s.description, "steps": list(s.steps), "answer": answer}
    doc = {"about": "What Go's HTTP/2 client saw while Go's HTTP/2 server shut down (tests/parity/README.md); "
                    "written by tests/parity/record_h2.py, do not edit",
           "go_version": version, "runs": len(runs), "scenarios": scenarios}
    ANSWERS.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {ANSWERS} ({len(scenarios)} scenarios, {version}, {len(runs)} runs)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Record the shutdown corpora into go-h1shutdown.json and go-h2shutdown.json (no Go twin).

    python tests/parity/record_shutdown.py --go go [--corpus h1|h2]

The toolchain builds ``h1shutdown/`` and ``h2shutdown/`` offline as ``record.py`` builds the
HTTP/1 parsing server (both take what they share from ``shutdownkit/``, by a ``replace`` in
their go.mod); each binary runs every scenario of its corpus (:mod:`parity.h1corpus`:
raw HTTP/1 connections to a Go server that shuts down; :mod:`parity.h2corpus`: Go's HTTP/2
client against Go's HTTP/2 server) and prints what the clients saw. ``--repeat N`` runs them N
times, keeps for each time the largest value seen, and fails if anything else varies: the
replays compare times within a tolerance (tests/parity/README.md). ``make parity`` runs this.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))  # tests/, so that "parity" imports as under pytest

from parity import h1corpus, h2corpus  # noqa: E402
from parity.record import BUILD, go_env, go_version  # noqa: E402

CERT, KEY = ROOT / "tests" / "data" / "localhost-cert.pem", ROOT / "tests" / "data" / "localhost-key.pem"
# corpus -> (its scenarios, the recorder's folder, the answers file, what the answers are)
CORPORA = {
    "h1": (h1corpus.SCENARIOS, "h1shutdown", "go-h1shutdown.json",
           "What raw HTTP/1 connections saw, one by one, while Go's net/http server shut down"),
    "h2": (h2corpus.SCENARIOS, "h2shutdown", "go-h2shutdown.json",
           "What Go's HTTP/2 client saw while Go's HTTP/2 server shut down"),
}


def build(go: str, folder: str, version: str) -> pathlib.Path:
    BUILD.mkdir(exist_ok=True)
    binary = BUILD / f"{folder}-{version}"
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=HERE / folder, env=go_env(), check=True)
    return binary


def script(scenario: Any) -> dict:
    return scenario.script() if hasattr(scenario, "script") else {"id": scenario.id, "steps": list(scenario.steps)}


def run(binary: pathlib.Path, scenarios: list) -> dict:
    out = subprocess.run([str(binary), "-cert", str(CERT), "-key", str(KEY)], input=json.dumps([script(s) for s in scenarios]),
                         capture_output=True, text=True, check=True, timeout=300)
    return {rec["id"]: rec for rec in map(json.loads, out.stdout.splitlines())}


def is_time(key: str, parent: str) -> bool:
    """Times are the ``at_ms`` fields, and the values of ``contexts`` (tag -> ms)."""
    return key == "at_ms" or parent == "contexts"


def without_times(value: Any, parent: str = "") -> Any:
    if isinstance(value, dict):
        return {k: (None if is_time(k, parent) else without_times(v, k)) for k, v in value.items()}
    return value


def latest(answers: list, parent: str = "") -> Any:
    """One answer with every time the largest the runs saw (the rest is equal in all of them)."""
    first = answers[0]
    if isinstance(first, dict):
        return {k: (max(a[k] for a in answers) if is_time(k, parent) else latest([a[k] for a in answers], k)) for k in first}
    return first


def record(corpus: str, go: str, version: str, repeat: int) -> None:
    scenarios, folder, answers_file, about = CORPORA[corpus]
    binary = build(go, folder, version)
    runs = [run(binary, scenarios) for _ in range(max(1, repeat))]
    out = {}
    for s in scenarios:
        answers = [r[s.id] for r in runs]
        if any(without_times(a) != without_times(answers[0]) for a in answers):
            raise SystemExit(f"record_shutdown.py: {s.id}: Go's answers vary between runs:\n" + "\n".join(map(json.dumps, answers)))
        answer = latest(answers)
        del answer["id"]
        out[s.id] = {"description": s.description, **{k: v for k, v in script(s).items() if k != "id"}, "answer": answer}
    doc = {"about": f"{about} (tests/parity/README.md); written by tests/parity/record_shutdown.py, do not edit",
           "go_version": version, "runs": len(runs), "scenarios": out}
    path = HERE / answers_file
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {path} ({len(out)} scenarios, {version}, {len(runs)} runs)", file=sys.stderr)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--go", required=True, help="the go binary")
    parser.add_argument("--corpus", choices=sorted(CORPORA), action="append", help="only this corpus (default: both)")
    parser.add_argument("--repeat", type=int, default=3, help="run the scenarios this many times (default: %(default)s)")
    args = parser.parse_args(argv)
    go = shutil.which(args.go)
    if not go:
        parser.error(f"argument --go: not an executable: {args.go}")
    version = go_version(go)
    for corpus in args.corpus or sorted(CORPORA):
        record(corpus, str(pathlib.Path(go).resolve()), version, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

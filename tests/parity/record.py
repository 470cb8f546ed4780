"""Record Go's answers to the parity corpus into go-answers.json (no Go twin).

    python tests/parity/record.py --go go --go .venv-go-1.27.3/bin/go

Each ``--go`` toolchain builds ``goserver/`` offline (GOTOOLCHAIN=local, GOPROXY=off; its cache
and the binaries under ``.go-build/`` at the repository root), the server starts on a free
loopback port, and every case of :mod:`parity.corpus` is sent to it on a new connection. The
first ``--go`` is the reference (``make parity``: Go 1.26.8, what kube-apiserver v1.36.0 runs):
its answers are the ones the replay compares with. The answer of every other toolchain is stored
too where it differs (normalised as the replay compares), and the ids of those cases are listed
under ``version_differences``. ``make parity`` runs this.

``--repeat N`` sends every case N times and fails if Go's answers are not all the same (a check
that the recording does not depend on timing). ``--only ID`` records some cases into the file
as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))  # tests/, so that "parity" imports as under pytest

from parity import wire  # noqa: E402
from parity.corpus import CASES, CASES_BY_ID  # noqa: E402

ANSWERS = HERE / "go-answers.json"
BUILD = ROOT / ".go-build"
WAIT_QUIET = 1.0  # silence that ends a "waits" case when recording (the replay waits less)


def go_env() -> dict:
    env = dict(os.environ)
    env.update(GOTOOLCHAIN="local", GOPROXY="off", GOFLAGS="-mod=mod", GOENV="off", GOTELEMETRY="off",
               GOCACHE=str(BUILD / "cache"), GOPATH=str(BUILD / "path"), CGO_ENABLED="0")
    return env


def go_version(go: str) -> str:
    out = subprocess.run([go, "env", "GOVERSION"], env=go_env(), capture_output=True, text=True, check=True)
    return out.stdout.strip()


def build(go: str, version: str) -> pathlib.Path:
    BUILD.mkdir(exist_ok=True)
    binary = BUILD / f"goserver-{version}"
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=HERE / "goserver", env=go_env(), check=True)
    return binary


class GoServer:
    """The reference server as a child process; closing its stdin stops it."""

    def __init__(self, binary: pathlib.Path):
        self.log = open(BUILD / f"{binary.name}.log", "w")
        self.proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            self.stop()
            raise SystemExit(f"record.py: {binary} did not print its port (see {self.log.name})")
        self.port = int(line)

    def stop(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.log.close()


def ask(port: int, case: wire.Case) -> dict:
    return wire.exchange(port, case.steps, head_responses=case.head_responses,
                         quiet_after=0 if case.waits else None, quiet=WAIT_QUIET)


def record(go: str, cases: list, repeat: int) -> tuple[str, dict]:
    version = go_version(go)
    binary = build(go, version)
    server = GoServer(binary)
    answers, problems = {}, []
    started = time.monotonic()
    try:
        for case in cases:
            answer = ask(server.port, case)
            for _ in range(repeat - 1):
                again = ask(server.port, case)
                if not wire.same(again, answer):
                    problems.append(f"{case.id}: answers vary between tries:\n{wire.show(answer)}\n{wire.show(again)}")
            if answer["connection"] == "waiting" and not case.waits:
                problems.append(f"{case.id}: Go answered nothing for {wire.ANSWER_TIMEOUT:g} s; mark the case waits=True")
            if case.waits and answer["connection"] != "waiting":
                problems.append(f"{case.id}: marked waits, but Go's connection is {answer['connection']}")
            for r in answer["responses"]:
                if "body_sha256" in r and (r["headers"].get("content-type") or [""])[0] == "application/json":
                    problems.append(f"{case.id}: the reflection is too long to compare; ask for ?body=ok")
            answers[case.id] = answer
    finally:
        server.stop()
    print(f"{version}: {len(cases)} cases in {time.monotonic() - started:.1f} s", file=sys.stderr)
    if problems:
        raise SystemExit("record.py: " + "\n".join(problems))
    return version, answers


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--go", action="append", required=True, help="a go binary (repeat; the first is the reference)")
    parser.add_argument("--repeat", type=int, default=1, help="send each case this many times and check the answers agree")
    parser.add_argument("--only", action="append", default=[], help="record only this case id (repeat)")
    parser.add_argument("--out", default=str(ANSWERS), help="the answers file (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("argument --repeat: must be at least 1")
    unknown = [i for i in args.only if i not in CASES_BY_ID]
    if unknown:
        parser.error(f"argument --only: no such case: {', '.join(unknown)}")
    gos = [shutil.which(go) or "" for go in args.go]  # absolute: the build runs in goserver/
    if not all(gos):
        parser.error(f"argument --go: not an executable: {args.go[gos.index('')]}")
    cases = [CASES_BY_ID[i] for i in args.only] if args.only else CASES
    out = pathlib.Path(args.out)
    old = json.loads(out.read_text()) if args.only and out.exists() else {}

    recorded = [record(os.path.abspath(go), cases, args.repeat) for go in gos]
    (ref_version, ref), others = recorded[0], recorded[1:]
    versions = [v for v, _ in recorded]
    if old and old.get("go_versions") != versions:
        raise SystemExit(f"record.py: {out} was recorded with {old.get('go_versions')}, not {versions}: record every case")

    entries = dict(old.get("cases", {}))
    for case in cases:
        entry = {"category": case.category, "description": case.description, "digest": case.digest(),
                 "answer": ref[case.id]}
        differ = {v: a[case.id] for v, a in others if not wire.same(a[case.id], ref[case.id])}
        if differ:
            entry["differing_answers"] = differ
        entries[case.id] = entry
    order = {c.id: i for i, c in enumerate(CASES)}
    entries = {k: entries[k] for k in sorted(entries, key=lambda k: order.get(k, len(order))) if k in order}
    doc = {
        "about": "Go net/http's answers to the HTTP/1 parity corpus (tests/parity/README.md); "
                 "written by tests/parity/record.py, do not edit",
        "go_versions": versions,
        "reference": ref_version,
        "version_differences": {v: [k for k, e in entries.items() if v in e.get("differing_answers", {})] for v in versions[1:]},
        "cases": entries,
    }
    out.write_text(json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=True) + "\n")
    for v, ids in doc["version_differences"].items():
        print(f"{ref_version} vs {v}: {len(ids)} cases differ: {', '.join(ids) or '-'}", file=sys.stderr)
    print(f"wrote {out} ({len(entries)} cases)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Records the HTTP/2 corpus from kube-apiserver into go-h2kube.json (no Go twin: a recorder).

Each case of ``h2kube.CASES`` runs against a fresh kube-apiserver v1.36.0 (or, for a case that
needs serve's sample endpoints, genericserver-go), started by reference/pair.py with the case's
flags and ``--v=1`` (for the ``[graceful-termination]`` lines a case waits on). Each case runs
``--repeat`` times (default 2); the observations must agree, else the recorder stops and says
which case depends on timing. `make parity` runs it after `make reference`;
``python tests/parity/record_h2kube.py [--only ID] [--repeat N]`` runs it alone.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(HERE), str(ROOT / "reference")]

import h2kube  # noqa: E402
import pair  # noqa: E402

OUT = HERE / "go-h2kube.json"


class GoServer(h2kube.Server):
    def __init__(self, program: pair.Program):
        self.program = program
        self.port = program.port

    def signal(self) -> None:
        self.program.signal()

    def expect(self, pattern: str) -> None:
        rx = re.compile(pattern)
        deadline = time.monotonic() + h2kube.WAIT
        while time.monotonic() < deadline:
            if any(rx.search(line) for line in list(self.program.lines)):
                return
            time.sleep(0.005)  # the reference program's log, read by another thread: polled
        raise RuntimeError(f"no log line matching {pattern!r}:\n" + "\n".join(self.program.lines[-30:]))

    def stop(self) -> None:
        self.program.stop()


h2kube.QUIET = 1.5  # recording, "nothing more" gets the long wait


def run(case: h2kube.Case) -> dict:
    cls = pair.GenericServerGo if case.generic else pair.KubeAPIServer
    program = cls("--v=1", *case.flags)
    program.start()
    server = GoServer(program)
    try:
        return case.run(server, str(pair.CERT))
    finally:
        server.stop()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="record only this case id (repeatable)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per case; they must agree")
    args = parser.parse_args(argv)
    old = json.loads(OUT.read_text()) if OUT.exists() else {"cases": {}}
    cases = [h2kube.CASES_BY_ID[i] for i in args.only] if args.only else h2kube.CASES
    version = subprocess.run([str(pair.BIN / "kube-apiserver"), "--version"], capture_output=True, text=True).stdout.strip()
    recorded = dict(old["cases"]) if args.only else {}
    for case in cases:
        runs = []
        for _ in range(args.repeat):
            started = time.monotonic()
            runs.append(run(case))
            print(f"{case.id}: {time.monotonic() - started:.1f} s {json.dumps(runs[-1])}", flush=True)
        if any(r != runs[0] for r in runs):
            print(f"{case.id}: the runs disagree, so the case depends on timing:", file=sys.stderr)
            for r in runs:
                print("  " + json.dumps(r), file=sys.stderr)
            return 1
        recorded[case.id] = {
            "description": case.description,
            "from": "genericserver-go" if case.generic else "kube-apiserver",
            "flags": list(case.flags),
            "observed": runs[0],
        }
    order = [c.id for c in h2kube.CASES]
    out = {
        "recorded_from": f"{version} and genericserver-go (k8s.io/apiserver v0.36.0), reference/",
        "cases": {k: recorded[k] for k in sorted(recorded, key=lambda k: order.index(k) if k in order else len(order))},
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(out['cases'])} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

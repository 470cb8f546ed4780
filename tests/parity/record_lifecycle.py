"""Records the lifecycle corpus from reference/genericserver-go (`make parity`; README.md here).

Each scenario of lifecycle_corpus.py is played `--repeat` times (3 by default) against the Go
generic server `make reference` built. What the client saw and the exit code must be the same in
every run (else the scenario depends on timing and is reported, not stored), but for a scenario
marked `racy` (its reason says on what Go races), played 8 times, whose every distinct answer is kept
as one Go gives; of the
`[graceful-termination]` lines, the ones every run logged are stored with the pairs whose order
never varied (`constant_order`), which is what the replay holds our server to. Each entry holds
the digest of the flags and steps it played (`Scenario.digest`): the replay refuses a scenario whose
steps changed since.

    python tests/parity/record_lifecycle.py [--binary PATH] [--repeat N] [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parity import lifecycle  # noqa: E402
from parity.lifecycle_corpus import SCENARIOS  # noqa: E402

OUT = Path(__file__).resolve().parent / "go-lifecycle.json"
BINARY = lifecycle.ROOT / ".reference-bin" / "genericserver-go"
# a scenario whose answers Go itself races on is played this often, each different answer kept
RACY_REPEAT = 8


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_once(binary: Path, scenario: lifecycle.Scenario) -> dict:
    return lifecycle.run(scenario, lambda flags: subprocess.Popen(
        [str(binary), f"--secure-port={free_port()}", *flags], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True), go=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", type=Path, default=BINARY)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--only")
    args = p.parse_args()
    if not args.binary.exists():
        print(f"{args.binary} is missing: run `make reference` first", file=sys.stderr)
        return 2
    recorded = json.loads(OUT.read_text())["scenarios"] if OUT.exists() else {}
    unstable = []
    for scenario in SCENARIOS:
        if args.only and scenario.name != args.only:
            continue
        runs = [run_once(args.binary, scenario) for _ in range(max(args.repeat, RACY_REPEAT if scenario.racy else 0))]
        alternatives = []
        for r in runs:
            if r["answers"] not in alternatives:
                alternatives.append(r["answers"])
        same = all((scenario.racy or r["answers"] == runs[0]["answers"]) and r["exit"] == runs[0]["exit"]
                   and r.get("audit") == runs[0].get("audit") for r in runs)
        print(f"{scenario.name}: exit {runs[0]['exit']}, {len(runs[0]['answers'])} answers"
              + ("" if same else "  UNSTABLE"), flush=True)
        if not same:
            unstable.append(scenario.name)
            for r in runs:
                print("   ", json.dumps(r["answers"], sort_keys=True), r["exit"])
            continue
        lines = [l for l in runs[0]["lines"] if all(l in r["lines"] for r in runs)]
        entry = {"about": scenario.about, "digest": scenario.digest(), "flags": scenario.flags, "go_flags": scenario.go_flags,
                 "answers": runs[0]["answers"], "exit": runs[0]["exit"], "lines": lines,
                 # the counts every run agreed on (a count that varied is Go's race, not a rule)
                 "counted": {k: n for k, n in runs[0]["counted"].items() if all(r["counted"][k] == n for r in runs)},
                 "order": lifecycle.constant_order([r["lines"] for r in runs], lines),
                 "log_example": [l for l in runs[0]["log"] if "graceful-termination" in l or "Stopped listening" in l
                                 or "PreShutdownHook" in l or "panic" in l.lower()][:40]}
        if scenario.audit:
            entry["audit"] = runs[0]["audit"]
        if scenario.racy:
            entry["racy"] = scenario.racy
            entry["alternatives"] = alternatives
        recorded[scenario.name] = entry
    doc = {"about": ["What a client saw of reference/genericserver-go (k8s.io/apiserver v0.36.0's GenericAPIServer, "
                     "built by `make reference`) shutting down, scenario by scenario; recorded by "
                     "tests/parity/record_lifecycle.py, replayed by tests/test_parity_lifecycle*.py. Generated: do not edit."],
           "repeat": args.repeat, "scenarios": recorded}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    if unstable:
        print("unstable (not stored): " + ", ".join(unstable), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

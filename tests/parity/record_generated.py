"""Records the generated corpus from kube-apiserver v1.36.0 (`make parity`; README.md here).

The sequences of api_grammar.py, drawn with a fixed seed (`RandomDrawer(SEED, i)` for the i-th),
each in a fresh namespace `g-i`, go to one fresh kube-apiserver (reference/pair.py, built by
`make reference`) until at least `EXCHANGES` requests were sent; each sequence and kube's answers
(api.py's masking rule; what is set aside when compared, api_rules.ASIDES, is not kept) is one line
of `go-generated.json`. tests/test_parity_generated.py replays them against `genericserver serve`.

    python tests/parity/record_generated.py [--exchanges N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent / "reference"))

import pair  # noqa: E402
from parity import api_grammar, generated  # noqa: E402

OUT = HERE / "go-generated.json"
SEED = 55
EXCHANGES = 2000
ABOUT = ("What kube-apiserver v1.36.0 (reference/, `make reference`) answered to the generated sequences of "
         "tests/parity/api_grammar.py (seed 55), one sequence a line; recorded by tests/parity/record_generated.py, "
         "replayed by tests/test_parity_generated.py. Generated: do not edit.")


def sequences(exchanges: int) -> list[tuple[str, list[dict]]]:
    """(namespace, steps) for each sequence the seed draws, until `exchanges` steps in all."""
    out, total, i = [], 0, 0
    while total < exchanges:
        steps = api_grammar.sequence(api_grammar.RandomDrawer(SEED * 1_000_000 + i))
        out.append((f"g-{i}", steps))
        total += len(steps)
        i += 1
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--exchanges", type=int, default=EXCHANGES)
    args = p.parse_args()
    started = time.monotonic()
    lines = []
    with pair.KubeAPIServer() as kube:
        client = generated.Client(kube.port)
        try:
            for ns, steps in sequences(args.exchanges):
                generated.make_namespace(client, ns)
                answers = generated.run(client, steps, ns)
                lines.append(json.dumps({"ns": ns, "steps": [{**s, "answer": a} for s, a in zip(steps, answers)]},
                                        sort_keys=True))
        finally:
            client.close()
    OUT.write_text('{"about": ' + json.dumps(ABOUT) + ',\n"sequences": [\n' + ",\n".join(lines) + "\n]}\n")
    print(f"{sum(len(json.loads(x)['steps']) for x in lines)} exchanges in {len(lines)} sequences, "
          f"{time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

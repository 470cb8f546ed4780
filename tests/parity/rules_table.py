"""Rewrites walkthrough 10.2's table of differences from the replays (no Go needed).

Replays the API surface corpus and the generated corpus against `genericserver serve`, counts the
exchanges each rule of api_rules.RULES classifies and each aside applies to, and writes the rows
(LEFT_OUT, ASIDES, RULES, in that order, with each one's `why`) into walkthrough.md, where
tests/test_parity_api.py and tests/test_parity_generated.py check them. Run it after a change that
makes a family kube-apiserver's (its counts fall) or adds a rule:

    python tests/parity/rules_table.py

It stops, writing nothing, if an exchange of either corpus differs and matches no rule.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from parity import api_rules  # noqa: E402
from parity.api_replay import replay  # noqa: E402

HEAD = "| cause | API corpus | generated corpus | why it differs |\n| --- | --- | --- | --- |\n"


def main() -> int:
    import test_parity_api
    import test_parity_generated

    api_counts: collections.Counter = collections.Counter()
    api_replayed = list(replay())
    api_counts.update(rule for _, _, _, rule in test_parity_api.classified(api_replayed))
    for exchange, _ in api_replayed:
        api_counts.update(f"aside:{a}" for a in api_rules.asides_used(api_rules.kube_answer(exchange["answer"])))
    generated = list(test_parity_generated.replay(test_parity_generated.RECORDED, test_parity_generated._serve))
    gen_counts = test_parity_generated.counts(generated)
    if None in api_counts or None in gen_counts:
        print(f"exchanges no rule explains: {api_counts[None]} in the API corpus, {gen_counts[None]} in the generated "
              "corpus; the replays (pytest tests/test_parity_api.py tests/test_parity_generated.py) show them")
        return 1
    rows = [f"| left out: `{key}` | every exchange | every exchange | {why} |" for key, (why, _) in api_rules.LEFT_OUT.items()]
    rows += [f"| set aside: `{a.key}` | {api_counts['aside:' + a.key]} | {gen_counts['aside:' + a.key]} | {a.why} |"
             for a in api_rules.ASIDES]
    rows += [f"| `{r.key}` | {api_counts[r.key]} | {gen_counts[r.key]} | {r.why} |" for r in api_rules.RULES]
    path = api_rules.api.ROOT / "walkthrough.md"
    text = path.read_text()
    start = text.index(HEAD) + len(HEAD)
    end = text.index("\n\n", start)
    path.write_text(text[:start] + "\n".join(rows) + text[end:])
    print(f"walkthrough 10.2: {sum(api_counts[r.key] for r in api_rules.RULES)} differing exchanges of "
          f"{len(api_replayed)} in the API corpus, {sum(gen_counts[r.key] for r in api_rules.RULES)} of "
          f"{sum(len(s) for s in generated)} in the generated corpus")
    return 0


if __name__ == "__main__":
    sys.exit(main())

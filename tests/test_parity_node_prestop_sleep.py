"""The model held to the real node's `prestop-sleep` scenario (tests/parity/real-node.json; test_parity_node.py says how)."""

from __future__ import annotations

from tests.parity import node_replay as nr


def test_the_model_follows_the_node():
    entry = nr.load_corpus()["scenarios"]["prestop-sleep"]
    events, loss, _ = nr.model_run(entry)
    v = nr.check(entry, events, loss)
    assert v.ok, v.why

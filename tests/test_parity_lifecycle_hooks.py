"""The lifecycle corpus (tests/parity/README.md, "The lifecycle corpus"): the pre-shutdown hooks, authentication and audit, replayed
against `genericserver serve` and compared with what reference/genericserver-go, a GenericAPIServer of
k8s.io/apiserver v0.36.0, did (no Go twin; tests/parity/lifecycle_replay.py says what is compared)."""

import pytest

from parity.lifecycle_corpus import named
from parity.lifecycle_replay import check


@pytest.mark.parametrize("name", named("hooks"))
def test_lifecycle(name: str) -> None:
    check(name)

"""The lifecycle corpus (tests/parity/README.md, "The lifecycle corpus"): max-in-flight, the request timeout and the watch grace period, replayed
against `genericserver serve` and compared with what reference/genericserver-go, a GenericAPIServer of
k8s.io/apiserver v0.36.0, did (no Go twin; tests/parity/lifecycle_replay.py says what is compared)."""

import pytest

from parity.lifecycle_corpus import named
from parity.lifecycle_replay import check


@pytest.mark.parametrize("name", named("limits"))
def test_lifecycle(name: str) -> None:
    check(name)

"""The lifecycle corpus (tests/parity/README.md, "The lifecycle corpus"): a POST whose body stalls or comes
late, in both modes, replayed against `genericserver serve` and compared with what
reference/genericserver-go, a GenericAPIServer of k8s.io/apiserver v0.36.0, did (no Go twin;
tests/parity/lifecycle_replay.py says what is compared; tests/test_stalled_body.py says why)."""

import pytest

from parity.lifecycle_corpus import named
from parity.lifecycle_replay import check


@pytest.mark.parametrize("name", named("stalled"))
def test_lifecycle(name: str) -> None:
    check(name)

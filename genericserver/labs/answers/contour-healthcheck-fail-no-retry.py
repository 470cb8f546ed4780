"""Answer to the lab contour-healthcheck-fail-no-retry: one failed POST /healthcheck/fail is retried (no Go twin).

A fake Envoy admin refuses the first POST /healthcheck/fail. Contour's shutdown-manager must
retry it (client-go's backoff: 4 tries, 0.2 s, 1 s, 5 s apart), so Envoy still fails its health
check and drains, and the ok file is written (projectcontour/contour#2262, #3136).
On the simulation runtime: the backoff's waits are virtual.
"""

import os
import tempfile

from genericserver import runtime as rt
from genericserver.cluster.shutdownmanager import ShutdownOptions, shutdown
from genericserver.testing.sim import Simulation


class FlakyAdmin:
    """Envoy's admin API as shutdown() sees it: the first healthcheck_fail fails."""

    def __init__(self):
        self.attempts = []
        self.failed_at = None

    def healthcheck_fail(self):
        self.attempts.append(rt.now())
        if len(self.attempts) == 1:
            raise RuntimeError("creating healthcheck fail POST request failed: connection refused")
        self.failed_at = rt.now()

    def stats(self):
        return 'envoy_http_downstream_cx_active{envoy_http_conn_manager_prefix="ingress_http"} 0\n'


def test_envoy_is_drained_even_if_the_first_call_fails():
    admin = FlakyAdmin()
    with tempfile.TemporaryDirectory() as tmp:
        ok = os.path.join(tmp, "ok")
        assert Simulation().run(lambda: shutdown(ShutdownOptions(ok, check_delay=0), admin, rand=lambda: 0.0))
        assert os.path.exists(ok)
    assert admin.attempts == [0.0, 0.2]
    assert admin.failed_at == 0.2

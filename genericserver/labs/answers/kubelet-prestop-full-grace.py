"""Answer to the lab kubelet-prestop-full-grace: a hanging preStop hook does not double the grace period (no Go twin).

The pod's grace period is 10 s, its preStop hook never ends and its container ignores SIGTERM.
The kubelet waits for the hook at most the grace period, then gives SIGTERM what is left, at
least 2 s: SIGKILL 12 s after the delete, not 20 (kubernetes/kubernetes#115817, #115835).
On the simulation runtime, so the 12 s are virtual and cost nothing.
"""

from genericserver import runtime as rt
from genericserver.cluster.handlers import ExecAction
from genericserver.cluster.kubectl import delete_pod
from genericserver.cluster.kubelet import Kubelet
from genericserver.cluster.store import Store, new_pod
from genericserver.testing.sim import Simulation


def hangs(ctx, sandbox):
    """An exec hook that runs until its container is gone."""
    ctx.done().wait()


def test_sigkill_comes_at_grace_plus_two_seconds():
    def main():
        store = Store()
        kubelet = Kubelet(store)
        kubelet.run()
        # termAfter None: the fake container ignores SIGTERM
        spec = {"name": "app", "image": "fake", "termAfter": None, "lifecycle": {"preStop": ExecAction(hangs, ["sleep", "infinity"])}}
        store.create(new_pod("p", termination_grace_period_seconds=10, containers=[spec]))
        worker = kubelet.wait_started("p")
        t0 = rt.now()
        delete_pod(store, "p")
        assert worker.terminated.wait(1000.0)
        kubelet.stop()
        return [(sig, round(t - t0, 6)) for sig, t in worker.containers["app"].signals]

    assert Simulation().run(main) == [("SIGTERM", 10), ("SIGKILL", 12)]

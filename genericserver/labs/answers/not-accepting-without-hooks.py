"""Answer to the lab not-accepting-without-hooks: a pre-shutdown hook's own request is served (no Go twin).

The hook runs 5 s, longer than the (zero) shutdown delay, then calls the server as
kube-apiserver's lease reconciler does. NotAcceptingNewRequest must wait for the hooks
(kubernetes/kubernetes#110000), so the hook's request ('h0') is answered 200.
"""

from genericserver.testing.scenario import HookSpec, Scenario, run_scenario


def test_a_hook_that_outlasts_the_delay_is_still_served():
    run = run_scenario(Scenario(hooks=(HookSpec(duration=5.0, loopback=True),)))
    answer = next(e for e in run.of("client", "answer") if e.fields["rid"] == "h0")
    assert answer.fields["outcome"] == "ok", answer.fields
    signals = [e.name for e in run.of("signal")]
    assert signals.index("PreShutdownHooksStopped") < signals.index("NotAcceptingNewRequest")

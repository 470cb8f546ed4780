"""Answer to the lab readyz-red-too-late: /readyz is red from ShutdownInitiated on (no Go twin).

A /readyz request sent 0.1 s into a 0.5 s shutdown delay must already fail: the delay exists so
that load balancers see the red /readyz while the server still serves (kubernetes/kubernetes#88911).
Run on the simulation runtime: virtual time, the same run every time.
"""

from genericserver.testing.scenario import RequestSpec, Scenario, run_scenario


def test_readyz_is_red_during_the_shutdown_delay():
    run = run_scenario(Scenario(shutdown_delay=0.5, requests=(RequestSpec("readyz", "ShutdownInitiated", 0.1),)))
    answer = next(e for e in run.of("client", "answer") if e.fields["rid"] == "0")
    assert answer.fields["status"] == 500, answer.fields["body"]
    assert "[-]shutdown failed: reason withheld" in answer.fields["body"]

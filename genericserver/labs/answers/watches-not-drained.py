"""Answer to the lab watches-not-drained: watches end before InFlightRequestsDrained (no Go twin).

With --shutdown-watch-termination-grace-period (here 2 s) a watch open at the shutdown is told
to end at NotAcceptingNewRequest and the server waits for it, at most the grace period, before
InFlightRequestsDrained (kubernetes/kubernetes#114925).
"""

from genericserver.testing.scenario import RequestSpec, Scenario, run_scenario


def test_an_open_watch_ends_before_in_flight_requests_drained():
    run = run_scenario(Scenario(watch_grace=2.0, requests=(RequestSpec("watch", "start", 0.5, 130.0),)))
    watch_end = next(e for e in run.of("handler", "end") if e.fields["rid"] == "0")
    drained = next(e for e in run.of("signal") if e.name == "InFlightRequestsDrained")
    assert watch_end.seq < drained.seq

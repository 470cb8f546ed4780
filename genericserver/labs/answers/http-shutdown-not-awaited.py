"""Answer to the lab http-shutdown-not-awaited: run_with_context waits for the HTTP server's shutdown (no Go twin).

A long-running request (3 s, not drained by the wait group) is in flight at the shutdown.
run_with_context may return only once the HTTP server's Shutdown returned, that is after the
response was sent (kubernetes/kubernetes#72970): a process exiting earlier cuts it off.
No invariant of genericserver.testing.invariants says this; this test does.
"""

from genericserver.testing.scenario import RequestSpec, Scenario, run_scenario


def test_run_with_context_returns_after_the_last_response_is_sent():
    run = run_scenario(Scenario(requests=(RequestSpec("long-running", "start", 0.5, 3.0),)))
    sent = next(e for e in run.of("conn", "sent") if e.fields["rid"] == "0")
    returned = run.of("run", "returned")[0]
    assert sent.seq < returned.seq, f"returned at t={returned.at:g}, the response was sent at t={sent.at:g}"

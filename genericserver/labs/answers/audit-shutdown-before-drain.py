"""Answer to the lab audit-shutdown-before-drain: no audit event is lost at shutdown (no Go twin).

A request in flight when the server stops accepting (sent at 0.5 s, 3 s long, shutdown at 1 s)
must have its ResponseComplete audit event recorded before the audit backend shuts down
(kubernetes/kubernetes#50781, #53695).
"""

from genericserver.testing.scenario import RequestSpec, Scenario, run_scenario


def test_the_request_in_flight_is_audited_before_the_backend_shuts_down():
    run = run_scenario(Scenario(requests=(RequestSpec("ordinary", "start", 0.5, 3.0),)))
    audit_id = next(e for e in run.of("handler", "start") if e.fields["rid"] == "0").fields["audit_id"]
    complete = [e for e in run.of("audit", "ResponseComplete") if e.fields["audit_id"] == audit_id]
    shutdown = run.of("audit", "backend-shutdown")
    assert complete and shutdown
    assert complete[0].seq < shutdown[0].seq

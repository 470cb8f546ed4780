"""Answer to the lab exemption-rules-differ: a loopback request is served during the drain (no Go twin).

In retry-after mode, kube-apiserver's own loopback client (User-Agent kube-apiserver/...) is
exempt from the 429 of WithRetryAfter; WithWaitGroup must exempt it by the same rule, or it
answers 503 (kubernetes/kubernetes#101257).
"""

from genericserver.testing.scenario import RequestSpec, Scenario, run_scenario


def test_loopback_request_during_the_drain_is_served():
    run = run_scenario(Scenario(retry_after=True, requests=(
        RequestSpec("ordinary", "start", 0.5, 3.0),  # keeps the drain going
        RequestSpec("loopback", "NotAcceptingNewRequest", 0.5),
    )))
    answer = next(e for e in run.of("client", "answer") if e.fields["rid"] == "1")
    assert answer.fields["status"] == 200, answer.fields

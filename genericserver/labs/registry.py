"""The labs: bug hunts from the real history of the shutdown, and a what-if exercise (no Go twin).

Each :class:`Lab` is data: the story, the upstream issues and pull requests it comes from, the Go
file and function to open (a v1.36.0 link) with its Python twin, the tools that find it, what to
write, a hint, the bug (a variant of :mod:`genericserver.testing.variants`, by name) and the
project's answer file (``answers/<name>.*``). :data:`LABS` lists them in the order of the
workshop (docs/workshop.md): the server's signals first, then the drain, the primitives, the
world around the pod, and the what-if exercise last.

Nothing here runs anything; :mod:`genericserver.labs.check` judges an answer and
:mod:`genericserver.labs.cli` is ``genericserver lab``.
"""

from __future__ import annotations

import ast
import pathlib
from dataclasses import dataclass
from typing import Optional

K8S = "https://github.com/kubernetes/kubernetes"
V136 = K8S + "/blob/v1.36.0/"
APISERVER = V136 + "staging/src/k8s.io/apiserver/"
GENERICAPISERVER_GO = APISERVER + "pkg/server/genericapiserver.go"
PACKAGE = pathlib.Path(__file__).resolve().parent.parent  # the genericserver package
ANSWERS = pathlib.Path(__file__).resolve().parent / "answers"
EXERCISES = pathlib.Path(__file__).resolve().parent / "exercises"


def pr(number: int, repo: str = "kubernetes/kubernetes") -> str:
    return f"https://github.com/{repo}/pull/{number}"


def issue(number: int, repo: str = "kubernetes/kubernetes") -> str:
    return f"https://github.com/{repo}/issues/{number}"


@dataclass(frozen=True)
class Place:
    """A function in this package: ``module`` (dotted), ``qualname``, and optionally a fragment
    of source text that picks one line inside it (else its first statement)."""

    module: str
    qualname: str
    text: str = ""

    @property
    def path(self) -> pathlib.Path:
        return PACKAGE.parent.joinpath(*self.module.split(".")).with_suffix(".py")

    def line(self) -> int:
        """The line, found in the source file (not in live objects, which a lab may have patched)."""
        source = self.path.read_text()
        node: Optional[ast.AST] = ast.parse(source)
        for part in self.qualname.split("."):
            body = getattr(node, "body", [])
            node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part), None)
            if node is None:
                raise LookupError(f"{self.module}: no {self.qualname}")
        assert isinstance(node, ast.FunctionDef)
        if self.text:
            lines = source.splitlines()
            for n in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                if self.text in lines[n - 1]:
                    return n
            raise LookupError(f"{self.module}.{self.qualname}: no line with {self.text!r}")
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) and len(node.body) > 1:
            first = node.body[1]  # past the docstring
        return first.lineno

    def location(self) -> str:
        """``genericserver/x.py:LINE``: what ``replay --break`` takes."""
        return f"{'/'.join(self.module.split('.'))}.py:{self.line()}"

    def __str__(self) -> str:
        return f"{self.location()} ({self.qualname})"


@dataclass(frozen=True)
class Lab:
    """One lab. ``variant`` is empty for a what-if lab (the world as it is, an exercise file
    instead of a bug); ``answer`` is a file name under ``answers/``. ``invariants`` names the
    invariants of :mod:`genericserver.testing.invariants` that this bug breaks (empty when none
    sees it, or for a lincheck lab): a lifecycle replay file is judged by them, and ``fuzz``
    hunts a run that breaks them. ``family`` narrows where ``fuzz`` draws its scenarios to what
    the story says the bug needs (request ``kinds``, and values of :class:`Scenario
    <genericserver.testing.scenario.Scenario>`'s flags: :class:`~genericserver.testing.hunt.Family`),
    when the whole space takes hundreds of runs to find it."""

    name: str
    title: str
    variant: str
    upstream: tuple[str, ...]
    story: str
    go_file: str
    go_function: str
    go_url: str
    python: Place
    tools: tuple[str, ...]
    task: str
    hint: str
    answer: str
    breakpoint: Optional[Place] = None
    exercise: str = ""
    invariants: tuple[str, ...] = ()
    family: tuple[tuple[str, tuple], ...] = ()

    @property
    def kind(self) -> str:
        return "bug hunt" if self.variant else "what-if"

    @property
    def answer_path(self) -> pathlib.Path:
        return ANSWERS / self.answer

    @property
    def exercise_path(self) -> Optional[pathlib.Path]:
        return EXERCISES / self.exercise if self.exercise else None


GAS = "genericserver.genericapiserver"
PREPARED = "PreparedGenericAPIServer"

LABS: tuple[Lab, ...] = (
    Lab(
        name="readyz-red-too-late",
        title="/readyz stays green through the shutdown delay",
        variant="readyz-red-too-late",
        upstream=(pr(88911),),
        story=(
            "In early 2020 /readyz started failing only when --shutdown-delay-duration was over. "
            "The load balancers poll /readyz to learn that a server is going away; they learned it "
            "when the server was already refusing connections, so the delay bought nothing. "
            "kubernetes/kubernetes#88911 made /readyz red at ShutdownInitiated, the moment the "
            "shutdown starts."
        ),
        go_file="apiserver/pkg/server/genericapiserver.go",
        go_function="GenericAPIServer.PrepareRun (the readyz shutdown check), with healthz.go addReadyzShutdownCheck",
        go_url=GENERICAPISERVER_GO + "#L460-L466",
        python=Place(GAS, "GenericAPIServer.prepare_run"),
        tools=(
            "demo: genericserver demo - the '/readyz probe' row under 'shutdown initiated'",
            "fuzz: genericserver fuzz - a run breaking readyz_fails_from_shutdown_initiated",
            "replay: genericserver replay FILE --break {break} - a /readyz probe: is the stop event set? "
            "(p self._stop.is_set())",
        ),
        task="Write a test (or a replay file) in which a /readyz request sent after ShutdownInitiated, "
             "during the delay, must get 500 with '[-]shutdown failed: reason withheld'.",
        hint="A Scenario with shutdown_delay=0.5 and RequestSpec('readyz', 'ShutdownInitiated', 0.1); "
             "look at the client answer's status. Which signal does the readyz check watch?",
        answer="readyz-red-too-late.py",
        invariants=("readyz_fails_from_shutdown_initiated",),
        family=(("kinds", ("readyz", "ordinary")), ("shutdown_delay", (0.5, 70.0))),
        breakpoint=Place("genericserver.healthz.healthz", "_Shutdown.check"),
    ),
    Lab(
        name="no-shutdown-delay",
        title="The server stops the moment SIGTERM arrives",
        variant="no-shutdown-delay",
        upstream=(pr(74416),),
        story=(
            "Before kubernetes/kubernetes#74416 kube-apiserver stopped serving as soon as it got "
            "SIGTERM. The endpoints controller and every kube-proxy learn of it a little later, and "
            "until they do they keep sending new connections, which are refused. The PR added "
            "--shutdown-delay-duration: keep serving, with /readyz red, until they caught up."
        ),
        go_file="apiserver/pkg/server/genericapiserver.go",
        go_function="preparedGenericAPIServer.RunWithContext, the delayed-stop goroutine",
        go_url=GENERICAPISERVER_GO + "#L569-L582",
        python=Place(GAS, f"{PREPARED}._delayed_stop"),
        tools=(
            "demo: genericserver demo - when does AfterShutdownDelayDuration fire?",
            "cluster: genericserver cluster --shutdown-delay 3 - requests lost anyway",
            "fuzz: genericserver fuzz - a run breaking delay_is_respected",
            "replay: genericserver replay FILE --break {break} - the delay is over (the shutdown began at 1.0): when? (p rt.now())",
        ),
        task="Write a test or replay file with a shutdown delay in which a request sent during the "
             "delay must be answered 200.",
        hint="Scenario(shutdown_delay=0.5, requests=(RequestSpec('ordinary', 'ShutdownInitiated', 0.25),)). "
             "What should sit between ShutdownInitiated and AfterShutdownDelayDuration?",
        answer="no-shutdown-delay.json",
        invariants=("delay_is_respected",),
        breakpoint=Place(GAS, f"{PREPARED}._not_accepting_new_requests", "signals.pre_shutdown_hooks_stopped.signaled().wait()"),
    ),
    Lab(
        name="not-accepting-without-hooks",
        title="A pre-shutdown hook refused by its own server",
        variant="not-accepting-without-hooks",
        upstream=(pr(108033), pr(110026), pr(110000)),
        story=(
            "kube-apiserver's pre-shutdown hooks call the server itself: the lease reconciler "
            "removes this server from the 'kubernetes' endpoints. In early 2022 the HTTP server "
            "stopped as soon as the delay was over, so a hook still running had its own API calls "
            "refused (kubernetes/kubernetes#108033, with a reproducer: a hook that keeps sending "
            "requests). #108033 stopped the HTTP server after the hooks; #110026 made "
            "NotAcceptingNewRequest itself wait for PreShutdownHooksStopped, as #110000 proposed."
        ),
        go_file="apiserver/pkg/server/genericapiserver.go",
        go_function="preparedGenericAPIServer.RunWithContext, the goroutine that signals NotAcceptingNewRequest",
        go_url=GENERICAPISERVER_GO + "#L634-L649",
        python=Place(GAS, f"{PREPARED}._not_accepting_new_requests"),
        tools=(
            "fuzz: genericserver fuzz - a run breaking signals_fire_once_after_prerequisites",
            "replay: genericserver replay FILE --break {break} - NotAcceptingNewRequest has fired: have the hooks "
            "stopped? (p signals.pre_shutdown_hooks_stopped.signaled().is_set())",
            "demo: genericserver demo - PreShutdownHooksStopped vs NotAcceptingNewRequest",
        ),
        task="Write a test in which a pre-shutdown hook that outlasts the delay and then calls the "
             "server gets its answer.",
        hint="HookSpec(duration=5.0, loopback=True) makes a hook that waits 5 s, then sends request 'h0'.",
        answer="not-accepting-without-hooks.py",
        invariants=("signals_fire_once_after_prerequisites",),
        breakpoint=Place(GAS, f"{PREPARED}._drain_non_long_running", "self.server.non_long_running_request_wait_group.wait()"),
    ),
    Lab(
        name="audit-shutdown-before-drain",
        title="Audit events lost at shutdown",
        variant="audit-shutdown-before-drain",
        upstream=(issue(50781), pr(53695)),
        story=(
            "In 2017 the audit backend was shut down before the HTTP handlers had stopped, so a "
            "batching audit webhook dropped the events of requests still in flight "
            "(kubernetes/kubernetes#50781). #53695 shut the handlers down first: the audit backend "
            "goes only after every request in flight is answered. Every request must end with a "
            "ResponseComplete audit event."
        ),
        go_file="apiserver/pkg/server/genericapiserver.go",
        go_function="preparedGenericAPIServer.RunWithContext, the end: <-drainedCh then AuditBackend.Shutdown()",
        go_url=GENERICAPISERVER_GO + "#L730-L738",
        python=Place(GAS, f"{PREPARED}._run_with_context", "s.audit_backend.shutdown()"),
        tools=(
            "fuzz: genericserver fuzz - a run breaking audit_complete_before_backend_shutdown",
            "replay: genericserver replay FILE --break {break} - 'where' names the caller",
        ),
        task="Write a test in which a request in flight across the shutdown gets its ResponseComplete "
             "audit event before the backend shuts down.",
        hint="RequestSpec('ordinary', 'start', 0.5, 3.0) is in flight when the server stops accepting. "
             "The run's events include ('audit', 'ResponseComplete') and ('audit', 'backend-shutdown').",
        answer="audit-shutdown-before-drain.py",
        invariants=("audit_complete_before_backend_shutdown",),
        breakpoint=Place("genericserver.testing.scenario", "RecordingAudit.shutdown"),
    ),
    Lab(
        name="listener-stopped-at-not-accepting",
        title="Retry-after mode refuses instead of answering 429",
        variant="listener-stopped-at-not-accepting",
        upstream=(pr(101257),),
        story=(
            "kubernetes/kubernetes#101257 added --shutdown-send-retry-after: keep listening until "
            "the requests in flight are drained, and answer every new request 429 with Retry-After "
            "and Connection: close, so clients already connected move to another server instead of "
            "hitting a closed port. That only works if the listener stays open until "
            "InFlightRequestsDrained."
        ),
        go_file="apiserver/pkg/server/genericapiserver.go",
        go_function="preparedGenericAPIServer.RunWithContext, the goroutine that cancels stopHTTPServerCtx",
        go_url=GENERICAPISERVER_GO + "#L601-L611",
        python=Place(GAS, f"{PREPARED}._time_to_stop_http_server"),
        tools=(
            "fuzz: genericserver fuzz - a run breaking listener_stops_as_the_mode_says",
            "replay: genericserver replay FILE --break {break} - the listener has stopped: drained yet? "
            "(p signals.in_flight_requests_drained.signaled().is_set())",
        ),
        task="Write a test or replay file in retry-after mode where a request sent during the drain "
             "must get 429 with Retry-After: 5, not a refused connection.",
        hint="Scenario(retry_after=True) with one request in flight (3 s) and one sent at "
             "NotAcceptingNewRequest + 0.5 s.",
        answer="listener-stopped-at-not-accepting.json",
        invariants=("listener_stops_as_the_mode_says",),
        breakpoint=Place(GAS, f"{PREPARED}._listener_stopped", 'self.server.events.record("listener", "stopped")'),
    ),
    Lab(
        name="exemption-rules-differ",
        title="A loopback request refused by one filter of two",
        variant="exemption-rules-differ",
        upstream=(pr(101257),),
        story=(
            "In the review of kubernetes/kubernetes#101257 the maintainers asked that /readyz, "
            "/livez, /healthz, /metrics and kube-apiserver's own loopback client keep being served "
            "during the drain. Two filters decide that: WithRetryAfter and WithWaitGroup. The PR "
            "made both call the same isRequestExemptFromRetryAfter; if they disagree, a request one "
            "lets through is refused by the other."
        ),
        go_file="apiserver/pkg/server/filters/waitgroup.go",
        go_function="WithWaitGroup / withWaitGroup, with with_retry_after.go isRequestExemptFromRetryAfter",
        go_url=APISERVER + "pkg/server/filters/waitgroup.go#L48-L86",
        python=Place("genericserver.filters.waitgroup", "with_wait_group"),
        tools=(
            "fuzz: genericserver fuzz - a run breaking answers_match_phase",
            "replay: genericserver replay FILE --break {break} - 'up', then the User-Agent",
        ),
        task="Write a test in retry-after mode where a loopback request (User-Agent kube-apiserver/...) "
             "sent during the drain must be served 200.",
        hint="RequestSpec('loopback', 'NotAcceptingNewRequest', 0.5) beside a 3 s request in flight.",
        answer="exemption-rules-differ.py",
        invariants=("answers_match_phase",),
        family=(("kinds", ("loopback", "ordinary", "exempt")), ("retry_after", (True,))),
        breakpoint=Place("genericserver.filters.waitgroup", "wait_group_write_retry_after_to_response"),
    ),
    Lab(
        name="watches-not-drained",
        title="InFlightRequestsDrained while watches are open",
        variant="watches-not-drained",
        upstream=(pr(114925),),
        story=(
            "Watches are long-running: the drain of the other requests ignores them. "
            "kubernetes/kubernetes#114925 (2023) made the server tell every watch to end at "
            "NotAcceptingNewRequest and wait for them, rate-limited, at most a grace period, "
            "before InFlightRequestsDrained and the audit flush that follows it; its review asked "
            "for that grace to be configurable: --shutdown-watch-termination-grace-period."
        ),
        go_file="apiserver/pkg/server/genericapiserver.go",
        go_function="preparedGenericAPIServer.RunWithContext, the goroutine that waits for active watches",
        go_url=GENERICAPISERVER_GO + "#L675-L706",
        python=Place(GAS, f"{PREPARED}._drain_watches"),
        tools=(
            "fuzz: genericserver fuzz - a run breaking tracked_requests_complete_before_drained",
            "replay: genericserver replay FILE --break {break} - the watch still open? "
            "(p self.server.watch_request_wait_group._count)",
        ),
        task="Write a test with a watch grace period where a watch open at the shutdown must end "
             "before InFlightRequestsDrained.",
        hint="Scenario(watch_grace=2.0, requests=(RequestSpec('watch', 'start', 0.5, 130.0),)); compare "
             "the watch's 'handler end' event with the InFlightRequestsDrained signal.",
        answer="watches-not-drained.py",
        invariants=("tracked_requests_complete_before_drained",),
        family=(("kinds", ("watch", "ordinary")), ("watch_grace", (2.0,))),
        breakpoint=Place(GAS, f"{PREPARED}._drained", "signals.in_flight_requests_drained.signal()"),
    ),
    Lab(
        name="http-shutdown-not-awaited",
        title="The server exits before its responses are out",
        variant="http-shutdown-not-awaited",
        upstream=(pr(72970),),
        story=(
            "kubernetes/kubernetes#72970 (2019): 'We did not wait for the http server to shut down "
            "completely.' Run returned before net/http's Shutdown had finished, the process "
            "exited, and connections closed before all bytes were sent. Since then RunWithContext waits for "
            "stoppedCh, closed when the HTTP server's Shutdown returned. None of the fourteen "
            "invariants watches this: the fuzzer finds nothing. Write the check yourself."
        ),
        go_file="apiserver/pkg/server/genericapiserver.go",
        go_function="preparedGenericAPIServer.RunWithContext, '<-stoppedCh' at the end; secure_serving.go RunServer",
        go_url=GENERICAPISERVER_GO + "#L740-L742",
        python=Place("genericserver.secure_serving", "run_server"),
        tools=(
            "fuzz: genericserver fuzz --examples 50 - finds nothing: no invariant looks at this",
            "replay: genericserver replay FILE --break {break} - run_with_context is about to return: has the HTTP "
            "server's shutdown returned? (p stopped_ch.is_set())",
        ),
        task="Write a test where a long-running request is in flight at the shutdown: run_with_context "
             "must return only after its response was sent.",
        hint="RequestSpec('long-running', 'start', 0.5, 3.0); compare the ('run', 'returned') event with "
             "the request's ('conn', 'sent') event (field rid '0').",
        answer="http-shutdown-not-awaited.py",
        breakpoint=Place(GAS, f"{PREPARED}._run_with_context", "stopped_ch.wait()"),
    ),
    Lab(
        name="safe-wait-group-check-outside-lock",
        title="A request admitted after the drain began",
        variant="safe-wait-group-check-outside-lock",
        upstream=(pr(54849),),
        story=(
            "kubernetes/kubernetes#54849 (2017) made the apiserver wait for its requests in flight. "
            "A plain sync.WaitGroup panics when Add races with Wait, and a request admitted after "
            "Wait began is not waited for; the review asked for a wait group of its own, which "
            "became SafeWaitGroup: Add and Wait share a lock, and Add fails once Wait began. Here "
            "the check of the wait flag happens before the lock."
        ),
        go_file="apimachinery/pkg/util/waitgroup/waitgroup.go",
        go_function="SafeWaitGroup.Add and SafeWaitGroup.Wait",
        go_url=V136 + "staging/src/k8s.io/apimachinery/pkg/util/waitgroup/waitgroup.go#L36-L57",
        python=Place("genericserver.apimachinery.waitgroup", "SafeWaitGroup.add"),
        tools=(
            "fuzz: genericserver fuzz - lincheck's SafeWaitGroup hunt",
            "replay: genericserver replay FILE --trace - the history, one column each",
            "replay: genericserver replay FILE --break {break} - wait() has set the flag: is an add past its "
            "check, not yet counted? ('goroutines' shows where each add is)",
        ),
        task="Write a lincheck replay file or a test: one goroutine calls wait(), another add(1); find a "
             "schedule whose history fits no order of the calls.",
        hint="lincheck.run_history(TARGETS['SafeWaitGroup'], scenario, schedule) and lincheck.verdict; "
             "two preemptions suffice: expand({2: 1, 3: 1}).",
        answer="safe-wait-group-check-outside-lock.json",
        breakpoint=Place("genericserver.apimachinery.waitgroup", "SafeWaitGroup.wait", "self._wg.wait()"),
    ),
    Lab(
        name="audit-finished-before-flush",
        title="The audit buffer says 'done' with events inside",
        variant="audit-finished-before-flush",
        upstream=(issue(50026), pr(50577)),
        story=(
            "kubernetes/kubernetes#50026: the batching audit webhook did not wait for its last "
            "batches when the apiserver stopped, and events were dropped. #50577 made Shutdown "
            "block until the last batch is sent. In today's buffered backend, Shutdown waits for "
            "the worker's 'shutdown' channel, which the worker must close only after handing over "
            "what is still buffered."
        ),
        go_file="apiserver/plugin/pkg/audit/buffered/buffered.go",
        go_function="bufferedBackend.Run (the worker goroutine) and bufferedBackend.Shutdown",
        go_url=APISERVER + "plugin/pkg/audit/buffered/buffered.go#L106-L150",
        python=Place("genericserver.audit.buffered", "BufferedBackend._run"),
        tools=(
            "fuzz: genericserver fuzz - lincheck's AuditBuffered hunt",
            "replay: genericserver replay FILE --break {break} - the worker said it finished: is anything "
            "still buffered? (p len(self._buffer))",
        ),
        task="Write a test (lincheck) in which events accepted before shutdown() must all be handed "
             "to the delegate by the time shutdown() returns.",
        hint="TARGETS['AuditBuffered']; two goroutines: process, process, shutdown / process. "
             "One preemption is enough.",
        answer="audit-finished-before-flush.py",
        breakpoint=Place("genericserver.audit.buffered", "BufferedBackend.shutdown", "self._wg.wait()"),
    ),
    Lab(
        name="kubelet-prestop-full-grace",
        title="A pod that lives twice its grace period",
        variant="kubelet-prestop-full-grace",
        upstream=(issue(115817), pr(115835), issue(117798)),
        story=(
            "kubernetes/kubernetes#115817 (2023): a pod whose preStop hook hangs, and which "
            "ignores SIGTERM, took twice terminationGracePeriodSeconds to die. The kubelet waited "
            "the whole grace for the hook, then gave SIGTERM the whole grace again (the grace "
            "override replaced what was left; see also #117798). #115835 fixed it: what the hook "
            "took comes off the grace, and SIGTERM gets the rest, at least 2 s."
        ),
        go_file="kubernetes/pkg/kubelet/kuberuntime/kuberuntime_container.go",
        go_function="kubeGenericRuntimeManager.killContainer and executePreStopHook",
        go_url=V136 + "pkg/kubelet/kuberuntime/kuberuntime_container.go",
        python=Place("genericserver.cluster.kubelet", "Kubelet.kill_container"),
        tools=(
            "cluster: genericserver cluster --pre-stop sleep - 'StopContainer with Ns grace'",
            "pytest: Kubelet + Store on the simulation (tests/test_cluster_kubelet.py)",
            "debugger: breakpoint() in your test, step into Kubelet.kill_container",
        ),
        task="Write a test: a pod with terminationGracePeriodSeconds 10, a preStop hook that never "
             "ends and a container that ignores SIGTERM must be SIGKILLed 12 s after the delete.",
        hint="tests/test_cluster_kubelet.py's run_deletion does it on virtual time: Simulation, Store, "
             "Kubelet, an ExecAction that waits on its context.",
        answer="kubelet-prestop-full-grace.py",
    ),
    Lab(
        name="kubectl-grace-zero-forces",
        title="kubectl delete --grace-period=0 force-deletes",
        variant="kubectl-grace-zero-forces",
        upstream=(pr(35484), pr(37263)),
        story=(
            "Until kubectl 1.5, --grace-period=0 removed a pod from the API at once, without "
            "waiting for its containers: a StatefulSet could start a second pod of the same name "
            "while the first still ran. kubernetes/kubernetes#35484 required --force for that, "
            "and #37263 turned a bare --grace-period=0 into a graceful delete of 1 s."
        ),
        go_file="kubectl/pkg/cmd/delete/delete.go",
        go_function="DeleteOptions.Complete (the --now / --grace-period / --force rules)",
        go_url=V136 + "staging/src/k8s.io/kubectl/pkg/cmd/delete/delete.go",
        python=Place("genericserver.cluster.kubectl", "complete_delete_flags"),
        tools=(
            "cluster: genericserver cluster --grace-period 0 - 'deleted' or 'force deleted'?",
            "pytest: Store, new_pod and delete_pod (tests/test_cluster_kubectl.py)",
        ),
        task="Write a test: 'kubectl delete pod --grace-period=0' without --force must leave the pod "
             "in the API, Terminating, with a 1 s grace period.",
        hint="delete_pod(store, 'p', DeleteFlags(grace_period=0)), then store.get(POD, 'p') and its "
             "metadata.deletionGracePeriodSeconds.",
        answer="kubectl-grace-zero-forces.py",
    ),
    Lab(
        name="contour-healthcheck-fail-no-retry",
        title="Envoy never drains after one failed call",
        variant="contour-healthcheck-fail-no-retry",
        upstream=(issue(2262, "projectcontour/contour"), pr(3136, "projectcontour/contour")),
        story=(
            "Contour's shutdown-manager starts Envoy's drain with POST /healthcheck/fail on Envoy's "
            "admin port. projectcontour/contour#2262: if that one call fails, Envoy never drains "
            "and the pod waits out its whole grace period. #3136 retries it with client-go's "
            "backoff: 4 tries, waiting 0.2 s, 1 s, 5 s."
        ),
        go_file="contour/cmd/contour/shutdownmanager.go",
        go_function="shutdownContext.shutdownHandler and shutdownEnvoy (as #3136 changed them)",
        go_url=pr(3136, "projectcontour/contour") + "/files",
        python=Place("genericserver.cluster.shutdownmanager", "shutdown"),
        tools=(
            "pytest: shutdown() with a fake Envoy admin on the simulation "
            "(tests/test_cluster_shutdownmanager.py's FakeAdmin)",
            "cluster: genericserver cluster --pre-stop contour - the shutdown-manager's lines",
        ),
        task="Write a test: when the first POST /healthcheck/fail fails, shutdown() must still get "
             "Envoy to fail its health check, and write the ok file.",
        hint="A fake admin whose healthcheck_fail raises once; run shutdown(ShutdownOptions(ok_file, "
             "check_delay=0), admin) inside Simulation().run.",
        answer="contour-healthcheck-fail-no-retry.py",
    ),
    Lab(
        name="rollout-loses-nothing",
        title="What if: make this rollout lose nothing",
        variant="",
        upstream=(pr(74416), pr(88911)),
        story=(
            "rollout.yaml is deploy/deployment.yaml without its --shutdown-delay-duration: rolled "
            "under load, each old pod refuses the connections kube-proxy still sends it for E + P "
            "seconds (endpoints lag + proxy lag, 1 s + 1 s here). kubernetes/kubernetes#74416 "
            "added the delay for this; a preStop sleep buys the same time before SIGTERM."
        ),
        go_file="apiserver/pkg/server/options/server_run_options.go",
        go_function="ServerRunOptions.AddUniversalFlags (--shutdown-delay-duration)",
        go_url=APISERVER + "pkg/server/options/server_run_options.go",
        python=Place("genericserver.cluster.manifest", "rollout_outcome"),
        tools=(
            "cluster: genericserver cluster --manifest rollout.yaml --roll",
            "cluster: genericserver cluster --manifest rollout.yaml --roll --svg roll.svg",
            "cluster: genericserver cluster --manifest rollout.yaml --sweep",
        ),
        task="Edit rollout.yaml (written into this directory by 'lab start') so that rolling it under "
             "load loses no request, and the shutdown still fits the grace period.",
        hint="S + D >= E + P + 1 s (a margin of one more kube-proxy sync period) and S + D + request "
             "timeout < terminationGracePeriodSeconds (walkthrough 6.9); S is a preStop sleep, D "
             "--shutdown-delay-duration.",
        answer="rollout-loses-nothing.yaml",
        exercise="rollout.yaml",
    ),
)

_BY_NAME = {lab.name: lab for lab in LABS}


def lab(name: str) -> Lab:
    """The lab called ``name``; ``KeyError`` if there is none."""
    return _BY_NAME[name]


def names() -> list[str]:
    return [lab.name for lab in LABS]


def lab_of_variant(name: str) -> Optional[Lab]:
    """The lab whose bug is the variant ``name``, or None."""
    return next((the_lab for the_lab in LABS if the_lab.variant and the_lab.variant == name), None)

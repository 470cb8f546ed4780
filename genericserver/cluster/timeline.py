"""The cluster scenario's timeline and results, printed with rich (no Go twin).

One table of everything that happened from the ``kubectl delete`` (or the start of the
rollout) on - kubectl, the Deployment and ReplicaSet controllers, the store, the kubelet, the
containers, the pod's lifecycle signals, the endpoints controller, kube-proxy, Envoy and the
shutdown-manager - with what the client saw slotted in (its first and last failure of each
cause), then the client's tally: sent, lost and the loss in percent, and a line per cause of
loss saying why. Rows are in the order things happened; a request's row is stamped when its
outcome happened (answer read, connection refused or dropped), not when it was sent. Times
are cluster seconds after the delete; a line that repeats (the shutdown-manager polling its
ok file) is shown once with a count.
"""

from __future__ import annotations

from typing import Optional

from rich.console import Console
from rich.table import Table
from rich.text import Text

from genericserver.cluster.loadclient import OUTCOMES
from genericserver.cluster.losses import CAUSES, format_loss
from genericserver.cluster.scenario import Row, ScenarioResult

STYLES = {
    "kubectl": "bold", "store": "cyan", "kubelet": "yellow", "container": "magenta", "pod": "green",
    "endpoints": "blue", "kube-proxy": "bright_blue", "client": "bold red", "envoy": "bright_magenta",
    "shutdown-manager": "bright_cyan", "deployment": "bold cyan", "replicaset": "cyan",
}
LABELS = {"pod": "apiserver", "container": "runtime"}
REPEATING = {"shutdown-manager"}  # its polling lines say the same thing every interval


def collapse(rows: list[Row]) -> list[tuple[Row, int, float]]:
    """Merge a polling line with its earlier identical ones: (first row, count, time of the last)."""
    out: list[tuple[Row, int, float]] = []
    index: dict[tuple[str, str], int] = {}
    for r in rows:
        key = (r.component, r.text)
        if key in index and r.component in REPEATING:
            first, n, _ = out[index[key]]
            out[index[key]] = (first, n + 1, r.at)
            continue
        index[key] = len(out)
        out.append((r, 1, r.at))
    return out


def timeline_table(result: ScenarioResult) -> Table:
    cfg = result.config
    title = "What happened during the rollout" if cfg.roll else "What happened after kubectl delete"
    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    table.add_column("t (s)", justify="right", style="dim", no_wrap=True)
    table.add_column("who", no_wrap=True)
    table.add_column("what")
    for row, n, last in collapse(result.rows):
        text = row.text if n == 1 else f"{row.text}  (x{n}, until +{last:.2f}s)"
        style = STYLES.get(row.component, "")
        table.add_row(f"+{row.at:.3f}", Text(LABELS.get(row.component, row.component), style=style), Text(text, style=style if row.component == "client" else ""))
    since = "the rollout started" if cfg.roll else "the delete"
    table.caption = (f"cluster seconds after {since}" + (f"; ran at {cfg.scale:g} real s per cluster s" if cfg.scale != 1 else "")
                     + "; a client row is stamped when the answer or refusal happened, not when the request was sent")
    return table


def results_table(result: ScenarioResult) -> Table:
    table = Table(title="What the client saw", title_justify="left")
    for name in ("sent",) + OUTCOMES:
        table.add_column(name, justify="right", no_wrap=True)  # a header is never cut: "lost" wraps
    table.add_column("lost", justify="right")
    c = result.counts
    cells = [str(result.total)] + [str(c[o]) for o in OUTCOMES] + [format_loss(result.outcome)]
    table.add_row(*cells, style="bold red" if result.lost else "bold green")
    return table


def pod_metrics_table(result: ScenarioResult) -> Optional[Table]:
    """What each replica's own ``/metrics`` said at its last scrape (Prometheus's view): its
    ``/readyz`` answers by code, the kubelet's readiness probes among them. A replica that shut
    down shows its red ``/readyz`` (500) during the shutdown delay."""
    if not result.pod_metrics:
        return None
    table = Table(title="Each replica's own /metrics (last scrape before it stopped listening)", title_justify="left")
    for name, justify in (("pod", "left"), ("/readyz 200", "right"), ("/readyz 500", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for pod in sorted(result.pod_metrics):
        readyz = readyz_answers(result, pod)
        table.add_row(pod, str(readyz.get("200", 0)), str(readyz.get("500", 0)))
    return table


def readyz_answers(result: ScenarioResult, pod: str) -> dict[str, int]:
    """``apiserver_request_total`` of ``/readyz`` by code, from ``pod``'s last scrape."""
    samples = result.pod_metrics.get(pod, [])
    return {s.labels["code"]: int(s.value) for s in samples
            if s.name == "apiserver_request_total" and s.labels.get("subresource") == "/readyz"}


def why_lines(result: ScenarioResult) -> list[str]:
    """One line per cause of loss: count and explanation (see :mod:`.losses`)."""
    return [f"{n} {CAUSES[cause][1]}" for cause, n in result.outcome.by_cause.most_common()]


def describe_config(result: ScenarioResult) -> str:
    cfg = result.config
    pre = {"none": "no preStop", "sleep": f"preStop sleep {cfg.pre_stop_sleep}",
           "contour": f"Contour drain (drain-delay {cfg.drain_delay:g}s, check-delay {cfg.check_delay:g}s)"}[cfg.pre_stop]
    if cfg.roll:
        from genericserver.cluster.deployment import resolve_fenceposts

        surge, unavailable = resolve_fenceposts(cfg.max_surge, cfg.max_unavailable, cfg.replicas)
        what = (f"rolling them as a Deployment does (maxSurge {cfg.max_surge} = {surge}, "
                f"maxUnavailable {cfg.max_unavailable} = {min(unavailable, cfg.replicas)})")
    else:
        what = "deleting one pod"
    return ((f"from {cfg.source}: " if cfg.source else "")
            + f"{cfg.replicas} replicas of the server behind kube-proxy; {what}; "
            f"endpoints lag {cfg.endpoints_lag:g}s + kube-proxy lag {cfg.proxy_lag:g}s; {pre}; "
            f"ShutdownDelayDuration {cfg.shutdown_delay:g}s{' (retry-after mode)' if cfg.retry_after else ''}; "
            f"terminationGracePeriodSeconds {cfg.grace_period}; {cfg.workers} clients{' with keep-alive' if cfg.keep_alive else ''}")


def render(result: ScenarioResult, console: Optional[Console] = None) -> None:
    console = console if console is not None else Console()
    console.print(describe_config(result))
    console.print(timeline_table(result))
    if result.config.workers == 0:
        console.print("No load client ran (--workers 0): nothing was sent, so nothing could be lost.")
    else:
        console.print(results_table(result))
    pods = pod_metrics_table(result)
    if pods is not None:
        console.print(pods)
    if result.lost:
        console.print(f"[red]{format_loss(result.outcome)} of the requests lost.[/red] Why:")
        for line in why_lines(result):
            console.print(f"  {line}")
        cfg = result.config
        if result.outcome.by_cause["closed-but-routed"]:
            console.print(f"The endpoints controller and kube-proxy took {cfg.endpoints_lag + cfg.proxy_lag:g}s "
                          "to stop routing to a deleted pod; the pod must keep accepting connections that long: "
                          "a preStop sleep plus --shutdown-delay at least as long as the two lags.")
    elif result.config.workers:
        console.print("[green]No request lost.[/green]")

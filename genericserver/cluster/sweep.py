"""The what-if table: requests lost for each combination of lags, preStop and shutdown delay, measured (no Go twin).

Each row is a real :func:`~genericserver.cluster.scenario.run_scenario` (three replicas under
load). The grid, in cluster seconds: the endpoints controller lags 0.5 s and kube-proxy 0.5, 2
or 3.5 s more (E + P = 1, 2.5 or 4 s before new connections stop going to a deleted pod);
against that, one pod deleted with: no preStop and a ShutdownDelayDuration of 0, 3 or 5 s (and
3 s in retry-after mode), a preStop ``sleep`` of 2 s (shorter than two of the lags) or 5 s, and
Contour's drain with a drain-delay of 0 or 5 s (polling connections every 0.25 s); then a whole
rollout (a Deployment's, maxSurge and maxUnavailable 25 %) with no preStop and with ``sleep 5``.
Each row's loss is in percent of the requests sent, with the counts, and a short why per cause
(the key under the table; :mod:`.losses`). What it shows:

* requests are lost exactly when preStop + shutdown delay is shorter than E + P, and none when
  it is longer: the pod stopped accepting while kube-proxy still routed to it;
* retry-after mode does not change that: after the delay it answers 429 only until the requests
  in flight are drained (at once here), then stops listening like the default mode;
* a preStop sleep buys the same time before SIGTERM (the server's own delay can then be 0), and
  a sleep shorter than the lag loses requests as a short delay does;
* Contour's drain waits for *connections* to close, not for the proxies: with HTTP/1.1 clients
  that open a connection per request it finds none open at once and lets Envoy go, so it loses
  requests unless ``--drain-delay`` covers the lag - the reason that flag was added;
* a rollout replaces every pod, so without a preStop or delay it loses requests at each of them.

:func:`manifest_cases` sweeps around a manifest's own settings instead (``--manifest``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

from rich.console import Console
from rich.table import Table

from genericserver.cluster.losses import CAUSES, format_loss
from genericserver.cluster.scenario import ScenarioConfig, ScenarioResult, run_scenario

ENDPOINTS_LAG = 0.5
PROXY_LAGS = (0.5, 2.0, 3.5)
DEFAULT_SWEEP_SCALE = 0.2
CHECK_INTERVAL = 0.25


def cases(base: ScenarioConfig) -> list[ScenarioConfig]:
    """The grid above, each on top of ``base`` (its scale, replicas, clients...)."""
    out = []
    for proxy_lag in PROXY_LAGS:
        common = replace(base, endpoints_lag=ENDPOINTS_LAG, proxy_lag=proxy_lag, roll=False, check_delay=0.0,
                         pre_stop="none", shutdown_delay=0.0, retry_after=False)
        for delay in (0.0, 3.0, 5.0):
            out.append(replace(common, shutdown_delay=delay))
        out.append(replace(common, shutdown_delay=3.0, retry_after=True))
        for sleep in (2, 5):
            out.append(replace(common, pre_stop="sleep", pre_stop_sleep=sleep))
        for drain in (0.0, 5.0):
            # polled often, so the drain notices the first moment no connection is open
            out.append(replace(common, pre_stop="contour", drain_delay=drain, check_interval=CHECK_INTERVAL))
        out.append(replace(common, roll=True))
        out.append(replace(common, roll=True, pre_stop="sleep", pre_stop_sleep=5))
    return out


def manifest_cases(base: ScenarioConfig) -> list[ScenarioConfig]:
    """Around a manifest's rollout (``base``): as it is, with half its preStop and delay, and with
    neither, at each lag of the grid."""
    out = []
    for proxy_lag in PROXY_LAGS:
        common = replace(base, endpoints_lag=ENDPOINTS_LAG, proxy_lag=proxy_lag, roll=True)
        half_sleep = common.pre_stop_sleep // 2 if common.pre_stop == "sleep" else 0
        out.append(common)
        out.append(replace(common, pre_stop="sleep" if half_sleep else "none", pre_stop_sleep=half_sleep or 5,
                           shutdown_delay=common.shutdown_delay / 2))
        out.append(replace(common, pre_stop="none", shutdown_delay=0.0))
    return out


def pre_stop_label(cfg: ScenarioConfig) -> str:
    if cfg.pre_stop == "sleep":
        return f"sleep {cfg.pre_stop_sleep}"
    if cfg.pre_stop == "contour":
        return f"contour drain-delay={cfg.drain_delay:g}"
    return "none"


def choice_label(cfg: ScenarioConfig) -> str:
    """What a row chose, without its lag: one line of the sweep's picture."""
    delay = f"delay {cfg.shutdown_delay:g}s" + (" retry-after" if cfg.retry_after else "")
    return f"{'rollout' if cfg.roll else 'delete one'}: preStop {pre_stop_label(cfg)}, {delay}"


def run_sweep(todo: list[ScenarioConfig], progress: Optional[Callable[[int, int, ScenarioResult], None]] = None) -> list[ScenarioResult]:
    results = []
    for i, cfg in enumerate(todo, 1):
        r = run_scenario(cfg)
        results.append(r)
        if progress is not None:
            progress(i, len(todo), r)
    return results


def sweep_table(results: list[ScenarioResult]) -> Table:
    scale = results[0].config.scale if results else 1.0
    table = Table(title="What if: requests lost when one of three pods is deleted, or all are rolled, under load",
                  title_justify="left")
    for name, justify in (("what", "left"), ("lag", "right"), ("preStop", "left"), ("shutdown delay", "right"),
                          ("lost", "right"), ("why", "left")):
        table.add_column(name, justify=justify)
    causes: set[str] = set()
    for r in results:
        c = r.config
        delay = f"{c.shutdown_delay:g}s" + (" retry-after" if c.retry_after else "")
        causes |= set(r.outcome.by_cause)
        table.add_row("rollout" if c.roll else "delete one", f"{c.endpoints_lag + c.proxy_lag:g}s", pre_stop_label(c), delay,
                      format_loss(r.outcome), r.outcome.why() or "-", style="red" if r.lost else "green")
    key = "; ".join(f"{CAUSES[c][0]} = {CAUSES[c][1]}" for c in CAUSES if c in causes)
    table.caption = (f"lag: endpoints controller + kube-proxy; shutdown delay: the server's ShutdownDelayDuration; "
                     f"lost: in % of the requests sent; durations in cluster seconds, run at {scale:g} real s each; "
                     f"{results[0].config.workers if results else 0} clients, a new connection per request"
                     + (f". Why: {key}" if key else ""))
    return table


def sweep_points(results: list[ScenarioResult]) -> list[tuple[str, float, float, int, int]]:
    """(choice, lag, loss %, lost, sent) per row, for :func:`~genericserver.cluster.pictures.draw_sweep`."""
    return [(choice_label(r.config), r.config.endpoints_lag + r.config.proxy_lag, r.outcome.loss_percent,
             r.outcome.lost, r.outcome.sent) for r in results]


def render_sweep(results: list[ScenarioResult], console: Optional[Console] = None) -> None:
    (console or Console()).print(sweep_table(results))

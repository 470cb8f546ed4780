"""The what-if table: lost requests for each combination of lags, preStop and shutdown delay, measured (no Go twin).

Each row is a real :func:`~genericserver.cluster.scenario.run_scenario` (three replicas, one
deleted under load). The grid, in cluster seconds: the endpoints controller lags 0.5 s and
kube-proxy 0.5 s or 2.5 s more (1 s or 3 s in all before new connections stop going to the pod);
against that, no preStop with a ShutdownDelayDuration of 0, 2 or 4 s (and 2 s in retry-after
mode), a preStop ``sleep 4``, and
Contour's drain with a drain-delay of 0 or 4 s (polling connections every 0.25 s). What it shows:

* with no preStop, requests are lost exactly when the shutdown delay is shorter than the time the
  proxies take to stop routing to the pod, and none when it is longer;
* retry-after mode does not change that: after the delay it answers 429 only until the requests
  in flight are drained (at once here), then stops listening like the default mode;
* a preStop sleep buys the same time before SIGTERM (the server's own delay can then be 0);
* Contour's drain waits for *connections* to close, not for the proxies: with HTTP/1.1 clients
  that open a connection per request it finds none open at once and lets Envoy go, so it loses
  requests unless ``--drain-delay`` covers the lag - the reason that flag was added.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

from rich.console import Console
from rich.table import Table

from genericserver.cluster.scenario import ScenarioConfig, ScenarioResult, run_scenario

ENDPOINTS_LAG = 0.5
PROXY_LAGS = (0.5, 2.5)
DEFAULT_SWEEP_SCALE = 0.2
CHECK_INTERVAL = 0.25


def cases(base: ScenarioConfig) -> list[ScenarioConfig]:
    """The grid above, each on top of ``base`` (its scale, replicas, clients...)."""
    out = []
    for proxy_lag in PROXY_LAGS:
        common = replace(base, endpoints_lag=ENDPOINTS_LAG, proxy_lag=proxy_lag, roll=False, check_delay=0.0)
        for delay in (0.0, 2.0, 4.0):
            out.append(replace(common, pre_stop="none", shutdown_delay=delay))
        out.append(replace(common, pre_stop="none", shutdown_delay=2.0, retry_after=True))
        out.append(replace(common, pre_stop="sleep", pre_stop_sleep=4, shutdown_delay=0.0))
        for drain in (0.0, 4.0):
            # polled often, so the drain notices the first moment no connection is open
            out.append(replace(common, pre_stop="contour", drain_delay=drain, check_interval=CHECK_INTERVAL, shutdown_delay=0.0))
    return out


def pre_stop_label(cfg: ScenarioConfig) -> str:
    if cfg.pre_stop == "sleep":
        return f"sleep {cfg.pre_stop_sleep}"
    if cfg.pre_stop == "contour":
        return f"contour drain-delay={cfg.drain_delay:g}"
    return "none"


def run_sweep(base: ScenarioConfig, progress: Optional[Callable[[int, int, ScenarioResult], None]] = None) -> list[ScenarioResult]:
    results = []
    todo = cases(base)
    for i, cfg in enumerate(todo, 1):
        r = run_scenario(cfg)
        results.append(r)
        if progress is not None:
            progress(i, len(todo), r)
    return results


def sweep_table(results: list[ScenarioResult]) -> Table:
    scale = results[0].config.scale if results else 1.0
    table = Table(title="What if: requests lost when one of three pods is deleted under load", title_justify="left")
    for name, justify in (("lag", "right"), ("preStop", "left"), ("shutdown delay", "right"),
                          ("requests", "right"), ("lost", "right"), ("refused", "right"), ("reset", "right"),
                          ("503", "right"), ("429", "right")):
        table.add_column(name, justify=justify)
    for r in results:
        c = r.config
        delay = f"{c.shutdown_delay:g}s" + (" retry-after" if c.retry_after else "")
        table.add_row(f"{c.endpoints_lag + c.proxy_lag:g}s", pre_stop_label(c), delay, str(r.total),
                      str(r.lost), str(r.counts["refused"]), str(r.counts["reset"]), str(r.counts["503"]), str(r.counts["429"]),
                      style="red" if r.lost else "green")
    table.caption = (f"lag: endpoints controller + kube-proxy; shutdown delay: the server's ShutdownDelayDuration; "
                     f"durations in cluster seconds, run at {scale:g} real s each (scaled down); "
                     f"{results[0].config.workers if results else 0} clients, a new connection per request")
    return table


def render_sweep(results: list[ScenarioResult], console: Optional[Console] = None) -> None:
    (console or Console()).print(sweep_table(results))

"""Pictures of the cluster scenario as SVG, drawn with matplotlib (no Go twin).

* :func:`draw_timeline`: every request as one mark, at the time its outcome happened (answer
  read, connection refused or dropped; cluster seconds after the delete or the rollout's
  start), on the row of the pod kube-proxy sent it to (a refusal by the service's REJECT rule
  has a row of its own), coloured by outcome. Vertical markers across a pod's row show what
  happened to it: SIGTERM, preStop start and end, the endpoints update that changed it, the
  kube-proxy sync that started or stopped routing to it, its listener closing
  (HTTPServerStoppedListening) and SIGKILL; each has a tab and a word at a height of its own
  kind, so markers at the same moment stay apart. The footnote sits under the axis label.
* :func:`draw_sweep`: the what-if table's loss in percent against the lag (endpoints +
  kube-proxy), one line per preStop/delay choice.

``timeline_figure`` and ``sweep_figure`` build the same pictures as matplotlib Figures, which
the tests render to pixels to check what a room sees.

Both write reproducible files: the Agg-free SVG canvas, text kept as text (searchable), a fixed
``svg.hashsalt`` for element ids and no date in the metadata. Every request group and marker
group has an ``id`` (``requests-refused``, ``marker-SIGTERM``...) so tests and readers can find
them. matplotlib is imported only when a picture is drawn: ``pip install 'genericserver[plot]'``.
"""

from __future__ import annotations

from typing import Any, Iterable

from genericserver.cluster.loadclient import OUTCOMES
from genericserver.cluster.scenario import ScenarioResult

NO_POD = "no endpoint (REJECT)"
OUTCOME_COLORS = {"ok": "#2ca02c", "429": "#1f77b4", "503": "#9467bd", "refused": "#d62728", "reset": "#ff7f0e", "other": "#7f7f7f"}
# (kind, legend label, colour, line style, the word at its tab)
MARKERS = (
    ("preStop-start", "preStop start", "#17becf", "-", "preStop"),
    ("preStop-end", "preStop end", "#0e6f7a", "--", "preStop end"),
    ("SIGTERM", "SIGTERM", "#000000", "-", "SIGTERM"),
    ("endpoints", "endpoints update", "#1f77b4", ":", "endpoints"),
    ("kube-proxy", "kube-proxy sync", "#0000ff", "-", "proxy sync"),
    ("listener", "listener closed", "#d62728", "-.", "closed"),
    ("SIGKILL", "SIGKILL", "#8c564b", "-", "SIGKILL"),
)
ROW_INCHES = 1.1  # a pod's row: tall enough for each kind's word at its own height
FOOTNOTE = ("a marker crosses its pod's whole row; its tab and word sit at a height of their own, "
            "so markers at the same moment stay apart")
SWEEP_NUDGE = 0.012  # a line's sideways nudge in the sweep, per line, as a fraction of the lag range
STYLE = {"svg.hashsalt": "genericserver", "svg.fonttype": "none", "font.size": 9}


def _figure(width: float, height: float) -> tuple[Any, Any]:
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasSVG(fig)
    return fig, fig.add_subplot()


def _save(fig: Any, path: str) -> None:
    import matplotlib

    with matplotlib.rc_context(STYLE):  # the SVG settings (text as text, fixed ids) apply when saving
        fig.savefig(path, format="svg", metadata={"Date": None})


def pod_markers(result: ScenarioResult) -> list[tuple[str, str, float]]:
    """(kind, pod, cluster seconds) of every marker, from the scenario's events.

    The warm-up before the delete (or the rollout) draws nothing: its slices and routes are the
    starting state, so a pod's row shows only the changes to that pod after time 0."""
    out: list[tuple[str, str, float]] = []
    routed: set[str] = set()
    for e in result.events:
        at, what, pod = result.rel(e.at), e.get("what"), e.get("pod")
        if at > result.duration:
            break  # the teardown after the run
        if at < 0:
            if e.kind == "kube-proxy" and e.get("routed") is not None:
                routed = set(e.get("routed"))
            continue
        if e.kind == "kubelet" and what in ("SIGTERM", "SIGKILL", "preStop-start", "preStop-end"):
            out.append((what, pod, at))
        elif e.kind == "endpoints" and pod:
            out.append(("endpoints", pod, at))
        elif e.kind == "kube-proxy" and e.get("routed") is not None:
            now = set(e.get("routed"))
            out += [("kube-proxy", p, at) for p in sorted(now ^ routed)]
            routed = now
        elif e.kind == "pod" and e.get("signal") == "HTTPServerStoppedListening":
            out.append(("listener", pod, at))
    return out


def pod_rows(result: ScenarioResult) -> list[str]:
    """Pods top to bottom, the first revision's first (``web-0``... then ``web-v2-0``...), then
    the REJECT row."""
    pods = {e.get("pod") for e in result.events if e.kind in ("kubelet", "pod") and e.get("pod")}
    pods |= {s.pod for s in result.samples if s.pod}
    return sorted(pods, key=lambda p: ("-v" in p, p)) + [NO_POD]


def draw_timeline(result: ScenarioResult, path: str) -> None:
    """Write the request-outcome picture of one scenario run to ``path`` (SVG)."""
    _save(timeline_figure(result), path)


def timeline_figure(result: ScenarioResult) -> Any:
    """The request-outcome picture of one scenario run, as a matplotlib Figure."""
    import matplotlib

    rows = pod_rows(result)
    index = {pod: i for i, pod in enumerate(rows)}
    with matplotlib.rc_context({**STYLE, "font.size": 12}):
        fig, ax = _figure(13, 1.9 + ROW_INCHES * len(rows))
        for outcome in OUTCOMES:
            got = [(n, s) for n, s in enumerate(result.samples) if s.outcome == outcome]
            if not got:
                continue
            # a fixed spread inside the row, so dense traffic shows as a band, not one line
            xs = [result.rel(s.done) for _, s in got]
            ys = [index[s.pod or NO_POD] + ((n * 0.618) % 1 - 0.5) * 0.5 for n, s in got]
            ax.scatter(xs, ys, s=4 if outcome == "ok" else 9, c=OUTCOME_COLORS[outcome], linewidths=0,
                       alpha=0.5 if outcome == "ok" else 0.9, label=f"{outcome} ({len(got)})", gid=f"requests-{outcome}")
        marks = pod_markers(result)
        band = 0.84 / len(MARKERS)  # each kind's tab and word have a band of the row: coinciding ones stay apart
        for slot, (kind, label, color, style, word) in enumerate(MARKERS):
            mine = [(pod, at) for k, pod, at in marks if k == kind and pod in index]
            xs = [at for _, at in mine]
            # the whole row's height, seen from the back of a room; the tab and word name it
            ax.vlines(xs, [index[p] - 0.45 for p, _ in mine], [index[p] + 0.45 for p, _ in mine], colors=color,
                      linestyles=style, linewidths=1.6, label=label if mine else f"{label} (none)", gid=f"marker-{kind}")
            top = [index[p] - 0.42 + slot * band for p, _ in mine]
            # above every kind's line: a line at the same moment never hides another's tab
            ax.vlines(xs, top, [t + band for t in top], colors=color, linewidths=5, zorder=3, gid=f"marker-{kind}-tab")
            for x, t in zip(xs, top):
                # beside its tab, on a pale ground: read over a band of dense requests too
                ax.annotate(f" {word}", (x, t + band / 2), xytext=(3, 0), textcoords="offset points", color=color,
                            fontsize=10, fontweight="bold", va="center", ha="left", zorder=4, gid=f"marker-{kind}-word",
                            bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 0.5})
        ax.set_yticks(range(len(rows)), rows)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        cfg = result.config
        since = "the rollout started" if cfg.roll else "kubectl delete"
        ax.set_xlabel(f"cluster seconds after {since}; each request drawn when its answer or refusal happened")
        ax.set_title(f"{'Rollout' if cfg.roll else 'Deleting one pod'}: lost {result.outcome.lost} of {result.outcome.sent} "
                     f"requests (E + P = {cfg.endpoints_lag + cfg.proxy_lag:g}s, preStop "
                     f"{'sleep ' + str(cfg.pre_stop_sleep) if cfg.pre_stop == 'sleep' else cfg.pre_stop}, "
                     f"ShutdownDelayDuration {cfg.shutdown_delay:g}s)", loc="left")
        ax.grid(axis="x", alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=12, frameon=False)
        # the footnote has a strip of its own under the axis label (it was drawn over it)
        strip = 0.45 / fig.get_figheight()
        fig.tight_layout(rect=(0, strip, 1, 1))
        fig.text(0.01, strip / 3, FOOTNOTE, fontsize=10, color="0.4", gid="footnote")
    return fig


def draw_sweep(points: Iterable[tuple[str, float, float, int, int]], path: str, title: str) -> None:
    """Write the sweep's picture to ``path`` (SVG): see :func:`sweep_figure`."""
    _save(sweep_figure(points, title), path)


def sweep_figure(points: Iterable[tuple[str, float, float, int, int]], title: str) -> Any:
    """Loss % against the lag: ``points`` are (choice, lag, loss %, lost, sent); one line per choice.

    Several choices often lose nothing at the same lags, so their lines would lie on one another:
    each line is nudged sideways by a fixed fraction of the lag range (the caption says so), and
    its markers differ in shape, so every line stays visible from the back of a room."""
    import matplotlib

    lines: dict[str, list[tuple[float, float]]] = {}
    for choice, lag, pct, _, _ in points:
        lines.setdefault(choice, []).append((lag, pct))
    lags = [lag for pts in lines.values() for lag, _ in pts]
    step = SWEEP_NUDGE * ((max(lags) - min(lags)) or 1.0) if lags else 0.0
    with matplotlib.rc_context({**STYLE, "font.size": 12}):
        fig, ax = _figure(11, 6)
        for n, (choice, pts) in enumerate(lines.items()):
            pts.sort()
            nudge = (n - (len(lines) - 1) / 2) * step
            ax.plot([p[0] + nudge for p in pts], [p[1] for p in pts], marker="os^vD<>px*"[n % 10],
                    linestyle="-" if n < 10 else "--", markersize=8, markeredgecolor="white", label=choice, gid=f"sweep-{n}")
        ax.set_xlabel("lag: endpoints controller + kube-proxy (cluster seconds)")
        ax.set_ylabel("requests lost (% of those sent)")
        ax.set_title(title, loc="left")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=12, frameon=False)
        ax.text(0.0, -0.16, "lines nudged sideways so that coinciding ones stay visible", transform=ax.transAxes,
                fontsize=10, color="0.4")
        fig.tight_layout()
    return fig

"""Tests for genericserver.cluster.pictures and the sweep's table: SVGs that parse, count and explain.

One deletion under load (a preStop sleep too short for the lags) is drawn;
the SVG must parse as XML, hold one mark per request in its request groups, a vertical marker per
kubelet/endpoints/kube-proxy/listener event, the legend's labels as text, and come out the same
byte for byte when drawn twice. The sweep's table and picture are checked on results made by hand.
Both pictures are also rendered to pixels at projector width (matplotlib's Agg renderer, the
same Figure the SVG is saved from) and read as a room would: markers at the same moment each
seen, coinciding sweep lines each seen, legend text at least 14 pixels high.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

from rich.console import Console

from genericserver.cluster.loadclient import OUTCOMES, Sample
from genericserver.cluster import pictures
from genericserver.cluster.pictures import MARKERS, draw_sweep, draw_timeline, pod_markers, pod_rows, sweep_figure, timeline_figure
from genericserver.cluster.scenario import ScenarioConfig, ScenarioResult, run_scenario
from genericserver.cluster.sweep import render_sweep, sweep_points

SVG = "{http://www.w3.org/2000/svg}"
PROJECTOR = 1280  # pixels across: the picture as a room sees it on a projector


def rendered(fig):
    """The figure drawn to pixels at projector width: (RGB rows top to bottom, its Agg canvas)."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig.set_dpi(PROJECTOR / fig.get_figwidth())
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].astype(int), canvas


def colour_pixels(img, colour: str, x0: float, x1: float, y0: float, y1: float) -> int:
    """Pixels of ``colour`` (within a small tolerance for antialiasing) in a box given in display
    coordinates (origin bottom left, as matplotlib's transforms give them)."""
    from matplotlib.colors import to_rgb

    rgb = [round(255 * c) for c in to_rgb(colour)]
    height = img.shape[0]
    box = img[max(0, round(height - y1)):round(height - y0), max(0, round(x0)):round(x1)]
    return int((abs(box - rgb) <= 10).all(axis=-1).sum())


def legend_text_heights(fig, canvas) -> list[float]:
    renderer = canvas.get_renderer()
    return [t.get_window_extent(renderer).height for ax in fig.axes for t in ax.get_legend().get_texts()]


def groups(path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    return {g.get("id"): g for g in root.iter(f"{SVG}g") if g.get("id")}


def test_the_timeline_picture_has_a_mark_per_request_and_the_markers(tmp_path):
    # 1 s of preStop against 20 s of lag: 19 s in which new connections reach a closed listener;
    # at a tenth of real time that is 1.9 s (a machine running two suites at once sent no
    # request inside 0.15 s, nor once inside 0.3 s; eight workers on two cores none inside 0.5 s,
    # whose kubelet, late, closed the listener when the exact kube-proxy was about to sync; the
    # suite beside a load as heavy as a second suite, none inside 0.9 s)
    r = run_scenario(ScenarioConfig(endpoints_lag=1.0, proxy_lag=19.0, pre_stop="sleep", pre_stop_sleep=1,
                                    scale=0.1, workers=3, interval=0.02, warmup=1.0, tail=1.0))
    assert r.lost > 0
    path = tmp_path / "run.svg"
    fig = timeline_figure(r)  # the picture draw_timeline saves; rendered to pixels below
    pictures._save(fig, str(path))
    g = groups(path)
    marks = sum(len(list(g[gid].iter(f"{SVG}use"))) for gid in g if gid.startswith("requests-"))
    assert marks == len(r.samples)
    # one group per outcome that happened, each with its count (which outcome the lost requests
    # had is up to the machine's load: refused at a closed listener, or reset)
    for outcome in OUTCOMES:
        group = g.get(f"requests-{outcome}")
        assert (0 if group is None else len(list(group.iter(f"{SVG}use")))) == r.counts.get(outcome, 0), outcome
    expected = {kind: 0 for kind, *_ in MARKERS}
    for kind, _, _ in pod_markers(r):
        expected[kind] += 1
    assert expected["SIGTERM"] == expected["preStop-start"] == expected["preStop-end"] == 1
    assert expected["listener"] == 1 and expected["endpoints"] >= 1 and expected["kube-proxy"] >= 1
    for kind, n in expected.items():
        assert len(list(g[f"marker-{kind}"].iter(f"{SVG}path"))) == n, kind
    text = path.read_text()
    for kind, label, _, _, word in MARKERS:
        assert f">{label}" in text, label
        assert (f"> {word}<" in text) == (expected[kind] > 0), word  # each marker drawn names itself
    # each kind of marker has its tab (and word) in its own band of the row: two kinds never
    # overlap, so SIGTERM and "listener closed" at the same moment (no delay) are both seen
    def spans(suffix: str) -> list[tuple[str, float, float]]:
        return [(kind, *sorted((ys[1], ys[3])))
                for kind, *_ in MARKERS for p in g[f"marker-{kind}{suffix}"].iter(f"{SVG}path")
                if len(ys := [float(v) for v in re.findall(r"-?[\d.]+", p.get("d"))]) == 4]

    tabs = spans("-tab")
    assert tabs
    for k1, top1, bottom1 in tabs:
        for k2, top2, bottom2 in tabs:
            assert k1 == k2 or bottom1 <= top2 + 1e-6 or bottom2 <= top1 + 1e-6, (k1, k2)
    # and its line crosses the pod's whole row, not a stub of a few pixels
    tallest_tab = max(bottom - top for _, top, bottom in tabs)
    assert all(bottom - top >= 6 * tallest_tab for _, top, bottom in spans("")), spans("")
    # the warm-up draws nothing: a pod's row shows a route change only after a slice change of
    # its own (the deleted pod's; on a machine too busy for the probes, another's too)
    sliced = {pod for kind, pod, _ in pod_markers(r) if kind == "endpoints"}
    assert "web-0" in sliced and {pod for kind, pod, _ in pod_markers(r) if kind == "kube-proxy"} <= sliced
    again = tmp_path / "again.svg"
    draw_timeline(r, str(again))
    assert again.read_bytes() == path.read_bytes()
    # rendered at projector width: SIGTERM comes the moment the preStop ends, and both markers
    # are seen on the pod's row at that moment; the legend reads from the back of the room
    img, canvas = rendered(fig)
    ax = fig.axes[0]
    row = pod_rows(r).index("web-0")
    at = {kind: t for kind, pod, t in pod_markers(r) if pod == "web-0"}
    assert abs(at["SIGTERM"] - at["preStop-end"]) < 0.05
    for kind, _, colour, _, _ in MARKERS:
        if kind in ("SIGTERM", "preStop-end"):
            (x, y_top), (_, y_bottom) = ax.transData.transform([(at[kind], row - 0.5), (at[kind], row + 0.5)])
            assert colour_pixels(img, colour, x - 4, x + 4, y_bottom, y_top) >= 10, kind
    assert min(legend_text_heights(fig, canvas)) >= 14
    # the footnote is read under the axis label, not on top of it
    renderer = canvas.get_renderer()
    label = ax.xaxis.label.get_window_extent(renderer)
    note = next(t for t in fig.texts if t.get_gid() == "footnote").get_window_extent(renderer)
    assert note.y1 <= label.y0 and note.y0 >= 0, (note, label)


def fake(roll: bool, lag: float, sleep: int, outcomes: list[tuple[str, str]]) -> ScenarioResult:
    cfg = ScenarioConfig(roll=roll, endpoints_lag=0.5, proxy_lag=lag - 0.5, pre_stop="sleep" if sleep else "none", pre_stop_sleep=sleep or 5)
    samples = [Sample(float(i), outcome, pod, False, float(i) + 0.1) for i, (outcome, pod) in enumerate(outcomes)]
    return ScenarioResult(cfg, [], samples, [], 0.0, 10.0)


RESULTS = [
    fake(False, 1.0, 2, [("ok", "web-0")] * 9),
    fake(False, 4.0, 2, [("ok", "web-0")] * 6 + [("refused", "web-0")] * 3 + [("refused", "")]),
    fake(True, 4.0, 0, [("ok", "web-1")] * 3 + [("refused", "web-0")]),
]


def test_the_sweep_table_gives_the_loss_in_percent_and_says_why():
    out = io.StringIO()
    render_sweep(RESULTS, Console(file=out, width=250))
    text = out.getvalue()
    assert "0% (0 of 9)" in text and "40.0% (4 of 10)" in text and "25.0% (1 of 4)" in text
    assert "3 refused: listener closed, still routed; 1 refused: no endpoints" in text
    # the key explains each cause the table shows, and only those
    assert "kube-proxy still routed new connections to a pod whose listener had closed" in text
    assert "REJECT rule" in text and "503 from Envoy" not in text


def test_the_sweep_picture_has_a_line_per_choice(tmp_path):
    path = tmp_path / "sweep.svg"
    draw_sweep(sweep_points(RESULTS), str(path), "test")
    g = groups(path)
    lines = [gid for gid in g if gid.startswith("sweep-")]
    assert len(lines) == 2  # "delete one: preStop sleep 2" at two lags, and the rollout
    text = path.read_text()
    assert "delete one: preStop sleep 2, delay 0s" in text and "rollout: preStop none, delay 0s" in text


def marker_positions(group: ET.Element) -> list[tuple[float, float]]:
    return [(float(u.get("x")), float(u.get("y"))) for u in group.iter(f"{SVG}use")]


def test_sweep_lines_that_coincide_stay_visible_side_by_side(tmp_path):
    # three choices that all lose nothing at the same three lags: one would hide the others
    points = [(choice, lag, 0.0, 0, 10) for choice in ("a", "b", "c") for lag in (1.0, 2.5, 4.0)]
    path = tmp_path / "sweep.svg"
    draw_sweep(points, str(path), "coinciding")
    g = groups(path)
    series = [marker_positions(g[f"sweep-{n}"]) for n in range(3)]
    assert all(len(s) == 3 for s in series)
    for i in range(3):  # at each lag: the same height, three different places
        xs = [s[i][0] for s in series]
        ys = [s[i][1] for s in series]
        assert len(set(ys)) == 1 and len(set(xs)) == 3
        assert min(b - a for a, b in zip(sorted(xs), sorted(xs)[1:])) > 3  # points apart, not a pixel
    assert "lines nudged sideways" in path.read_text()


def visible_pixels_per_line(points) -> tuple[list[int], list[float]]:
    """Pixels of each sweep line's colour inside the plot, and the legend's text heights."""
    fig = sweep_figure(points, "coinciding")
    img, canvas = rendered(fig)
    ax = fig.axes[0]
    box = ax.get_window_extent()
    inside = (box.x0 + 3, box.x1 - 3, box.y0 + 3, box.y1 - 3)  # the plot, not its frame or legend
    return [colour_pixels(img, line.get_color(), *inside) for line in ax.get_lines()], legend_text_heights(fig, canvas)


def test_rendered_sweep_shows_every_line_even_where_they_coincide(monkeypatch):
    points = [(choice, lag, 0.0, 0, 10) for choice in ("a", "b", "c") for lag in (1.0, 2.5, 4.0)]
    seen, legend = visible_pixels_per_line(points)
    assert len(seen) == 3 and min(seen) >= 100, seen
    assert min(legend) >= 14
    # the check can fail: without the nudge, the lines drawn later cover the first one
    monkeypatch.setattr(pictures, "SWEEP_NUDGE", 0.0)
    hidden, _ = visible_pixels_per_line(points)
    assert hidden[0] < 20 and hidden[2] >= 100, hidden

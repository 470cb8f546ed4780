"""Rich views of a demo run: the live panel, the signal timeline and the answers per phase (no Go twin)."""

from __future__ import annotations

import os
import textwrap
from typing import Optional

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from genericserver.demo.scenario import PHASES, DemoResult, MetricsView

SIGNAL_NOTES = {
    "ShutdownInitiated": "/readyz turns red; requests still served",
    "AfterShutdownDelayDuration": "the load balancers' window is over",
    "PreShutdownHooksStopped": "every pre-shutdown hook returned",
    "NotAcceptingNewRequest": "wait groups start waiting; new requests rejected",
    "HTTPServerStoppedListening": "the listener is closed: new connections refused",
    "InFlightRequestsDrained": "every tracked request answered; audit flushed next",
}
OUTCOME_STYLE = {"200": "green", "429": "yellow", "503": "magenta", "500": "red", "refused": "bold red", "reset": "red"}


def live_panel(lines: list[tuple[float, str]], mode: str, result: Optional[DemoResult] = None) -> Panel:
    body = Text()
    for at, what in lines[-14:]:
        body.append(f"T{at:+7.3f}s  ", style="dim")
        body.append(what + "\n", style="bold" if what in SIGNAL_NOTES else "")
    if result is not None:
        tally: dict[str, int] = {}
        for a in list(result.answers):
            tally[a.outcome] = tally.get(a.outcome, 0) + 1
        body.append("\nanswers so far: ", style="dim")
        for outcome, n in sorted(tally.items()):
            body.append(f"{outcome} x{n}  ", style=OUTCOME_STYLE.get(outcome, ""))
        body.append("\n/metrics: ", style="dim")
        body.append(metrics_line(result.metrics))
    return Panel(body, title=f"shutdown in progress: {mode}", border_style="cyan")


class LivePanel:
    """Re-rendered at every refresh of rich's Live, so the tally moves between signals too."""

    def __init__(self, lines: list[tuple[float, str]], mode: str, result: DemoResult):
        self.lines, self.mode, self.result = lines, mode, result

    def __rich__(self) -> Panel:
        return live_panel(self.lines, self.mode, self.result)


def timeline_table(result: DemoResult, mode: str) -> Table:
    t = Table(title=f"Lifecycle signals, {mode} (T0 = run context cancelled)", title_justify="left")
    t.add_column("T+", justify="right", no_wrap=True)
    # a signal's name is what people grep for: never cut it, let the explanation wrap instead
    t.add_column("signal", no_wrap=True, min_width=len("AfterShutdownDelayDuration"))
    t.add_column("what it means", ratio=1)
    for name, at in result.signals:
        t.add_row(f"{at:.3f}s", name, SIGNAL_NOTES.get(name, ""))
    if result.run_returned_at is not None:
        t.add_row(f"{result.run_returned_at:.3f}s", "run_with_context returned", "destroy() ran")
    return t


def answers_table(result: DemoResult, mode: str) -> Table:
    """One row per phase and client, one line per outcome ("200 x8"), the most frequent first. A
    column per outcome would not fit a 60-column projector once five outcomes meet (a race can add
    a 503 or a reset to any run), and rich would then cut a phase's name with an ellipsis."""
    t = Table(title=f"New requests by the phase they were sent in, {mode}", title_justify="left")
    t.add_column("phase", min_width=max(len(w) for p in PHASES for w in p.split()))  # wraps between words only
    t.add_column("client", no_wrap=True)
    t.add_column("answers", no_wrap=True)
    previous = None
    for (phase, client), row in result.counts().items():
        # the most frequent first: a phase reads by what most of its requests got (a race at a
        # phase's edge can add a 503 or two beside the refusals)
        outcomes = sorted(row, key=lambda o: (-row[o], not o.isdigit(), o))
        answers = Text("\n").join(Text(f"{o} x{row[o]}", style=OUTCOME_STYLE.get(o, "")) for o in outcomes)
        t.add_row(phase if phase != previous else "", client, answers, end_section=False)
        previous = phase
    return t


def _n(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:g}"


def metrics_line(m: MetricsView) -> Text:
    """The few metrics the demo follows, as kube-apiserver names them."""
    text = Text()
    text.append(f"current_inflight_requests readOnly={_n(m.inflight_read_only)} mutating={_n(m.inflight_mutating)}  ")
    codes = " ".join(f"{code}={n}" for code, n in sorted(m.readyz_by_code.items())) or "-"
    text.append(f"request_total{{/readyz}} {codes}  ")
    check = _n(m.shutdown_check)
    text.append(f"healthcheck{{shutdown,readyz}}={check}", style="red" if m.shutdown_check == 0 else "green")
    return text


def early_red_readyz(result: DemoResult) -> int:
    """``/readyz`` probes answered 500 before the shutdown began."""
    return sum(1 for a in result.answers if a.path == "/readyz" and a.phase == PHASES[0] and a.outcome == "500")


def summary(result: DemoResult, mode: str) -> Text:
    text = Text()
    early = early_red_readyz(result)
    if early:
        # the room asks: the probe starts with the server, and /readyz is red until the
        # post-start hooks have run, as kube-apiserver's is (its poststarthook checks)
        text.append(f"/readyz 500 before the shutdown (x{early}): probed before the post-start hooks "
                    "had finished; /readyz is red until they have, as kube-apiserver's is\n", style="red")
    if result.slow is not None:
        text.append(f"in-flight /slow (sent at T{result.slow.sent_at:+.2f}s): {result.slow.outcome}\n")
    text.append(f"watch: {result.watch_events} event line(s), ended with status {result.watch_outcome or '?'}\n")
    text.append(f"audited requests (ResponseComplete): {result.audited_complete}\n")
    text.append(f"metrics at the end ({result.metrics.scrapes} scrapes of /metrics while it listened): ")
    text.append(metrics_line(result.metrics))
    text.append("\n")
    return text


def log_text(result: DemoResult, mode: str, width: Optional[int] = None) -> Text:
    """The server's own log at --v=1: Go's [graceful-termination] lines, from genericapiserver.py.
    One line each; with a ``width`` (a terminal's), a longer one wraps between words, the rest
    of it indented (a terminal would cut it mid-word)."""
    body = Text()
    body.append(f"The server's log, {mode} (klog at --v=1, as kube-apiserver prints it):\n", style="italic")
    for line in result.log:
        shown = ["  " + line] if width is None else textwrap.wrap(
            line, width, initial_indent="  ", subsequent_indent="      ", break_long_words=False, break_on_hyphens=False)
        body.append("\n".join(shown) + "\n", style="bold" if "shutdown event" in line else "dim" if "[graceful-termination]" not in line else "")
    return body


def wrap_width(console: Console) -> Optional[int]:
    """The width log lines wrap at: a terminal's, or ``COLUMNS`` when it is set (a projector's 60,
    piped into tee or less, which would cut a long line mid-word); None piped without it: one log
    line is one line, and grep finds it whole."""
    columns = os.environ.get("COLUMNS", "")
    return console.width if console.is_terminal or (columns.isdigit() and int(columns) > 0) else None


def report(console: Console, result: DemoResult, mode: str) -> None:
    console.print(Group(timeline_table(result, mode), answers_table(result, mode), summary(result, mode)))
    console.print(log_text(result, mode, wrap_width(console)), soft_wrap=True)

"""Tests for genericserver.cluster.scenario, .timeline and .cli: whole deletions under load on real sockets.

Three replicas of our server behind kube-proxy, steady load, one pod deleted. Time runs at a
tenth of real time (a 1 s lag is 0.1 s), which keeps each run around a second or two. A loaded
machine sends fewer requests and stretches every step, so the assertions are about causes and
order (which requests were lost, and when they were sent), never about counts or slack.
"""

from __future__ import annotations

import argparse
import io
import re
import sys

import pytest

from rich.console import Console

from docs_output import assert_shows, expected
from genericserver.cluster import cli
from genericserver.cluster.kubectl import DeleteFlags
from genericserver.cluster.scenario import ScenarioConfig, run_scenario
from genericserver.cluster.timeline import collapse, readyz_answers

# three clients, a request every 20 ms each: ten or more inside the shortest window these tests
# judge (0.4 s of a slow kube-proxy); at 5 ms the load alone was most of their CPU time
FAST = dict(scale=0.1, workers=3, interval=0.02, warmup=1.0, tail=1.0)
# the lossless runs: a delay of D s outlasts the lags (1 s + 1 s) by D - 2 s, at a fifth of real
# time; they count every refusal, however late it came (losses.py)


def first(rows, component: str, sub: str) -> float:
    return next(r.at for r in rows if r.component == component and sub in r.text)


def test_a_shutdown_delay_longer_than_the_lags_loses_no_request():
    # a margin of 6 s, at a fifth of real time 1.2 s (at a tenth, two suites at once stalled
    # kube-proxy for longer and a request met a closed listener; with 3 s, the suite beside a
    # second one's load once scraped no probe of web-0 within the delay)
    r = run_scenario(ScenarioConfig(endpoints_lag=1.0, proxy_lag=1.0, shutdown_delay=8.0, **{**FAST, "scale": 0.2}))
    rows = r.rows
    sigterm = first(rows, "pod", "web-0: ShutdownInitiated")
    assert any(r.rel(s.at) > sigterm for s in r.samples)  # requests were sent while web-0 shut down
    assert r.lost == 0, r.outcome.as_dict()
    # the proxies stopped routing to web-0 before it stopped accepting connections
    assert first(rows, "kube-proxy", "not to web-0") < first(rows, "pod", "web-0: NotAcceptingNewRequest")
    assert first(rows, "kubectl", "delete pod web-0") <= sigterm
    assert first(rows, "store", "pod web-0 deleted") > 8.0
    # the replica's own /metrics, scraped as Prometheus would: the kubelet's readiness probes
    # met a red /readyz during the delay; the replicas that stayed up never did
    assert readyz_answers(r, "web-0").get("500", 0) > 0
    assert readyz_answers(r, "web-1").get("200", 0) > 0


def test_controller_threads_stalled_by_the_host_lose_no_request_the_model_would_not(monkeypatch):
    # two suites on two cores once stalled kube-proxy's goroutines past the 3 s margin and the
    # lossless run lost requests: here both controllers' goroutines wake 4 cluster seconds late
    # once the load runs, and the load client, which brings them up to their lags before it
    # dials (World.dial), still loses nothing (without that catch-up this run lost 444 requests)
    from genericserver.cluster.store import Watch
    from genericserver.cluster.workqueue import DelayingQueue

    def stalled(method, clock_of):
        def wait(self) -> bool:
            woke = method(self)
            clock = clock_of(self)
            if clock.now() > FAST["warmup"]:
                clock.sleep(4.0)
            return woke
        return wait

    monkeypatch.setattr(Watch, "wait_pending", stalled(Watch.wait_pending, lambda w: w._store.clock))
    monkeypatch.setattr(DelayingQueue, "wait_due", stalled(DelayingQueue.wait_due, lambda q: q.clock))
    r = run_scenario(ScenarioConfig(endpoints_lag=1.0, proxy_lag=1.0, shutdown_delay=5.0, **{**FAST, "scale": 0.2}))
    assert r.lost == 0, r.outcome.as_dict()
    assert first(r.rows, "kube-proxy", "not to web-0") < first(r.rows, "pod", "web-0: NotAcceptingNewRequest")


# kube-proxy's lag here, in cluster seconds: at FAST's scale a second of real time in which requests
# routed to the stopped pod are refused. With 3 s (0.3 s real), two suites at once once starved the
# load clients through the whole window: 40 requests in the run, none refused.
SLOW_PROXY_LAG = 10.0


def test_no_shutdown_delay_and_a_slow_proxy_loses_requests_until_the_proxy_catches_up():
    r = run_scenario(ScenarioConfig(endpoints_lag=1.0, proxy_lag=SLOW_PROXY_LAG, shutdown_delay=0.0, **FAST))
    assert r.counts["refused"] > 0, r.counts
    # how many and why: every request lost was aimed at web-0. The refusals are the connections
    # kube-proxy still routed to it after its listener closed (the times below); anything else
    # (a 503, a reset) was in flight at web-0 as it stopped accepting: at most one per client
    lost = [s for s in r.samples if s.outcome != "ok"]
    assert {s.pod for s in lost} == {"web-0"}, r.outcome.as_dict()
    assert r.outcome.by_cause["closed-but-routed"] == r.counts["refused"] == len([s for s in lost if s.outcome == "refused"])
    assert len(lost) - r.counts["refused"] <= FAST["workers"], r.outcome.as_dict()
    rows = r.rows
    refused = [x for x in rows if x.component == "client" and "refused" in x.text]
    assert "pods: web-0)" in refused[0].text  # every refused connection was aimed at the deleted pod
    stopped = first(rows, "pod", "web-0: NotAcceptingNewRequest")
    # web-0 leaves the ready set in the first slice change that has it terminating: usually it is
    # gone by then ("removed from the slice"); on a loaded machine (a fresh clone's first run) its
    # server took longer to exit and the slice first kept it as "leaves the ready endpoints"
    left = min(x.at for x in rows if x.component == "endpoints"
               and ("web-0 removed from the slice" in x.text or "web-0 leaves the ready endpoints" in x.text))
    synced = first(rows, "kube-proxy", "new connections go to web-1, web-2")
    assert stopped < refused[0].at
    # a request is refused only if it dialled before kube-proxy caught up, so it was sent before
    assert all(r.rel(s.at) <= synced for s in r.samples if s.outcome == "refused")
    # kube-proxy routes away from web-0 only after the slice took it out of the ready set, and its
    # lag runs from the first slice change it had not synced yet. Usually that is web-0's
    # leaving; on a loaded machine a readiness probe that timed out may have changed the slice
    # before it, and a queued key keeps its earlier due time (workqueue.DelayingQueue), so the
    # sync comes sooner after the leaving but still a whole lag after that first change.
    assert left <= synced
    changes = [r.rel(e.at) for e in r.events if e.kind == "endpoints"]
    syncs = [r.rel(e.at) for e in r.events if e.kind == "kube-proxy" and "rules synced" in e.name]
    last_sync = max(at for at in syncs if at < left)
    first_unsynced = min(at for at in changes if at > last_sync)
    assert synced - first_unsynced >= SLOW_PROXY_LAG - 0.05


def test_a_pod_killed_at_the_end_of_a_short_grace_prints_nothing_after_its_kill():
    # kubectl delete --grace-period=2 of a pod whose server waits 3 s: SIGKILL at 2 s; the
    # abandoned run's goroutines reach the end of the delay at 3 s, inside the timeline (which
    # runs until the slice and kube-proxy forgot web-0, and a tail), but a killed process is silent
    r = run_scenario(ScenarioConfig(shutdown_delay=3.0, delete_flags=DeleteFlags(grace_period=2), **{**FAST, "workers": 1}))
    texts = [(x.component, x.text) for x in r.rows]
    exited = texts.index(("container", "web-0/app: exited with code 137"))
    kill = texts.index(("container", "web-0/app: SIGKILL"))
    initiated = texts.index(("pod", "web-0: ShutdownInitiated"))
    assert initiated < kill < exited, texts
    assert [t for t in texts[kill:] if t[0] == "pod" and t[1].startswith("web-0:")] == [], texts
    assert any(r.rel(e.at) > 3.0 for e in r.events), "the timeline ended before the delay would have"


def test_the_timeline_merges_polling_lines():
    from genericserver.cluster.scenario import Row

    rows = [Row(0.0, "shutdown-manager", "file /ok does not exist"), Row(0.5, "kubelet", "x"),
            Row(1.0, "shutdown-manager", "file /ok does not exist")]
    assert [(r.text, n, last) for r, n, last in collapse(rows)] == [("file /ok does not exist", 2, 1.0), ("x", 1, 0.5)]


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="genericserver")
    cli.add_parser(p.add_subparsers(dest="command"))
    return p.parse_args(["cluster", *argv])


def test_cli_prints_the_timeline_and_the_results():
    out = io.StringIO()
    # the preStop sleep outlasts the lags by 7 s, 0.35 s of real time: a request dialled to web-0
    # just before kube-proxy caught up is answered before web-0 stops accepting, even on a
    # loaded machine (a 2 s margin, 0.1 s real, once lost one)
    args = parse("--replicas", "2", "--time-scale", "0.05", "--pre-stop", "sleep", "--pre-stop-sleep", "8",
                 "--workers", "2", "--proxy-lag", "0.5", "--endpoints-lag", "0.5")
    assert cli.run(args, Console(file=out, width=140)) == 0
    text = out.getvalue()
    for needle in ("kubectl delete pod web-0", "Running preStop hook (sleep 8)", "web-0: ShutdownInitiated",
                   "What the client saw", "No request lost.", "Each replica's own /metrics"):
        assert needle in text, needle
    # the grace left after an 8 s preStop of a 30 s grace period (less if the machine is slow)
    assert re.search(r"StopContainer with (1\d|2[0-2])s grace: SIGTERM", text), text


def test_the_workshop_shows_what_the_default_run_prints_at_60_columns():
    # docs/workshop.md's 1:30 step: `genericserver cluster` with no flags, at 0.3 of real time
    # (at a tenth, two suites at once stalled web-0's shutdown for a tenth of a second: the pod was
    # still terminating at the endpoints controller's sync, and left the slice after kube-proxy's)
    # and a request every 20 ms per client, which is plenty for the refusals it shows
    out = io.StringIO()
    assert cli.run(parse("--time-scale", "0.3", "--interval", "0.02"), Console(file=out, width=60)) == 0
    assert_shows(expected("workshop-cluster"), out.getvalue())
    assert_shows(expected("walkthrough-cluster"), out.getvalue())  # the same run, as walkthrough.md 6.5 shows it
    assert "…" not in out.getvalue()  # no header or name cut to fit (the client table's "refus…")


def test_cli_rejects_kubectls_flag_conflicts(capsys):
    assert cli.run(parse("--now", "--grace-period", "5"), Console(file=io.StringIO())) == 1
    assert capsys.readouterr().err == "error: --now and --grace-period cannot be specified together\n"


def test_cli_rejects_a_negative_load(capsys):
    assert cli.run(parse("--workers", "-1"), Console(file=io.StringIO())) == 1
    assert capsys.readouterr().err == "error: --workers and --interval must be 0 or more\n"
    assert cli.run(parse("--interval", "-0.1"), Console(file=io.StringIO())) == 1
    assert capsys.readouterr().err == "error: --workers and --interval must be 0 or more\n"


@pytest.mark.parametrize("argv", [["--serve-api", "--kubeconfig"], ["--svg"]], ids=["kubeconfig", "svg"])
def test_cli_refuses_a_file_it_could_not_write_before_the_run(argv, capsys, tmp_path):
    # a folder given as --kubeconfig was found only once the API server answered (a goroutine's
    # panic, the cluster running on), and as --svg after the run (a traceback)
    flag = argv[-1]
    assert cli.run(parse(*argv, str(tmp_path)), Console(file=io.StringIO())) == 2
    assert capsys.readouterr().err == f"error: {flag} {tmp_path}: is a folder, not a file\n"
    missing = tmp_path / "no-such-folder" / "file"
    assert cli.run(parse(*argv, str(missing)), Console(file=io.StringIO())) == 2
    assert capsys.readouterr().err == f"error: {flag} {missing}: its folder {missing.parent} does not exist\n"


def test_cli_without_matplotlib_refuses_svg_before_the_run(capsys, tmp_path, monkeypatch):
    # whether it is installed is asked, not imported (half a CPU-second): a None in sys.modules
    # is how Python marks a module that cannot be imported
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert cli.run(parse("--svg", str(tmp_path / "x.svg")), Console(file=io.StringIO())) == 1
    assert capsys.readouterr().err == "error: --svg needs matplotlib: pip install 'genericserver[plot]'\n"
    assert not (tmp_path / "x.svg").exists()


@pytest.mark.parametrize("flag, value, words", [
    ("--endpoints-lag", "-1", "must be 0 or more"), ("--proxy-lag", "-0.5", "must be 0 or more"),
    ("--pre-stop-sleep", "-1", "must be 0 or more"), ("--termination-grace-period", "-1", "must be 0 or more"),
    ("--shutdown-delay", "-1", "must be 0 or more"), ("--probe-period", "-1", "must be 0 or more"),
    ("--drain-delay", "-1", "must be 0 or more"), ("--check-delay", "-2", "must be 0 or more"),
    ("--check-interval", "0", "must be more than 0"), ("--min-open-connections", "-1", "must be 0 or more"),
])
def test_cli_refuses_a_value_below_what_the_flag_can_mean(flag, value, words, capsys):
    # each was taken: a negative lag or grace ran a cluster no controller or kubelet could be
    with pytest.raises(SystemExit) as exit_:
        parse(flag, value)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"genericserver cluster: error: argument {flag}: invalid value '{value}': {words}"
    edge = "0.5" if "more than" in words else "0"  # the least value taken
    assert float(getattr(parse(flag, edge), flag[2:].replace("-", "_"))) == float(edge)


@pytest.mark.parametrize("value, words", [("0", "must be 1 or more"),
                                          ("254", "must be 253 or less (a node's address is 192.168.49.N+1)")])
def test_cli_refuses_a_node_count_the_addresses_cannot_hold(value, words, capsys):
    # 300 was taken: node-300 was given 192.168.49.301 and the pod range 10.244.299.0/24
    with pytest.raises(SystemExit) as exit_:
        parse("--serve-api", "--nodes", value)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"genericserver cluster: error: argument --nodes: invalid value '{value}': {words}"
    assert parse("--serve-api", "--nodes", "253").nodes == 253


def test_cli_refuses_nodes_without_the_served_api(capsys):
    assert cli.run(parse("--nodes", "2"), Console(file=io.StringIO())) == 2
    assert capsys.readouterr().err == "error: --nodes needs --serve-api: the printed runs have one node\n"


def test_cli_with_no_load_runs_the_cluster_alone():
    out = io.StringIO()
    args = parse("--replicas", "1", "--time-scale", "0.02", "--workers", "0", "--probe-period", "0")
    assert cli.run(args, Console(file=out, width=140)) == 0
    text = out.getvalue()
    assert "web-0: ShutdownInitiated" in text
    assert "No load client ran (--workers 0): nothing was sent, so nothing could be lost." in text
    assert "What the client saw" not in text and "No request lost." not in text


def test_cli_flags_map_onto_the_config():
    assert cli.config_from_args(parse("--interval", "0.02")).interval == 0.02
    # the load client pauses in runtime seconds (real ones, outside the simulation), as --help says:
    # it said cluster seconds, which --time-scale would have shrunk
    cfg = cli.config_from_args(parse("--interval", "0.02", "--time-scale", "0.1"))
    assert (cfg.interval, cfg.scale) == (0.02, 0.1)
    cfg = cli.config_from_args(parse("--pre-stop", "contour", "--drain-delay", "4", "--termination-grace-period", "60",
                                     "--force", "--grace-period", "0", "--sweep"))
    assert (cfg.pre_stop, cfg.drain_delay, cfg.grace_period, cfg.scale) == ("contour", 4.0, 60, 0.2)
    assert (cfg.delete_flags.force, cfg.delete_flags.grace_period) == (True, 0)


def test_help_says_which_shutdown_delay_is_the_pods_and_which_the_served_api_servers(capsys):
    # --shutdown-delay (each replica's) stood beside --shutdown-delay-duration (the API server
    # --serve-api runs) with nothing to tell them apart; both still work
    from genericserver.cmd import ServeOptions

    p = argparse.ArgumentParser(prog="genericserver")
    cli.add_parser(p.add_subparsers(dest="command"), ServeOptions())
    with pytest.raises(SystemExit):
        p.parse_args(["cluster", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--shutdown-delay S each pod's server's ShutdownDelayDuration, in cluster seconds (default 0); " \
           "not --shutdown-delay-duration, which is the --serve-api API server's own" in out, out
    generic = out.index("Generic flags of the API server --serve-api runs (not the pods'):")
    assert generic < out.index("--shutdown-delay-duration duration How long", generic)
    args = p.parse_args(["cluster", "--shutdown-delay", "3", "--shutdown-delay-duration", "5s"])
    assert cli.config_from_args(args).shutdown_delay == 3.0 and args.shutdown_delay_duration == 5.0


@pytest.mark.parametrize("columns, width", [("60", 60), ("", 120), ("wide", 120)])
def test_piped_output_honours_columns(monkeypatch, columns, width):
    # issue 27: a projector's COLUMNS=60 with the output piped (into tee, less) was ignored
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    monkeypatch.setenv("COLUMNS", columns)
    assert cli.default_console().width == width


def test_help_speaks_of_contour_not_of_a_seed(capsys):
    with pytest.raises(SystemExit):
        parse("--help")
    out = " ".join(capsys.readouterr().out.split())
    assert "seed" not in out
    assert "pause between requests, in real seconds: --time-scale leaves it alone" in out

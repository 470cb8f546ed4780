"""The fair anchor (``bench/bench_anchor.py``) without Go or the reference programs (no Go twin).

``make bench`` must not fail where ``make reference`` was never run: the anchor then says so and
starts nothing. What it prints is a ratio of two rates, ours over theirs, so the table is checked
on numbers whose ratios are known.
"""

from __future__ import annotations

import pytest

from bench import bench_anchor


@pytest.fixture
def nothing_starts(monkeypatch):
    """Fail the test if the anchor starts a server or builds its load client."""

    def refuse(*args, **kwargs):
        raise AssertionError("the anchor started something without the reference programs")

    monkeypatch.setattr(bench_anchor, "start_servers", refuse)
    monkeypatch.setattr(bench_anchor.versus_go, "build", refuse)


def test_without_the_reference_binaries_the_anchor_says_make_reference_and_starts_nothing(
        monkeypatch, tmp_path, capsys, nothing_starts):
    monkeypatch.setattr(bench_anchor.pair, "BIN", tmp_path)  # an empty .reference-bin/
    bench_anchor.main()
    out = capsys.readouterr().out
    assert "kube-apiserver: skipped, kube-apiserver, etcd not in" in out
    assert "genericserver-go: skipped, genericserver-go not in" in out
    assert out.count("run `make reference`") == 3


def test_a_reference_program_is_measured_only_with_every_binary_it_needs(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(bench_anchor.pair, "BIN", tmp_path)
    (tmp_path / "kube-apiserver").touch()  # but no etcd
    (tmp_path / "genericserver-go").touch()
    assert bench_anchor.reference_programs() == {"genericserver-go": bench_anchor.pair.GenericServerGo}
    assert "kube-apiserver: skipped, etcd not in" in capsys.readouterr().out


def test_the_table_prints_each_rate_and_ours_over_theirs(monkeypatch, capsys):
    monkeypatch.setattr(bench_anchor, "SETTINGS", (("HTTP/1.1", 4),))
    setting = ("HTTP/1.1", 4)
    measured = {
        ("/version", setting, "genericserver"): 1000.0,
        ("/version", setting, "kube-apiserver"): 4000.0,
        ("/version", setting, "genericserver-go"): 2000.0,
        ("configmap GET", setting, "genericserver"): 3000.0,
        ("configmap GET", setting, "kube-apiserver"): 1500.0,
        # no CPU time measured (a clock tick is 10 ms): no number, and no ratio with it
        ("configmap GET ?resourceVersion=0", setting, "genericserver"): float("nan"),
        ("configmap GET ?resourceVersion=0", setting, "kube-apiserver"): 800.0,
    }
    bench_anchor.report(measured, ["genericserver", "kube-apiserver", "genericserver-go"], "req/CPU-s")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["HTTP/1.1,", "4", "connections,", "req/CPU-s", "genericserver", "kube-apiserver",
                                "genericserver-go", "ours/kube", "ours/generic-go"]
    rows = {line[:46].strip(): line[46:].split() for line in lines[1:]}
    assert rows["/version"] == ["1000", "4000", "2000", "0.25x", "0.50x"]
    assert rows["configmap GET"] == ["3000", "1500", "-", "2.00x", "-"]
    assert rows["configmap GET ?resourceVersion=0"] == ["-", "800", "-", "-", "-"]


def test_a_thread_s_waits_are_counted_as_its_voluntary_switches():
    import os
    import threading
    import time

    waited, counted = threading.Event(), threading.Event()

    def wait_five_times():
        for _ in range(5):
            time.sleep(0.001)  # each one blocks the thread: a voluntary switch, which is what is counted
        waited.set()
        counted.wait()  # alive until it was looked at: an ended thread is missing from /proc

    before = bench_anchor.thread_switches(os.getpid())
    thread = threading.Thread(target=wait_five_times)
    thread.start()
    waited.wait()
    during = bench_anchor.thread_switches(os.getpid())
    counted.set()
    thread.join()
    tid = str(thread.native_id)
    assert tid not in before and during[tid][0] >= 5
    voluntary, _ = bench_anchor.switches_between(before, during)
    assert voluntary >= 5


def test_switches_count_a_new_thread_from_zero_and_leave_out_one_that_ended():
    before = {"1": (10, 2), "2": (7, 7)}  # thread 2 ends before the second look
    after = {"1": (14, 3), "3": (5, 1)}  # thread 3 starts after the first
    assert bench_anchor.switches_between(before, after) == (4 + 5, 1 + 1)


def test_the_switch_table_prints_waits_and_preemptions_of_each_server(capsys):
    measured = {("HTTP/1.1", 4): {"genericserver": (4.24, 1.06), "kube-apiserver": (0.4, 0.6)}}
    bench_anchor.report_switches(measured, ["genericserver", "kube-apiserver", "genericserver-go"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-3:] == ["genericserver", "kube-apiserver", "genericserver-go"]
    assert lines[1].split() == ["HTTP/1.1,", "4", "connections", "4.2", "+", "1.1", "0.4", "+", "0.6", "-"]

"""The in-process benchmarks drive the server as serving a connection does (no Go twin).

``make bench`` is not part of ``make test``, so a change to how the server sets a connection
up can break a benchmark unnoticed: ``bench_httpserver``'s whole-path measurement once called
``_serve_one`` on a connection ``prepare_conn`` had not prepared, and died of it.
"""

from __future__ import annotations

from bench import bench_httpserver
from bench.fakes import FakeSocket


class CountingSocket(FakeSocket):
    answers = 0

    def sendall(self, data: bytes) -> None:
        CountingSocket.answers += data.count(b"HTTP/1.1 200 OK\r\n")


def test_the_whole_path_benchmark_answers_every_pipelined_request(monkeypatch):
    monkeypatch.setattr(bench_httpserver, "PIPELINED", 20)
    monkeypatch.setattr(bench_httpserver, "FakeSocket", CountingSocket)
    assert bench_httpserver._whole_path() > 0
    assert CountingSocket.answers == 20


def test_the_hops_benchmark_says_when_h2load_is_missing_and_reads_its_counts_and_klog_times(monkeypatch, capsys, tmp_path):
    from bench import bench_hops

    monkeypatch.setattr(bench_hops.shutil, "which", lambda name: None)
    bench_hops.report_h2load(tmp_path)  # no server started, no failure
    assert capsys.readouterr().out.strip() == (
        "HTTP/2, 20 x 10 streams (h2load): skipped, h2load is not installed (Debian: apt-get install nghttp2-client)")
    out = "finished in 6.00s, 812.33 req/s, 40.12KB/s\nstatus codes: 4800 2xx, 0 3xx, 2 4xx, 17 5xx\n"
    assert bench_hops.h2load_status_codes(out) == [4800, 0, 2, 17]
    gap = (bench_hops.klog_time('I1129 07:30:27.150970   27776 genericapiserver.py:346] x')
           - bench_hops.klog_time('I1129 07:30:27.140000   27776 genericapiserver.py:346] y'))
    assert abs(gap - 0.01097) < 1e-9


def test_the_hops_benchmark_reads_the_load_clients_goaway_times_on_klogs_clock_and_judges_the_worst_run(capsys):
    import datetime

    from bench import bench_hops

    # goload prints Unix microseconds; klog prints the local time of day
    at = datetime.datetime(2026, 11, 29, 7, 30, 27, 150970)
    unix_us = int(at.timestamp()) * 1_000_000 + at.microsecond
    assert bench_hops.time_of_day(unix_us) == bench_hops.klog_time('I1129 07:30:27.150970   27776 server.py:1] x')
    bench_hops._row("HTTP/2 (goload)", [3.0, 4.0, 60.0], "503s ...", [10.0, 20.0, 30.0])
    bench_hops._row("HTTP/2 (goload)", [3.0, 4.0, 5.0], "503s ...", [10.0, 20.0, 55.0])
    bench_hops._row("HTTP/1.1 (goload)", [3.0, 4.0, 5.0], "503s ...")
    verdicts = [line.split("gap median", 1)[1].split() for line in capsys.readouterr().out.splitlines()]
    # a median under the target is not enough: the worst run, gap or last GOAWAY, must be
    assert [" ".join(v) for v in verdicts] == [
        "4.0 ms (max 60.0; last GOAWAY median 20.0 ms (max 30.0), OVER the target); 503s ...",
        "4.0 ms (max 5.0; last GOAWAY median 20.0 ms (max 55.0), OVER the target); 503s ...",
        "4.0 ms (max 5.0, within the target); 503s ..."]

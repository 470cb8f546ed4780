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

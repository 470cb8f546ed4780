"""Instructions a request costs the server, counted by valgrind: a measure this VM cannot blur (no Go twin).

Timings on the development VM swing by 10-20% from one run to the next, more than the changes
they are meant to show. An instruction count does not: the server path is run in process, over
a fake socket and from a goroutine, under ``valgrind --tool=callgrind`` with a fixed hash seed
(string hashing would otherwise change dict and set layouts, and the count, from run to run),
once with ``LOW`` and once with ``HIGH`` requests; the difference divided by ``HIGH - LOW`` is
what one request executes in user space (system calls and waiting are not counted; they are the
same before and after the changes this measures). Two cases: a bare app, and the default
handler chain around it (its timeout filter hands each request to a goroutine and back).

Runs agree to within 0.2%, but now and then one counts several million instructions more (only
ever more; its cause was not found), so each count is the lesser of ``REPEATS`` runs.

Run: ``make instructions`` (about two minutes; needs valgrind). ``BEFORE_HTTP1_PORT`` holds the
counts at ``fdee8f6``, before the HTTP/1 port (issue 11), measured with this file and
``bench/fakes.py`` copied there. ``BUDGET`` is the bound faithfulness may not cross: the default
chain's count when the port's faithfulness work began (issue 24), so Go's checks are paid for by
cuts elsewhere, not by a slower request.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

LOW, HIGH = 200, 700
REPEATS = 2
BEFORE_HTTP1_PORT = {"bare app": 192_100, "default chain": 514_000}
BUDGET = {"default chain": 575_000}
CASES = {"bare app": "bare", "default chain": "chain"}


def serve_requests(case: str, n: int) -> None:
    """In this process: warm up, then serve ``n`` pipelined requests with ``case``'s app."""
    import gc
    import logging

    from genericserver import runtime as rt
    from genericserver.net.http import server as httpserver

    from bench.fakes import REQUEST, FakeSocket, app

    logging.getLogger("genericserver").setLevel(logging.ERROR)
    handler = app
    if case == "chain":
        from bench import bench_chain

        handler = bench_chain.default_chain()
    server = httpserver.Server(handler)
    c = httpserver.Conn(1, FakeSocket(REQUEST * (n + 101)), ("127.0.0.1", 50000))
    server.prepare_conn(c)  # what serving a connection sets up before its first request
    # (before the port, _serve_one also waited for the next request)
    wait_for_next = getattr(server, "_wait_for_next_request", lambda c: True)

    def serve_some(count: int) -> None:
        for _ in range(count):
            if not (server._serve_one(c) and wait_for_next(c)):
                raise RuntimeError("the connection ended early")

    def serve() -> None:
        serve_some(100)
        # the heap as it stands after start-up and warm-up is left out of later collections: a
        # full collection of it (~50M instructions) in one run and not the other would swamp
        # the difference; what the requests themselves leave to collect is still counted
        gc.collect()
        gc.freeze()
        serve_some(n)

    done = rt.event("bench-instructions-done")
    rt.go(lambda: (serve(), done.set()), name="bench-instructions")
    done.wait()


def _count(case: str, n: int) -> int:
    """Instructions of a whole process that serves ``n`` requests (callgrind's total)."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-m", "bench.instructions",
         "--serve", case, str(n)],
        capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},  # same dict and set layouts every run
    )
    m = re.search(r"Collected : (\d+)", out.stderr)
    if m is None:
        raise RuntimeError(f"no instruction count from valgrind:\n{out.stderr[-2000:]}")
    return int(m.group(1))


def main() -> None:
    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not installed here; nothing measured")
        return
    print(f"instructions a request, in process (callgrind, {HIGH} against {LOW} requests):")
    for name, case in CASES.items():
        # an occasional run counts millions more (only ever more): the lesser of two is kept
        high, low = (min(_count(case, n) for _ in range(REPEATS)) for n in (HIGH, LOW))
        per_request = (high - low) // (HIGH - LOW)
        before = BEFORE_HTTP1_PORT[name]
        print(f"  {name:16s} {per_request / 1000:7.1f}k   before the HTTP/1 port {before / 1000:5.0f}k"
              f"   ({per_request / before:.2f}x)")
        if name in BUDGET:
            verdict = "met" if per_request <= BUDGET[name] else "MISSED"
            print(f"  budget: {name} <= {BUDGET[name] / 1000:.0f}k instructions a request: {verdict}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve_requests(sys.argv[2], int(sys.argv[3]))
    else:
        main()

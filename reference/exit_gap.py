"""Measures kube-apiserver's time from InFlightRequestsDrained to "apiserver is exiting", and shows
where it goes (no Go twin: a measurement, walkthrough.md 10.5).

`python reference/exit_gap.py [RUNS]` starts kube-apiserver v1.36.0 (what `make reference` built,
through reference/pair.py) with `--v=1` and `GODEBUG=http2debug=1`, lets it serve two seconds,
sends SIGTERM, and prints per run the gap and the lines that explain it: the HTTP/2 GOAWAY its
own loopback client receives ("Transport received GOAWAY", logged in the same process), the
server's "GOAWAY close timer fired; closing conn from ..." one second later, and the exit line.
Standard library only; loopback only.
"""

from __future__ import annotations

import datetime
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pair  # noqa: E402

KLOG_TIME = re.compile(r"^[IWE]\d{4} (\d\d:\d\d:\d\d\.\d{6})")
SHOWN = ("InFlightRequestsDrained", "Transport received GOAWAY", "GOAWAY close timer fired", "readFrame error",
         "apiserver is exiting")


def at(line: str) -> datetime.datetime:
    return datetime.datetime.strptime(KLOG_TIME.match(line).group(1), "%H:%M:%S.%f")


def one_run() -> None:
    os.environ["GODEBUG"] = "http2debug=1"
    with pair.KubeAPIServer("--v=1") as kube:
        time.sleep(2)
        kube.signal(signal.SIGTERM)
        kube.wait(90)
        lines = [line for line in kube.lines if any(s in line for s in SHOWN)]
    drained = next(line for line in lines if "InFlightRequestsDrained" in line)
    exiting = next(line for line in lines if "apiserver is exiting" in line)
    print(f"InFlightRequestsDrained -> apiserver is exiting: {(at(exiting) - at(drained)).total_seconds():.3f} s")
    for line in lines:
        print("  " + line[:160])


def main(argv: list[str]) -> int:
    for _ in range(int(argv[0]) if argv else 1):
        one_run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

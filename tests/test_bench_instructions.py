"""What ``make instructions`` measures over the wire is what it says: requests answered 200 (no Go twin).

The counts themselves need valgrind and minutes (``make instructions``); these check, without it,
that each wire case's client gets its answers from our server and that the h2 library's share is
made of whole answers, so that a count is never of a failing exchange.
"""

from __future__ import annotations

import subprocess
import sys

import h2.events
import pytest

from bench import h2frames


@pytest.mark.parametrize("case", ["h2", "h1x4"])
def test_a_wire_case_serves_its_requests_and_counts_switches(case):
    # the client raises on anything but a 200 with its body, or a GOAWAY
    out = subprocess.run([sys.executable, "-m", "bench.instructions", "--wire-switches", case, "40"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    voluntary, involuntary = (float(x) for x in out.stdout.split())
    assert voluntary >= 0 and involuntary >= 0


def test_the_h2_library_share_answers_every_request_whole():
    client, sent = h2frames.serve(12)
    events = client.receive_data(sent)
    ended = [e.stream_id for e in events if isinstance(e, h2.events.StreamEnded)]
    statuses = [dict(e.headers)[b":status"] for e in events if isinstance(e, h2.events.ResponseReceived)]
    assert ended == list(range(1, 24, 2))
    assert statuses == [b"200"] * 12

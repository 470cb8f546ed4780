"""What the two shutdown corpora share (tests/parity/README.md): the steps both recorders read the
same way, and, for the replays, the ``Shutdown`` call that every time is measured from, the steps
both replays take alike, and how a replay's answer is judged against Go's."""

from __future__ import annotations

import threading
from typing import Optional

from genericserver import runtime as rt
from genericserver.context import context as gocontext
from genericserver.net.dial import join_host_port


WAIT = 10.0  # seconds a replay waits for what the recording says happens


def started(tag: str) -> dict:
    return {"op": "started", "tag": tag}


def sleep(ms: int) -> dict:
    return {"op": "sleep", "ms": ms}


def shutdown(timeout_ms: int) -> dict:
    return {"op": "shutdown", "timeout_ms": timeout_ms}


def shutdown_returned() -> dict:
    return {"op": "shutdown_returned"}


class ConnStates:
    """A replay's ``conn_state_hook`` (Go's ``ConnState``): each connection's state by the client's
    address, and waits for a state or for any condition to hold after a change."""

    def __init__(self):
        self.by: dict[str, str] = {}
        self._changed = threading.Condition()

    def set(self, conn, state: str) -> None:
        with self._changed:
            self.by[conn.remote_addr] = state
            self._changed.notify_all()

    def wait(self, client: tuple, want: str) -> bool:
        """Until the connection from ``client`` (its socket name) is in state ``want``."""
        addr = join_host_port(*client[:2])
        return self.wait_for(lambda: self.by.get(addr) == want)

    def wait_for(self, condition) -> bool:
        """Until ``condition()`` holds, checked at each change (within WAIT)."""
        with self._changed:
            return self._changed.wait_for(condition, WAIT)


class ShutdownCall:
    """A replay's ``Shutdown``: ``start`` calls it in a goroutine with its deadline, ``since()``
    is milliseconds after that call (0 before it), ``result`` what it returned as the recorders
    write it, ``returned`` set when it did."""

    def __init__(self):
        self.t0: Optional[float] = None
        self.result: Optional[dict] = None
        self.returned = rt.event("test-shutdown-returned")
        self._pace = threading.Event()  # never set: its timed wait is a scenario's sleep step
        # ms by which the sleep steps since the Shutdown call overran: a loaded machine's, which
        # Go's recorder did not have (a replay may time what it sent later from when it meant to)
        self.overslept = 0.0

    def since(self) -> float:
        return round((rt.now() - self.t0) * 1000, 3) if self.t0 is not None else 0

    def start(self, srv, timeout_ms: int) -> None:
        self.t0 = rt.now()
        rt.go(self._call, srv, timeout_ms, name="test-shutdown")

    def step(self, step: dict, srv) -> None:
        """The steps both corpora share: ``sleep``, ``shutdown`` and ``shutdown_returned``."""
        op = step["op"]
        if op == "sleep":
            began = rt.now()
            self._pace.wait(step["ms"] / 1000)
            if self.t0 is not None:
                self.overslept += max(0.0, (rt.now() - began) * 1000 - step["ms"])
        elif op == "shutdown":
            self.start(srv, step["timeout_ms"])
        elif op == "shutdown_returned":
            assert self.returned.wait(WAIT)
        else:
            raise AssertionError(f"unknown step {step}")

    def _call(self, srv, timeout_ms: int) -> None:
        ctx, cancel = gocontext.with_timeout(gocontext.background(), timeout_ms / 1000)
        try:
            srv.shutdown(ctx)
            self.result = {"at_ms": self.since()}
        except Exception as err:  # noqa: BLE001 - compared with Go's error text
            self.result = {"err": str(err), "at_ms": self.since()}
        finally:
            cancel()
            self.returned.set()


def off_time(name: str, go_ms: float, ours_ms: float, tolerance: tuple[int, int]) -> list[str]:
    """A difference if ours came outside ``tolerance`` (low, high ms: ours minus Go's), else none."""
    low, high = tolerance
    if low <= ours_ms - go_ms <= high:
        return []
    return [f"{name}: at {ours_ms:.0f} ms, Go at {go_ms:.0f} ms (tolerance {low}..{high})"]


def same_then_on_time(name: str, go: dict, ours: dict, tolerance: tuple[int, int]) -> list[str]:
    """A recorded event (a connection's end, a request's answer, Shutdown's return) as Go had it:
    every field equal but its time (``at_ms``), and that within ``tolerance``."""
    if {k: v for k, v in go.items() if k != "at_ms"} != {k: v for k, v in ours.items() if k != "at_ms"}:
        return [f"{name}: Go {go}, ours {ours}"]
    return off_time(name, go["at_ms"], ours["at_ms"], tolerance) if "at_ms" in go else []


def judge(scenario, diff: list[str], known: dict[str, str]) -> None:
    """A replay's verdict: no difference, or, for a scenario listed in ``known`` (id -> reason),
    one that still differs."""
    if scenario.id in known:
        assert diff, f"{scenario.id} no longer differs from Go: drop it from KNOWN_DIFFERENCES"
    else:
        assert not diff, f"{scenario.id} ({scenario.description}):\n" + "\n".join(diff)

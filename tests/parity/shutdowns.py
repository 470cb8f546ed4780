"""What the two shutdown corpora share (tests/parity/README.md): the steps both recorders read the
same way, and, for the replays, the ``Shutdown`` call that every time is measured from."""

from __future__ import annotations

from typing import Optional

from genericserver import context as gocontext
from genericserver import runtime as rt


def started(tag: str) -> dict:
    return {"op": "started", "tag": tag}


def sleep(ms: int) -> dict:
    return {"op": "sleep", "ms": ms}


def shutdown(timeout_ms: int) -> dict:
    return {"op": "shutdown", "timeout_ms": timeout_ms}


def shutdown_returned() -> dict:
    return {"op": "shutdown_returned"}


class ShutdownCall:
    """A replay's ``Shutdown``: ``start`` calls it in a goroutine with its deadline, ``since()``
    is milliseconds after that call (0 before it), ``result`` what it returned as the recorders
    write it, ``returned`` set when it did."""

    def __init__(self):
        self.t0: Optional[float] = None
        self.result: Optional[dict] = None
        self.returned = rt.event("test-shutdown-returned")

    def since(self) -> float:
        return round((rt.now() - self.t0) * 1000, 3) if self.t0 is not None else 0

    def start(self, srv, timeout_ms: int) -> None:
        self.t0 = rt.now()
        rt.go(self._call, srv, timeout_ms, name="test-shutdown")

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

"""A load-balanced client: steady requests to a service through kube-proxy, each outcome counted (no Go twin).

``workers`` goroutines each send ``GET path`` in a loop, pausing ``interval`` runtime seconds
between requests. A connection is opened with the proxy's ``dial`` (the connect-time DNAT), so
what fails fails for real: ``refused`` is a real ECONNREFUSED from a closed listener (or the
service's REJECT rule), ``reset`` a connection the server dropped (closed with requests still in
its accept queue, or force-closed). Outcomes: ``ok`` (200), ``429``, ``503``, ``refused``,
``reset``, ``other`` (any other status, a timeout).

With ``keep_alive`` each worker keeps its connection, as an HTTP/1.1 client does: it stays
pinned to one pod however the routing table changes (conntrack). A request on a reused
connection that the server closed before answering is retried once on a new one, as Go's
transport does for idempotent requests.

Each :class:`Sample` has two times: ``at``, when the request was sent, and ``done``, when its
outcome happened (the answer was read, the connection was refused or dropped). Timelines order
outcomes by ``done``: a refusal belongs after the listener closed, not at the moment the
client started to connect. A non-200 answer keeps the start of its body in ``detail`` (an
Envoy 503 and the apiserver's own 503 differ there).
"""

from __future__ import annotations

import http.client
import socket
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Optional

from genericserver import runtime as rt

Dial = Callable[[Optional[float]], tuple[socket.socket, str]]
OUTCOMES = ("ok", "429", "503", "refused", "reset", "other")
_DROPPED = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


@dataclass(frozen=True)
class Sample:
    at: float  # runtime time the request was sent
    outcome: str
    pod: str  # where the connection went ("" if it never connected)
    reused: bool
    done: float = 0.0  # runtime time the outcome happened (answer read, refusal, reset)
    detail: str = ""  # the start of a non-200 body


class _ServiceConnection(http.client.HTTPConnection):
    """An HTTP connection whose TCP connection comes from the service's dialer."""

    def __init__(self, dial: Dial, timeout: Optional[float], host: str = "service.default.svc", port: int = 80):
        super().__init__(host, port, timeout=timeout)  # only the Host header: dial() connects
        self._dial = dial
        self.pod = ""

    def connect(self) -> None:
        self.sock, self.pod = self._dial(self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def classify(status: Optional[int], err: Optional[BaseException]) -> str:
    if err is None:
        return {200: "ok", 429: "429", 503: "503"}.get(status or 0, "other")
    if isinstance(err, ConnectionRefusedError):
        return "refused"
    if isinstance(err, _DROPPED) or isinstance(err, http.client.IncompleteRead):
        return "reset"
    return "other"


class LoadClient:
    """``start()``; ``stop()`` waits for the workers; ``counts()`` and ``samples`` after."""

    def __init__(self, dial: Dial, *, workers: int = 4, interval: float = 0.005, keep_alive: bool = False,
                 path: str = "/echo?message=load", timeout: Optional[float] = 5.0, host: str = "service.default.svc", port: int = 80):
        self.dial, self.workers, self.interval, self.host, self.port = dial, workers, interval, host, port
        self.keep_alive, self.path, self.timeout = keep_alive, path, timeout
        self.samples: list[Sample] = []
        self._lock = rt.lock()
        self._stop = rt.event("load-client-stop")
        self._goroutines: list[rt.Goroutine] = []

    def start(self) -> None:
        self._goroutines = [rt.go(self._worker, i, name=f"load-client-{i}") for i in range(self.workers)]

    def stop(self) -> None:
        self._stop.set()
        for g in self._goroutines:
            g.join()

    def counts(self, since: float = float("-inf")) -> Counter:
        with self._lock:
            c = Counter(s.outcome for s in self.samples if s.at >= since)
        return Counter({k: c.get(k, 0) for k in OUTCOMES})

    def _worker(self, i: int) -> None:
        conn: Optional[_ServiceConnection] = None
        try:
            while not self._stop.is_set():
                conn, sample = self._one(conn)
                with self._lock:
                    self.samples.append(sample)
                if rt.select(self._stop, timeout=self.interval) is not None:
                    return
        finally:
            if conn is not None:
                conn.close()

    def _one(self, conn: Optional[_ServiceConnection]) -> tuple[Optional[_ServiceConnection], Sample]:
        at = rt.now()
        reused = conn is not None and conn.sock is not None
        status, err, conn, pod, body = self._request(conn)
        if reused and err is not None and isinstance(err, _DROPPED):
            # closed by the server before it answered: try once more on a new connection
            reused = False
            status, err, conn, pod, body = self._request(None)
        detail = "" if status == 200 else body[:80].decode("utf-8", "replace")
        return conn, Sample(at, classify(status, err), pod, reused, rt.now(), detail)

    def _request(self, conn: Optional[_ServiceConnection]) -> tuple[Optional[int], Optional[BaseException], Optional[_ServiceConnection], str, bytes]:
        if conn is None or conn.sock is None:
            conn = _ServiceConnection(self.dial, self.timeout, self.host, self.port)
        pod = conn.pod
        try:
            conn.request("GET", self.path, headers={"User-Agent": "load-client/1.0",
                                                    "Connection": "keep-alive" if self.keep_alive else "close"})
            pod = conn.pod
            resp = conn.getresponse()
            body = resp.read()
            if resp.will_close or not self.keep_alive:
                conn.close()
                conn = None
            return resp.status, None, conn, pod, body
        except (OSError, http.client.HTTPException) as err:
            pod = conn.pod or getattr(err, "pod", "") or pod
            conn.close()
            return None, err, None, pod, b""


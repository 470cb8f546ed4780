"""A delaying work queue: keys become ready ``delay`` cluster seconds after they were added (no Go twin: models client-go's workqueue.AddAfter).

Controllers here react to a change after a *processing lag*: the endpoints controller and
kube-proxy each put the key of what changed with ``add_after(key, lag)`` and a worker ``get()``s
it once due. A key already waiting keeps the earlier of its two due times, so a burst of changes
is handled once, as a real work queue deduplicates keys.
"""

from __future__ import annotations

from typing import Hashable, Optional

from genericserver import runtime as rt
from genericserver.cluster.clock import ClusterClock


class DelayingQueue:
    def __init__(self, clock: ClusterClock):
        self.clock = clock
        self._cond = rt.condition(rt.lock())
        self._due: dict[Hashable, float] = {}
        self._stopped = False

    def add_after(self, key: Hashable, delay: float) -> None:
        with self._cond:
            due = self.clock.now() + max(0.0, delay)
            if key not in self._due or due < self._due[key]:
                self._due[key] = due
                self._cond.notify_all()

    def get(self) -> Optional[Hashable]:
        """The next due key, waiting for it; None once the queue is shut down."""
        with self._cond:
            while not self._stopped:
                if not self._due:
                    self._cond.wait()
                    continue
                key, due = min(self._due.items(), key=lambda kv: kv[1])
                wait = due - self.clock.now()
                if wait <= 0:
                    del self._due[key]
                    return key
                self._cond.wait(self.clock.to_runtime(wait))
            return None

    def shut_down(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

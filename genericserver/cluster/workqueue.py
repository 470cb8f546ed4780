"""A delaying work queue: keys become ready ``delay`` cluster seconds after they were added (no Go twin: models client-go's workqueue.AddAfter).

Controllers here react to a change after a *processing lag*: the endpoints controller and
kube-proxy each put the key of what changed with ``add_after(key, lag)`` and a worker ``get()``s
it once due. A key already waiting keeps the earlier of its two due times, so a burst of changes
is handled once, as a real work queue deduplicates keys. :class:`Controller` is the loop both
share: a watch feeding the queue, one worker syncing keys.
"""

from __future__ import annotations

from typing import Any, Hashable, Iterable, Optional

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


class Controller:
    """The informer pattern with a lag: watch events become keys on a :class:`DelayingQueue`
    (due ``lag`` seconds later) and one worker syncs each key. Subclasses say which keys an
    event touches (``keys_for``) and how one key is synced (``sync_key``)."""

    watch_name = "controller-watch"
    worker_name = "controller-worker"

    def __init__(self, clock: ClusterClock, watch: Any, lag: float):
        self.clock, self.lag = clock, lag
        self.queue = DelayingQueue(clock)
        self._watch = watch
        self._goroutines: list[rt.Goroutine] = []

    def initial_keys(self) -> Iterable[Hashable]:
        return ()

    def keys_for(self, typ: str, obj: dict) -> Iterable[Hashable]:
        raise NotImplementedError

    def sync_key(self, key: Hashable) -> None:
        raise NotImplementedError

    def run(self) -> None:
        for key in self.initial_keys():
            self.queue.add_after(key, 0)
        self._goroutines = [rt.go(self._watch_loop, name=self.watch_name), rt.go(self._worker, name=self.worker_name)]

    def stop(self) -> None:
        self._watch.stop()
        self.queue.shut_down()
        for g in self._goroutines:
            g.join()

    def _watch_loop(self) -> None:
        while True:
            ev = self._watch.next()
            if ev is None:
                return
            for key in self.keys_for(*ev):
                self.queue.add_after(key, self.lag)

    def _worker(self) -> None:
        while True:
            key = self.queue.get()
            if key is None:
                return
            self.sync_key(key)

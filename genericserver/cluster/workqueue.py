"""A delaying work queue: keys become ready ``delay`` cluster seconds after they were added (no Go twin: models client-go's workqueue.AddAfter).

Controllers here react to a change after a *processing lag*: the endpoints controller and
kube-proxy each put the key of what changed on the queue, due ``lag`` after the change, and sync
it once due. A key already waiting keeps the earlier of its two due times, so a burst of changes
is handled once, as a real work queue deduplicates keys; a change made after that due time (one a
stalled controller took in late) gets a sync of its own at its own due time, since a sync reads
the store as of when it was due. :class:`Controller` is the loop both
share: a watch feeding the queue, one worker syncing keys. :class:`WatchLoop` is the loop of the
controllers with no lag: a watch, each change handled as it comes.

The lags are the model's, and only they: a key is due ``lag`` after the cluster time of the
change (not after the moment a watch thread got to it), and a sync writes, and stamps its
timeline line, as of its due time. A host that stalls a controller's threads (two test suites
on two cores) must not make it later than its lag, or a rollout with a margin of a few cluster
seconds loses requests that the modelled cluster would not; so whoever depends on a controller
being on time (the load client, before it dials) calls :meth:`Controller.catch_up`, which takes
in the pending events and syncs what is due, in the caller's thread.
"""

from __future__ import annotations

from typing import Any, Hashable, Iterable, Optional

from genericserver import runtime as rt
from genericserver.cluster.clock import ClusterClock
from genericserver.cluster.store import Store


class DelayingQueue:
    def __init__(self, clock: ClusterClock):
        self.clock = clock
        self._cond = rt.condition(rt.lock())
        self._due: dict[Hashable, float] = {}
        # a key's later due time, from a change that came while it waited: the sync at its
        # earlier due time reads the store as of then (Store.as_of), so it runs again for this one
        self._again: dict[Hashable, float] = {}
        self._stopped = False

    def add_after(self, key: Hashable, delay: float) -> None:
        self.add_at(key, self.clock.now() + max(0.0, delay))

    def add_at(self, key: Hashable, due: float, changed_at: Optional[float] = None) -> None:
        """``key`` becomes ready at cluster time ``due``, for a change made at ``changed_at``."""
        with self._cond:
            if key in self._due and changed_at is not None and changed_at > self._due[key]:
                # the change came after the waiting sync was due (its controller is late):
                # that sync, as of its due time, cannot see it
                self._again[key] = max(due, self._again.get(key, due))
            elif key not in self._due or due < self._due[key]:
                self._due[key] = due
                self._cond.notify_all()

    def take_due(self) -> list[tuple[Hashable, float]]:
        """The keys due by now, with their due times, earliest first; removed from the queue."""
        now = self.clock.now()
        with self._cond:
            due = sorted(((k, d) for k, d in self._due.items() if d <= now), key=lambda kd: kd[1])
            for k, _ in due:
                del self._due[k]
                if k in self._again:  # waits for its later due time
                    self._due[k] = self._again.pop(k)
            return due

    def wait_due(self) -> bool:
        """Wait until a key is due (True) or the queue is shut down (False)."""
        with self._cond:
            while not self._stopped:
                if not self._due:
                    self._cond.wait()
                    continue
                wait = min(self._due.values()) - self.clock.now()
                if wait <= 0:
                    return True
                self._cond.wait(self.clock.to_runtime(wait))
            return False

    def shut_down(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()


class WatchLoop:
    """A controller with no lag: a watch of the store (of ``kind``, or of everything) and one
    goroutine handing each change to :meth:`handle` as it comes. The scheduler, the disruption
    and the node lifecycle controllers are such (a real cluster runs them within milliseconds,
    and nothing in the model depends on their lateness)."""

    name = "controller"  # its goroutine's

    def __init__(self, store: Store, kind: Optional[str] = None):
        self.store = store
        self._watch = store.watch(kind)
        self._loop: Optional[rt.Goroutine] = None

    def run(self) -> None:
        self._loop = rt.go(self._sync_loop, name=self.name)

    def stop(self) -> None:
        self._watch.stop()
        if self._loop is not None:
            self._loop.join()

    def _sync_loop(self) -> None:
        while True:
            ev = self._watch.next()
            if ev is None:
                return
            self.handle(*ev)

    def handle(self, typ: str, obj: dict) -> None:
        raise NotImplementedError


class Controller:
    """The informer pattern with a lag: watch events become keys on a :class:`DelayingQueue`
    (due ``lag`` seconds after the change) and one worker syncs each key. Subclasses say which
    keys an event touches (``keys_for``) and how one key is synced (``sync_key``).

    Taking events in and syncing due keys each happen under a lock of their own, so the
    controller's goroutines and a caller of :meth:`catch_up` never split one step between them
    (an event taken but not yet queued, a key taken but not yet synced)."""

    watch_name = "controller-watch"
    worker_name = "controller-worker"

    def __init__(self, clock: ClusterClock, watch: Any, lag: float):
        self.clock, self.lag = clock, lag
        self.queue = DelayingQueue(clock)
        self._watch = watch
        self._taking = rt.lock()
        self._syncing = rt.lock()
        self.acting_at: Optional[float] = None  # while a key syncs: the runtime time it was due
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

    def catch_up(self) -> None:
        """Act now on everything the controller would have acted on by now, were it on time."""
        self._take_events()
        self._sync_due()

    def _take_events(self) -> None:
        with self._taking:
            for typ, obj, at in self._watch.take_all():
                for key in self.keys_for(typ, obj):
                    self.queue.add_at(key, at + self.lag, changed_at=at)

    def _sync_due(self) -> None:
        with self._syncing:
            for key, due in self.queue.take_due():
                self.acting_at = self.clock.runtime_at(due)
                try:
                    with Store.as_of(due):
                        self.sync_key(key)
                finally:
                    self.acting_at = None

    def _watch_loop(self) -> None:
        while self._watch.wait_pending():
            self._take_events()

    def _worker(self) -> None:
        while self.queue.wait_due():
            self._sync_due()

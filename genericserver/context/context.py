"""Port of Go's context package (context.go, Go 1.26, which Kubernetes v1.36.0 is built with).

A :class:`Context` carries a done event, an error once done, an optional deadline, a cause and
values. Cancelling a context cancels its children; ``without_cancel`` keeps the values but cuts
the cancellation, which is how ``RunWithContext`` derives the HTTP server's stop context.
Everything waits through :mod:`genericserver.runtime`, so deadlines run on virtual time under
the simulation runtime.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from genericserver import runtime as rt


class ContextError(Exception):
    """Base of the two errors ``Context.err()`` can return."""


class Canceled(ContextError):
    pass


class DeadlineExceeded(ContextError):
    pass


# Go's sentinel errors; compare with ``is`` or ``isinstance``.
CANCELED = Canceled("context canceled")
DEADLINE_EXCEEDED = DeadlineExceeded("context deadline exceeded")

CancelFunc = Callable[[], None]
CancelCauseFunc = Callable[[Optional[BaseException]], None]


class Context:
    """The read side of a context: ``done()``, ``err()``, ``deadline()``, ``value(key)``."""

    def done(self) -> rt.Event:
        raise NotImplementedError

    def err(self) -> Optional[ContextError]:
        raise NotImplementedError

    def deadline(self) -> Optional[float]:
        """The runtime time (``rt.now()`` scale) at which this context expires, if any."""
        return None

    def value(self, key: Any) -> Any:
        return None

    # the nearest ancestor that can be cancelled, for propagation (None: never cancelled)
    def _cancel_parent(self) -> Optional["_CancelCtx"]:
        return None

    def _cause(self) -> Optional[BaseException]:
        return None


class _Background(Context):
    def __init__(self, name: str):
        self._name = name
        self._done: Optional[rt.Event] = None

    def done(self) -> rt.Event:
        # an event nobody ever sets; created lazily so it belongs to the runtime in use
        if self._done is None:
            self._done = rt.event(f"{self._name}.done")
        return self._done

    def err(self) -> Optional[ContextError]:
        return None

    def __repr__(self) -> str:
        return f"context.{self._name}"


def background() -> Context:
    """``context.Background()``: never cancelled, no values, no deadline."""
    return _Background("Background")


def todo() -> Context:
    return _Background("TODO")


class _CancelCtx(Context):
    def __init__(self, parent: Context, name: str = "cancelCtx"):
        self._parent = parent
        self._name = name
        self._lock = rt.lock()
        # made by the first done(), as Go makes the channel: a context nobody waits on (most
        # requests' contexts) costs no event
        self._done_ev: Optional[rt.Event] = None
        self._err: Optional[ContextError] = None
        self._cause_err: Optional[BaseException] = None
        # a dict, not a set: children are cancelled in the order they were made, so a run
        # under the simulation replays identically
        self._children: dict[_CancelCtx, None] = {}
        self._timer: Optional[rt.Timer] = None
        owner = parent._cancel_parent()
        if owner is not None:
            owner._adopt(self)

    def done(self) -> rt.Event:
        with self._lock:
            if self._done_ev is None:
                self._done_ev = rt.event(f"{self._name}.done")
                cancelled = self._err is not None
            else:
                return self._done_ev
        if cancelled:
            self._done_ev.set()  # asked after the cancel: done already (Go hands out a closed channel)
        return self._done_ev

    def err(self) -> Optional[ContextError]:
        with self._lock:
            return self._err

    def deadline(self) -> Optional[float]:
        return self._parent.deadline()

    def value(self, key: Any) -> Any:
        return self._parent.value(key)

    def _cancel_parent(self) -> Optional["_CancelCtx"]:
        return self

    def _cause(self) -> Optional[BaseException]:
        with self._lock:
            return self._cause_err

    def _adopt(self, child: "_CancelCtx") -> None:
        with self._lock:
            if self._err is None:
                self._children[child] = None
                return
            err, cause = self._err, self._cause_err
        child._cancel(False, err, cause)

    def _cancel(self, remove_from_parent: bool, err: ContextError, cause: Optional[BaseException]) -> None:
        if cause is None:
            cause = err
        with self._lock:
            if self._err is not None:
                return  # already cancelled: the first error and cause stay
            self._err, self._cause_err = err, cause
            children, self._children = self._children, {}
            timer, self._timer = self._timer, None
            done = self._done_ev
        if done is not None:
            done.set()
        if timer is not None:
            timer.stop()
        for child in children:
            child._cancel(False, err, cause)
        if remove_from_parent:
            owner = self._parent._cancel_parent()
            if owner is not None:
                owner._forget(self)

    def _forget(self, child: "_CancelCtx") -> None:
        with self._lock:
            self._children.pop(child, None)


class _DeadlineCtx(_CancelCtx):
    def __init__(self, parent: Context, when: float):
        super().__init__(parent, name="timerCtx")
        self._deadline = when

    def deadline(self) -> Optional[float]:
        return self._deadline


def with_cancel(parent: Context) -> tuple[Context, CancelFunc]:
    """A child that is done when ``cancel()`` is called or the parent is done."""
    ctx = _CancelCtx(parent)
    return ctx, lambda: ctx._cancel(True, CANCELED, None)


def with_cancel_cause(parent: Context) -> tuple[Context, CancelCauseFunc]:
    """Like ``with_cancel``, but ``cancel(cause)`` records why; ``cause(ctx)`` reads it back."""
    ctx = _CancelCtx(parent)
    return ctx, lambda cause=None: ctx._cancel(True, CANCELED, cause)


def with_deadline(parent: Context, when: float) -> tuple[Context, CancelFunc]:
    """A child that is also done at runtime time ``when`` (with ``DEADLINE_EXCEEDED``)."""
    parent_deadline = parent.deadline()
    if parent_deadline is not None and parent_deadline <= when:
        # the parent expires first anyway: a plain cancel context is enough, as in Go
        return with_cancel(parent)
    ctx = _DeadlineCtx(parent, when)
    remaining = when - rt.now()
    if remaining <= 0:
        ctx._cancel(True, DEADLINE_EXCEEDED, None)
    elif ctx._err is None:  # (the parent may have been done already, and cancelled it)
        timer = rt.after_func(remaining, lambda: ctx._cancel(True, DEADLINE_EXCEEDED, None), name="context-deadline")
        with ctx._lock:
            if ctx._err is None:
                ctx._timer = timer
                timer = None
        if timer is not None:  # cancelled meanwhile: the timer has nothing left to do
            timer.stop()
    return ctx, lambda: ctx._cancel(True, CANCELED, None)


def with_timeout(parent: Context, seconds: float) -> tuple[Context, CancelFunc]:
    return with_deadline(parent, rt.now() + seconds)


class _WithoutCancel(Context):
    def __init__(self, parent: Context):
        self._parent = parent
        self._done: Optional[rt.Event] = None

    def done(self) -> rt.Event:
        if self._done is None:
            self._done = rt.event("withoutCancel.done")
        return self._done

    def err(self) -> Optional[ContextError]:
        return None

    def value(self, key: Any) -> Any:
        return self._parent.value(key)


def without_cancel(parent: Context) -> Context:
    """Keeps ``parent``'s values, drops its cancellation and deadline."""
    return _WithoutCancel(parent)


class _ValueCtx(Context):
    def __init__(self, parent: Context, key: Any, val: Any):
        self._parent, self._key, self._val = parent, key, val

    def done(self) -> rt.Event:
        return self._parent.done()

    def err(self) -> Optional[ContextError]:
        return self._parent.err()

    def deadline(self) -> Optional[float]:
        return self._parent.deadline()

    def value(self, key: Any) -> Any:
        if key == self._key:
            return self._val
        return self._parent.value(key)

    def _cancel_parent(self) -> Optional[_CancelCtx]:
        return self._parent._cancel_parent()

    def _cause(self) -> Optional[BaseException]:
        return self._parent._cause()


def with_value(parent: Context, key: Any, val: Any) -> Context:
    return _ValueCtx(parent, key, val)


def cause(ctx: Context) -> Optional[BaseException]:
    """``context.Cause``: why the context was cancelled (its ``err()`` when no cause was given)."""
    return ctx._cause()

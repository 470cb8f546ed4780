"""Port of k8s.io/apiserver/pkg/server/hooks.go (v1.36.0).

Post-start hooks run once the server serves, each in its own goroutine, and each has a health
check ``poststarthook/<name>`` (on healthz, livez with the livez grace period, and readyz) that
says ``not finished`` until the hook returns. Pre-shutdown hooks run one after the other when
shutdown begins; their errors come back as one :class:`genericserver.apimachinery.errors.Aggregate`.

In Go the hooks are fields and methods of ``GenericAPIServer``; here a :class:`HookRegistry`
holds them, and the server keeps one (``server.hooks``) and delegates to it. The registry adds
each post-start hook's check through the server's :class:`genericserver.healthz.HealthChecks`
(its ``add_boot_sequence_health_checks``), given to the constructor.

Hooks follow the project's error convention: a hook *raises* an ``Exception`` to fail (Go's
returned error) and returns ``None`` on success. Go also distinguishes a panic; Python has no
such thing, so a raised ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``,
:class:`genericserver.apimachinery.utilruntime.Panic`...) stands for it: each hook runs inside
``utilruntime.handle_crash()``, as in Go, so a panic is logged as ``Observed a panic`` and raised
again (``ReallyCrash``); in a process started by ``genericserver serve`` that ends the process
with exit status 2, as Go's runtime does. A failing post-start hook is fatal, as in Go
(``klog.Fatalf``): the default :func:`fatal` logs at severity F and exits with status 255;
tests pass their own.

Go runs hooks in map order, which is random; here they run in the order they were added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, NoReturn, Optional, Protocol

from genericserver import klog
from genericserver import runtime as rt
from genericserver.apimachinery import utilruntime
from genericserver.apimachinery.errors import Aggregate, new_aggregate
from genericserver.context import context as gocontext
from genericserver.responsewriters import go_quote
from genericserver.runtime.stack import Stack, capture


class PostStartHookContext(gocontext.Context):
    """What a post-start hook gets: the loopback client config, and a context done when the server stops."""

    def __init__(self, loopback_client_config: Any, context: gocontext.Context):
        self.loopback_client_config = loopback_client_config
        self.context = context

    def done(self) -> rt.Event:
        return self.context.done()

    def err(self) -> Optional[gocontext.ContextError]:
        return self.context.err()

    def deadline(self) -> Optional[float]:
        return self.context.deadline()

    def value(self, key: Any) -> Any:
        return self.context.value(key)

    def _cancel_parent(self) -> Any:
        return self.context._cancel_parent()

    def _cause(self) -> Optional[BaseException]:
        return self.context._cause()


# Raise to fail, return None on success (Go's returned error).
PostStartHookFunc = Callable[[PostStartHookContext], None]
PreShutdownHookFunc = Callable[[], None]
Fatal = Callable[[str], NoReturn]


class PostStartHookProvider(Protocol):
    def post_start_hook(self) -> tuple[str, PostStartHookFunc]: ...


@dataclass
class PostStartHookEntry:
    hook: PostStartHookFunc
    # where the hook was registered, to explain a duplicate registration
    originating_stack: Stack
    # set when the hook has finished
    done: rt.Event


@dataclass
class PostStartHookConfigEntry:
    hook: PostStartHookFunc
    originating_stack: Stack


@dataclass
class PreShutdownHookEntry:
    hook: PreShutdownHookFunc


class HookError(Exception):
    """Registering a hook failed."""


class PreShutdownHookError(Exception):
    """A pre-shutdown hook failed: ``PreShutdownHook "<name>" failed: <err>`` (``err`` is the hook's error)."""

    def __init__(self, name: str, err: BaseException):
        super().__init__(f"PreShutdownHook {go_quote(name)} failed: {err}")
        self.hook_name = name
        self.err = err


class HookNotFinished(Exception):
    """The ``poststarthook/<name>`` check before the hook has finished."""


def fatal(msg: str) -> NoReturn:
    """``klog.Fatalf``: log at severity F, flush the logs and exit the process with status 255."""
    klog.fatal_depth(1, msg)


def _stack() -> Stack:
    return capture(2)


class HealthCheckAdder(Protocol):
    def add_boot_sequence_health_checks(self, *checks: Any) -> None: ...


class HookRegistry:
    """The post-start and pre-shutdown hooks of one server (see the module docstring).

    ``fatal`` is Go's ``klog.Fatalf`` for a failing post-start hook and the ``_or_die``
    variants; tests pass one that records instead of ending the process.
    """

    def __init__(
        self,
        health: HealthCheckAdder,
        *,
        disabled_post_start_hooks: Iterable[str] = (),
        loopback_client_config: Any = None,
        fatal: Fatal = fatal,
    ):
        self._health = health
        self.disabled_post_start_hooks = set(disabled_post_start_hooks)
        self.loopback_client_config = loopback_client_config
        self.fatal = fatal
        self._post_start_hook_lock = rt.lock()
        self._post_start_hooks: dict[str, PostStartHookEntry] = {}
        self._post_start_hooks_called = False
        self._pre_shutdown_hook_lock = rt.lock()
        self._pre_shutdown_hooks: dict[str, PreShutdownHookEntry] = {}
        self._pre_shutdown_hooks_called = False

    def add_post_start_hook(self, name: str, hook: Optional[PostStartHookFunc]) -> None:
        """Register ``hook`` to run after the server starts; raises :class:`HookError` with Go's texts."""
        if not name:
            raise HookError("missing name")
        if hook is None:
            raise HookError(f"hook func may not be nil: {go_quote(name)}")
        if name in self.disabled_post_start_hooks:
            klog.v(1).infof("skipping %s because it was explicitly disabled", go_quote(name))
            return
        with self._post_start_hook_lock:
            if self._post_start_hooks_called:
                raise HookError(f"unable to add {go_quote(name)} because PostStartHooks have already been called")
            existing = self._post_start_hooks.get(name)
            if existing is not None:
                # a programming error, hard to track down without the first registration's stack
                raise HookError(
                    f"unable to add {go_quote(name)} because it was already registered by: {existing.originating_stack}"
                )
            # the health check turns green when the hook's done event is set
            done = rt.event(f"poststarthook/{name}-done")
            self._health.add_boot_sequence_health_checks(PostStartHookHealthz(f"poststarthook/{name}", done))
            self._post_start_hooks[name] = PostStartHookEntry(hook, _stack(), done)

    def add_post_start_hook_or_die(self, name: str, hook: Optional[PostStartHookFunc]) -> None:
        try:
            self.add_post_start_hook(name, hook)
        except Exception as err:
            self.fatal(f"Error registering PostStartHook {go_quote(name)}: {err}")

    def add_pre_shutdown_hook(self, name: str, hook: Optional[PreShutdownHookFunc]) -> None:
        """Register ``hook`` to run when shutdown begins; a ``None`` hook is silently ignored."""
        if not name:
            raise HookError("missing name")
        if hook is None:
            return
        with self._pre_shutdown_hook_lock:
            if self._pre_shutdown_hooks_called:
                raise HookError(f"unable to add {go_quote(name)} because PreShutdownHooks have already been called")
            if name in self._pre_shutdown_hooks:
                raise HookError(f"unable to add {go_quote(name)} because it is already registered")
            self._pre_shutdown_hooks[name] = PreShutdownHookEntry(hook)

    def add_pre_shutdown_hook_or_die(self, name: str, hook: Optional[PreShutdownHookFunc]) -> None:
        try:
            self.add_pre_shutdown_hook(name, hook)
        except Exception as err:
            self.fatal(f"Error registering PreShutdownHook {go_quote(name)}: {err}")

    def run_post_start_hooks(self, ctx: gocontext.Context) -> None:
        """Start every post-start hook in its own goroutine and return at once; no more can be added."""
        with self._post_start_hook_lock:
            self._post_start_hooks_called = True
            hook_ctx = PostStartHookContext(self.loopback_client_config, ctx)
            for name, entry in self._post_start_hooks.items():
                rt.go(_run_post_start_hook, name, entry, hook_ctx, self.fatal, name=f"post-start-hook-{name}")

    def run_pre_shutdown_hooks(self) -> None:
        """Run the pre-shutdown hooks one by one; raise the Aggregate of their errors, if any.

        The lock is held throughout, and nothing bounds a hook: one that blocks, blocks the
        shutdown. A hook's panic (see the module docstring) propagates after being logged.
        """
        errors: list[BaseException] = []
        with self._pre_shutdown_hook_lock:
            self._pre_shutdown_hooks_called = True
            for name, entry in self._pre_shutdown_hooks.items():
                err = _run_pre_shutdown_hook(name, entry)
                if err is not None:
                    errors.append(err)
        agg: Optional[Aggregate] = new_aggregate(errors)
        if agg is not None:
            raise agg

    def is_post_start_hook_registered(self, name: str) -> bool:
        with self._post_start_hook_lock:
            return name in self._post_start_hooks

    def post_start_hooks(self) -> dict[str, PostStartHookEntry]:
        return self._post_start_hooks

    def pre_shutdown_hooks(self) -> dict[str, PreShutdownHookEntry]:
        return self._pre_shutdown_hooks


def _run_post_start_hook(name: str, entry: PostStartHookEntry, ctx: PostStartHookContext, die: Fatal) -> None:
    err: Optional[Exception] = None
    with utilruntime.handle_crash():
        try:
            entry.hook(ctx)
        except Exception as hook_err:
            err = hook_err
    if err is not None:
        # a hook that fails means to take the server down
        die(f"PostStartHook {go_quote(name)} failed: {err}")
        return  # only reached when a test's fatal returns
    entry.done.set()


def _run_pre_shutdown_hook(name: str, entry: PreShutdownHookEntry) -> Optional[PreShutdownHookError]:
    err: Optional[Exception] = None
    # Go: don't let the hook *accidentally* panic and kill the server (ReallyCrash still does)
    with utilruntime.handle_crash():
        try:
            entry.hook()
        except Exception as hook_err:
            err = hook_err
    if err is not None:
        return PreShutdownHookError(name, err)
    return None


class PostStartHookHealthz:
    """The check ``poststarthook/<name>``: ``not finished`` until the hook's done event is set."""

    def __init__(self, name: str, done: rt.Event):
        self._name = name
        self.done = done

    def name(self) -> str:
        return self._name

    def check(self, environ: Optional[dict] = None) -> None:
        if not self.done.is_set():
            raise HookNotFinished("not finished")

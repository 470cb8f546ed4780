"""Tests of genericserver.hooks: Go's error texts, post-start hooks in goroutines with their health
checks, pre-shutdown hooks in sequence with aggregated errors, and panics (no Go test file)."""

from __future__ import annotations

import logging
import threading

import pytest
from werkzeug.test import Client

from genericserver import klog
from genericserver import runtime as rt
from genericserver.apimachinery.errors import Aggregate
from genericserver.context import context as gocontext
from genericserver.healthz import HealthCheckRegistryError, HealthChecks
from genericserver.hooks import HookError, HookRegistry, PostStartHookContext, PreShutdownHookError
from genericserver.mux import PathRecorderMux
from genericserver.testing.sim import Simulation


class Fatal:
    """Records what klog.Fatalf would have printed, instead of ending the process."""

    def __init__(self):
        self.messages: list[str] = []

    def __call__(self, msg: str) -> None:  # type: ignore[misc]
        self.messages.append(msg)


def new_registry(**kw):
    health = HealthChecks()
    fatal = Fatal()
    return HookRegistry(health, fatal=fatal, **kw), health, fatal


def noop(*args):
    return None


def join_hook_goroutines() -> None:
    for g in rt.THREADS.live():
        if g.name.startswith("post-start-hook-"):
            assert g.join(5), g


# -- registration errors ---------------------------------------------------------------


def test_add_post_start_hook_errors():
    hooks, health, _ = new_registry()
    with pytest.raises(HookError, match="^missing name$"):
        hooks.add_post_start_hook("", noop)
    with pytest.raises(HookError, match='^hook func may not be nil: "x"$'):
        hooks.add_post_start_hook("x", None)
    hooks.add_post_start_hook("x", noop)
    with pytest.raises(HookError) as exc:
        hooks.add_post_start_hook("x", noop)
    assert str(exc.value).startswith('unable to add "x" because it was already registered by: ')
    assert "test_add_post_start_hook_errors" in str(exc.value)  # the first registration's stack
    hooks.run_post_start_hooks(gocontext.background())
    with pytest.raises(HookError, match='^unable to add "y" because PostStartHooks have already been called$'):
        hooks.add_post_start_hook("y", noop)
    join_hook_goroutines()
    assert [c.name() for c in health.healthz_checks()] == ["poststarthook/x"]


def test_add_pre_shutdown_hook_errors():
    hooks, _, _ = new_registry()
    with pytest.raises(HookError, match="^missing name$"):
        hooks.add_pre_shutdown_hook("", noop)
    hooks.add_pre_shutdown_hook("nil", None)  # silently not registered
    assert "nil" not in hooks.pre_shutdown_hooks()
    hooks.add_pre_shutdown_hook("x", noop)
    with pytest.raises(HookError, match='^unable to add "x" because it is already registered$'):
        hooks.add_pre_shutdown_hook("x", noop)
    hooks.run_pre_shutdown_hooks()
    with pytest.raises(HookError, match='^unable to add "y" because PreShutdownHooks have already been called$'):
        hooks.add_pre_shutdown_hook("y", noop)


def test_disabled_post_start_hook_is_skipped(caplog):
    hooks, health, _ = new_registry(disabled_post_start_hooks={"off", "quiet"})
    with caplog.at_level(logging.INFO, logger="genericserver.hooks"):
        hooks.add_post_start_hook("quiet", noop)  # Go logs this at V(1): nothing at the default 0
        with klog.with_verbosity(1):
            hooks.add_post_start_hook("off", noop)
    assert not hooks.is_post_start_hook_registered("off")
    assert health.healthz_checks() == []
    assert [r.getMessage() for r in caplog.records] == ['skipping "off" because it was explicitly disabled']
    assert caplog.records[0].filename == "hooks.py"


def test_post_start_hook_after_health_endpoints_are_installed_fails():
    hooks, health, _ = new_registry()
    health.install_healthz(PathRecorderMux("test"))
    with pytest.raises(HealthCheckRegistryError, match="^unable to add because the /healthz endpoint has already been created$"):
        hooks.add_post_start_hook("late", noop)
    assert not hooks.is_post_start_hook_registered("late")


def test_or_die_variants_are_fatal_with_go_texts():
    hooks, _, fatal = new_registry()
    hooks.add_post_start_hook_or_die("", noop)
    hooks.add_pre_shutdown_hook_or_die("", noop)
    hooks.add_pre_shutdown_hook_or_die("ok", noop)
    hooks.add_pre_shutdown_hook_or_die("ok", noop)
    assert fatal.messages == [
        'Error registering PostStartHook "": missing name',
        'Error registering PreShutdownHook "": missing name',
        'Error registering PreShutdownHook "ok": unable to add "ok" because it is already registered',
    ]


# -- post-start hooks --------------------------------------------------------------------


def test_post_start_hooks_run_each_in_its_own_goroutine_and_their_checks_turn_green():
    hooks, health, _ = new_registry(loopback_client_config="loopback")
    mux = PathRecorderMux("test")
    a_running, b_ran, release_b = rt.event("a-running"), rt.event("b-ran"), rt.event("release-b")
    seen: dict[str, tuple[str, object]] = {}

    def hook_a(ctx: PostStartHookContext):
        seen["a"] = (threading.current_thread().name, ctx.loopback_client_config)
        a_running.set()
        # only returns once b has run: with the hooks in one goroutine this would never happen
        assert b_ran.wait(5)

    def hook_b(ctx: PostStartHookContext):
        seen["b"] = (threading.current_thread().name, ctx.loopback_client_config)
        assert a_running.wait(5)
        b_ran.set()
        assert release_b.wait(5)

    hooks.add_post_start_hook("a", hook_a)
    hooks.add_post_start_hook("b", hook_b)
    assert hooks.is_post_start_hook_registered("a") and not hooks.is_post_start_hook_registered("c")
    health.install_readyz(mux)
    client = Client(mux)
    resp = client.get("/readyz/poststarthook/a")
    assert (resp.status_code, resp.data) == (500, b"internal server error: not finished\n")

    hooks.run_post_start_hooks(gocontext.background())
    assert hooks.post_start_hooks()["a"].done.wait(5)
    assert client.get("/readyz/poststarthook/a").data == b"ok"
    assert client.get("/readyz?verbose").get_data(as_text=True) == (
        "[+]poststarthook/a ok\n[-]poststarthook/b failed: reason withheld\nreadyz check failed\n"
    )
    release_b.set()
    assert hooks.post_start_hooks()["b"].done.wait(5)
    assert client.get("/readyz").data == b"ok"
    join_hook_goroutines()
    assert seen == {"a": ("go:post-start-hook-a", "loopback"), "b": ("go:post-start-hook-b", "loopback")}


def test_post_start_hook_context_is_done_when_the_server_stops():
    hooks, _, _ = new_registry()
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    saw = []

    def hook(hctx: PostStartHookContext):
        assert hctx.done().wait(5)
        saw.append(hctx.err())
        child, child_cancel = gocontext.with_cancel(hctx)  # usable as a parent context
        saw.append(child.err())
        child_cancel()

    hooks.add_post_start_hook("waits", hook)
    hooks.run_post_start_hooks(ctx)
    cancel()
    assert hooks.post_start_hooks()["waits"].done.wait(5)
    join_hook_goroutines()
    assert saw == [gocontext.CANCELED, gocontext.CANCELED]


def test_failing_post_start_hook_is_fatal_and_stays_unfinished():
    hooks, health, fatal = new_registry()

    def hook(ctx):
        raise RuntimeError("boom")

    hooks.add_post_start_hook("bad", hook)
    hooks.run_post_start_hooks(gocontext.background())
    join_hook_goroutines()
    assert fatal.messages == ['PostStartHook "bad" failed: boom']
    assert not hooks.post_start_hooks()["bad"].done.is_set()


class Crash(BaseException):
    """What stands for a Go panic here: raised, but not an ``Exception``."""


@pytest.mark.expect_goroutine_panic
def test_panicking_post_start_hook_is_logged_and_the_panic_kills_its_goroutine(caplog):
    hooks, _, fatal = new_registry()

    def hook(ctx):
        raise Crash("kaboom")

    hooks.add_post_start_hook("crash", hook)
    panics_before = len(rt.THREADS.panics)
    with caplog.at_level(logging.ERROR):
        hooks.run_post_start_hooks(gocontext.background())
        join_hook_goroutines()
    assert [(n, type(e)) for n, e in rt.THREADS.panics[panics_before:]] == [("post-start-hook-crash", Crash)]
    (record,) = [r for r in caplog.records if "Observed a panic" in r.getMessage()]
    # apimachinery's logPanic: the value, its Go syntax (repr here), the goroutine's stack
    assert record.getMessage().startswith('"Observed a panic" panic="kaboom" panicGoValue="Crash(\'kaboom\')" stacktrace=<\n')
    # the stack starts where the hook raised, Go's innermost-first order
    stack = record.getMessage().split("stacktrace=<\n", 1)[1]
    assert stack.splitlines()[1].endswith("test_hooks.test_panicking_post_start_hook_is_logged_and_the_panic_kills_its_goroutine.<locals>.hook(...)")
    assert (record.filename, record.funcName) == ("hooks.py", "_run_post_start_hook")
    assert fatal.messages == []
    assert not hooks.post_start_hooks()["crash"].done.is_set()


def test_post_start_hook_check_on_virtual_time_with_the_livez_grace_period():
    """A hook that takes 15 s: readyz red until it finishes; livez green for the 10 s grace, then red."""

    def main():
        health = HealthChecks(livez_grace_period=10, clock=rt.now)
        hooks = HookRegistry(health, fatal=Fatal())
        hooks.add_post_start_hook("slow", lambda ctx: rt.sleep(15))
        mux = PathRecorderMux("test")
        health.install_livez(mux)
        health.install_readyz(mux)
        client = Client(mux)
        hooks.run_post_start_hooks(gocontext.background())
        seen = []
        for step in [0, 10, 0.001, 4.998, 0.002]:
            rt.sleep(step)
            seen.append((round(rt.now(), 3), client.get("/livez").status_code, client.get("/readyz").status_code))
        return seen

    sim = Simulation()
    assert sim.run(main) == [
        (0, 200, 500),
        (10, 200, 500),
        (10.001, 500, 500),
        (14.999, 500, 500),
        (15.001, 200, 200),
    ]
    assert any(name == "post-start-hook-slow" for _, _, name, _ in sim.trace)
    assert sim.leftover() == []


# -- pre-shutdown hooks ------------------------------------------------------------------


def test_pre_shutdown_hooks_run_in_sequence_in_registration_order():
    hooks, _, _ = new_registry()
    order = []
    for name in ["c", "a", "b"]:
        hooks.add_pre_shutdown_hook(name, lambda name=name: order.append((name, threading.current_thread().name)))
    assert hooks.run_pre_shutdown_hooks() is None
    me = threading.current_thread().name
    assert order == [("c", me), ("a", me), ("b", me)]


def test_pre_shutdown_hook_error_is_wrapped_and_aggregated():
    hooks, _, _ = new_registry()
    ran = []

    def failing():
        ran.append("failing")
        raise RuntimeError("oops")

    hooks.add_pre_shutdown_hook("failing", failing)
    hooks.add_pre_shutdown_hook("after", lambda: ran.append("after"))
    with pytest.raises(Aggregate) as exc:
        hooks.run_pre_shutdown_hooks()
    assert str(exc.value) == 'PreShutdownHook "failing" failed: oops'
    [err] = exc.value.errors()
    assert isinstance(err, PreShutdownHookError)
    assert (err.hook_name, str(err.err)) == ("failing", "oops")
    assert ran == ["failing", "after"]  # an error does not stop the other hooks


def test_several_pre_shutdown_hook_errors():
    hooks, _, _ = new_registry()

    def fail(msg):
        def hook():
            raise RuntimeError(msg)

        return hook

    hooks.add_pre_shutdown_hook("a", fail("x"))
    hooks.add_pre_shutdown_hook("ok", noop)
    hooks.add_pre_shutdown_hook("b", fail("y"))
    with pytest.raises(Aggregate) as exc:
        hooks.run_pre_shutdown_hooks()
    assert str(exc.value) == '[PreShutdownHook "a" failed: x, PreShutdownHook "b" failed: y]'
    assert len(exc.value.errors()) == 2


def test_panicking_pre_shutdown_hook_is_logged_and_raised_again(caplog):
    hooks, _, _ = new_registry()
    ran = []

    def crash():
        raise Crash("kaboom")

    hooks.add_pre_shutdown_hook("crash", crash)
    hooks.add_pre_shutdown_hook("after", lambda: ran.append("after"))
    with caplog.at_level(logging.ERROR, logger="genericserver.hooks"):
        with pytest.raises(Crash, match="kaboom"):
            hooks.run_pre_shutdown_hooks()
    assert any(r.getMessage().startswith('"Observed a panic" panic="kaboom"') for r in caplog.records)
    assert ran == []  # the panic unwinds the whole run, as in Go
    # the lock was released: registering again fails with Go's error instead of blocking
    with pytest.raises(HookError, match="PreShutdownHooks have already been called"):
        hooks.add_pre_shutdown_hook("late", noop)


def test_delegated_hooks_can_be_copied_in():
    delegate, _, _ = new_registry()
    delegate.add_post_start_hook("from-delegate", noop)
    delegate.add_pre_shutdown_hook("from-delegate", noop)
    hooks, _, _ = new_registry()
    hooks.post_start_hooks().update(delegate.post_start_hooks())
    hooks.pre_shutdown_hooks().update(delegate.pre_shutdown_hooks())
    assert hooks.is_post_start_hook_registered("from-delegate")
    with pytest.raises(HookError, match="already registered"):
        hooks.add_pre_shutdown_hook("from-delegate", noop)

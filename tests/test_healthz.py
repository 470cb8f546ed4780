"""Tests of genericserver.healthz: pkg/server/healthz_test.go, and the registries' behaviour."""

from __future__ import annotations

import pytest
from werkzeug.test import Client

from genericserver import runtime as rt
from genericserver.healthz.healthz import HealthCheckError, PingHealthz, named_check
from genericserver.healthz import HealthCheckRegistry, HealthCheckRegistryError, HealthChecks, delayed_health_check
from genericserver.hooks import HookNotFinished, PostStartHookHealthz
from genericserver.lifecycle_signals import new_lifecycle_signals
from genericserver.mux import PathRecorderMux


class FakeClock:
    def __init__(self, t: float = 0.0):
        self.t = t

    def __call__(self) -> float:
        return self.t

    def step(self, d: float) -> None:
        self.t += d


def test_delayed_health_check_returns_true_until_the_delay_has_elapsed():
    c = FakeClock()
    done = rt.event("hook-done")
    check = delayed_health_check(PostStartHookHealthz("test", done), c, 10)
    assert check.name() == "test"
    assert check.check(None) is None
    c.step(10)
    assert check.check(None) is None  # at exactly the delay: still healthy (strictly after)
    c.step(0.001)
    with pytest.raises(HookNotFinished, match="^not finished$"):
        check.check(None)
    done.set()
    assert check.check(None) is None


def test_delayed_health_check_does_not_toggle_false_even_if_done_is_set_early():
    c = FakeClock()
    done = rt.event("hook-done")
    check = delayed_health_check(PostStartHookHealthz("test", done), c, 10)
    assert check.check(None) is None
    done.set()
    c.step(10)
    assert check.check(None) is None
    c.step(0.001)
    assert check.check(None) is None


def test_delayed_check_without_a_clock_fails():
    reg = HealthCheckRegistry("/healthz")
    with pytest.raises(HealthCheckRegistryError, match="^nil clock in healthCheckRegistry for /healthz endpoint$"):
        reg.add_delayed_health_checks(5, PingHealthz)
    reg.add_delayed_health_checks(0, PingHealthz)  # no delay, no clock needed
    assert reg.checks == [PingHealthz]


def test_adding_after_install_fails():
    reg = HealthCheckRegistry("/livez", clock=FakeClock())
    reg.install_handler(PathRecorderMux("test"))
    with pytest.raises(HealthCheckRegistryError, match="^unable to add because the /livez endpoint has already been created$"):
        reg.add_health_checks(PingHealthz)


def _bad(environ):
    raise HealthCheckError("boom")


def test_health_checks_go_to_the_right_endpoints():
    clock = FakeClock()
    h = HealthChecks(
        healthz_checks=[PingHealthz], livez_checks=[PingHealthz], readyz_checks=[PingHealthz],
        livez_grace_period=30, clock=clock,
    )
    h.add_health_checks(named_check("all", _bad))
    h.add_boot_sequence_health_checks(named_check("boot", _bad))
    h.add_readyz_checks(named_check("ready-only", _bad))
    h.add_livez_checks(5, named_check("live-only", _bad))
    mux = PathRecorderMux("test")
    h.install_healthz(mux)
    h.install_livez(mux)
    h.install_readyz(mux)
    client = Client(mux)

    assert [c.name() for c in h.healthz_checks()] == ["ping", "all", "boot"]
    assert client.get("/healthz").get_data(as_text=True) == (
        "[+]ping ok\n[-]all failed: reason withheld\n[-]boot failed: reason withheld\nhealthz check failed\n"
    )
    assert client.get("/readyz").get_data(as_text=True) == (
        "[+]ping ok\n[-]all failed: reason withheld\n[-]boot failed: reason withheld\n"
        "[-]ready-only failed: reason withheld\nreadyz check failed\n"
    )
    # livez: "all" fails at once; "boot" has the 30 s grace, "live-only" its own 5 s
    assert client.get("/livez").get_data(as_text=True) == (
        "[+]ping ok\n[-]all failed: reason withheld\n[+]boot ok\n[+]live-only ok\nlivez check failed\n"
    )
    clock.step(5.5)
    assert "[-]live-only failed" in client.get("/livez").get_data(as_text=True)
    assert "[+]boot ok" in client.get("/livez").get_data(as_text=True)
    clock.step(30)
    assert "[-]boot failed" in client.get("/livez").get_data(as_text=True)
    assert client.get("/livez?exclude=all&exclude=boot&exclude=live-only").data == b"ok"
    assert client.get("/livez/boot").data == b"internal server error: boom\n"


def test_prepare_run_sequence_readyz_shutdown_and_has_been_ready():
    """What the server's prepare_run does: healthz, livez, the shutdown check last, readyz."""
    signals = new_lifecycle_signals()
    h = HealthChecks(
        healthz_checks=[PingHealthz], livez_checks=[PingHealthz], readyz_checks=[PingHealthz], clock=FakeClock()
    )
    mux = PathRecorderMux("test")
    h.install_healthz(mux)
    h.install_livez(mux)
    h.add_readyz_shutdown_check(signals.shutdown_initiated.signaled())
    h.install_readyz(mux, signals.has_been_ready.signal)
    client = Client(mux)

    assert "/readyz/shutdown" in mux.listed_paths()
    assert not signals.has_been_ready.is_signaled()
    resp = client.get("/readyz")
    assert (resp.status_code, resp.data) == (200, b"ok")
    assert signals.has_been_ready.is_signaled()

    signals.shutdown_initiated.signal()
    resp = client.get("/readyz?verbose")
    assert resp.status_code == 500
    assert resp.get_data(as_text=True) == "[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n"
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    resp = client.get("/readyz/shutdown")
    assert (resp.status_code, resp.data) == (500, b"internal server error: process is shutting down\n")
    # healthz and livez know nothing of the shutdown
    assert client.get("/healthz").data == b"ok"
    assert client.get("/livez").data == b"ok"
    with pytest.raises(HealthCheckRegistryError, match="/readyz endpoint has already been created"):
        h.add_readyz_checks(PingHealthz)


def test_first_time_healthy_runs_once_even_when_readyz_flaps():
    calls = []
    flag = {"ok": False}

    def flappy(environ):
        if not flag["ok"]:
            raise HealthCheckError("not yet")

    h = HealthChecks(readyz_checks=[named_check("flappy", flappy)])
    mux = PathRecorderMux("test")
    h.install_readyz(mux, lambda: calls.append(1))
    client = Client(mux)
    for ok in [False, True, False, True, True]:
        flag["ok"] = ok
        assert client.get("/readyz").status_code == (200 if ok else 500)
    assert calls == [1]

"""Shared fixtures: every test must end with no stray thread, no listener and no goroutine panic."""

from __future__ import annotations

import gc
import os
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import zygote

from genericserver import runtime
from genericserver.testing.leaks import goroutines_started_since, listening_ports, stray_threads

# pytester runs pytest inside a test (tests/test_pauses.py); pauses says when a debugger pause
# outlasted a real-time limit of a failed test
pytest_plugins = ["pytester", "genericserver.testing.pauses", "forkdist"]

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    print_blob=True,
)
settings.register_profile(
    "fuzz",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The cyclic collector, for the tests' processes only (the servers they start keep Python's
# default): at its default pace (700, 10, 10) it took 7.3 CPU-seconds of the workers' time, timed
# by gc.callbacks, most of it in the middle generation promoting Hypothesis's and the
# simulations' short-lived objects; at this pace 4.4. What it collects is the same, later.
gc.set_threshold(100_000, 20, 100)


DATA = os.path.join(os.path.dirname(__file__), "data")


@pytest.fixture(scope="session")
def tls_cert() -> tuple[str, str]:
    """(cert file, key file) of the test certificate for 127.0.0.1 (see tests/data/README.md)."""
    return os.path.join(DATA, "localhost-cert.pem"), os.path.join(DATA, "localhost-key.pem")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "expect_goroutine_panic: the test makes a goroutine die on purpose")
    forkdist = config.pluginmanager.get_plugin("forkdist")  # None under -p no:forkdist
    if forkdist is not None and forkdist.forks(config):
        zygote.start()  # one for the run, importing on the core that collection leaves idle


@pytest.fixture(autouse=True)
def no_leaks(request: pytest.FixtureRequest):
    threads_before = threading.enumerate()
    ports_before = listening_ports()
    panics_before = len(runtime.THREADS.panics)
    goroutines_before = set(runtime.THREADS.live())
    on_panic_before = runtime.THREADS.on_panic
    yield
    runtime.THREADS.release_idle()  # idle goroutine threads end now instead of lingering
    stray = stray_threads(threads_before)
    goroutines = goroutines_started_since(goroutines_before)
    ports = listening_ports() - ports_before
    panics = runtime.THREADS.panics[panics_before:]
    problems = []
    if stray:
        problems.append("threads left running: " + ", ".join(sorted(t.name for t in stray)))
    if goroutines:
        problems.append("goroutines left running: " + ", ".join(sorted(g.name for g in goroutines)))
    if ports:
        problems.append(f"listening sockets left open on ports {sorted(ports)}")
    if runtime.THREADS.on_panic is not on_panic_before:
        # genericserver.cmd.serve makes a goroutine's panic end the process, as Go's runtime
        # does: left set, the next test whose goroutine panics on purpose ends the worker
        runtime.THREADS.on_panic = on_panic_before
        problems.append("the process's goroutine-panic handler was left changed (cmd.serve run in the test process?)")
    if panics and request.node.get_closest_marker("expect_goroutine_panic") is None:
        problems.append("goroutines panicked: " + "; ".join(f"{n}: {e!r}" for n, e in panics))
    if problems:
        pytest.fail("leak check: " + " | ".join(problems), pytrace=False)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """``make fuzz``: how many distinct interleavings each scenario family explored."""
    from genericserver.testing.lincheck import coverage

    if os.environ.get("HYPOTHESIS_PROFILE") == "fuzz" and coverage.runs:
        terminalreporter.section("interleavings explored (distinct orders of the recorded events)")
        for line in coverage.lines():
            terminalreporter.write_line(line)



# The files that take longest (seconds of wall time each, as the twelve workers of `make test` ran
# them: 0.5-23 s), handed out first by forkdist, longest first: handed out last, one of them ran alone
# on one worker while the others had finished. Most of them spend their time waiting (servers,
# kubectl and the model's cluster in real time, Retry-After, the docs' sessions), which the other
# workers' files fill with CPU. test_parity_clientgo.py, 5 s, runs client-go itself where `make
# reference` built it (19 s). Files under 1.5 s follow in the collected order.
LONGEST_FIRST = [
    "test_cluster_serve_api.py", "test_parity_node_rollout.py", "test_parity_clientgo.py",
    "test_cluster_serve_api_drain.py", "test_docs_run.py", "test_cluster_scenario.py", "test_clients_retry_after.py",
    "test_parity_h2shutdown.py", "test_labs.py", "test_docs_run_walkthrough.py", "test_lab_tools.py",
    "test_parity_node_delete.py", "test_parity_node_drain_pdb.py", "test_parity_lifecycle_limits.py",
    "test_parity_lifecycle_stalled.py", "test_parity_node_delete_grace_3.py",
    "test_cluster_serve_api_restart.py", "test_parity_node.py", "test_parity_h1shutdown.py",
    "test_parity_node_prestop_sleep.py", "test_known_bad_variants.py",
    "test_parity_lifecycle_retry_after.py", "test_kubectl.py", "test_parity_lifecycle_default.py",
    "test_cluster_manifest.py", "test_cmd.py", "test_parity_generated.py", "test_labs_disguise.py",
    "test_parity_lifecycle_model.py", "test_httpserver.py", "test_cluster_pictures.py",
    "test_demo.py", "test_genericapiserver.py", "test_hunt.py",
    "test_parity_node_no_delay.py", "test_parity_h2kube.py", "test_python_client.py",
    "test_parity_node_retry_after.py", "test_parity_lifecycle_hooks.py", "test_zygote.py",
    "test_kubectl_watch.py", "test_graceful_termination.py", "test_lincheck.py", "test_http2server.py",
    "test_fuzz_stateful.py", "test_parity_api.py", "test_stalled_body.py", "test_http2_shutdown.py",
    "test_kubectl_http2.py", "test_cluster_shutdownmanager.py", "test_conventions.py", "test_sim.py",
    "test_ratelimited_waitgroup.py", "test_cluster_rollout.py", "test_cluster_containers.py",
    "test_forkdist.py", "test_cluster_loadcmd.py", "test_http2_rules.py", "test_connreader.py",
    "test_encoding_json.py", "test_fuzz_lifecycle.py",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if not config.getoption("forks", 0):
        return  # a plain `pytest` keeps the files in their order (tests/forkdist.py)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST_FIRST)))  # stable: the rest keep theirs

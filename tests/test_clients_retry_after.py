"""The retry-after mode's 429 window, as kubectl and the Python client meet it (what kube-apiserver shows them).

In ``--shutdown-send-retry-after`` mode a request that arrives after NotAcceptingNewRequest,
while requests in flight drain, gets 429 with ``Retry-After: 5`` and ``Connection: close``
(with_retry_after.go). client-go retries a 429 that carries Retry-After, after that many
seconds, up to ten times (rest/with_retry.go), logging ``"Got a Retry-After response"
delay="5s" attempt=1`` at ``-v=4``; by then, or by its next retry if the first came early in
the window, this server has drained and exited, so kubectl's retry is refused. The Python
client does the same through urllib3, whose default ``Retry`` honours ``Retry-After`` on a
429: it sleeps 5 s, retries, and ends refused too.
"""

from __future__ import annotations

import logging
import threading
import time

import pytest

from kubectl import Kubectl
from serverprocess import WAIT, ServerProcess


@pytest.fixture
def k8s():
    """The official client, imported before the 429 window opens: the import takes half a second,
    more on a busy machine, and the window lasts about four (imported when the file is collected,
    it would cost every test worker that half second)."""
    from kubernetes import client

    return client


@pytest.fixture
def draining_server():
    # the delay makes sure /slow is admitted before the server stops accepting (as test_cmd's
    # retry-after test; on two cores running two suites it once took over a second to arrive);
    # /slow then holds the drain, and with it the 429 window, for about 7 s more: the client's
    # first request must land inside it (its retry may then meet a second 429 before the end)
    sp = ServerProcess("--v=1", "--shutdown-send-retry-after", "--shutdown-delay-duration", "3s")
    slow_result = {}
    slow = threading.Thread(target=lambda: slow_result.setdefault("r", sp.client().get("/slow?seconds=10", timeout=WAIT)),
                            name="slow-client")
    slow.start()
    sp.signal()
    sp.expect(r'name="NotAcceptingNewRequest"')
    yield sp
    slow.join(WAIT)
    assert slow_result["r"].status == 200  # what was in flight finished
    assert sp.wait() == 0
    sp.kill()


def test_kubectl_waits_the_retry_after_then_finds_the_server_gone(draining_server, tmp_path):
    proc = Kubectl(str(tmp_path), draining_server.port).run("get", "--raw", "/api/v1/namespaces/default/configmaps", "-v=4",
                                                            check=False)
    assert proc.returncode == 1
    assert '"Got a Retry-After response" delay="5s" attempt=1' in proc.stderr
    assert proc.stderr.splitlines()[-1].endswith("was refused - did you specify the right host or port?")


def test_the_python_client_honours_the_retry_after_then_finds_the_server_gone(k8s, draining_server, caplog):
    import urllib3

    config = k8s.Configuration()
    config.host = f"http://127.0.0.1:{draining_server.port}"
    caplog.set_level(logging.DEBUG, logger="urllib3.connectionpool")
    started = time.monotonic()
    with k8s.ApiClient(config) as api:
        with pytest.raises(urllib3.exceptions.MaxRetryError) as err:
            k8s.CoreV1Api(api).list_namespaced_config_map("default")
    assert time.monotonic() - started >= 5.0  # the 429's Retry-After, slept before the retry
    assert "Retry: /api/v1/namespaces/default/configmaps" in caplog.text  # the retry of the 429
    assert "Connection refused" in str(err.value.reason)

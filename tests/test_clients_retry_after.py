"""The retry-after mode's 429 window, as kubectl and the Python client meet it (what kube-apiserver shows them).

In ``--shutdown-send-retry-after`` mode a request that arrives after NotAcceptingNewRequest,
while requests in flight drain, gets 429 with ``Retry-After: 5`` and ``Connection: close``
(with_retry_after.go). client-go retries a 429 that carries Retry-After, after that many
seconds, up to ten times (rest/with_retry.go), logging ``"Got a Retry-After response"
delay="5s" attempt=1`` at ``-v=4``; by then this server has drained and exited (the test ends
the drain once the 429 is served: see ``draining_server``), so kubectl's retry is refused. The
Python client does the same through urllib3, whose default ``Retry`` honours ``Retry-After`` on
a 429: it sleeps 5 s, retries, and ends refused too.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
import time

import pytest

from kubectl import Kubectl
from serverprocess import WAIT, ServerProcess


@pytest.fixture
def k8s():
    """The official client, imported by the one test that uses it: imported when the file is
    collected, it would cost every test worker half a second (CoreV1Api, loaded on first use,
    a second more). The 429 window waits for the client's list however long that takes."""
    from kubernetes import client

    return client


@pytest.fixture
def draining_server():
    """A server in its 429 window, and the window closed by the test once the client got its 429.

    A ``/slow`` request sent before the shutdown holds the drain, and with it the window, open
    (the 3 s delay lets it be admitted first, however busy the machine). When the server logs
    the 429 it gave the client's list (its access line, at ``--v=3``), the ``/slow`` client
    hangs up: the server cancels that request (the background read), the drain ends, the
    listener closes, and the client's retry five seconds later is refused. A window of fixed
    length failed under two suites at once: the client's first request came after it.

    Once the server has stopped listening, its port is held (bound, not listening: a connection is
    refused) until the test ends: a server of another test, or of a second suite, was once given
    the freed port and answered the client's retry with a 200."""
    sp = ServerProcess("--v=3", "--shutdown-send-retry-after", "--shutdown-delay-duration", "3s")
    slow = socket.create_connection(("127.0.0.1", sp.port), timeout=WAIT)
    slow.sendall(b"GET /slow?seconds=60 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    sp.signal()
    sp.expect(r'name="NotAcceptingNewRequest"')
    held = socket.socket()
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the closed connections' TIME_WAIT would refuse it

    def close_the_window():
        sp.expect(r'"HTTP" verb="LIST" URI="/api/v1/namespaces/default/configmaps.*resp=429')
        slow.close()
        sp.expect(r"Stopped listening on 127\.0\.0\.1:")
        held.bind(("127.0.0.1", sp.port))

    closer = threading.Thread(target=close_the_window, name="window-closer")
    closer.start()
    yield sp
    closer.join(WAIT)
    held.close()
    assert sp.wait() == 0
    # /slow was in flight until its client left: the drain waited for it, then ended. Its context
    # ended, and the handler (503, "gave up waiting") races the timeout filter (504), as in Go
    assert any(re.search(r'"HTTP" verb="GET" URI="/slow\?seconds=60".*resp=50[34]', line) for line in sp.seen), "\n".join(sp.seen)
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

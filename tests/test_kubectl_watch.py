"""``kubectl get cm -w`` across a graceful shutdown of ``genericserver serve``, in each mode.

How kube-apiserver behaves here was established from the Go source (v1.36):

* kubectl's ``get -w`` (k8s.io/kubectl pkg/cmd/get/get.go, ``watch``) prints the list, then
  each event, through ``watchtools.UntilWithoutRetry``, and returns nil whatever ended the watch:
  it exits 0 when the stream ends;
* client-go's ``StreamWatcher.receive`` (apimachinery pkg/watch/streamwatcher.go) ends quietly on
  ``io.EOF`` (the chunked stream's last chunk) and logs ``io.ErrUnexpectedEOF`` (a connection
  cut mid-stream) only at ``-v=1``: either way nothing is printed at the default verbosity;
* the apiserver ends a watch early only when ``--shutdown-watch-termination-grace-period`` is
  set (the watch handler's server-shutdown signal, watch.go, set by
  ``WithWatchTerminationDuringShutdown``). Otherwise the watch stays open until the HTTP
  server's shutdown times out (``--request-timeout``, or 2 s in the retry-after mode) and the
  process exits, closing the connection.
"""

from __future__ import annotations

import json

import pytest

from kubectl import Kubectl
from serverprocess import WAIT, ServerProcess


@pytest.mark.parametrize("flags, ends_after", [
    (["--request-timeout", "1s"], "HTTPServerStoppedListening"),
    (["--shutdown-send-retry-after"], "HTTPServerStoppedListening"),
    (["--shutdown-watch-termination-grace-period", "5s"], "NotAcceptingNewRequest"),
], ids=["default", "retry-after", "watch-grace"])
def test_kubectl_get_w_ends_quietly_with_exit_0(flags, ends_after, tmp_path):
    sp = ServerProcess("--v=1", *flags)
    try:
        with sp.client() as c:
            body = json.dumps({"metadata": {"name": "a"}, "data": {"k": "v"}}).encode()
            assert c.get("/api/v1/namespaces/default/configmaps", method="POST", body=body,
                         headers={"Content-Type": "application/json"}).status == 201
        kubectl = Kubectl(str(tmp_path), sp.port)
        # -v=6 logs each response: the watch's 200 says it is established before the signal
        # (the table's row comes from the list, before the watch request is even sent)
        watch = kubectl.popen("get", "cm", "-w", "-v=6")
        for line in watch.stderr:
            if "watch=true" in line and "200 OK" in line:
                break
        header = watch.stdout.readline()
        row = watch.stdout.readline()
        assert header.split() == ["NAME", "DATA", "AGE"]
        assert row.split()[:2] == ["a", "1"]
        sp.signal()
        sp.expect(f'name="{ends_after}"')
        rest, err = watch.communicate(timeout=WAIT)
        assert watch.returncode == 0
        assert rest == ""
        # at -v=6 kubectl logs its requests (I lines); an error would be an E line or "error:"
        assert [line for line in err.splitlines() if line.startswith(("E", "error"))] == []
        assert sp.wait() == 0
    finally:
        sp.kill()

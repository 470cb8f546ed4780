"""A small Envoy stand-in in front of one pod: two proxy listeners and the admin API Contour uses (no Go twin).

* listeners ``ingress_http`` and ``ingress_https`` (plain HTTP both; only the name differs, for
  the stats) forward each request to the pod's server (``upstream()`` gives its address). An
  upstream that cannot be reached gives Envoy's 503 ``upstream connect error or disconnect/reset
  before headers. reset reason: connection failure``.
* the admin API: ``POST /healthcheck/fail`` (and ``/healthcheck/ok``), ``GET /ready`` (200
  ``LIVE``, or 503 ``DRAINING`` once the health check is failed) and ``GET /stats/prometheus``
  with the gauge ``envoy_http_downstream_cx_active`` per connection manager prefix
  (``ingress_http``, ``ingress_https``, ``admin``): the connections open on each listener.
* once the health check is failed Envoy drains: every response carries ``Connection: close``, so
  keep-alive clients go away one by one, and the gauge falls. Envoy keeps *accepting* new
  connections meanwhile: only the load balancer, told by the failing readiness, stops sending.
* SIGTERM or SIGKILL: Envoy exits at once, dropping what is open. That is why Contour needs a
  preStop hook to drain first.
"""

from __future__ import annotations

import http.client
from typing import Any, Callable, Iterable, Optional

from genericserver import runtime as rt
from genericserver.cluster.containers import Container, Sandbox
from genericserver.events import EventStream
from genericserver.net.http.server import Server, ServerClosed, listen

ENVOY_HTTP_LISTENER, ENVOY_HTTPS_LISTENER, ADMIN = "ingress_http", "ingress_https", "admin"
PROMETHEUS_STAT = "envoy_http_downstream_cx_active"
UPSTREAM_FAILURE = "upstream connect error or disconnect/reset before headers. reset reason: connection failure"
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection", "te", "upgrade", "trailer"}


def _text(start_response: Callable, status: str, body: str, extra: Optional[list] = None) -> Iterable[bytes]:
    data = body.encode()
    start_response(status, [("Content-Type", "text/plain; charset=UTF-8"), ("Content-Length", str(len(data)))] + (extra or []))
    return [data]


class Envoy:
    """``start()`` binds and serves on 127.0.0.1 (ports in ``ports``); ``close()`` exits."""

    def __init__(self, upstream: Callable[[], tuple[str, int]], *, name: str = "envoy",
                 events: Optional[EventStream] = None, upstream_timeout: float = 15.0):
        self.upstream, self.name, self.upstream_timeout = upstream, name, upstream_timeout
        self.events = events if events is not None else EventStream()
        self.record = self.events.record  # its container's, fenced once the process is killed
        self.health_check_failed = False
        self.servers = {
            ENVOY_HTTP_LISTENER: Server(self._proxy_app, idle_timeout=60.0),
            ENVOY_HTTPS_LISTENER: Server(self._proxy_app, idle_timeout=60.0),
            ADMIN: Server(self._admin_app, idle_timeout=60.0),
        }
        self.ports: dict[str, int] = {}
        self._serving: list[rt.Goroutine] = []

    def start(self) -> None:
        for prefix, server in self.servers.items():
            ln = listen("127.0.0.1", 0)
            self.ports[prefix] = ln.getsockname()[1]
            self._serving.append(rt.go(self._serve, server, ln, name=f"{self.name}-{prefix}"))

    @staticmethod
    def _serve(server: Server, ln: Any) -> None:
        try:
            server.serve(ln)
        except ServerClosed:
            pass

    def close(self) -> None:
        for server in self.servers.values():
            server.close()

    def join(self, timeout: Optional[float] = None) -> bool:
        return all(g.join(timeout) for g in self._serving)

    def active(self, prefix: str) -> int:
        states = self.servers[prefix].conn_states()
        return states["new"] + states["active"] + states["idle"]

    def stats_prometheus(self) -> str:
        lines = [f"# TYPE {PROMETHEUS_STAT} gauge"]
        for prefix in sorted(self.servers):
            lines.append(f'{PROMETHEUS_STAT}{{envoy_http_conn_manager_prefix="{prefix}"}} {self.active(prefix)}')
        return "\n".join(lines) + "\n"

    # -- the admin API --------------------------------------------------------------------------
    def _admin_app(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        path, method = environ["PATH_INFO"], environ["REQUEST_METHOD"]
        if path in ("/healthcheck/fail", "/healthcheck/ok"):
            if method != "POST":
                return _text(start_response, "405 Method Not Allowed", "This endpoint requires POST\n")
            failed = path.endswith("fail")
            if failed != self.health_check_failed:
                self.health_check_failed = failed
                self.record("envoy", f"{self.name}: health check {'failed: draining, new responses say Connection: close' if failed else 'ok again'}")
            return _text(start_response, "200 OK", "OK\n")
        if path == "/ready":
            if self.health_check_failed:
                return _text(start_response, "503 Service Unavailable", "DRAINING\n")
            return _text(start_response, "200 OK", "LIVE\n")
        if path == "/stats/prometheus":
            return _text(start_response, "200 OK", self.stats_prometheus())
        return _text(start_response, "404 Not Found", "invalid path. admin commands are: /healthcheck/fail /healthcheck/ok /ready /stats/prometheus\n")

    # -- the proxy --------------------------------------------------------------------------------
    def _proxy_app(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        drain = [("Connection", "close")] if self.health_check_failed else []
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else None
        uri = environ.get("REQUEST_URI") or environ["PATH_INFO"]
        headers = {k[5:].replace("_", "-").title(): v for k, v in environ.items()
                   if k.startswith("HTTP_") and k[5:].lower().replace("_", "-") not in _HOP_BY_HOP}
        try:
            host, port = self.upstream()
            conn = http.client.HTTPConnection(host, port, timeout=self.upstream_timeout)
            try:
                conn.request(environ["REQUEST_METHOD"], uri, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            finally:
                conn.close()
        except (OSError, http.client.HTTPException, KeyError):
            return _text(start_response, "503 Service Unavailable", UPSTREAM_FAILURE, drain)
        out = [(k, v) for k, v in resp.getheaders() if k.lower() not in _HOP_BY_HOP]
        start_response(f"{resp.status} {resp.reason}", out + [("Content-Length", str(len(data)))] + drain)
        return [data]


class EnvoyContainer(Container):
    """Envoy as a pod's container: ports ``http``, ``https`` and ``admin`` in the sandbox; the
    upstream is the sandbox port ``upstream_port``."""

    def __init__(self, name: str, pod_name: str, sandbox: Sandbox, *, upstream_port: str = "app-http",
                 events: Optional[EventStream] = None):
        super().__init__(name, pod_name, events)
        self.sandbox = sandbox
        self.envoy = Envoy(lambda: ("127.0.0.1", sandbox.ports[upstream_port]), name=f"{pod_name}/{name}", events=self.events)
        self.envoy.record = self.record

    def start(self) -> None:
        self.envoy.start()
        self.sandbox.ports.update({"http": self.envoy.ports[ENVOY_HTTP_LISTENER], "https": self.envoy.ports[ENVOY_HTTPS_LISTENER],
                                   "admin": self.envoy.ports[ADMIN]})
        super().start()

    def on_sigterm(self) -> None:
        self.on_sigkill()  # Envoy has no graceful exit on a signal

    def on_sigkill(self) -> None:
        self.envoy.close()
        self.exit(0 if self.signals and self.signals[-1][0] == "SIGTERM" else 137)

    def join(self, timeout: Optional[float] = None) -> bool:
        return self.envoy.join(timeout)

"""Port of k8s.io/apiserver/pkg/server/routes/{metrics,version}.go (v1.36.0): ``/metrics``, ``/metrics/slis`` and ``/version``.

``install_metrics`` is Go's ``DefaultMetrics{}.Install`` plus ``slis.SLIMetrics{}.Install``
(config.go's ``installAPI`` calls both when ``EnableMetrics``): ``/metrics`` serves the server's
registry and ``/metrics/slis`` its health-check registry, in the Prometheus text format
(version 0.0.4, what Go's handler sends a scraper that asks for nothing else), on the
non-go-restful mux, as in Go. Both paths start with ``/metrics``, so the retry-after and
wait-group filters let them through during a shutdown. Go's handler is not instrumented:
scraping changes no request count. Go's ``/metrics`` also has the Go runtime's ``go_*``
collector; here the registry has prometheus_client's ``process_*`` collector instead, which
reads the same ``/proc`` figures Go's process collector does.

``install_version`` is ``Version{}.Install``: ``GET /version`` answers the version information
(:mod:`genericserver.apimachinery.version`) as indented JSON, ``WriteRawJSON``'s way. Go installs it on the
go-restful container, which answers other methods with 405; there is no such container here,
so it sits on the non-go-restful mux and answers 405 itself.

Two Go files in one module: each installs one small route, and config.go's ``installAPI`` installs
both.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from genericserver.apimachinery.version import Info
from genericserver.responsewriters import status_line

StartResponse = Callable[..., Any]


def metrics_handler(registry: CollectorRegistry) -> Callable[[dict, StartResponse], Iterable[bytes]]:
    """``legacyregistry.Handler()`` for ``registry``: every metric, in the text format."""

    def serve_metrics(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        body = generate_latest(registry)
        # no length of its own, as promhttp sets none: the server frames it (chunked past 2 KiB)
        start_response(status_line(200), [("Content-Type", CONTENT_TYPE_PLAIN_0_0_4)])
        return [body]

    return serve_metrics


def install_metrics(mux: Any, registry: CollectorRegistry, sli_registry: CollectorRegistry) -> None:
    """``/metrics`` and ``/metrics/slis`` on ``mux``."""
    mux.handle("/metrics", metrics_handler(registry))
    mux.handle("/metrics/slis", metrics_handler(sli_registry))


def install_version(mux: Any, info: Info) -> None:
    """``/version``: the version information as JSON (see the module docstring)."""
    body = json.dumps(info.to_dict(), indent=2).encode()

    def handle_version(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            text = b"405: Method Not Allowed"
            start_response(status_line(405), [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(text)))])
            return [text]
        start_response(status_line(200), [("Content-Type", "application/json")])  # WriteRawJSON: no length of its own
        return [body]

    # unlisted: Go's root listing (config_test.go's expected paths) does not show /version
    mux.unlisted_handle("/version", handle_version)
    # go-restful matches a route with or without a trailing slash (the Python client asks /version/)
    mux.unlisted_handle("/version/", handle_version)

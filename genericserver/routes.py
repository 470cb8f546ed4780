"""Port of k8s.io/apiserver/pkg/server/routes/{index,metrics,version}.go (v1.36.0): ``/``, ``/metrics``, ``/metrics/slis`` and ``/version``.

``install_index`` is ``Index{}.Install``: ``/`` and ``/index.html`` (unlisted, on the
non-go-restful mux) answer 200 with ``{"paths": [...]}``, the server's listed paths and its
delegates' (``ListedPathProviders``), sorted, as indented JSON (``WriteRawJSON``), whatever the
method and the Accept.

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
go-restful container as a web service of one route, ``GET /`` producing and consuming
``application/json``: a container of its own here (no other web service's root can claim a path
under ``/version``), so go-restful answers another method (405), an Accept other than JSON or
``*/*`` (406) and a Content-Type other than JSON (415) with the server's Status.

Three Go files in one module: each installs one small route, and config.go's ``installAPI`` installs
them.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from genericserver.apimachinery.version import Info
from genericserver.github_com.emicklei.go_restful.v3.container import Container
from genericserver.github_com.emicklei.go_restful.v3.web_service import WebService
from genericserver.handler import service_error_handler
from genericserver.responsewriters import status_line

MIME_JSON = "application/json"  # go-restful's restful.MIME_JSON

StartResponse = Callable[..., Any]


def metrics_handler(registry: CollectorRegistry) -> Callable[[dict, StartResponse], Iterable[bytes]]:
    """``legacyregistry.Handler()`` for ``registry``: every metric, in the text format."""

    def serve_metrics(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        body = generate_latest(registry)
        # no length of its own, as promhttp sets none: the server frames it (chunked past 2 KiB)
        start_response(status_line(200), [("Content-Type", CONTENT_TYPE_PLAIN_0_0_4)])
        return [body]

    return serve_metrics


def install_index(mux: Any, listed_paths: Callable[[], list[str]]) -> None:
    """``/`` and ``/index.html``: the listed paths (see the module docstring)."""

    def index(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        body = json.dumps({"paths": sorted(set(listed_paths()))}, indent=2).encode()
        start_response(status_line(200), [("Content-Type", "application/json")])  # WriteRawJSON: no length of its own
        return [body]

    mux.unlisted_handle("/", index)
    mux.unlisted_handle("/index.html", index)


def install_metrics(mux: Any, registry: CollectorRegistry, sli_registry: CollectorRegistry) -> None:
    """``/metrics`` and ``/metrics/slis`` on ``mux``."""
    mux.handle("/metrics", metrics_handler(registry))
    mux.handle("/metrics/slis", metrics_handler(sli_registry))


def install_version(mux: Any, info: Info) -> None:
    """``/version``: the version information as JSON (see the module docstring)."""
    body = json.dumps(info.to_dict(), indent=2).encode()

    def handle_version(environ: dict, start_response: StartResponse, _: dict) -> Iterable[bytes]:
        start_response(status_line(200), [("Content-Type", "application/json")])  # WriteRawJSON: no length of its own
        return [body]

    ws = WebService("/version")
    ws.route("GET", "/", handle_version, produces=[MIME_JSON], consumes=[MIME_JSON])
    container = Container()
    container.service_error_handler(service_error_handler)
    container.add(ws)
    # unlisted: Go's root listing (config_test.go's expected paths) does not show /version. The
    # director hands the root and what is under it to go-restful (the Python client asks /version/)
    mux.unlisted_handle("/version", container)
    mux.unlisted_handle_prefix("/version/", container)

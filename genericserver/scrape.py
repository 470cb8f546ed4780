"""Read a server's ``/metrics`` as Prometheus does (no Go twin: the scraper's side).

:func:`scrape` fetches ``/metrics`` (or ``/metrics/slis``) from a running server over HTTP and
parses it with prometheus_client's text-format parser; :func:`fetch` and :func:`parse` are its
two halves (a scraper that only needs its last scrape parses that one alone).
Both return :class:`Samples`, a list of ``(name, labels, value)`` with a lookup by name and
labels, so a test or the cluster world can ask ``samples.value("apiserver_request_total",
code="200")`` (the sum over every series that has those labels).
"""

from __future__ import annotations

import http.client
from typing import NamedTuple, Optional

from prometheus_client.parser import text_string_to_metric_families


class Sample(NamedTuple):
    name: str
    labels: dict[str, str]
    value: float


class Samples(list):
    """The samples of one scrape, in the order the server wrote them."""

    def select(self, metric: str, /, **labels: str) -> list[Sample]:
        """The samples called ``metric`` whose labels include ``labels`` (a label may be called ``name``)."""
        return [s for s in self if s.name == metric and all(s.labels.get(k) == v for k, v in labels.items())]

    def value(self, metric: str, /, **labels: str) -> Optional[float]:
        """The sum of the matching samples' values; None when there is none."""
        found = self.select(metric, **labels)
        return sum(s.value for s in found) if found else None


def parse(text: str) -> Samples:
    """Every sample of a text-format exposition."""
    out = Samples()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.append(Sample(s.name, dict(s.labels), s.value))
    return out


def scrape(host: str, port: int, path: str = "/metrics", timeout: float = 10.0) -> Samples:
    """GET ``path`` from the server at ``host:port`` and parse it; raises on a non-200 answer."""
    return parse(fetch(host, port, path, timeout))


def fetch(host: str, port: int, path: str = "/metrics", timeout: float = 10.0) -> str:
    """The text of ``path`` from the server at ``host:port``; raises on a non-200 answer."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Accept": "text/plain"})
        resp = conn.getresponse()
        body = resp.read().decode("utf-8")
    finally:
        conn.close()
    if resp.status != 200:
        raise RuntimeError(f"GET {path}: {resp.status} {resp.reason}: {body[:200]}")
    return body

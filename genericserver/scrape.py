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
from typing import Collection, NamedTuple, Optional

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


def parse(text: str, families: Optional[Collection[str]] = None) -> Samples:
    """Every sample of a text-format exposition, or only those of the named ``families`` (a
    histogram's family takes its ``_bucket``, ``_sum`` and ``_count`` samples along): their
    lines are picked out before the parser sees them, which costs a fraction of parsing them all
    (the parser takes a tenth of a second for one of our servers' whole ``/metrics``)."""
    if families is not None:
        text = "".join(line for line in text.splitlines(keepends=True) if _family_of(line) in families)
    out = Samples()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.append(Sample(s.name, dict(s.labels), s.value))
    return out


def _family_of(line: str) -> str:
    """The metric name a text-format line is about (``# HELP``/``# TYPE`` lines too), without a
    histogram's or summary's sample suffix."""
    if line.startswith("#"):
        words = line.split(None, 3)  # "# HELP name text", "# TYPE name type"
        name = words[2] if len(words) > 2 else ""
    else:
        name = line.split("{", 1)[0].split(" ", 1)[0].strip()  # "name{labels} value", "name value"
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def scrape(host: str, port: int, path: str = "/metrics", timeout: float = 10.0,
           families: Optional[Collection[str]] = None) -> Samples:
    """GET ``path`` from the server at ``host:port`` and parse it (only ``families``, if given,
    as :func:`parse` does); raises on a non-200 answer."""
    return parse(fetch(host, port, path, timeout), families)


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
